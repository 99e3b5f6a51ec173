"""agentos's own log lines: quiet unless the application configures logging.

If the application configured structlog, the lines go through it. Otherwise
they go to the standard library's ``agentos`` logger, which carries a
``NullHandler``: nothing is printed, and no line is built, unless the
application sets up logging (``logging.basicConfig(level=logging.INFO)``
shows the ``tool_call.*`` lines).
"""

from __future__ import annotations

import logging
from typing import Any

import structlog

LOGGER_NAME = "agentos"
logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


def agentos_logger() -> tuple[Any, bool, bool]:
    """The logger to write to, and whether its info and debug lines would be kept."""
    if structlog.is_configured():
        logger = structlog.get_logger(LOGGER_NAME)
        enabled = getattr(logger.bind(), "is_enabled_for", None)
        if enabled is None:
            return logger, True, True
        return logger, bool(enabled(logging.INFO)), bool(enabled(logging.DEBUG))
    stdlib = logging.getLogger(LOGGER_NAME)
    logger = structlog.wrap_logger(
        stdlib,
        processors=[structlog.processors.KeyValueRenderer(key_order=["event"])],
        wrapper_class=structlog.stdlib.BoundLogger,
    )
    return logger, stdlib.isEnabledFor(logging.INFO), stdlib.isEnabledFor(logging.DEBUG)
