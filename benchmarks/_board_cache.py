"""How much of each board request the prompt cache could reuse: a scripted 20-turn talk.

A board session (scripted model, a lookup tool that answers at once with a
calendar-sized result, answers of a sentence or two) holds three threads:
two short ones, then a longer one the user keeps replying in, with one
return to the first thread. Every user post starts a lookup of the user's
question, and its result grants the next turn: 20 requests in all.

``board.cached_prefix_ratio`` is the characters of each request (after the
first) that equal a prefix of the request before it, over all their
characters, with the request read in the order the prompt cache reads it:
tool definitions, system prompt, then the board. ``board.board_prefix_ratio``
is the same for the board text alone (the part re-rendered every turn), and
``board.cache_marked_ratio`` the share of the board inside its
``cache_control`` mark (the stable prefix the board declares).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence

import anyio
from pydantic import BaseModel

from agentos import AgentConfig
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import tool
from agentos.board import read_turn
from agentos.testing import blocks_of
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from benchmarks._common import Figures
from benchmarks._common import emit

POSTS = [
    (None, "When can Jane meet?"),
    (None, "What's the weather in Oslo?"),
    (None, "Plan the offsite: first, who is free on Monday?"),
    ("last", "And on Tuesday?"),
    ("last", "Which rooms are free then?"),
    ("first", "Jane again: and on Friday?"),
    ("last", "Book the big room."),
    ("last", "Who else should come?"),
    ("last", "Send them the invite."),
    ("last", "Thanks. Anything left?"),
]


LOOKBACK = 20
"""Block boundaries before a breakpoint where the API looks for an earlier cached prefix."""


class Query(BaseModel):
    query: str


@tool
async def lookup(args: Query) -> dict[str, object]:
    """Look something up (at once): a calendar-sized answer."""
    return {"query": args.query, "free": ["10:00-11:00", "15:00-16:00"], "busy": ["13:00-14:30"]}


def _board(request: ModelRequest) -> str:
    (message,) = request.messages
    return "".join(str(block.get("text", "")) for block in blocks_of(message))


def _marked(request: ModelRequest) -> str:
    """The board up to its last cache breakpoint."""
    (message,) = request.messages
    texts = [str(block.get("text", "")) for block in blocks_of(message)]
    marks = [i for i, block in enumerate(blocks_of(message)) if "cache_control" in block]
    return "".join(texts[: marks[-1] + 1]) if marks else ""


def _cache_blocks(request: ModelRequest) -> list[tuple[str, bool]]:
    """The request as the prompt cache reads it, block by block, each with whether it
    carries a breakpoint: tool definitions, system prompt, then the board's blocks."""
    tools = json.dumps(list(request.tools), ensure_ascii=False, sort_keys=True)
    (message,) = request.messages
    board = [(str(b.get("text", "")), "cache_control" in b) for b in blocks_of(message)]
    return [(tools, False), (request.system, request.cache_system), *board]


def cache_read_ratio(requests: Sequence[ModelRequest]) -> float:
    """The characters a prompt cache that works as Anthropic's does would serve, over all
    the characters of the requests after the first: each request writes the prefix ending
    at each of its breakpoints, and reads the longest prefix written before that ends at
    one of its block boundaries at most ``LOOKBACK`` blocks before one of its breakpoints
    (the API's minimum cacheable length is not modelled)."""
    written: set[str] = set()
    read = total = 0
    for number, request in enumerate(requests):
        blocks = _cache_blocks(request)
        text = "".join(block for block, _ in blocks)
        ends = list(itertools.accumulate(len(block) for block, _ in blocks))
        marks = [i for i, (_, marked) in enumerate(blocks) if marked]
        hit = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if text[: ends[i]] in written:
                    hit = max(hit, ends[i])
                    break
        if number:
            read, total = read + hit, total + len(text)
        written.update(text[: ends[i]] for i in marks)
    return round(read / total, 3) if total else 0.0


def _answer(request: ModelRequest) -> ModelResponse:
    turn = read_turn(_board(request))
    if turn is not None and turn.author == "user":
        question = turn.text
        return tool_calls(("lookup", {"query": question}), say="Let me look that up for you.")
    return text(
        "Here is what I found: free from 10:00 to 11:00 and from 15:00 to 16:00, busy from "
        "13:00 to 14:30. Shall I hold 10:00 for it?"
    )


async def talk() -> list[ModelRequest]:
    provider = ScriptedProvider((lambda r: True, _answer), keep_requests=True)
    async with Runtime([lookup]) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig(context_view="board"))
        roots: list[int] = []
        for where, words in POSTS:
            board = session.board
            assert board is not None
            reply_to = None
            if where == "last":
                reply_to = max(n for n in board.nodes if board.root_of(n) == roots[-1])
            elif where == "first":
                reply_to = max(n for n in board.nodes if board.root_of(n) == roots[0])
            session.post(words, reply_to=reply_to)
            with anyio.fail_after(10):
                await settle(runtime)
                await session.wait_settled()
            if where is None:
                roots.append(max(n for n in board.nodes if board.nodes[n].parent is None))
    return list(provider.requests)


def _as_cached(request: ModelRequest) -> str:
    """The request in the order the prompt cache reads it: tools, system, then the board."""
    tools = json.dumps(list(request.tools), ensure_ascii=False, sort_keys=True)
    return tools + request.system + _board(request)


def prefix_ratio(texts: Sequence[str]) -> float:
    """The characters of each text (after the first) equal to a prefix of the one before
    it, over all their characters."""
    kept = sum(len(os.path.commonprefix(pair)) for pair in itertools.pairwise(texts))  # noqa: RUF071 (characters are what a cache compares)
    total = sum(len(now) for now in texts[1:])
    return round(kept / total, 3) if total else 0.0


def measure() -> Figures:
    requests = anyio.run(talk)
    boards = [_board(r) for r in requests]
    marked = sum(len(_marked(r)) for r in requests[1:])
    return {
        "board.requests": len(requests),
        "board.cached_prefix_ratio": prefix_ratio([_as_cached(r) for r in requests]),
        "board.board_prefix_ratio": prefix_ratio(boards),
        "board.cache_read_ratio": cache_read_ratio(requests),
        "board.cache_marked_ratio": round(marked / max(1, sum(map(len, boards[1:]))), 3),
    }


def main() -> None:
    emit(measure())


if __name__ == "__main__":
    main()
