"""Rendering the message board: what one board request costs to draw.

A board of 200 nodes in 3 threads is built as a conversation grows: each
thread a user question, then agent turns and user replies under them, every
agent turn with two calls (a background call, most settled and a few still
running, and a status look). ``board.render_us`` is the mean time of
``Board.render`` with a focus and a note, over many renderings, best of a few
rounds: the board keeps the lines it drew, as a session's board does from one
turn to the next. ``board.first_render_us`` is the median of a fresh board's
first rendering, every line drawn.
"""

from __future__ import annotations

import time

from agentos import CallStatus
from agentos.board import STATUS_TOOL
from agentos.board import Board
from agentos.board import BoardTrigger
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import median

NODES = 200
THREADS = 3
RENDERS = 2_000
ROUNDS = 5
FIRSTS = 50


def build() -> tuple[Board, int]:
    """The 200-node board, and the node the last turn is for."""
    board = Board()
    tips = [board.post_user(f"question {n}: when can everyone meet?").display_id for n in range(3)]
    number = 0
    while len(board.nodes) < NODES:
        thread = number % THREADS
        parent = tips[thread]
        if board.nodes[parent].author.value == "user":
            node = board.open_turn(parent, BoardTrigger.USER, text=f"Looking into it ({number}).")
            work = f"work-{number}"
            board.add_call(
                node.display_id, work, "schedule", {"person": f"p{number}"}, background=True
            )
            look = f"toolu_{number}"
            board.add_call(
                node.display_id, look, STATUS_TOOL, {"tool_call_id": work}, background=False
            )
            board.settle(look, CallStatus.COMPLETED, "40% done, about 20 s to go")
            if number % 7:
                board.settle(work, CallStatus.COMPLETED, f"free {number % 12}-{number % 12 + 3}")
            else:
                board.set_status(work, CallStatus.RUNNING)
        else:
            node = board.post_user(f"and then? ({number})", reply_to=parent)
        tips[thread] = node.display_id
        number += 1
    return board, tips[-1]


def measure() -> Figures:
    board, focus = build()
    rounds: list[float] = []
    for _ in range(ROUNDS):
        started = time.perf_counter_ns()
        for _ in range(RENDERS):
            board.render(focus=focus, note="every call of this node has ended")
        rounds.append((time.perf_counter_ns() - started) / RENDERS / 1000)
    firsts: list[float] = []
    for _ in range(FIRSTS):
        fresh, fresh_focus = build()
        started = time.perf_counter_ns()
        fresh.render(focus=fresh_focus, note="every call of this node has ended")
        firsts.append((time.perf_counter_ns() - started) / 1000)
    calls = sum(len(node.calls) for node in board.nodes.values())
    return {
        "board.nodes": len(board.nodes),
        "board.calls": calls,
        "board.render_us": round(min(rounds), 2),
        "board.first_render_us": round(median(firsts), 2),
        "board.render_chars": len(board.render(focus=focus, note="x").text),
    }


def main() -> None:
    emit(measure())


if __name__ == "__main__":
    main()
