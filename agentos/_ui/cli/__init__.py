"""The ``agentos`` command line's commands (the face is ``agentos.cli``)."""
