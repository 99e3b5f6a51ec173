"""The live web page under load: how fast a call's progress shows, how many pages one server holds.

``--dom``: one session page open in Debian's chromium (Playwright), one call
reporting progress every 0.25 s (more slowly than the page's coalescing
window, so each report is its own update), 200 reports. A MutationObserver
in the page stamps when each new value shows in the progress bar; the
latency is that stamp minus the moment the tool reported (one machine, one
wall clock). ``web.event_to_dom_p99_ms`` is its 99th percentile.

``--clients N``: one server, one session whose call reports progress 20
times a second, and N pages' event streams held open by a second process
(so the clients' work does not land on the server's loop). The server's
event loop lag (a 10 ms sleep's overshoot, the runtime's ticks share that
loop) is measured without pages and with them. ``web.sse_clients`` is the
number of streams that received the progress, ``web.loop_lag_p99_ms`` and
``web.loop_lag_p99_ms_no_pages`` the lag.

``--stalled N``: a session whose chat already holds ``--chat-kb`` KB (1 KB
messages and their answers); N pages (in a second process) open its stream
and never read it, on sockets with a 4 KiB receive buffer; then 200 changes
(a message of 1 KB and the model's answer each, one every 0.1 s) while a
reader (a thread of that process) asks for the session's state every 20 ms
over HTTP.
``web.stalled_streams_rss_growth_mb`` is the server's RSS growth from before
the pages connected to after the changes, ``web.stalled_streams_api_p99_ms``
the 99th percentile of those answers' latency.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette

from agentos import AgentConfig
from agentos import Host
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import Session
from agentos.testing import Puppet
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.web import listen
from agentos.web import make_app
from benchmarks._common import Figures
from benchmarks._common import emit
from benchmarks._common import loop_lag
from benchmarks._common import quiet_logs
from benchmarks._common import settled_rss
from tests.support.browser import CHROMIUM
from tests.support.browser import CHROMIUM_ARGS

REPORTS = 200
SPACING = 0.25
OBSERVE = """() => {
  window.__seen = [];
  let last = null;
  new MutationObserver(() => {
    const bar = document.querySelector("progress");
    const value = bar && bar.getAttribute("value");
    if (value !== null && value !== last) {
      last = value;
      window.__seen.push([Number(value), performance.timeOrigin + performance.now()]);
    }
  }).observe(document.getElementById("chat"), {subtree: true, childList: true, attributes: true});
}"""
CLIENTS = """
import asyncio, json, sys, httpx
async def main(url, count, seconds):
    got = [0] * count
    connected = 0
    async def one(n, client):
        nonlocal connected
        async with client.stream("GET", url) as response:
            connected += 1
            async for line in response.aiter_lines():
                if line.startswith("event: call"):
                    got[n] += 1
    limits = httpx.Limits(max_connections=count + 10)
    async with httpx.AsyncClient(timeout=None, limits=limits) as client:
        tasks = [asyncio.create_task(one(n, client)) for n in range(count)]
        while connected < count:
            await asyncio.sleep(0.05)
        print("connected", flush=True)
        await asyncio.sleep(seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    print(json.dumps({"connected": connected, "receiving": sum(1 for g in got if g > 0)}))
asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
"""

STALLED = """
import http.client, json, socket, sys, threading, time
host, port, path, state = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[5]
count = int(sys.argv[4])
pages = []
for _ in range(count):
    page = socket.socket()
    page.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    page.connect((host, port))
    page.sendall(f"GET {path} HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n".encode())
    pages.append(page)
print("connected", flush=True)
sys.stdin.readline()
latencies, done = [], threading.Event()
def ask():
    connection = http.client.HTTPConnection(host, port, timeout=30)
    while not done.is_set():
        started = time.perf_counter()
        connection.request("GET", state)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, answer.status
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
asker = threading.Thread(target=ask)
asker.start()
sys.stdin.readline()
done.set()
asker.join()
print(json.dumps(latencies), flush=True)
sys.stdin.readline()
"""
CHANGES = 200
WORDS = "a message of about one kilobyte " * 32


@asynccontextmanager
async def serving(chat_kb: int = 0) -> AsyncIterator[tuple[str, Session, Puppet, Starlette]]:
    """A server with one session whose one puppet call runs, after ``chat_kb`` 1 KB
    messages; its URL, session, puppet and app. The model answers any other message "ok"."""
    puppet = Puppet()
    model = ScriptedProvider(
        (lambda r: last_user_text(r) == "start", lambda r: tool_calls(("puppet", {}))),
        (lambda r: True, lambda r: text("ok")),
    )
    listening = listen("127.0.0.1", 0)
    async with Runtime([puppet.tool]) as runtime, Host(runtime, model) as host:
        app = make_app(host, runtime, config=AgentConfig())
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[listening]))
            session = await host.create_session(AgentConfig())
            for number in range(chat_kb):
                session.post(f"{number}: {WORDS}")
                await session.wait_idle()
            session.post("start")
            while not puppet.calls:
                await settle(runtime)
                await anyio.sleep(0.01)
            url = f"http://127.0.0.1:{listening.getsockname()[1]}"
            try:
                yield url, session, puppet, app
            finally:
                server.should_exit = True
        app.state.pages.close()


async def event_to_dom() -> Figures:
    from playwright.async_api import async_playwright

    async with serving() as (url, session, puppet, _), async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_ARGS)
        )
        page = await browser.new_page()
        await page.goto(f"{url}/sessions/{session.session_id}")
        await page.wait_for_selector(".call[data-status=running]")
        await page.evaluate(OBSERVE)
        (call_id,) = puppet.calls
        sent: dict[float, float] = {}
        for number in range(1, REPORTS + 1):
            percent = number / 2
            sent[percent] = time.time() * 1000
            puppet.progress(call_id, {"percent": percent})
            await anyio.sleep(SPACING)
        await anyio.sleep(1.0)
        seen: list[list[float]] = await page.evaluate("window.__seen")
        await browser.close()
    latencies = sorted(at - sent[value] for value, at in seen if value in sent)
    return {
        "web.dom_reports": REPORTS,
        "web.dom_updates_seen": len(latencies),
        "web.event_to_dom_p50_ms": round(_percentile(latencies, 0.5), 2),
        "web.event_to_dom_p99_ms": round(_percentile(latencies, 0.99), 2),
        "web.event_to_dom_max_ms": round(latencies[-1], 2),
    }


async def held_pages(count: int) -> Figures:
    async with serving() as (url, session, puppet, _):
        (call_id,) = puppet.calls
        flowing = anyio.Event()

        async def progress() -> None:
            number = 0
            while not flowing.is_set():
                number += 1
                puppet.progress(call_id, {"percent": number % 100})
                await anyio.sleep(0.05)

        async with anyio.create_task_group() as group:
            group.start_soon(progress)
            alone = await loop_lag(3.0)
            events = f"{url}/api/sessions/{session.session_id}/events"
            command = [sys.executable, "-c", CLIENTS, events, str(count), "4"]
            clients = await anyio.open_process(command, stdout=subprocess.PIPE)
            assert clients.stdout is not None
            lines = _lines(clients.stdout)
            assert (await lines.__anext__()).strip() == "connected"
            loaded = await loop_lag(3.0)
            report: dict[str, Any] = json.loads(await lines.__anext__())
            await clients.wait()
            flowing.set()
    return {
        "web.sse_pages": count,
        "web.sse_clients": report["receiving"],
        "web.loop_lag_p99_ms_no_pages": round(_percentile(alone, 0.99), 2),
        "web.loop_lag_p99_ms": round(_percentile(loaded, 0.99), 2),
    }


async def stalled_pages(count: int, chat_kb: int) -> Figures:
    async with serving(chat_kb) as (url, session, _, app):
        session_id = session.session_id
        host, port = url.removeprefix("http://").split(":")
        before = settled_rss()
        path = f"/api/sessions/{session_id}/events"
        state = f"/api/sessions/{session_id}"
        command = [sys.executable, "-c", STALLED, host, port, path, str(count), state]
        pages = await anyio.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert pages.stdout is not None and pages.stdin is not None
        lines = _lines(pages.stdout)
        assert (await lines.__anext__()).strip() == "connected"
        while app.state.streams.statistics().open < count:
            await app.state.streams.next_change()
        await pages.stdin.send(b"ask\n")
        for number in range(CHANGES):
            session.post(f"{number}: {WORDS}")
            await anyio.sleep(0.1)
        await pages.stdin.send(b"done\n")
        latencies: list[float] = json.loads(await lines.__anext__())
        after = settled_rss()
        await pages.stdin.send(b"exit\n")
        await pages.wait()
    latencies.sort()
    return {
        "web.stalled_streams": count,
        "web.stalled_streams_changes": CHANGES,
        "web.stalled_streams_chat_kb": chat_kb,
        "web.stalled_streams_rss_growth_mb": round((after - before) / 2**20, 1),
        "web.stalled_streams_api_p50_ms": round(_percentile(latencies, 0.5), 2),
        "web.stalled_streams_api_p99_ms": round(_percentile(latencies, 0.99), 2),
    }


async def _lines(stream: Any) -> AsyncIterator[str]:
    buffered = b""
    async for chunk in stream:
        buffered += chunk
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            yield line.decode()


def _percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dom", action="store_true")
    parser.add_argument("--clients", type=int, default=0)
    parser.add_argument("--stalled", type=int, default=0)
    parser.add_argument("--chat-kb", type=int, default=200)
    options = parser.parse_args()
    quiet_logs()
    if options.dom and not os.path.exists(CHROMIUM):
        emit({"web.event_to_dom_skipped": f"no {CHROMIUM}: apt-get install chromium"})
        return
    if options.stalled:
        emit(anyio.run(stalled_pages, options.stalled, options.chat_kb))
        return
    emit(anyio.run(event_to_dom if options.dom else lambda: held_pages(options.clients)))


if __name__ == "__main__":
    main()
