"""The message board, for code that drives or inspects a board directly.

``Board`` is pure data: writes (``post_user``, ``open_turn``, ``add_call``,
``settle``, ...) record the tree, ``render`` draws it for the model and
``chat`` projects it for the person. The board turn machine moves it; tests
and alternative shells use these names (``agentos._board.board.__all__``).
"""

from agentos._board import board as _board
from agentos._board.board import *  # noqa: F403  (the list is kept once, in ``_board.board.__all__``)
from agentos._public import claim_all
from components import CallStatus  # noqa: F401  (named by the classes' annotations)
from components import Json  # noqa: F401  (named by the classes' annotations)
from components import JsonObject  # noqa: F401  (named by the classes' annotations)

__all__ = list(_board.__all__)

claim_all(globals(), __all__, __name__)
