"""Running a call somewhere else: a deployment runner, still tracked as an entity.

``LocalProcessRunner`` is the runner that ships: it starts a command, writes a
JSON envelope (with a fresh token) on its stdin, and accepts only a JSON reply
on stdout that carries the same token. The process lives in its own process
group, so cancelling the call kills it whole.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agentos._kernel.context import ToolContext
from agentos._kernel.tools import ToolFailure
from components import Json
from components import JsonObject


@dataclass(frozen=True, slots=True)
class IsolatedCall:
    """What an isolated runner is asked to run, the disposition it runs under (a session's
    ``run_isolated`` in the background, ``run_sync`` when the turn waits), and the longest
    result's JSON text the runtime takes (a runner may refuse a longer one where it is made)."""

    call_id: str
    session_id: str
    tool_name: str
    tool_input: JsonObject
    disposition: str = "run_isolated"
    max_result_chars: int | None = None


class IsolatedRunner(Protocol):
    """Runs one call and returns its result (or a ``ToolFailure``); raising fails the call."""

    async def run(self, call: IsolatedCall, ctx: ToolContext) -> Json | ToolFailure: ...


class LocalProcessRunner:
    """Run calls in a local process: envelope on stdin, token-checked JSON reply on stdout.

    The envelope is ``{"token", "call_id", "session_id", "tool_name", "tool_input",
    "disposition"}``; the reply is ``{"token", "result"}`` or ``{"token", "error"}``: exactly
    one of the two, so a reply that carries both (or neither) fails the call.
    """

    def __init__(self, command: Sequence[str], *, cwd: str | None = None) -> None:
        if not command or not all(isinstance(part, str) for part in command):
            raise ValueError("command must be a non-empty list of strings")
        self.command = list(command)
        self.cwd = cwd

    async def run(self, call: IsolatedCall, ctx: ToolContext) -> Json | ToolFailure:
        token = secrets.token_hex(16)
        envelope = {
            "token": token,
            "call_id": call.call_id,
            "session_id": call.session_id,
            "tool_name": call.tool_name,
            "tool_input": call.tool_input,
            "disposition": call.disposition,
        }
        done = await ctx.run_process(
            self.command, input=json.dumps(envelope).encode(), cwd=self.cwd
        )
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip()[-300:]
            return ToolFailure(f"the runner exited with status {done.returncode}: {detail}")
        try:
            reply = json.loads(done.stdout)
        except ValueError:
            return ToolFailure("the runner's reply is not JSON")
        if not isinstance(reply, dict) or reply.get("token") != token:
            return ToolFailure("the runner's reply does not carry this call's token")
        has_result, has_error = "result" in reply, "error" in reply
        if has_result == has_error:
            which = "both" if has_result else "neither"
            return ToolFailure(
                f"the runner's reply must carry exactly one of 'result' and 'error', not {which}"
            )
        if has_error:
            return ToolFailure(str(reply["error"]))
        result: Json = reply["result"]
        return result
