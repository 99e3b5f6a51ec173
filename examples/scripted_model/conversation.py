"""A model you script, offline: a slow download, a question while it runs, a cancel.

The agent file (agent.toml) names its model by import path, ``model = "replies:reply"``:
agentos asks that function every turn with the conversation so far, and it answers with
text and tool calls. Here a person asks for a download (a slow tool call); the turn
yields after 200 ms and the model says the download runs in the background; the person
asks something else and is answered at once, the download still running; then the person
asks to cancel it, and the model cancels the call with the ``cancel_tool_call``
capability. Nothing waits on a clock: each step waits until the model has answered.

Run it: ``python examples/scripted_model/conversation.py``. Talk to the same agent
yourself: ``agentos chat --agent examples/scripted_model/agent.toml``.
"""

from __future__ import annotations

from pathlib import Path

import anyio

from agentos import AgentConfig
from agentos import FunctionModel
from agentos import Host
from agentos import Runtime
from agentos import Session
from agentos import agent_tools

HERE = Path(__file__).resolve().parent


async def talk(session: Session, message: str) -> None:
    """Post a message, wait until the model has answered, print what it said."""
    print(f"  you > {message}")
    before = len(session.replies)
    session.post(message)
    await session.wait_idle()
    for said in session.replies[before:]:
        if said:
            print(f"agent < {said}")


def show_calls(runtime: Runtime, session: Session) -> None:
    for call in runtime.list_calls(session.session_id):
        why = f" ({call.cancel_reason})" if call.cancel_reason else ""
        print(f"program: the download of {call.tool_input['year']} is {call.status.value}{why}")


async def main() -> None:
    config = AgentConfig.from_file(HERE / "agent.toml")
    tools = agent_tools(config)  # downloads:download, found beside the file
    model = FunctionModel.from_path(config.model, config.import_path)  # replies:reply
    async with Runtime(tools.tools) as runtime, Host(runtime, model) as host:
        session = await host.create_session(config)
        await talk(session, "Please download the 2024 archive.")
        show_calls(runtime, session)
        await talk(session, "While that runs: how many days has a leap year?")
        await talk(session, "Actually, cancel the download.")
        await session.wait_settled()  # until the model has heard how every call ended
        show_calls(runtime, session)


if __name__ == "__main__":
    anyio.run(main)
