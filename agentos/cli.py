"""The ``agentos`` command line: run, resume, complete and inspect store-backed sessions.

Every error is one line on stderr and a non-zero exit code, never a
traceback (``AGENTOS_DEBUG=1`` lets unexpected ones through with theirs).
``python -m agentos.cli`` is the same program; ``run_cli(argv)`` runs it and
returns the exit code instead of exiting.
"""

from agentos._ui.cli.main import main
from agentos._ui.cli.main import run_cli

__all__ = ["main", "run_cli"]

if __name__ == "__main__":
    main()
