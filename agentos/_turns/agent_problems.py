"""What is wrong with an agent configuration, in lines a person can act on.

``validation_problems`` reads pydantic's errors for ``AgentConfig`` and says
each once, at the setting's own path (``policy.rules.fetch_calendar: 'x' is
not one of run_sync, ...``), without the names of union branches pydantic
adds. ``fit_problems`` checks a valid configuration against what a runtime
has: the tools its policy names and the isolated runner ``run_isolated`` needs
(a session checks its ``tools`` and ``mcp_servers``, which need imports).
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from agentos._turns.agent_config import AgentConfig
from agentos._turns.capabilities import CAPABILITIES
from agentos._turns.tool_policy import Decorate
from agentos._turns.tool_policy import Disposition


def validation_problems(error: ValidationError) -> list[str]:
    """One line per wrong setting: ``path: what is wrong``."""
    by_path: dict[str, list[ErrorDetails]] = {}
    for item in error.errors(include_url=False):
        if _other_branch(item):
            continue
        by_path.setdefault(_path(item["loc"]), []).append(item)
    return [f"{path}: {_say(items)}" for path, items in by_path.items()]


def fit_problems(
    config: AgentConfig, tools: Collection[str], runners: Collection[str]
) -> list[str]:
    """What ``config`` (and each sub-agent's, down the tree) names that the runtime lacks:
    tools its policy names, and a runner for ``run_isolated``. Its sub-agents are tools."""
    if config.agents:
        tools = {*tools, *config.agents}
    problems = []
    for name in config.policy.rules:
        if name in CAPABILITIES:
            problems.append(
                f"policy.rules.{name}: {name!r} is a capability the session answers itself; "
                "policies apply to tools"
            )
        elif name not in tools:
            known = ", ".join(sorted(tools)) or "none"
            problems.append(f"policy.rules.{name}: {name!r} is not a tool here (tools: {known})")
    isolated = [
        path
        for path, rule in (("policy.default", config.policy.default), *_rules(config))
        if (rule.then if isinstance(rule, Decorate) else rule) is Disposition.RUN_ISOLATED
    ]
    if isolated and config.isolated_runner not in runners:
        registered = ", ".join(sorted(runners)) or "none"
        problems.append(
            f"{isolated[0]}: run_isolated needs the isolated runner "
            f"{config.isolated_runner!r}, which is not registered (registered: {registered})"
        )
    for name, child in config.agents.items():
        problems += [f"agents.{name}.agent: {p}" for p in fit_problems(child.agent, tools, runners)]
    return problems


def _rules(config: AgentConfig) -> list[tuple[str, Disposition | Decorate]]:
    return [(f"policy.rules.{name}", rule) for name, rule in config.policy.rules.items()]


def _path(loc: tuple[int | str, ...]) -> str:
    """``policy.rules.x.decorate[0].timeout``, without pydantic's union branch names."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif "[" in part or part.startswith("yield_"):  # a branch: str-enum[...], a tag
            continue
        else:
            path += f".{part}" if path else part
    return path or "(top)"


def _other_branch(item: ErrorDetails) -> bool:
    """An error of the union branch the value was not meant for: a disposition's name
    given as a table of decorators, or decorators given as a name."""
    kind, given = item["type"], item["input"]
    return (kind == "enum" and isinstance(given, dict)) or (
        kind == "model_type" and isinstance(given, str)
    )


def _say(items: list[ErrorDetails]) -> str:
    """The one problem to tell of a setting that may have failed every branch of a union."""
    return "; ".join(dict.fromkeys(_one(item) for item in items))


def _one(item: ErrorDetails) -> str:
    kind, context = item["type"], item.get("ctx", {})
    if kind == "missing":
        return "missing (required)"
    if kind == "extra_forbidden":
        return "not a setting agentos knows" + _did_you_mean(item["loc"])
    if kind == "union_tag_invalid":
        return f"kind {context.get('tag')!r} is not one of {_unquote(context['expected_tags'])}"
    if kind == "enum":
        return f"{item['input']!r} is not one of {_unquote(str(context.get('expected', '')))}"
    if kind == "model_type" and context.get("class_name") == "Decorate":
        return "nor a table of decorators ({decorate = [...], then = ...})"
    if kind == "value_error":
        return str(context.get("error", item["msg"]))
    message = item["msg"].replace("Input should be", "should be")
    return f"{message} (got {_shown(item['input'])})"


def _unquote(expected: str) -> str:
    return expected.replace("'", "").replace(" or ", ", ")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """``; did you mean 'tools'?`` when a setting beside the misspelt one is spelt alike."""
    given = loc[-1] if loc else ""
    if not isinstance(given, str):
        return ""
    close = difflib.get_close_matches(given, sorted(_settings_beside(loc)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _settings_beside(loc: tuple[int | str, ...]) -> set[str]:
    """The settings of the tables where ``loc`` ends: the models reached by following its
    parts from ``AgentConfig`` (a part that names no field, a server's name say, is
    stepped over)."""
    models: list[type[BaseModel]] = [AgentConfig]
    for part in loc[:-1]:
        fields = [m.model_fields[str(part)] for m in models if str(part) in m.model_fields]
        if fields:
            models = [found for field in fields for found in _models_in(field.annotation)]
    return {name for model in models for name in model.model_fields}


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models a field's type holds: itself, or in a union, list or dict."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]
