"""A session's history is kept packed (issue 51): the collector has little to walk in a
finished turn, and what a request, ``history`` and the store read is the same as ever."""

from __future__ import annotations

import gc
import json
from fractions import Fraction
from pathlib import Path

import pytest

import agentos
from agentos import AgentConfig
from agentos import Host
from agentos import ManualClock
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos.testing import last_tool_results
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from tests.support.arguments import Empty
from tests.support.backends import hosted

pytestmark = pytest.mark.anyio


@agentos.tool
async def work(args: Empty) -> int:
    """Returns at once."""
    return 7


def three_calls(*, keep_requests: bool = True) -> ScriptedProvider:
    """Three calls of ``work`` for a message, a text for their results."""
    return ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
        (lambda r: True, lambda r: tool_calls(("work", {}), ("work", {}), ("work", {}))),
        keep_requests=keep_requests,
    )


def tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


async def test_a_finished_turn_leaves_few_objects_for_the_collector() -> None:
    """A 3-call turn's four messages are kept as a few untracked objects, not the 15 dicts
    and lists they are read as: 27 tracked objects a turn here before, 13 now, of which
    its three finished calls, which the runtime keeps, are 9 and the event loop's
    cancelled timers, not yet swept, 4."""
    turns = 30
    async with (
        Runtime([work], max_running_per_session=3) as runtime,
        Host(runtime, three_calls(keep_requests=False)) as host,
    ):
        session = await host.create_session(AgentConfig())
        for turn in range(3):  # warm-up: whatever a first turn makes once
            session.post(f"warm-up {turn}")
            await session.wait_idle()
        before = tracked()
        for turn in range(turns):
            session.post(f"turn {turn}")
            await session.wait_idle()
        grown = tracked() - before
        assert len(session.history) == 4 * (turns + 3) and not session.errors
    assert grown / turns <= 16, f"{grown / turns:.1f} tracked objects a turn"


async def test_the_models_message_is_packed_as_it_comes() -> None:
    """Nothing extends a model's message, so it is packed at once: a session at rest keeps
    none of its answer's blocks for the collector (its 300 blocks and their lists, kept as
    they were, made about 600 tracked objects), and reads them back as they were."""

    def blocks() -> list[dict[str, object]]:
        return [{"type": "text", "text": f"part {n}", "citations": []} for n in range(300)]

    provider = ScriptedProvider(
        (lambda r: True, lambda r: ModelResponse(blocks(), "end_turn")), keep_requests=False
    )
    async with Runtime([]) as runtime, Host(runtime, provider) as host:
        warmed = await host.create_session(AgentConfig())
        warmed.post("warm-up")
        await warmed.wait_idle()
        session = await host.create_session(AgentConfig())
        before = tracked()
        session.post("hello")
        await session.wait_idle()
        grown = tracked() - before
        assert session.history[-1] == {"role": "assistant", "content": blocks()}
    assert grown < 100, f"{grown} tracked objects"


async def test_what_the_model_read_stays_as_it_was_sent() -> None:
    """A request holds the history as it was when sent: later turns add nothing to it, and
    it reads, compares and prints as the list of messages it was."""
    provider = three_calls()
    async with Runtime([work]) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig())
        session.post("first")
        await session.wait_idle()
        session.post("second")
        await session.wait_idle()
    first, answered, second, _ = provider.requests
    said = {"role": "user", "content": [{"type": "text", "text": "first"}]}
    assert list(first.messages) == [said] and first.messages == [said]
    assert len(answered.messages) == 3 and len(second.messages) == 5
    assert list(second.messages) == session.history[:5]
    assert str(first.messages) == str([said])
    assert json.loads(json.dumps(list(second.messages))) == session.history[:5]


async def test_each_read_of_the_history_is_its_own_copy() -> None:
    """Changing what ``history`` gave changes neither the session nor the next request."""
    provider = three_calls()
    async with Runtime([work]) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig())
        session.post("first")
        await session.wait_idle()
        read = session.history
        read[0]["content"][0]["text"] = "changed"
        read.clear()
        session.post("second")
        await session.wait_idle()
    assert session.history[0] == {"role": "user", "content": [{"type": "text", "text": "first"}]}
    assert provider.requests[-1].messages[0]["content"][0]["text"] == "first"


async def test_replies_and_title_follow_the_history_as_it_grows() -> None:
    """What a session's replies and title say is read from the packed history, the newest
    message included, after each turn as after the first."""
    async with Runtime([work]) as runtime, Host(runtime, three_calls()) as host:
        session = await host.create_session(AgentConfig())
        assert (session.replies, session.title) == ([], "")
        for turn in range(3):
            session.post(f"  turn\n{turn}  ")
            await session.wait_idle()
            said = [m for m in session.history if m["role"] == "assistant"]
            assert (
                session.replies
                == ["", "done"] * (turn + 1)
                == ["".join(b.get("text", "") for b in m["content"]) for m in said]
            )
            assert session.title == "turn 0"


