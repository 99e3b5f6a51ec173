"""The terminal UI (``agentos chat``), a Textual app."""
