"""``FunctionModel``: a model you script as a Python function (``model = "module:function"``).

Like Pydantic AI's ``FunctionModel``: every turn the function gets the conversation so far
and the tools it may call (a ``FunctionRequest``) and returns the reply: text, tool calls,
or both. It may be sync or async. An agent file names it by import path, so a whole agent
runs offline, in every front end, saying and calling exactly what the script says.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import json
import os
import re
import sys
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import TypeAlias

from agentos._errors import ProviderError
from agentos._errors import UsageError
from agentos._model.function_request import FunctionRequest
from agentos._model.function_request import ToolCall
from agentos._model.messages import Block
from agentos._model.provider import ModelRequest
from agentos._model.provider import ModelResponse

FUNCTION_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
"""A model named by import path, ``module:function`` (Claude's names never match it)."""

Reply: TypeAlias = (
    str | ToolCall | list[str | ToolCall] | tuple[str | ToolCall, ...] | ModelResponse
)
"""What a model function returns: text, a tool call, several of them in order, or a whole
``ModelResponse``."""

ModelFunction: TypeAlias = Callable[[FunctionRequest], Reply | Awaitable[Reply]]
"""A function a ``FunctionModel`` asks: the request in, the reply out (or awaitable)."""

EXPECTED = (
    "a reply is text (a str), an agentos.testing.ToolCall, a list of them, or an "
    "agentos.ModelResponse"
)


class FunctionModel:
    """A model whose replies a Python function writes: ``FunctionModel(reply)``.

    ``reply(request)`` gets a ``FunctionRequest`` (the conversation as entries, the tools
    by name) and returns a ``str``, an ``agentos.testing.ToolCall``, a list of both (said and
    called in that order) or a ``ModelResponse``; an async function's reply is awaited. A
    sync function runs on the session's event loop: keep it quick. If the function raises,
    or returns anything else, that turn fails with a ``ProviderError`` (kind
    ``model_function``) naming it; other sessions go on. ``AgentConfig(model="module:reply")``
    names one by import path (``from_path``), and so does an agent file.
    """

    name = "function"

    def __init__(self, function: ModelFunction, *, label: str | None = None) -> None:
        """``label`` names the function in errors [default: ``module:qualname``].
        ``UsageError`` if it is not a function of one argument."""
        self.label = label or _label(function)
        _check(function, self.label)
        self.function = function
        self.answered = 0

    @classmethod
    def from_path(cls, path: str, search: Iterable[str | Path] = ()) -> FunctionModel:
        """The function ``path`` (``module:function``) names, its module found in the
        folders of ``search`` first (an agent file's ``import_path``: its own folder, then the
        folders it names), then on ``sys.path`` (which the command line starts with the
        current folder). ``UsageError`` saying what is wrong: a module not found, an
        attribute it lacks, something that is not a function of one argument."""
        if not FUNCTION_PATH.match(path):
            raise UsageError(f"{path!r} is not an import path 'module:function'")
        module_name, _, attribute = path.partition(":")
        folders = [os.path.abspath(folder) for folder in search]
        _put_on_sys_path(folders)
        module = _import(path, module_name, folders)
        value: object = module
        for part in attribute.split("."):
            if not hasattr(value, part):
                raise UsageError(
                    f"{path!r}: {_where(value, module_name)} has no attribute {part!r}"
                    + _did_you_mean(part, value)
                )
            value = getattr(value, part)
        if not callable(value):
            raise UsageError(
                f"{path!r} is {_kind(value)}, not a function: name a function that takes the "
                "request and returns the reply"
            )
        return cls(value, label=path)

    @classmethod
    def named(cls, model: str, search: Iterable[str | Path] = ()) -> FunctionModel | None:
        """The function an agent's ``model`` names by import path, as ``from_path`` finds it
        (None: ``model`` names a model by its name, such as Claude's)."""
        if not FUNCTION_PATH.match(model):
            return None
        return cls.from_path(model, search)

    async def aclose(self) -> None:
        """Nothing to give back: the function holds no connection (one it opens is its own)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """The function's reply to ``request``, read into a ``FunctionRequest``."""
        self.answered += 1
        asked = FunctionRequest.of(request)
        try:
            reply: object = self.function(asked)
            if inspect.isawaitable(reply):
                reply = await reply
        except Exception as error:
            raise ProviderError(
                "model_function", f"{self.label!r} raised {type(error).__name__}: {error}"
            ) from error
        return _response(reply, self.label)


def function_path(function: object) -> str:
    """``module:qualname``, the import path that names ``function`` again (``ValueError``
    when none does: a lambda, a function defined inside another)."""
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None)
    if not callable(function) or not isinstance(module, str) or not isinstance(qualname, str):
        raise ValueError(
            f"a model is a name ('claude-sonnet-4-5'), an import path 'module:function', "
            f"or a function, not {_kind(function)}"
        )
    path = f"{module}:{qualname}"
    if module == "__main__":
        raise ValueError(
            f"the function {qualname!r} is defined in the script being run (__main__), which "
            "a later 'agentos say', a resumed session or the web server cannot import: define "
            f"{qualname} in a module and name it 'module:{qualname}', or give the host "
            f"FunctionModel({qualname})"
        )
    if not FUNCTION_PATH.match(path):
        raise ValueError(
            f"the function {qualname!r} has no import path (it is a lambda, or defined inside "
            "another function): define it at the top of a module, or give the host "
            "FunctionModel(function)"
        )
    return path


