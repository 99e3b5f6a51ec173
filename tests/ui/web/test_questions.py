"""A call's question on the page's API (issue 49): the widget carries it while the call waits,
``POST .../calls/{call_id}/answer`` gives the person's answer to the tool, and every bad body,
wrong field, unknown id and unguarded request is refused saying why, the question left
waiting. A program's host without a hook of its own has its questions declined at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from pydantic import BaseModel

from agentos import Answer
from agentos import Asked
from agentos import CallSnapshot
from agentos import CallStatus
from agentos import Host
from agentos import JsonObject
from agentos import Runtime
from agentos import ScriptedProvider
from agentos import ToolContext
from agentos import tool
from agentos.testing import last_user_text
from agentos.testing import settle
from agentos.testing import text
from agentos.testing import tool_calls
from agentos.web import MAX_BODY
from agentos.web import make_app

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
FORM: JsonObject = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City"},
        "guests": {"type": "integer", "minimum": 1},
        "budget": {"type": "number"},
        "outdoor": {"type": "boolean"},
        "time": {"type": "string", "enum": ["19:00", "20:00"]},
        "diet": {"type": "string", "oneOf": [{"const": "veg", "title": "Vegetarian"}]},
        "extras": {"type": "array", "items": {"type": "string", "enum": ["cake", "wine"]}},
    },
    "required": ["city"],
}


class Booking(BaseModel):
    by_url: bool = False


@tool
async def book(args: Booking, ctx: ToolContext) -> dict[str, object]:
    """Asks where to book (a form, or a page to open), then says what it was told."""
    if args.by_url:
        answer = await ctx.ask("Sign in to book", url="https://example.com/sign-in", source="test")
    else:
        answer = await ctx.ask("Where shall I book?", form=FORM, source="test")
    return {"action": answer.action.value, "content": answer.content, "reason": answer.reason}


def model() -> ScriptedProvider:
    """``book`` asks with a form, ``book by url`` with a page to open; else "ok"."""
    return ScriptedProvider(
        (
            lambda r: last_user_text(r).startswith("book"),
            lambda r: tool_calls(("book", {"by_url": "url" in last_user_text(r)})),
        ),
        (lambda r: True, lambda r: text("ok")),
    )


async def held(asked: Asked) -> Answer | None:
    """A program's own hook: every question waits for the page."""
    return None


@dataclass
class Asking:
    runtime: Runtime
    host: Host
    client: httpx.AsyncClient

    async def session(self) -> str:
        made = await self.client.post("/api/sessions", json={})
        assert made.status_code == 201, made.text
        return str(made.json()["session_id"])

    async def asked(self, session_id: str, words: str = "book") -> CallSnapshot:
        """``words`` posted to the session, until its call asks (or has ended)."""
        posted = await self.client.post(
            f"/api/sessions/{session_id}/messages", json={"text": words}
        )
        assert posted.status_code == 202, posted.text
        with anyio.fail_after(5):
            while True:
                await settle(self.runtime)
                for call in self.runtime.list_calls(session_id):
                    if call.question is not None or call.status.is_final:
                        return call
                await anyio.lowlevel.checkpoint()

    def answer(self, session_id: str, call_id: str, **request: Any) -> Any:
        return self.client.post(f"/api/sessions/{session_id}/calls/{call_id}/answer", **request)

    async def refuses(
        self,
        session_id: str,
        call_id: str,
        request: dict[str, Any],
        status: int,
        code: str,
        words: str,
    ) -> None:
        """The answer ``request`` is refused with ``status`` and ``code``, saying ``words``."""
        answer = await self.answer(session_id, call_id, **request)
        assert (answer.status_code, answer.json()["error"]["code"]) == (status, code), request
        assert words in answer.json()["error"]["message"], (request, answer.json())

    async def still_asks(self, call_id: str) -> None:
        await settle(self.runtime)
        assert self.runtime.status(call_id).question is not None, "nobody answered it"

    async def widget(self, session_id: str, call_id: str) -> dict[str, Any]:
        state = (await self.client.get(f"/api/sessions/{session_id}")).json()["state"]
        widget: dict[str, Any] = state["calls"][call_id]
        return widget


@asynccontextmanager
async def asking(*, hook: bool = True, token: str | None = None) -> AsyncIterator[Asking]:
    """The page's app over a host whose calls ask (its hook ``held`` unless ``hook`` is
    False), driven over httpx's ASGI transport."""
    async with (
        Runtime([book]) as runtime,
        Host(runtime, model(), ask_person=held if hook else None) as host,
    ):
        app = make_app(host, runtime, token=token)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield Asking(runtime, host, client)
        app.state.pages.close()


