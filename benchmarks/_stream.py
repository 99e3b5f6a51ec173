"""A streamed answer's first words, from the model's stream to the screen (issue 28).

The real ``anthropic`` SDK streams from the loopback stand-in of the Messages API
(``agentos.testing.MessagesStandIn``), which stamps when it sends each reply's first text
delta. Each of 30 turns is answered after 0.3 s (a model's time to its first token; the
front ends pace their redraws, and a reply that starts is drawn at once), in deltas of
five characters 10 ms apart; every reply starts with its own number.

``stream.first_token_to_tui_ms_*``: from the stand-in sending the first delta to the
first frame of ``agentos chat`` (Textual, headless, 80x24) that shows it.
``stream.first_token_to_page_ms_*``: to the session page in Debian's chromium showing
it (a MutationObserver stamps it; one machine, one wall clock). Skipped, with a note,
without chromium. ``stream.first_token_to_screen_ms`` is the larger of the two p99s.
The collector is tuned (``agentos.tune_gc()``), as the command line's ``agentos chat``
and ``agentos serve`` run: untuned, a full collection lands inside a turn now and then
(125-160 ms here), as ``soak.default_gc.max_tick_ms`` shows.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn

from agentos import AgentConfig
from agentos import AnthropicProvider
from agentos import Host
from agentos import Runtime
from agentos import Session
from agentos import tune_gc
from agentos.testing import MessagesStandIn
from agentos.testing import Reply
from agentos.testing import message_body
from agentos.tui import ChatApp
from agentos.web import listen
from agentos.web import make_app
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import percentile
from benchmarks._common import quiet_logs
from tests.support.browser import CHROMIUM
from tests.support.browser import CHROMIUM_ARGS

TURNS = 30
FIRST_TOKEN_SECONDS = 0.3
NUMBER = re.compile(r"R(\d{3}) ")
OBSERVE = """() => {
  window.__seen = {};
  new MutationObserver(() => {
    const text = document.querySelector("#streaming .text");
    const found = text && /R(\\d{3}) /.exec(text.textContent);
    if (found && !(found[1] in window.__seen)) {
      window.__seen[found[1]] = performance.timeOrigin + performance.now();
    }
  }).observe(document.getElementById("chat"),
              {subtree: true, childList: true, characterData: true});
}"""


def reply(turn: int) -> Reply:
    words = f"R{turn:03d} the weather in Oslo is clear today, and tomorrow as well."
    body = message_body([{"type": "text", "text": words}])
    return Reply(200, body, delay=FIRST_TOKEN_SECONDS, chunk=5, event_delay=0.01)


@asynccontextmanager
async def host_on(api: MessagesStandIn) -> AsyncIterator[tuple[Host, Runtime]]:
    provider = AnthropicProvider(api_key="sk-bench", base_url=api.url, max_retries=0)
    try:
        async with Runtime([]) as runtime, Host(runtime, provider) as host:
            yield host, runtime
    finally:
        await provider.aclose()


class Watched(ChatApp):
    """``ChatApp`` that stamps the first frame showing each turn's number."""

    seen: dict[int, float]

    def post_display_hook(self) -> None:
        forming = self.session.streaming
        found = NUMBER.match(forming.text) if forming is not None else None
        if found and int(found[1]) not in self.seen:
            self.seen[int(found[1])] = time.time()


async def to_tui() -> list[float]:
    with MessagesStandIn() as api:
        async with host_on(api) as (host, _):
            session = await host.create_session(AgentConfig())
            app = Watched(session, host.runtime, theme="dark")
            app.seen = {}
            async with app.run_test(size=(80, 24)):
                for turn in range(TURNS):
                    await one_turn(api, session, turn)
        return [(app.seen[turn] - api.first_delta_at[turn]) * 1000 for turn in range(TURNS)]


async def one_turn(api: MessagesStandIn, session: Session, turn: int) -> None:
    api.script(reply(turn))
    session.post(f"question {turn}")
    with anyio.fail_after(30):
        await session.wait_idle()
    assert not session.errors, session.errors


async def to_page() -> list[float]:
    from playwright.async_api import async_playwright

    with MessagesStandIn() as api:
        async with host_on(api) as (host, runtime), async_playwright() as playwright:
            listening = listen("127.0.0.1", 0)
            app = make_app(host, runtime, config=AgentConfig())
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: server.serve(sockets=[listening]))
                session = await host.create_session(AgentConfig())
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
                )
                page = await browser.new_page()
                url = f"http://127.0.0.1:{listening.getsockname()[1]}"
                await page.goto(f"{url}/sessions/{session.session_id}")
                live = "document.getElementById('connection').textContent === 'live'"
                await page.wait_for_function(live)
                await page.evaluate(OBSERVE)
                for turn in range(TURNS):
                    await one_turn(api, session, turn)
                await anyio.sleep(0.5)
                seen: dict[str, float] = await page.evaluate("window.__seen")
                await browser.close()
                server.should_exit = True
            app.state.pages.close()
    return [seen[f"{turn:03d}"] - api.first_delta_at[turn] * 1000 for turn in range(TURNS)]


def figures(name: str, latencies: list[float]) -> Figures:
    return {
        f"stream.first_token_to_{name}_ms_p50": round(percentile(latencies, 0.5), 2),
        f"stream.first_token_to_{name}_ms_p99": round(percentile(latencies, 0.99), 2),
    }


async def measure() -> Figures:
    found = figures("tui", await to_tui())
    worst = float(found["stream.first_token_to_tui_ms_p99"])
    try:
        page = figures("page", await to_page())
    except Exception as error:  # no chromium here: the page's figure is left out
        found["stream.page_skipped"] = f"the page was not measured: {type(error).__name__}"
    else:
        found.update(page)
        worst = max(worst, float(page["stream.first_token_to_page_ms_p99"]))
    found["stream.first_token_to_screen_ms"] = worst
    return found


def main() -> None:
    quiet_logs()
    tune_gc()
    emit(anyio.run(measure))


if __name__ == "__main__":
    main()
