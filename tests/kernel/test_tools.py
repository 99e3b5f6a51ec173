"""Declaring tools from functions."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic import Field

from agentos import CallStatus
from agentos import InvalidToolInput
from agentos import Runtime
from agentos import Tool
from agentos import ToolContext
from agentos import ToolDefinitionError
from agentos import tool


class CityInput(BaseModel):
    city: str = Field(description="City name")
    days: int = 1


def test_async_tool_with_context() -> None:
    @tool
    async def forecast(args: CityInput, ctx: ToolContext) -> str:
        """Forecast the weather."""
        return args.city

    assert isinstance(forecast, Tool)
    assert forecast.name == "forecast"
    assert forecast.description == "Forecast the weather."
    assert forecast.is_async and forecast.takes_context
    assert forecast.input_schema["properties"]["city"]["description"] == "City name"
    assert forecast.input_schema["required"] == ["city"]


def test_sync_tool_without_context_and_options() -> None:
    @tool(name="weather", description="Today's weather.", timeout=3)
    def lookup(args: CityInput) -> str:
        return args.city

    assert lookup.name == "weather"
    assert lookup.description == "Today's weather."
    assert not lookup.is_async and not lookup.takes_context
    assert lookup.timeout == 3
    assert lookup.validate({"city": "Oslo"}) == CityInput(city="Oslo")


def test_plain_typed_parameters_make_the_schema_and_the_docstring_describes_them() -> None:
    """Issue 30: as every peer allows, a tool may take plain typed parameters; the
    ``ToolContext`` is found by its annotation, wherever it stands."""

    @tool
    async def forecast(city: str, days: int = 1, *, ctx: ToolContext) -> str:
        """Forecast the weather.

        Args:
            city: The city, as its people write it.
            days: How many days ahead,
                from 1 to 7.
        """
        return city

    assert forecast.description == "Forecast the weather."
    assert forecast.is_async and forecast.takes_context
    schema = forecast.input_schema
    assert schema["required"] == ["city"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["city"] == {
        "description": "The city, as its people write it.",
        "title": "City",
        "type": "string",
    }
    assert schema["properties"]["days"]["default"] == 1
    assert schema["properties"]["days"]["description"] == "How many days ahead, from 1 to 7."


@pytest.mark.parametrize(
    ("shape", "properties"),
    [("nothing", []), ("not_a_model", ["args"]), ("context_between", ["a", "c"])],
)
def test_any_signature_of_typed_parameters_is_a_tool(shape: str, properties: list[str]) -> None:
    def nothing() -> None:
        return None

    def not_a_model(args: dict[str, str]) -> None:
        return None

    def context_between(a: CityInput, b: ToolContext, c: int) -> None:
        return None

    shapes: dict[str, Callable[..., None]] = {
        "nothing": nothing,
        "not_a_model": not_a_model,
        "context_between": context_between,
    }
    made = tool(shapes[shape])
    assert list(made.input_schema.get("properties", {})) == properties


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (lambda city: city, "parameter 'city' needs a type annotation"),
        (lambda *cities: cities, "*cities cannot be a tool's input"),
    ],
)
def test_a_parameter_the_schema_cannot_say_is_refused_by_name(fn: object, problem: str) -> None:
    with pytest.raises(ToolDefinitionError, match=re.escape(problem)):
        tool(fn)  # type: ignore[call-overload]


def test_timeout_must_be_positive() -> None:
    def fine(args: CityInput) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="timeout must be > 0"):
        tool(timeout=0)(fine)


def test_unresolvable_annotations_get_a_clear_error() -> None:
    class Local(BaseModel):
        pass

    def local(args: Local) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="define the input model at module level"):
        tool(local)


def test_a_docstring_reaches_the_model_as_plain_text() -> None:
    """Issue 11: reST markup in a docstring is noise to a model."""

    @tool
    async def lookup(args: CityInput) -> str:
        """Look up ``name`` with :func:`search` and `fuzzy` matching."""
        return ""

    @tool(description="Keep ``this`` as given.")
    async def explicit(args: CityInput) -> str:
        return ""

    assert lookup.description == "Look up name with search and fuzzy matching."
    assert explicit.description == "Keep ``this`` as given."


@tool
async def typed_forecast(city: str, days: int = 1, *, ctx: ToolContext) -> dict[str, object]:
    """Forecast the weather."""
    ctx.progress({"looking": city})
    return {"city": city, "days": days}


@tool
def typed_sync(ctx: ToolContext, count: int, /, label: str = "n") -> str:
    """Counts, in a worker thread (its context first, its count positional only)."""
    ctx.progress({"count": count})
    return f"{label}{count}"


@pytest.mark.anyio
async def test_typed_tools_run_with_their_defaults_and_context() -> None:
    async with Runtime([typed_forecast, typed_sync]) as runtime:
        done = await runtime.wait(runtime.submit("typed_forecast", {"city": "Oslo"}), 10)
        assert (done.status, done.result) == (CallStatus.COMPLETED, {"city": "Oslo", "days": 1})
        assert {"looking": "Oslo"} in [p.payload for p in done.progress]
        done = await runtime.wait(runtime.submit("typed_sync", {"count": 3}), 10)
        assert (done.status, done.result) == (CallStatus.COMPLETED, "n3")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"days": "soon"}, ["city: Field required", "days: Input should be a valid integer"]),
        ({"city": "Oslo", "country": "NO"}, ["country: Extra inputs are not permitted"]),
    ],
)
async def test_input_that_does_not_fit_a_typed_tool_fails_naming_each_field(
    given: dict[str, object], named: list[str]
) -> None:
    async with Runtime([typed_forecast]) as runtime:
        done = await runtime.wait(runtime.submit("typed_forecast", given), 10)
    assert done.status is CallStatus.FAILED and done.error is not None
    for problem in named:
        assert problem in done.error.message, done.error.message


@pytest.mark.parametrize(
    ("fn", "properties"),
    [
        # a model and a plain parameter: both are fields
        (lambda: _two(), ["loc", "days"]),
        # the model alone, its context taken by keyword or first: the model is the input
        (lambda: _keyword_context(), ["city", "days"]),
        (lambda: _context_first(), ["city", "days"]),
    ],
)
def test_a_model_parameter_is_the_input_only_when_it_is_the_only_one(
    fn: Callable[[], Tool[Any]], properties: list[str]
) -> None:
    assert list(fn().input_schema["properties"]) == properties


def _two() -> Tool[Any]:
    def weather(loc: CityInput, days: int) -> None:
        return None

    return tool(weather)


def _keyword_context() -> Tool[Any]:
    def weather(args: CityInput, *, ctx: ToolContext) -> str:
        return args.city

    return tool(weather)


def _context_first() -> Tool[Any]:
    def weather(ctx: ToolContext, args: CityInput) -> str:
        return args.city

    return tool(weather)


@tool
async def bounded(days: Annotated[int, Field(ge=1, le=7, description="Days ahead.")] = 1) -> int:
    """Annotated constraints reach the schema and the check."""
    return days


@tool
def model_by_keyword(args: CityInput, *, ctx: ToolContext) -> str:
    """The model, its context by keyword."""
    ctx.progress({"city": args.city})
    return args.city


@pytest.mark.anyio
async def test_annotated_constraints_hold_and_a_keyword_context_is_given() -> None:
    assert bounded.input_schema["properties"]["days"]["maximum"] == 7
    assert bounded.input_schema["properties"]["days"]["description"] == "Days ahead."
    async with Runtime([bounded, model_by_keyword]) as runtime:
        done = await runtime.wait(runtime.submit("bounded", {"days": 99}), 10)
        assert done.status is CallStatus.FAILED
        done = await runtime.wait(runtime.submit("model_by_keyword", {"city": "Oslo"}), 10)
        assert (done.status, done.result) == (CallStatus.COMPLETED, "Oslo")


SCALAR_SCHEMAS = [
    {
        "type": "object",
        "properties": {"task": {"type": "string", "minLength": 1, "description": "What to do."}},
        "required": ["task"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number", "title": "x"},
            "on": {"type": "boolean"},
            "s": {"type": "string", "maxLength": 3},
        },
        "required": ["n"],
    },
    {"type": "object", "properties": {"n": {"type": ["integer", "null"]}, "e": {"enum": [1]}}},
]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=2),
    max_leaves=3,
)


@settings(max_examples=300, deadline=None)
@given(
    schema=st.sampled_from(SCALAR_SCHEMAS),
    raw=st.dictionaries(st.sampled_from(["task", "n", "x", "on", "s", "e", "other"]), JSON_VALUES),
)
def test_a_schema_tool_accepts_exactly_what_its_json_schema_does(
    schema: dict[str, Any], raw: dict[str, Any]
) -> None:
    """The quick test of a schema of scalar properties never lets through what the
    validator refuses (nor refuses what it accepts)."""
    checked = Tool.from_schema(lambda args: None, name="t", input_schema=schema)
    fits = jsonschema.Draft202012Validator(schema).is_valid(raw)
    if fits:
        assert checked.validate(raw) == raw
    else:
        with pytest.raises(InvalidToolInput):
            checked.validate(raw)
