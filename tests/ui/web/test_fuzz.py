"""No request makes ``agentos serve`` answer 500: random paths, methods, headers and bodies."""

from __future__ import annotations

import string
import uuid
from pathlib import Path

import anyio
import httpx
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentos import AgentConfig
from agentos import ScriptedProvider
from agentos.testing import Puppet
from agentos.testing import text
from agentos.web import make_app
from tests.support.backends import hosted

SEGMENT = st.text(alphabet=string.ascii_letters + string.digits + "-_.%~", min_size=1, max_size=12)
PATHS = st.one_of(
    st.sampled_from(
        [
            "/",
            "/api/sessions",
            "/api/sessions/S",
            "/api/sessions/S/messages",
            "/api/sessions/S/title",
            "/api/sessions/ghost/title",
            "/api/sessions/S/calls/nope",
            "/api/sessions/S/calls/nope/cancel",
            "/api/sessions/ghost/events",
            "/sessions/S",
            "/static/app.js",
        ]
    ),
    st.lists(SEGMENT, max_size=5).map(lambda parts: "/" + "/".join(parts)),
)
HEADER_VALUE = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=255), max_size=40
).map(lambda value: value.encode("latin-1"))
"""What a client may send as a header: any byte a browser or a script can put there."""
HEADERS = st.fixed_dictionaries(
    {},
    optional={
        b"content-type": st.sampled_from([b"application/json", b"text/plain"]) | HEADER_VALUE,
        b"origin": st.sampled_from([b"http://127.0.0.1:8000", b"http://evil.example"]),
        b"sec-fetch-site": st.sampled_from([b"same-origin", b"cross-site", b"none"]),
        b"last-event-id": st.sampled_from([b"0", b"\xb2", b"9" * 5_000]) | HEADER_VALUE,
        b"authorization": HEADER_VALUE,
        b"cookie": HEADER_VALUE,
    },
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
BODIES = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda value: httpx.Request("POST", "/", json=value).content),
    (JSON | st.text(max_size=100)).map(
        lambda title: httpx.Request("POST", "/", json={"title": title}).content
    ),
    st.integers(1, 5_000).map(lambda depth: b"[" * depth + b"]" * depth),
)


ANY_REQUEST = st.tuples(st.sampled_from(["GET", "POST", "PUT", "DELETE"]), PATHS, HEADERS, BODIES)
A_POST_FROM_THE_PAGE = st.tuples(
    st.just("POST"),
    st.sampled_from(["/api/sessions", "/api/sessions/S/messages", "/api/sessions/S/title"]),
    st.just({b"content-type": b"application/json"}),
    BODIES,
)
"""What reaches the JSON parser: the body is all that varies."""


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(requests=st.lists(ANY_REQUEST | A_POST_FROM_THE_PAGE, min_size=1, max_size=4))
def test_no_request_is_answered_500(
    tmp_path: Path, requests: list[tuple[str, str, dict[bytes, bytes], bytes]]
) -> None:
    async def run() -> list[int]:
        provider = ScriptedProvider((lambda r: True, lambda r: text("ok")))
        async with hosted(tmp_path / f"{uuid.uuid4()}.db", provider, Puppet().tool) as (
            _,
            runtime,
            host,
        ):
            await host.create_session(AgentConfig(), session_id="S")
            app = make_app(host, runtime)
            transport = httpx.ASGITransport(app=app)
            base = "http://127.0.0.1:8000"
            async with httpx.AsyncClient(transport=transport, base_url=base) as client:
                codes = []
                for method, path, headers, body in requests:
                    with anyio.fail_after(10):
                        answer = await client.request(method, path, headers=headers, content=body)
                    codes.append(answer.status_code)
            app.state.pages.close()
            return codes

    codes = anyio.run(run)
    assert all(code < 500 for code in codes), list(zip(requests, codes, strict=True))