async def test_the_question_shows_on_the_call_and_the_answer_reaches_the_tool() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        widget = await a.widget(session_id, call.call_id)
        assert widget["status"] == "running", "a call that asks runs on"
        question = widget["question"]
        assert (question["message"], question["form"], question["source"]) == (
            "Where shall I book?",
            FORM,
            "test",
        )
        content = {"city": "Lyon", "guests": 2, "budget": 80.5, "outdoor": True, "time": "20:00"}
        content |= {"diet": "veg", "extras": ["cake"]}
        answered = await a.answer(
            session_id, call.call_id, json={"action": "accept", "content": content}
        )
        assert (answered.status_code, answered.json()) == (200, {"answered": True})
        done = await a.runtime.wait(call.call_id, 5)
        assert done.result == {"action": "accept", "content": content, "reason": None}
        assert (await a.widget(session_id, call.call_id))["question"] is None
        again = await a.answer(session_id, call.call_id, json={"action": "decline"})
        assert (again.status_code, again.json()) == (200, {"answered": False}), "asked no more"


async def test_the_list_says_which_session_needs_the_persons_answer() -> None:
    """The sessions list counts a session's calls that wait for the person, and says so
    in its words before its running calls; once answered it no longer does."""
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)

        async def row() -> dict[str, Any]:
            listed = (await a.client.get("/api/sessions")).json()["sessions"]
            (found,) = [r for r in listed if r["session_id"] == session_id]
            return dict(found)

        asked = await row()
        assert (asked["asking"], asked["doing"]) == (1, "1 call needs your answer")
        await a.answer(session_id, call.call_id, json={"action": "decline"})
        await a.runtime.wait(call.call_id, 5)
        assert (await row())["asking"] == 0
        assert "answer" not in (await row())["doing"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_question_declined_or_cancelled_says_so_to_the_tool(action: str) -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        answered = await a.answer(session_id, call.call_id, json={"action": action})
        assert answered.json() == {"answered": True}
        done = await a.runtime.wait(call.call_id, 5)
        assert done.result == {"action": action, "content": None, "reason": None}


async def test_the_models_id_for_the_call_answers_it_too() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        assert call.provider_call_id is not None
        answered = await a.answer(
            session_id,
            call.provider_call_id,
            json={"action": "accept", "content": {"city": "Oslo"}},
        )
        assert answered.json() == {"answered": True}
        done = await a.runtime.wait(call.call_id, 5)
        assert done.result == {"action": "accept", "content": {"city": "Oslo"}, "reason": None}


async def test_a_page_to_open_is_accepted_with_no_content() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id, "book by url")
        question = (await a.widget(session_id, call.call_id))["question"]
        assert (question["url"], question["form"]) == ("https://example.com/sign-in", None)
        refused = await a.answer(
            session_id, call.call_id, json={"action": "accept", "content": {"city": "Lyon"}}
        )
        assert (refused.status_code, refused.json()["error"]["code"]) == (400, "invalid_answer")
        answered = await a.answer(session_id, call.call_id, json={"action": "accept"})
        assert answered.json() == {"answered": True}
        done = await a.runtime.wait(call.call_id, 5)
        assert done.result == {"action": "accept", "content": None, "reason": None}


async def test_bad_bodies_are_400_saying_why_and_the_question_still_waits() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        cases: list[tuple[dict[str, Any], int, str, str]] = [
            ({"content": b"{not json", "headers": JSON}, 400, "bad_json", "not JSON"),
            ({"content": b'["accept"]', "headers": JSON}, 400, "bad_request", "JSON object"),
            ({"json": {}}, 400, "bad_request", "'action' must be one of"),
            ({"json": {"action": "yes"}}, 400, "bad_request", "accept, decline, cancel"),
            ({"json": {"action": 1}}, 400, "bad_request", "'action'"),
            ({"json": {"action": "accept", "content": "Lyon"}}, 400, "bad_request", "object"),
            ({"json": {"action": "accept", "content": ["Lyon"]}}, 400, "bad_request", "object"),
            (
                {"json": {"action": "decline", "content": {"city": "Lyon"}}},
                400,
                "bad_request",
                "a decline answer carries no 'content'",
            ),
            ({"json": {"action": "cancel", "content": {}}}, 400, "bad_request", "no 'content'"),
            ({"content": b'{"action": "decline"}'}, 415, "unsupported_media_type", "JSON"),
            (
                {"json": {"action": "accept", "content": {"city": "x" * MAX_BODY}}},
                413,
                "too_large",
                "at most",
            ),
        ]
        for request, status, code, words in cases:
            await a.refuses(session_id, call.call_id, request, status, code, words)
        await a.still_asks(call.call_id)


