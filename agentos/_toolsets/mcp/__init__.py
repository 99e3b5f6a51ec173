"""MCP servers as toolsets: a stdio transport agentos owns (``stdio``), the server's
connection (``server``), its listing as agentos tools (``tools``), and what a tool's
result becomes (``results``)."""
