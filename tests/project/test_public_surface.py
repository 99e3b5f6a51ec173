"""The public surface: what ``agentos`` and its faces export, and nothing hidden.

``agentos`` holds what a program uses; ``agentos.board``, ``agentos.turns``,
``agentos.stores`` and ``agentos.testing`` the rest. A user meets every type a public
method takes or returns; each is exported from one of them, under its public home's
name, and the tests reach agentos only through that surface.
"""

from __future__ import annotations

import inspect
import itertools
import pickle
import re
import sys
import typing
from collections.abc import Mapping
from pathlib import Path
from types import FunctionType
from types import ModuleType
from typing import Any
from typing import TypeGuard

import anthropic
import pytest

import agentos
import agentos.board
import agentos.stores
import agentos.testing
import agentos.turns
import components
from tests.support import ROOT

OURS = ("agentos", "components", "systems")
# ``Json`` is a string at run time (a recursive alias): ``Json | X`` does not evaluate.
ALIASES = {"Json": object, "JsonObject": dict[str, object], "anthropic": anthropic}
"""``anthropic``: ``AnthropicProvider`` names the SDK client type, imported for type checks."""


FACES = (agentos.board, agentos.turns, agentos.stores, agentos.testing)
MODULES = (agentos, *FACES)
TOP_LEVEL_AT_MOST = 100
"""A program imports perhaps twenty names: the top level keeps to what programs use (95,
the four of a question a call asks a person: ``Answer``, ``AnswerAction``, ``Asked``,
``Question``, and ``A2aAgent``, a remote agent as a toolset beside ``McpServer``)."""


def exported(name: str) -> object:
    """What ``name`` is in whichever public module exports it (None if none does)."""
    for module in MODULES:
        if name in module.__all__:
            return getattr(module, name)
    return None


def ours(value: object) -> TypeGuard[type[Any] | FunctionType]:
    """A class or function written in one of our packages."""
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return False
    return str(value.__module__).partition(".")[0] in OURS


def isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_is_sorted_without_duplicates(module: ModuleType) -> None:
    names = list(module.__all__)
    assert len(set(names)) == len(names)
    assert names == sorted(names, key=isort_key)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_exported_name_exists_and_names_its_public_home(module: ModuleType) -> None:
    for name in module.__all__:
        value = getattr(module, name)  # AnthropicProvider: imported on first use
        if ours(value):
            home = value.__module__
            assert home == module.__name__ or name in getattr(sys.modules[home], "__all__", ())
            assert value.__name__ == name


def test_each_name_has_one_home_and_the_top_level_keeps_to_what_programs_use() -> None:
    """A face may repeat a word of the top level (``agentos.turns.SessionStatus``); no two
    faces share one, and ``agentos`` itself stays short (it held 129 names)."""
    for first, second in itertools.combinations(FACES[:-1], 2):  # testing: below
        assert not set(first.__all__) & set(second.__all__), (first.__name__, second.__name__)
    assert len(agentos.__all__) <= TOP_LEVEL_AT_MOST
    for name in ("Board", "SystemToolbox", "StoredSession", "Message"):
        assert not hasattr(agentos, name), f"agentos.{name} belongs on a face"


def test_a_model_you_script_is_on_top_and_what_its_function_reads_is_testings() -> None:
    """``FunctionModel`` is a model a program hands a host, beside ``TestModel``; what its
    function reads and returns sits with the other scripting helpers (``text``,
    ``tool_calls``) in ``agentos.testing``, so the top level stays short."""
    assert "FunctionModel" in agentos.__all__
    for name in ("FunctionRequest", "Said", "ToolCall", "ToolResult", "ToolSpec"):
        assert name in agentos.testing.__all__ and not hasattr(agentos, name), name
        assert getattr(agentos.testing, name).__module__ == "agentos.testing"


def test_agentos_exports_every_public_class_and_function_it_holds() -> None:
    hidden = [
        name
        for name, value in vars(agentos).items()
        if not name.startswith("_") and ours(value) and name not in agentos.__all__
    ]
    assert hidden == []


def test_testing_exports_every_helper_it_holds() -> None:
    """Besides the names of agentos it uses (``Runtime``, ``tool``, ...)."""
    hidden = [
        name
        for name, value in vars(agentos.testing).items()
        if not name.startswith("_") and ours(value) and exported(name) is None
    ]
    assert hidden == []
    assert not set(agentos.testing.__all__) & set(agentos.__all__)


def own_hints(cls: type[Any], aliases: Mapping[str, object] = ALIASES) -> dict[str, object]:
    """The annotations our classes in ``cls``'s MRO write, evaluated: a base class from a
    library (anyio's ``AsyncContextManagerMixin``) annotates with its own private names."""
    hints: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if ours(klass):
            hints.update(inspect.get_annotations(klass, eval_str=True, locals=dict(aliases)))
    return hints


