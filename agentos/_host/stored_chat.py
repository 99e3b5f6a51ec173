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
