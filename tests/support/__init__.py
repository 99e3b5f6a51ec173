"""What the tests share, and the benchmarks too: stores and hosts on each backend, PostgreSQL,
the browser, processes, the command line, and the tool modules and MCP servers agents name."""
