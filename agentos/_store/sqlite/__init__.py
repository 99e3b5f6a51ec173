"""The embedded store: one SQLite file in WAL mode, reached through aiosqlite."""
