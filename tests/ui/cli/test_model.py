"""A model that cannot run is an error (issue 45): an agent file naming a Claude model,
with no ``ANTHROPIC_API_KEY``, is refused in one line by ``run``, ``resume``, ``say`` and
``chat`` (exit 2), instead of being answered by the demo's scripted calendar model; the
page ``agentos serve`` serves says so in words when a session starts. An agent file that
names no model, and the demo, keep the scripted model offline."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import message_body
from tests.support.browser import CHROMIUM
from tests.support.browser import CHROMIUM_ARGS
from tests.support.cli import agentos
from tests.support.cli import chat_in_a_terminal
from tests.support.cli import read_all
from tests.ui.cli.conftest import asked_on_the_page
from tests.ui.cli.conftest import serving

WORDS = ("ANTHROPIC_API_KEY", 'model = "test"', "'claude-sonnet-4-5'")


@pytest.fixture
def offline(env: dict[str, str]) -> dict[str, str]:
    """No key and no endpoint: nothing can ask Claude."""
    return {k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}


@pytest.fixture
def claude(tmp_path: Path) -> str:
    path = tmp_path / "claude.toml"
    path.write_text('name = "mine"\nmodel = "claude-sonnet-4-5"\ntools = ["weather"]\n')
    return str(path)


def test_run_refuses_a_claude_model_without_the_key(
    offline: dict[str, str], claude: str, tmp_path: Path
) -> None:
    refused = agentos(offline, "run", "--agent", claude, "weather in Oslo?")
    refused.one_line_error(2, "claude.toml", *WORDS)
    assert not (tmp_path / "agentos.db").exists(), "nothing ran"
    chat = agentos(offline, "chat", "--agent", claude)
    chat.one_line_error(2, "claude.toml", *WORDS)


def test_a_session_of_a_claude_agent_is_not_continued_without_the_key(
    offline: dict[str, str], claude: str, api: MessagesStandIn
) -> None:
    """Started with the key (a stand-in of the API), the session cannot go on without it:
    its stored agent names Claude."""
    api.always = Reply(200, message_body([{"type": "text", "text": "Sunny."}]))
    keyed = {**offline, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.url}
    started = agentos(keyed, "run", "--agent", claude, "weather in Oslo?")
    assert started.code == 0, started
    session = started.json["session_id"]
    for args in (
        ("resume", session),
        ("resume", session, "--message", "and tomorrow?"),
        ("say", session, "and tomorrow?"),
    ):
        agentos(offline, *args).one_line_error(2, f"the agent of session {session}", *WORDS)
    code, screen = chat_on_a_terminal(offline, session)
    assert code == 2, screen
    assert "error: " in screen and all(word in screen for word in WORDS), screen
    assert len(api.requests) == 1, "only the keyed run asked the model"
    assert agentos(offline, "show", session, "--json").json["status"] != "running"


def chat_on_a_terminal(env: dict[str, str], session: str) -> tuple[int, str]:
    """``agentos chat SESSION`` with stdin, stdout and stderr on one pseudo-terminal: its
    exit code and what the terminal showed."""
    with chat_in_a_terminal(env, session) as chat:
        read_all(chat.controller, chat.shown)  # until the process closes the terminal
        code = chat.process.wait(timeout=30)
    return code, re.sub(r"\s+", " ", chat.shown.decode(errors="replace"))


def test_an_agent_file_naming_no_model_and_the_demo_stay_offline(
    offline: dict[str, str], tmp_path: Path
) -> None:
    unnamed = tmp_path / "unnamed.toml"
    unnamed.write_text('name = "mine"\n')
    for args in (("--agent", str(unnamed)), ()):
        done = agentos(offline, "run", *args, "--wait-for-async", "weather in Oslo?")
        assert done.code == 0, done
        assert done.err.splitlines()[0].startswith("model: scripted"), done.err
    session = done.json["session_id"]
    assert agentos(offline, "say", session, "and Bergen?", "--wait-for-async").code == 0
    named = tmp_path / "scripted.toml"
    named.write_text('model = "scripted"\n')
    assert agentos(offline, "run", "--agent", str(named), "weather in Oslo?").code == 0


def test_the_page_says_in_words_that_the_model_cannot_run(
    offline: dict[str, str], claude: str
) -> None:
    """``agentos serve`` still serves the page (its stored sessions can be looked at); a
    session it starts shows why no answer comes, and no scripted one does."""
    state, said = asked_on_the_page(offline, claude, "weather in Oslo?", "ANTHROPIC_API_KEY")
    (error,) = state["errors"]
    assert all(word in error for word in WORDS), error
    assert [(entry["role"], entry["text"]) for entry in state["chat"]] == [
        ("user", "weather in Oslo?")
    ], "no scripted answer"
    assert said[0].startswith("model: none can run: model 'claude-sonnet-4-5' needs ANTHROPIC_")


@pytest.mark.skipif(
    not os.path.exists(CHROMIUM) and os.environ.get("CI") != "true",
    reason=f"needs Debian's chromium at {CHROMIUM}",
)
@pytest.mark.anyio
async def test_a_person_sees_why_in_the_browser(offline: dict[str, str], claude: str) -> None:
    from playwright.async_api import async_playwright
    from playwright.async_api import expect

    with serving(offline, claude) as (url, _):
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
            )
            page = await browser.new_page()
            await page.goto(url)
            await page.click("#new-session")
            await page.wait_for_url("**/sessions/*")
            await page.fill("#message", "weather in Oslo?")
            await page.click("#composer button")
            errors = page.locator("#session-errors")
            await expect(errors).to_contain_text("needs ANTHROPIC_API_KEY", timeout=15_000)
            for word in WORDS:
                await expect(errors).to_contain_text(word)
            await expect(page.locator(".entry.agent")).to_have_count(0)
            await browser.close()
