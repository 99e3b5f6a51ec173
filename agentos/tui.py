"""The terminal UI (``agentos chat``) as a Textual app, for programs that run it themselves.

``ChatApp(session, runtime)`` shows one session: its chat, an input that stays
usable while calls run, and a row per call (``CallsPane``); ``c`` cancels the selected call
(after ``Confirm``), ``enter`` opens its ``Details``, ``b`` shows what the model
reads next. Run it with ``await app.run_async()`` on the event loop that runs
``runtime``.
"""

from agentos._ui.tui.app import ChatApp
from agentos._ui.tui.calls import CallsPane
from agentos._ui.tui.screens import Confirm
from agentos._ui.tui.screens import Details
from agentos._ui.tui.theme import terminal_theme

__all__ = ["CallsPane", "ChatApp", "Confirm", "Details", "terminal_theme"]
