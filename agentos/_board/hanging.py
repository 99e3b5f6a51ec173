"""Writing a step's answer on the board: each call the model asked for hangs off the turn's
node, in the order asked, with what is known of it already (the machine's own answer, a
capability's answer, or a background call just started)."""

from __future__ import annotations

from collections.abc import Mapping

from agentos._board.board import CANCEL_TOOL
from agentos._board.board import STATUS_TOOL
from agentos._board.board import Board
from agentos._board.board import BoardNode
from agentos._board.ledger import BoardLedger
from agentos._board.step import Step
from agentos._board.texts import NOTHING_MOVED
from agentos._board.texts import out_of_retries
from agentos._board.texts import said_text
from agentos._model.messages import Block
from agentos._model.messages import ToolResultBlock
from agentos._turns.events import CallStarted
from agentos._turns.tool_policy import Disposition
from components import CallStatus


def hang(
    board: Board,
    ledger: BoardLedger,
    retry_budget: int,
    node: BoardNode,
    step: Step,
    answers: Mapping[str, ToolResultBlock] | None = None,
    started: Mapping[str, CallStarted] | None = None,
) -> None:
    """Hang the step's calls off ``node``, in the order the model asked for them."""
    answers, started = answers or {}, started or {}
    for use in step.order:
        tool_use_id = str(use["id"])
        if tool_use_id in step.local:
            status, words = step.local[tool_use_id]
            board.add_call(
                node.display_id, tool_use_id, str(use["name"]), use["input"], background=False
            )
            board.settle(tool_use_id, status, words)
        elif tool_use_id in answers:
            _capability_answered(board, ledger, retry_budget, node, use, answers[tool_use_id])
        elif tool_use_id in started:
            _started(board, ledger, node, use, started[tool_use_id])


def _capability_answered(
    board: Board,
    ledger: BoardLedger,
    retry_budget: int,
    node: BoardNode,
    use: Block,
    answer: ToolResultBlock,
) -> None:
    tool_use_id, name = str(use["id"]), str(use["name"])
    said = said_text(answer.get("content"))
    failed = bool(answer.get("is_error"))
    if name == STATUS_TOOL and '"changed_since_last_look": false' in said:
        said = f"{said}\n{NOTHING_MOVED}"
    spent = None
    if name == CANCEL_TOOL and not failed:
        spent = _out_of_retries(board, ledger, retry_budget, use)
    if spent is not None:
        said = f"{said}\n{out_of_retries(*spent)}"
    board.add_call(node.display_id, tool_use_id, name, use["input"], background=False)
    board.settle(tool_use_id, CallStatus.FAILED if failed else CallStatus.COMPLETED, said)


def _out_of_retries(
    board: Board, ledger: BoardLedger, retry_budget: int, cancel: Block
) -> tuple[str, int] | None:
    """The tool and the attempts stopped, when this cancel spends the last of the budget of
    the branch that led to the call it stops: the cancels of calls to the same tool on that
    call's node and its ancestors, and this one (None: budget left)."""
    named = str(cancel["input"].get("tool_call_id", ""))
    node_id, target = ledger.node_of(named), board.named(named)
    if node_id is None or target is None:
        return None
    spent = board.cancels_on_branch(node_id, target.tool_name) + 1
    return (target.tool_name, spent) if spent >= retry_budget else None


def _started(
    board: Board, ledger: BoardLedger, node: BoardNode, use: Block, call: CallStarted
) -> None:
    board.add_call(
        node.display_id,
        call.call_id,
        call.tool_name,
        use["input"],
        background=True,
        use_id=call.tool_use_id,
    )
    deferred = call.disposition is Disposition.DEFER
    ledger.track(call.call_id, call.tool_use_id, node.display_id, deferred=deferred)
    ledger.intervals[call.call_id] = (call.overdue_after, call.estimated)
    if call.status is CallStatus.RUNNING:
        board.set_status(call.call_id, CallStatus.RUNNING)
