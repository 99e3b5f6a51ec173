"""agentos's own log lines: quiet unless the application configures logging.

If the application configured structlog, the lines go through it. Otherwise
they go to the standard library's ``agentos`` logger, which carries a
``NullHandler``: nothing is printed, and no line is built, unless the
application sets up logging (``logging.basicConfig(level=logging.INFO)``
shows the ``tool_call.*`` lines). structlog is imported only to write a line:
a program that logs nothing through agentos never loads it (nor the ``rich`` it
pulls in), which keeps its import time and the objects its collector walks down.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

LOGGER_NAME = "agentos"
logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


class _StdlibLogger:
    """The ``agentos`` stdlib logger behind structlog's key=value rendering, built at
    its first line (one for the process: ``_STDLIB``)."""

    _logger: Any = None

    def __getattr__(self, level: str) -> Any:
        if self._logger is None:
            import structlog

            self._logger = structlog.wrap_logger(
                logging.getLogger(LOGGER_NAME),
                processors=[structlog.processors.KeyValueRenderer(key_order=["event"])],
                wrapper_class=structlog.stdlib.BoundLogger,
            )
        return getattr(self._logger, level)


_STDLIB = _StdlibLogger()


def agentos_logger() -> tuple[Any, bool, bool]:
    """The logger to write to, and whether its info and debug lines would be kept."""
    structlog = sys.modules.get("structlog")  # only an application that imported it configured it
    if structlog is not None and structlog.is_configured():
        logger = structlog.get_logger(LOGGER_NAME)
        enabled = getattr(logger.bind(), "is_enabled_for", None)
        if enabled is None:
            return logger, True, True
        return logger, bool(enabled(logging.INFO)), bool(enabled(logging.DEBUG))
    stdlib = logging.getLogger(LOGGER_NAME)
    return _STDLIB, stdlib.isEnabledFor(logging.INFO), stdlib.isEnabledFor(logging.DEBUG)
