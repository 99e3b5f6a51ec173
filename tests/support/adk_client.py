"""A client of ``agentos a2a`` written with Google's ADK (2.13, run by ``make test``'s
``.venv/google-adk``): its ``RemoteA2aAgent``, the agent at URL (its card read from there),
run by an ADK ``InMemoryRunner``, is sent each MESSAGE in turn, in one ADK session, showing
TOKEN. Usage: ``adk_client.py URL TOKEN MESSAGE...``.

It prints a JSON line for each ADK event as it comes: the message's number, what the event
says (or its error), and the A2A task, context and task state ADK read off it."""

from __future__ import annotations

import asyncio
import json
import sys
import warnings

import httpx
from a2a.client import ClientConfig
from a2a.client import ClientFactory
from google.adk.agents.remote_a2a_agent import AGENT_CARD_WELL_KNOWN_PATH  # type: ignore[import-untyped]
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner  # type: ignore[import-untyped]
from google.genai import types  # type: ignore[import-untyped]

warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")


async def main(url: str, token: str, messages: list[str]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        remote = RemoteA2aAgent(
            name="worker",
            agent_card=url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH,
            a2a_client_factory=ClientFactory(ClientConfig(httpx_client=http)),
        )
        runner = InMemoryRunner(agent=remote, app_name="adk-client")
        session = await runner.session_service.create_session(
            app_name="adk-client", user_id="tester"
        )
        for number, text in enumerate(messages):
            asked = types.Content(role="user", parts=[types.Part(text=text)])
            async for event in runner.run_async(
                user_id="tester", session_id=session.id, new_message=asked
            ):
                meta = event.custom_metadata or {}
                response = meta.get("a2a:response")
                parts = event.content.parts if event.content and event.content.parts else []
                line = {
                    "message": number,
                    "said": "".join(part.text for part in parts if part.text),
                    "error": event.error_message,
                    "task": meta.get("a2a:task_id"),
                    "context": meta.get("a2a:context_id"),
                    "state": response["status"]["state"] if isinstance(response, dict) else None,
                }
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
