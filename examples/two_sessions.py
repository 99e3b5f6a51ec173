"""Two conversations on one host, offline: a slow tool, a question meanwhile, a status, a cancel.

Alice asks for a slow crunch of the Q3 numbers. The turn yields after 200 ms
(``YieldOnTimeout``): the model gets a placeholder for the running call and
says so. Alice asks something else and is answered at once; the program and
then the model look at the call's progress; when the crunch ends, its
outcome reaches the model as a message of its own. Meanwhile Bob starts a
crunch that would take a minute and has the model cancel it.

The model is a ``ScriptedProvider``: a list of ``(predicate, respond)`` rules
over the request, the first match answers. Run it: ``python examples/two_sessions.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
from pydantic import BaseModel
from pydantic import Field

from agentos import AgentConfig
from agentos import CallSnapshot
from agentos import Host
from agentos import ModelRequest
from agentos import ModelResponse
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos import ToolContext
from agentos import YieldOnTimeout
from agentos import tool
from agentos.testing import blocks_of
from agentos.testing import last_tool_results
from agentos.testing import last_user_text
from agentos.testing import text
from agentos.testing import tool_calls


class CrunchInput(BaseModel):
    dataset: str = Field(description="Which numbers to crunch, e.g. 'q3'")
    index_seconds: float = Field(1.5, gt=0, le=600, description="How long indexing takes")


@tool(timeout=120)
async def crunch(args: CrunchInput, ctx: ToolContext) -> dict[str, object]:
    """Crunch a dataset: load it in five steps, then index it (slow)."""
    for step in range(1, 6):
        await anyio.sleep(0.05)
        ctx.progress({"percent": step * 10, "stage": "loading"})
    ctx.progress({"percent": 50, "stage": "indexing"})
    await anyio.sleep(args.index_seconds)
    return {"dataset": args.dataset, "rows": 1200, "total": 48_213.5}


# ------------------------------------------------------------------ the scripted model


def asked(phrase: str) -> Callable[[ModelRequest], bool]:
    """A user message with this phrase, and no tool results to answer."""
    return lambda r: phrase in last_user_text(r).lower() and not last_tool_results(r)


def crunch_id(request: ModelRequest) -> str:
    """The id of the model's latest ``crunch`` call, as the model knows it (``toolu_...``)."""
    uses = [
        block["id"]
        for message in request.messages
        for block in blocks_of(message)
        if block.get("type") == "tool_use" and block.get("name") == "crunch"
    ]
    return str(uses[-1])


def answer_results(request: ModelRequest) -> ModelResponse:
    """Say what the tool results in the request tell."""
    said = []
    for block in last_tool_results(request):
        value = json.loads(block["content"])
        if value.get("agentos_placeholder"):
            said.append("The crunch is running in the background; I will tell you when it ends.")
        elif "is_final" in value:  # get_tool_call_status: status, progress, result, error...
            latest = value["progress"][-1]["payload"]
            said.append(
                f"The crunch is {value['status']}: {latest['percent']}%, {latest['stage']}."
            )
        elif "cancelled" in value:  # cancel_tool_call: cancelled, previous_status
            done = "Cancelled it" if value["cancelled"] else "Could not cancel it"
            said.append(f"{done} (it was {value['previous_status']}).")
    return text(" ".join(said))


def answer_outcome(request: ModelRequest) -> ModelResponse:
    """A late outcome: ``[tool call ID (crunch) finished: completed] result: {...}``."""
    message = last_user_text(request)
    status = message.split("finished: ", 1)[1].split("]", 1)[0]
    if status != "completed":
        return text(f"The crunch ended {status}.")
    result = json.loads(message.split("result: ", 1)[1])
    return text(
        f"The {result['dataset']} crunch is done: {result['rows']} rows, total {result['total']}."
    )


def scripted_model() -> ScriptedProvider:
    return ScriptedProvider(
        (asked("crunch the q3"), lambda r: tool_calls(("crunch", {"dataset": "q3"}))),
        (
            asked("crunch everything"),
            lambda r: tool_calls(("crunch", {"dataset": "all", "index_seconds": 60})),
        ),
        (asked("2+2"), lambda r: text("4.")),
        (
            asked("how is the crunch"),
            lambda r: tool_calls(("get_tool_call_status", {"tool_call_id": crunch_id(r)})),
        ),
        (
            asked("cancel"),
            lambda r: tool_calls(("cancel_tool_call", {"tool_call_id": crunch_id(r)})),
        ),
        (lambda r: bool(last_tool_results(r)), answer_results),
        (lambda r: "finished: " in last_user_text(r), answer_outcome),
    )


# ------------------------------------------------------------------ the program


def stage_of(snapshot: CallSnapshot) -> object:
    payload = snapshot.progress[-1].payload if snapshot.progress else None
    return payload.get("stage") if isinstance(payload, dict) else None


async def stage_reached(runtime: Runtime, call: CallSnapshot, stage: str) -> None:
    """Until the call's latest progress report names this stage (or the call ends)."""
    async with runtime.subscribe(call.session_id) as events:  # first, so no report is missed
        snapshot = runtime.status(call.call_id)
        while not (snapshot.is_final or stage_of(snapshot) == stage):
            event = await events.receive()
            if event.call_id == call.call_id:
                snapshot = runtime.status(call.call_id)


def show(who: str, session: Session, before: int) -> None:
    """Print what the model said since it had said ``before`` replies."""
    for reply in session.replies[before:]:
        if reply:
            print(f"{who:>5} < {reply}")


async def talk(who: str, session: Session, message: str) -> None:
    """Post a message, wait until the model has answered, print what it said."""
    print(f"{who:>5} > {message}")
    before = len(session.replies)
    session.post(message)
    await session.wait_idle()
    show(who, session, before)


async def main() -> None:
    config = AgentConfig(async_yield_strategy=YieldOnTimeout(milliseconds=200))
    async with Runtime([crunch]) as runtime, Host(runtime, scripted_model()) as host:
        alice = await host.create_session(config, session_id="alice")
        bob = await host.create_session(config, session_id="bob")

        await talk("alice", alice, "Crunch the Q3 numbers.")
        await talk("bob", bob, "Crunch everything since 2010.")
        await talk("alice", alice, "While that runs: what is 2+2?")

        (call,) = alice.outstanding()  # the call the model got a placeholder for
        await stage_reached(runtime, call, "indexing")
        snapshot = runtime.status(call.call_id)
        print(
            f"program: alice's {snapshot.tool_name} is {snapshot.status.value}, "
            f"latest progress {json.dumps(snapshot.progress[-1].payload)}"
        )

        await talk("alice", alice, "How is the crunch going?")
        await talk("bob", bob, "Please cancel that, I don't need it.")

        before = len(alice.replies)
        await alice.wait_settled()  # until the model has heard how her call ended
        show("alice", alice, before)
        for session in (alice, bob):
            for ended in runtime.list_calls(session.session_id):
                why = f" ({ended.cancel_reason})" if ended.cancel_reason else ""
                print(
                    f"program: {session.session_id}'s {ended.tool_name} of "
                    f"{ended.tool_input['dataset']!r} is {ended.status.value}{why}"
                )


if __name__ == "__main__":
    anyio.run(main)
