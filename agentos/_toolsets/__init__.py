"""Where tools come from beyond Python functions passed to the runtime: import paths named
in an agent file (``imports``), MCP servers (``mcp``), and an agent's whole set (``agent``)."""