def _put_on_sys_path(folders: Sequence[str]) -> None:
    """``folders`` at the front of ``sys.path``, in their order, each only if no entry
    names it already (however spelled): a long-lived server resuming many sessions of one
    agent file adds its folder once."""
    there = {os.path.abspath(entry) for entry in sys.path}
    for folder in reversed(folders):
        if folder not in there:
            sys.path.insert(0, folder)
            there.add(folder)


def _import(path: str, module_name: str, folders: Sequence[str]) -> Any:
    """The module, imported (or the one this process already imported, which must be the
    file the agent's folders hold: ``UsageError`` naming both files when it is not)."""
    module = _import_module(path, module_name, folders)
    top = module_name.partition(".")[0]
    beside = _module_file(top, folders)
    loaded = getattr(sys.modules.get(top), "__file__", None)
    if beside is not None and loaded is not None and not _same_file(loaded, beside):
        raise UsageError(
            f"{path!r}: this process already imported the module {top} from {loaded}, so it "
            f"cannot import {beside} too (one process holds one module of a name): rename "
            "one of them"
        )
    return module


def _module_file(name: str, folders: Sequence[str]) -> Path | None:
    """The file the first of ``folders`` holding module ``name`` has for it, if any does."""
    for folder in folders:
        for candidate in (Path(folder) / f"{name}.py", Path(folder) / name / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _same_file(loaded: str, beside: Path) -> bool:
    try:
        return os.path.samefile(loaded, beside)
    except OSError:
        return False


def _import_module(path: str, module_name: str, folders: Sequence[str]) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and (module_name + ".").startswith(error.name + "."):
            looked = ", ".join([*folders, "then sys.path"])
            raise UsageError(
                f"{path!r}: no module named {error.name!r} (looked in {looked})"
            ) from None
        raise UsageError(
            f"{path!r}: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from None
    except Exception as error:
        raise UsageError(
            f"{path!r}: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from None


def _check(function: object, label: str) -> None:
    """``UsageError`` unless ``function`` can be called with the request alone."""
    if not callable(function):
        raise UsageError(f"{label!r} is {_kind(function)}, not a function")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin without a signature: calling it will tell
    try:
        signature.bind(None)
    except TypeError:
        raise UsageError(
            f"{label!r} takes {_parameters(signature)}: a model function takes one argument, "
            "the request (agentos.testing.FunctionRequest)"
        ) from None


def _response(reply: object, label: str) -> ModelResponse:
    """The reply as a ``ModelResponse``; ``ProviderError`` naming what came back instead."""
    if isinstance(reply, ModelResponse):
        return reply
    parts = [reply] if isinstance(reply, str | ToolCall) else reply
    if not isinstance(parts, list | tuple) or not parts:
        raise _invalid(reply, label)
    content: list[Block] = []
    for part in parts:
        if isinstance(part, str) and part:
            content.append({"type": "text", "text": part})
        elif isinstance(part, ToolCall):
            content.append(_tool_use(part, reply, label))
        else:
            raise _invalid(reply, label, part)
    stop = "tool_use" if any(block["type"] == "tool_use" for block in content) else "end_turn"
    return ModelResponse(content, stop)


def _tool_use(call: ToolCall, reply: object, label: str) -> Block:
    if not isinstance(call.tool, str) or not call.tool:
        raise ProviderError(
            "model_function", f"{label!r} returned {_shown(reply)}: a ToolCall names its tool"
        )
    if not isinstance(call.input, Mapping):
        raise ProviderError(
            "model_function",
            f"{label!r} returned {_shown(reply)}: a ToolCall's input is a dict of its arguments, "
            f"not {_kind(call.input)}",
        )
    try:
        arguments = json.loads(json.dumps(dict(call.input)))
    except (TypeError, ValueError) as error:
        raise ProviderError(
            "model_function",
            f"{label!r} returned {_shown(reply)}: a ToolCall's input must be JSON ({error})",
        ) from None
    call_id = call.call_id or f"toolu_fn_{uuid.uuid4().hex[:20]}"
    return {"type": "tool_use", "id": call_id, "name": call.tool, "input": arguments}


_WHOLE = object()


def _invalid(reply: object, label: str, part: object = _WHOLE) -> ProviderError:
    if reply == "" or part == "" or (isinstance(reply, list | tuple) and not reply):
        why = "an empty reply: a reply says something, or calls a tool"
    elif part is _WHOLE:
        why = f"{_kind(reply)}: {EXPECTED}"
    else:
        why = f"a {type(reply).__name__} holding {_shown(part)} ({_kind(part)}): {EXPECTED}"
    return ProviderError("model_function", f"{label!r} returned {_shown(reply)}, {why}")


def _label(function: object) -> str:
    module = getattr(function, "__module__", None) or "?"
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    return f"{module}:{qualname}"


def _parameters(signature: inspect.Signature) -> str:
    return "(" + ", ".join(signature.parameters) + ")"


def _where(value: object, module_name: str) -> str:
    return f"the module {module_name}" if inspect.ismodule(value) else _kind(value)


def _did_you_mean(given: str, value: object) -> str:
    names = [name for name in dir(value) if not name.startswith("_")]
    close = difflib.get_close_matches(given, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _kind(value: object) -> str:
    if inspect.ismodule(value):
        return f"the module {value.__name__}"
    if value is None:
        return "None"
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    if callable(value):
        return f"the function {getattr(value, '__qualname__', value)!r}"
    article = "an" if type(value).__name__[:1] in "aeiou" else "a"
    return f"{article} {type(value).__name__}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