async def test_a_listing_counts_the_messages_without_building_them() -> None:
    """``message_count`` is ``len(history)``, and what a host's listing shows."""
    async with Runtime([work]) as runtime, Host(runtime, three_calls()) as host:
        session = await host.create_session(AgentConfig())
        assert session.message_count == 0
        session.post("first")
        await session.wait_idle()
        (listed,) = await host.sessions()
        assert session.message_count == len(session.history) == listed.messages == 4


async def test_a_long_history_reads_as_the_list_it_replaces_across_its_chunks(
    tmp_path: Path,
) -> None:
    """Settled messages are kept in chunks (of 32): at every length across several chunk
    boundaries, what the model is sent (index, negative index, slice, iteration), the
    history, the count and the replies match the plain list of what was said; and so do
    they once the session is resumed from its store, its packed history read afresh."""
    said: list[dict[str, object]] = []
    sent: list[list[object]] = []

    def reply(request: ModelRequest) -> ModelResponse:
        messages = request.messages
        assert len(messages) == len(said)
        assert messages[0] == said[0] and messages[-1] == said[-1]
        assert messages[-3:] == said[-3:] and messages[len(said) // 2] == said[len(said) // 2]
        sent.append(list(messages))
        return text(f"reply {len(sent)}")

    provider = ScriptedProvider((lambda r: True, reply))
    async with hosted(tmp_path / "s.db", provider) as (_, _, host):
        session = await host.create_session(AgentConfig(), session_id="s")
        for turn in range(52):
            said.append({"role": "user", "content": [{"type": "text", "text": f"m{turn}"}]})
            session.post(f"m{turn}")
            await session.wait_idle()
            said.append(
                {"role": "assistant", "content": [{"type": "text", "text": f"reply {turn + 1}"}]}
            )
            assert sent[-1] == said[:-1]
            assert session.history == said and session.message_count == len(said)
        assert session.replies == [f"reply {number}" for number in range(1, 53)]
        assert list(reversed(session.history)) == said[::-1] and not session.errors
    async with hosted(tmp_path / "s.db", provider) as (_, _, host):
        session = await host.resume("s")
        assert session.replies == [f"reply {number}" for number in range(1, 53)]
        assert session.title == "m0" and session.history == said


async def test_messages_holding_values_of_their_own_types_read_back_as_they_were() -> None:
    """A reply whose block holds a value ``marshal`` cannot pack (a ``Fraction``) is kept as
    it is, in a chunk of its own kind: the history, a request drawn mid-chunk and the
    replies read back the same values, across several chunk boundaries."""
    said: list[object] = []

    def reply(request: ModelRequest) -> ModelResponse:
        assert list(request.messages) == said[: len(request.messages)]
        return ModelResponse(
            [{"type": "text", "text": f"reply {len(said)}", "weight": Fraction(1, 3)}],
            "end_turn",
        )

    provider = ScriptedProvider((lambda r: True, reply))
    async with Runtime([work]) as runtime, Host(runtime, provider) as host:
        session = await host.create_session(AgentConfig())
        for turn in range(40):
            said.append({"role": "user", "content": [{"type": "text", "text": f"m{turn}"}]})
            session.post(f"m{turn}")
            await session.wait_idle()
            said.append(session.history[-1])
        assert session.history == said and not session.errors
        assert session.history[33]["content"][0]["weight"] == Fraction(1, 3)
        assert session.history[5:40] == said[5:40]
        assert session.replies == [f"reply {2 * turn + 1}" for turn in range(40)]


@agentos.tool
async def broken(args: Empty) -> int:
    """Fails at once."""
    raise ValueError("no")


async def test_ended_calls_are_found_by_either_id_once_the_runtime_forgot_them(
    clock: ManualClock,
) -> None:
    """A session's index of its calls seals those that ended (32 at a time, compressed):
    once the runtime forgot them all, each of 42 is still found by its ``tool_use`` id and
    by its runtime id, with how it ended, and the chat shows the same."""
    empty: dict[str, object] = {}
    uses = [("work", empty)] * 20 + [("broken", empty)]
    provider = ScriptedProvider(
        (lambda r: bool(last_tool_results(r)), lambda r: text("done")),
        (lambda r: True, lambda r: tool_calls(*uses)),
    )
    async with (
        Runtime([work, broken], clock=clock, retention_seconds=10) as runtime,
        Host(runtime, provider) as host,
    ):
        session = await host.create_session(AgentConfig())
        for message in ("one", "two"):
            session.post(message)
            await session.wait_idle()
        ended = {
            str(snapshot.provider_call_id): (snapshot.call_id, snapshot.status)
            for snapshot in runtime.list_calls(session.session_id)
        }
        assert len(ended) == 42
        clock.advance(11)
        await settle(runtime)
        assert runtime.list_calls(session.session_id) == []
        for use_id, (call_id, status) in ended.items():
            for either in (use_id, call_id):
                found = host.find_call(session.session_id, either)
                assert found is not None
                assert (found.call_id, found.internal_id, found.status) == (use_id, call_id, status)
        shown = [call.status for entry in session.chat for call in entry.calls]
        assert sorted(shown) == sorted(status for _, status in ended.values())