async def test_an_answer_that_does_not_fill_the_form_is_400_naming_the_field() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        cases: list[tuple[JsonObject | None, str]] = [
            (None, "field 'city' is required"),
            ({"guests": 2}, "field 'city' is required"),
            ({"city": "Lyon", "colour": "red"}, "the form has no field 'colour'"),
            ({"city": 7}, "field 'city': a string is expected, not a number"),
            ({"city": "Lyon", "guests": "two"}, "field 'guests': an integer is expected, not text"),
            ({"city": "Lyon", "guests": 2.5}, "field 'guests': an integer is expected"),
            ({"city": "Lyon", "guests": True}, "an integer is expected, not true or false"),
            ({"city": "Lyon", "budget": "80"}, "field 'budget': a number is expected, not text"),
            ({"city": "Lyon", "outdoor": "yes"}, "field 'outdoor': a boolean is expected"),
            ({"city": "Lyon", "time": "21:00"}, "field 'time': '21:00' is not one of '19:00', "),
            ({"city": "Lyon", "diet": "vegan"}, "field 'diet': 'vegan' is not one of 'veg'"),
            ({"city": "Lyon", "extras": "cake"}, "field 'extras': a list is expected, not text"),
            ({"city": "Lyon", "extras": ["cake", "tea"]}, "field 'extras': 'tea' is not one of"),
            ({"city": "Lyon", "budget": {"max": 1}}, "a number is expected, not an object"),
        ]
        for content, words in cases:
            accept = {"json": {"action": "accept", "content": content}}
            await a.refuses(session_id, call.call_id, accept, 400, "invalid_answer", words)
        infinite = b'{"action": "accept", "content": {"city": "Lyon", "budget": Infinity}}'
        request = {"content": infinite, "headers": JSON}
        await a.refuses(session_id, call.call_id, request, 400, "invalid_answer", "inf is not")
        await a.still_asks(call.call_id)


async def test_unknown_sessions_and_calls_are_404_and_another_sessions_call_is_unknown() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        other = await a.session()
        decline = {"json": {"action": "decline"}}
        for path_session, call_id, code in [
            ("nope", call.call_id, "unknown_session"),
            (session_id, "nope", "unknown_call"),
            (session_id, "toolu_nope", "unknown_call"),
            (other, call.call_id, "unknown_call"),
        ]:
            answer = await a.answer(path_session, call_id, **decline)
            assert (answer.status_code, answer.json()["error"]["code"]) == (404, code)
            assert set(answer.json()["error"]) == {"code", "message"}
        await a.still_asks(call.call_id)


async def test_a_call_that_asks_nothing_is_not_answered() -> None:
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        await a.answer(session_id, call.call_id, json={"action": "cancel"})
        await a.runtime.wait(call.call_id, 5)
        later = await a.answer(session_id, call.call_id, json={"action": "accept"})
        assert (later.status_code, later.json()) == (200, {"answered": False})


async def test_an_answer_is_guarded_as_every_post_is() -> None:
    """The token, this machine's names, the page's own origin: an answer is a POST like the
    others, refused before it reaches the call."""
    async with asking(token="s3cret") as a:
        bearer = {"Authorization": "Bearer s3cret"}
        made = await a.client.post("/api/sessions", json={}, headers=bearer)
        session_id = made.json()["session_id"]
        posted = await a.client.post(
            f"/api/sessions/{session_id}/messages", json={"text": "book"}, headers=bearer
        )
        assert posted.status_code == 202
        with anyio.fail_after(5):
            while not (calls := a.runtime.list_calls(session_id)) or calls[0].question is None:
                await settle(a.runtime)
                await anyio.lowlevel.checkpoint()
        call_id = calls[0].call_id
        decline = {"action": "decline"}
        for headers, status, code in [
            ({}, 401, "unauthorized"),
            ({"Authorization": "Bearer wrong"}, 401, "unauthorized"),
            (bearer | {"Origin": "http://evil.example"}, 403, "cross_origin"),
            (bearer | {"Sec-Fetch-Site": "cross-site"}, 403, "cross_site"),
        ]:
            answer = await a.answer(session_id, call_id, json=decline, headers=headers)
            assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
        await a.still_asks(call_id)
        own = await a.answer(session_id, call_id, json=decline, headers=bearer)
        assert own.json() == {"answered": True}
    async with asking() as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        forged = await a.answer(
            session_id, call.call_id, json={"action": "decline"}, headers={"Host": "evil.example"}
        )
        assert (forged.status_code, forged.json()["error"]["code"]) == (400, "unknown_host")
        await a.still_asks(call.call_id)


async def test_a_programs_host_with_no_hook_declines_saying_nobody_can_be_asked() -> None:
    """``make_app`` leaves the hook to the program's host: with none, a question is declined
    at once (the call goes on with that), and there is nothing left to answer."""
    async with asking(hook=False) as a:
        session_id = await a.session()
        call = await a.asked(session_id)
        done = await a.runtime.wait(call.call_id, 5)
        assert done.status is CallStatus.COMPLETED
        assert isinstance(done.result, dict)
        assert done.result["action"] == "decline"
        assert "nobody to ask" in str(done.result["reason"])
        assert (await a.widget(session_id, call.call_id))["question"] is None
        late = await a.answer(session_id, call.call_id, json={"action": "decline"})
        assert (late.status_code, late.json()) == (200, {"answered": False})
