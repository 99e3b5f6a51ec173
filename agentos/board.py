"""The message board (seed 004), for code that drives or inspects a board directly.

``Board`` is pure data: writes (``post_user``, ``open_turn``, ``add_call``,
``settle``, ...) record the tree, ``render`` draws it for the model and
``chat`` projects it for the person. The board turn machine moves it; tests
and alternative shells use these names.
"""

from agentos._board import (
    CANCEL_TOOL,
    NEW_THREAD_TOOL,
    NOTATION,
    STATUS_TOOL,
    Author,
    Board,
    BoardCall,
    BoardNode,
    ChatCall,
    ChatEntry,
    Did,
    Rendered,
    Trigger,
    pending_instruction,
)

__all__ = [
    "CANCEL_TOOL",
    "NEW_THREAD_TOOL",
    "NOTATION",
    "STATUS_TOOL",
    "Author",
    "Board",
    "BoardCall",
    "BoardNode",
    "ChatCall",
    "ChatEntry",
    "Did",
    "Rendered",
    "Trigger",
    "pending_instruction",
]
