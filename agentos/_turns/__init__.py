"""Sans-IO turns: agent configuration, the transcript's texts, history, the chat a person
sees, the events and actions of a turn machine, and the transcript machine itself.

Nothing here awaits or reads a clock; the session shell (``_sessions``) performs what a
machine asks."""
