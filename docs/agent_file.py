"""Write the reference of ``docs/agent-files.md`` from the settings themselves:
``python docs/agent_file.py``.

Every setting of an agent file is a field of ``AgentConfig`` (or of the models its
settings hold); each row gives its type, its default and its description, so the page
says what the code does. The page's first part, up to ``MARKER``, is written by hand and
kept; what follows is replaced. ``tests/docs/test_agent_files.py`` fails when it is stale.
"""

from __future__ import annotations

import json
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from agentos import AgentConfig
from agentos import McpServerConfig
from agentos import ModelPrices
from agentos import SubAgent
from agentos import ToolPolicy
from agentos.turns import A2aAgentConfig
from agentos.turns import McpOAuth
from agentos.turns import Parameter

PAGE = Path(__file__).resolve().parent / "agent-files.md"

MARKER = (
    "The rest of this page is written from the settings themselves (`python docs/agent_file.py`)."
)
"""The line that ends the page's hand-written part: what follows it is the reference."""

NESTED = (
    ("policy", ToolPolicy, "How a tool's calls run. A rule is a disposition (`run_sync`, "
     "`run_async`, `run_isolated`, `defer`), or decorators around one, outermost first: "
     "`{ decorate = [{ retries = 2 }, { timeout = 30 }], then = \"run_async\" }`, each "
     "decorator exactly one of `timeout` (seconds), `retries`, `cache`, `truncate` (bytes "
     "of the result the model reads) and `label`."),
    ("mcp_servers.NAME", McpServerConfig, "One MCP server: `command` (stdio) or `url` "
     "(streamable HTTP). `${VAR}` in `env` and `headers` is read from the environment when "
     "the server starts."),
    ("mcp_servers.NAME.oauth", McpOAuth, "How agentos signs in to an HTTP server that "
     "asks for OAuth: `oauth = true` for every default, or a table of these. The server's "
     "metadata says where to sign in and which scopes to ask; a person signs in once (through "
     "the server's `authorize` hook; `agentos run` and `chat` print where), and the tokens "
     "are kept and refreshed. See [MCP](mcp.md#signing-in-oauth)."),
    ("a2a_agents.NAME", A2aAgentConfig, "One remote A2A agent, named by its agent card's "
     "URL: one tool the model calls with a `message` (and the `context_id`/`task_id` to go "
     "on with), whose calls are the agent's tasks. `${VAR}` in `headers` and `token` is read "
     "from the environment when the agent is reached. See [A2A](a2a.md)."),
    ("parameters.NAME", Parameter, "One parameter: its value alone (`region = \"eu\"`), or "
     "a table (`token = { value = \"...\", secret = true }`). The cache decorator keeps a "
     "result under a hash of the parameters' values: sessions of one host whose parameters "
     "are alike share it, sessions whose parameters differ never do, and no call of an agent "
     "with a secret parameter is cached (a cached result would outlive the secret it was "
     "fetched with). The command line keeps results for the sessions of one process."),
    ("agents.NAME", SubAgent, "One sub-agent, offered to the model as the tool NAME."),
    ("prices", ModelPrices, "US dollars per million tokens."),
)  # fmt: skip

STRATEGIES = """\
## `async_yield_strategy`

| kind | settings | the turn goes on |
|---|---|---|
| `yield_when_all_done` | | when every background call of the turn has ended |
| `yield_on_any_progress` | | at the first progress or end of one of them |
| `yield_on_timeout` | `milliseconds` | after that long, or when all have ended |
"""


def type_name(annotation: Any) -> str:
    """The setting's type, as a reader of TOML needs it."""
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " or ".join(f"`{member.value}`" for member in annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if all(isinstance(a, type) and issubclass(a, BaseModel) for a in arguments):
            return "table"
        return " or ".join(type_name(a) for a in arguments)
    if origin is typing.Literal:
        return " or ".join(f"`{value}`" for value in arguments)
    if origin is list:
        return f"list of {type_name(arguments[0])}"
    if origin is dict:
        return f"table of {type_name(arguments[1])}"
    names = {str: "text", int: "integer", float: "number", bool: "true or false"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def default_of(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return "(required)"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        return "none"
    return f"`{json.dumps(value, ensure_ascii=False)}`"


def table(model: type[BaseModel]) -> list[str]:
    rows = ["| setting | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        meaning = " ".join((field.description or "").split()).replace("|", "\\|")
        kind = type_name(field.annotation).replace("|", "\\|")
        rows.append(f"| `{name}` | {kind} | {default_of(field)} | {meaning} |")
    return rows


def reference() -> str:
    """Every setting, a table per kind of table: the part of the page after ``MARKER``."""
    lines = ["## Settings", "", *table(AgentConfig), ""]
    for name, model, said in NESTED:
        lines += [f"## `{name}`", "", said, "", *table(model), ""]
    lines.append(STRATEGIES)
    return "\n".join(lines)


def page(written: str) -> str:
    """The page ``written`` with its reference as the settings write it."""
    if MARKER not in written:
        raise ValueError(f"{PAGE.name} lacks the line that ends its hand-written part: {MARKER}")
    kept = written.split(MARKER, 1)[0]
    return f"{kept}{MARKER}\n\n{reference()}"


if __name__ == "__main__":
    PAGE.write_text(page(PAGE.read_text()))
    print(f"wrote {PAGE}")
