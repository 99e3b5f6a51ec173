"""The runtime: tool calls as entities of one esper world, its ticks, and where their work runs.

Knows no session, model or store: everything above builds on ``Runtime``."""
