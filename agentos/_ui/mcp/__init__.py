"""agentos as an MCP server (``agentos mcp``): a host's sessions, for other agents to use."""
