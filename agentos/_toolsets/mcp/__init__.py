"""MCP servers as toolsets: a stdio transport agentos owns, the server's connection and
tools (``server``), and what a tool's result becomes (``results``)."""
