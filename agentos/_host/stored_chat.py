"""A stored session drawn as a person sees it: the store keeps records, the host draws them.

The store sits below the turn machines and the board, so it cannot draw its own
sessions; this is ``Session.chat`` for a session that is only stored, with the same code
(the board's ``chat``, the transcript's ``transcript_chat``).
"""

from __future__ import annotations

from agentos._board.board import Board
from agentos._store.protocol import StoredSession
from agentos._turns.chat import ChatEntry
from agentos._turns.history import MessageHistory
from agentos._turns.title import first_words
from agentos._turns.transcript_chat import transcript_chat


def stored_chat(stored: StoredSession) -> list[ChatEntry]:
    """What a person sees of the stored conversation, as ``Session.chat`` shows it; a call
    is as the history (or board) left it: a call no outcome reached is ``orphaned``, one
    whose placeholder says it ran is ``running``, whether it still does or not."""
    if stored.board is not None:
        return Board.from_json(stored.board).chat()
    index = MessageHistory()
    index.load(stored.session_id, stored.history)
    return transcript_chat(stored.history, (), index, stored.session_id)


def stored_title(stored: StoredSession) -> str:
    """What to call a stored session, as ``Session.title`` does: its name, else the first
    thing the person said (read off its chat, so a session whose turns never wrote
    ``first_words`` is still named), else ``first_words``; empty while nothing is said."""
    if stored.title is not None:
        return stored.title
    said = first_words(entry.text for entry in stored_chat(stored) if entry.role == "user")
    return said or stored.first_words or ""
