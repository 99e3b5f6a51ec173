"""Declaring tools from functions."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from agentos import Tool, ToolContext, ToolDefinitionError, tool


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


def test_first_parameter_must_be_a_model() -> None:
    def bad(args: dict[str, str]) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match="pydantic model"):
        tool(bad)


@pytest.mark.parametrize("arity", [0, 3])
def test_wrong_number_of_parameters(arity: int) -> None:
    def none() -> None:
        return None

    def three(a: CityInput, b: ToolContext, c: int) -> None:
        return None

    with pytest.raises(ToolDefinitionError, match=f"it takes {arity} parameters"):
        tool(none if arity == 0 else three)


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