ALIASES_ONLY_WHERE_NEEDED: Mapping[str, object] = {}
"""No stand-ins: every annotation of an exported class resolves as written."""

INTERNAL = {components.ToolCallConfig}  # ToolContext(config=...): only the runtime builds one


def test_every_type_a_public_method_takes_or_returns_is_exported() -> None:
    """Of the classes ``agentos`` and its faces export (``agentos.testing``'s helpers
    aside)."""
    missing: dict[str, list[str]] = {}

    def check(hint: object, where: str) -> None:
        for arg in typing.get_args(hint):
            check(arg, where)
        if not ours(hint) or hint in INTERNAL:
            return
        if exported(getattr(hint, "__name__", "")) is not hint:
            missing.setdefault(f"{hint.__module__}.{hint.__qualname__}", []).append(where)

    public = [getattr(module, name) for module in MODULES[:-1] for name in module.__all__]
    for cls in (value for value in public if inspect.isclass(value)):
        for name, hint in own_hints(cls).items():
            if not name.startswith("_"):
                check(hint, f"{cls.__name__}.{name}")
        for name, member in vars(cls).items():
            if name.startswith("_") and name != "__init__":
                continue
            function = member.fget if isinstance(member, property) else member
            function = getattr(function, "__func__", function)  # static and class methods
            if inspect.isfunction(function) and function.__module__ != "pydantic.main":
                for argument, hint in typing.get_type_hints(function, localns=ALIASES).items():
                    check(hint, f"{cls.__name__}.{name}({argument})")
    assert missing == {}


@pytest.mark.anyio
async def test_every_attribute_a_public_object_holds_is_of_an_exported_type(
    tmp_path: Path,
) -> None:
    """What ``__init__`` sets (``host.tokens``, ``host.toolbox``, ...) has no annotation
    for the check above to read; look at live objects instead."""
    async with (
        await agentos.SqliteStore.open(tmp_path / "a.db") as store,
        agentos.Runtime([], clock=agentos.ManualClock()) as runtime,
        agentos.Host(runtime, agentos.ScriptedProvider(), store=store) as host,
    ):
        session = await host.create_session(session_id="s")
        objects = [store, runtime, host, session, host.tokens, host.toolbox, host.lineage]
        hidden = {
            f"{type(owner).__name__}.{name}: {type(value).__module__}.{type(value).__name__}"
            for owner in objects
            for name, value in [*getattr(owner, "__dict__", {}).items(), *_properties(owner)]
            if not name.startswith("_")
            and ours(type(value))
            and exported(type(value).__name__) is not type(value)
        }
        assert hidden == set()
        assert isinstance(host.tokens, agentos.ContinuationTokens)
        assert isinstance(runtime.session("s"), agentos.SessionSnapshot)


def _properties(owner: object) -> list[tuple[str, object]]:
    return [
        (name, getattr(owner, name))
        for name, member in inspect.getmembers(type(owner))
        if isinstance(member, property) and not name.startswith("_")
    ]


def test_claimed_classes_keep_their_type_hints_and_pickle() -> None:
    """``__module__`` says ``agentos`` (or the face); annotations written elsewhere still
    resolve."""
    for module in MODULES:
        for value in (getattr(module, name) for name in module.__all__):
            if inspect.isclass(value):
                own_hints(value, ALIASES_ONLY_WHERE_NEEDED)
    config = agentos.AgentConfig(
        policy=agentos.ToolPolicy(rules={"approve": agentos.Disposition.DEFER}),
        async_yield_strategy=agentos.YieldOnTimeout(milliseconds=5),
    )
    values: list[object] = [
        config,
        agentos.CallStatus.RUNNING,
        agentos.SessionStatus.IDLE,
        agentos.Completion.APPLIED,
        agentos.UsageError("misused"),
        agentos.stores.StoredSession("s", {}, "idle", 1.0, 2.0),
        agentos.tool,
    ]
    for value in values:
        copy = pickle.loads(pickle.dumps(value))
        assert type(copy) is type(value)
        assert copy == value or isinstance(value, Exception)
    schema = agentos.AgentConfig.model_json_schema()  # sub-agents make it refer to itself
    assert schema["$ref"] == "#/$defs/AgentConfig"
    assert schema["$defs"]["AgentConfig"]["title"] == "AgentConfig"


PRIVATE = re.compile(r"\b(?:agentos|components|systems)\._[a-z]")  # an import, a dotted name


LAYOUT_TESTS = {"test_architecture.py"}
"""It reads the import graph between private modules (names, not imports)."""


def test_no_test_reaches_into_a_private_module() -> None:
    """Tests and benchmarks use the public packages only, so the surface is what they test."""
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("tests", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.name not in LAYOUT_TESTS and PRIVATE.search(path.read_text())
    ]
    assert offenders == []
