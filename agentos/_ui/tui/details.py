"""What the terminal UI's details pane says of one call, section by section.

Made for reading: the tool and its status, the question it waits to have answered, its
input pretty-printed, its progress (the percent for the bar, the newest payload and log
lines), its times in human units, its result or error as text; long parts are cut with a
note of how much was left out. The raw JSON (``raw``) is the page's peek with each epoch
time made seconds since the call was submitted. Everything a tool, a model or a user wrote
goes through ``visible``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.theme import Theme

from agentos import CallSnapshot
from agentos import CallStatus
from agentos import ProgressKind
from agentos import Question
from agentos import Session
from agentos._ui.call_json import chat_widget
from agentos._ui.call_json import peek
from agentos._ui.durations import human_seconds
from agentos._ui.durations import rough_seconds
from agentos._ui.terminal_text import visible
from agentos._ui.tui.form import FormError
from agentos._ui.tui.form import asked_by
from agentos._ui.tui.form import form_fields
from agentos.board import ChatCall
from agentos.stores import short_id
from components import Json
from components import JsonObject

PRETTY_WIDTH = 72
"""JSON that fits in this many columns stays on one line (an 80-column pane holds 74)."""
INPUT_LINES = 12
"""An input longer than this many lines (pretty-printed) is folded."""
RESULT_LINES = 40
RESULT_CHARS = 4_000
"""A result or error longer than either is cut."""
RAW_CHARS = 100_000
"""The raw JSON is cut past this: a call's result may be megabytes."""
LOG_LINES = 5
"""The newest log lines shown under the bar."""
RAW_HINT = "r shows the raw JSON"
ANSWER_HINT = "a answers it"
NOT_SHOWN = "this call is no longer shown in the chat: as it was when last shown"
CONTENT_RESULT = "tool_content"
"""A result carrying content blocks for the model (an MCP tool's image, say)."""


@dataclass(frozen=True, slots=True)
class Looked:
    """One call at one moment: what the chat knows (``call``), its widget (status, percent,
    expected seconds, note), the runtime's snapshot (None: not held) and, for a sub-agent's
    call, its child's chat as text. ``now``: the runtime clock's epoch seconds. ``in_chat``:
    False once the chat no longer shows the call (its list was replaced): ``call`` is then
    as it was last shown."""

    call: ChatCall
    widget: JsonObject
    snapshot: CallSnapshot | None
    child_chat: str | None
    now: float
    in_chat: bool = True

    @property
    def status(self) -> str:
        return str(self.widget["status"])

    @property
    def final(self) -> bool:
        return bool(self.widget["final"])

    @property
    def percent(self) -> float | None:
        """The percent the call's newest progress says, while it runs (None: none said)."""
        percent = self.widget["percent"]
        return float(percent) if isinstance(percent, int | float) and not self.final else None


def status_style(status: str, theme: Theme) -> str:
    """The colour a status is written in: the theme's success, error or primary."""
    if status == CallStatus.COMPLETED.value:
        return f"bold {theme.success}"
    if status in (CallStatus.FAILED.value, CallStatus.CANCELLED.value):
        return f"bold {theme.error}"
    if status == CallStatus.ORPHANED.value:
        return "bold dim"
    return f"bold {theme.primary}"


def head(looked: Looked, theme: Theme) -> Text:
    """``forecast  running  call 09a12183``, then the quiet mark (overdue, looked at) and, of
    a pending call, what it waits for."""
    shown = Text()
    shown.append(visible(looked.call.tool_name), "bold")
    shown.append("  ")
    shown.append(looked.status, status_style(looked.status, theme))
    call_id = looked.snapshot.call_id if looked.snapshot else looked.call.call_id
    shown.append(f"  call {visible(short_id(call_id))}", "dim")
    marks = []
    if not looked.in_chat:
        marks.append(NOT_SHOWN)
    if looked.snapshot is not None and looked.snapshot.deferred and not looked.final:
        marks.append("waiting for its continuation token")
    if looked.widget.get("note"):
        marks.append(str(looked.widget["note"]))
    if marks:
        shown.append(f"\n{visible(' · '.join(marks))}", "dim")
    return shown


def input_text(looked: Looked) -> Text:
    """The call's arguments, pretty-printed, folded past ``INPUT_LINES``."""
    arguments = looked.widget["tool_input"]
    if not arguments:
        return Text("(no arguments)", "dim")
    return cut(pretty(arguments), INPUT_LINES, RESULT_CHARS, RAW_HINT)


def progress_text(looked: Looked) -> Text:
    """What the call reported besides a percent: its newest payload while it runs (without
    the percent the bar shows), then its newest log lines, newest last, each with how long
    after the start it came; '' when none."""
    shown = Text()
    snapshot = looked.snapshot
    if snapshot is None:
        return shown
    latest = None if snapshot.newest_progress is None else snapshot.newest_progress.payload
    if isinstance(latest, Mapping) and looked.percent is not None:
        latest = {name: value for name, value in latest.items() if name != "percent"} or None
    if latest is not None and not looked.final:
        shown.append(visible(compact(latest)))
    lines = [
        entry
        for entry in reports(peek(snapshot))
        if entry["kind"] in (ProgressKind.LOG, ProgressKind.OUTPUT) and entry["payload"] is not None
    ]
    whens = [human_seconds(seconds_after(entry)) for entry in lines[-LOG_LINES:]]
    width = max(map(len, whens), default=0)
    earlier = []
    if len(lines) > len(whens):
        earlier.append(f"{len(lines) - len(whens):,} earlier lines ({RAW_HINT})")
    if snapshot.progress_dropped:
        earlier.append(f"{snapshot.progress_dropped:,} older reports not kept")
    if earlier:
        shown.append(f"{chr(10) if shown else ''}… {'; '.join(earlier)}", "dim")
    for when, entry in zip(whens, lines[-LOG_LINES:], strict=True):
        if shown:
            shown.append("\n")
        shown.append(f"{when:>{width}}  ", "dim")
        shown.append(visible(str(entry["payload"])))
    return shown


def times(looked: Looked) -> str:
    """``running for 12 s · expected 2 min · about 1 min 50 s left``: how long it waited or
    ran, the model's estimate, and what is left by its pace (its percent) or the estimate."""
    snapshot = looked.snapshot
    expected = looked.widget.get("expected_seconds")
    estimate = float(expected) if isinstance(expected, int | float) else None
    if snapshot is None:
        told = "not known: the runtime no longer holds this call"
        return told if estimate is None else f"{told} · expected {human_seconds(estimate)}"
    parts = []
    elapsed = 0.0
    if snapshot.started_at is None:
        if looked.final:
            parts.append("never started")
        else:
            waited = human_seconds(max(0.0, looked.now - snapshot.submitted_at))
            parts.append(f"not started yet: waiting for {waited}")
    else:
        end = snapshot.completed_at if snapshot.completed_at is not None else looked.now
        elapsed = max(0.0, end - snapshot.started_at)
        parts.append(f"{'ran' if looked.final else 'running'} for {human_seconds(elapsed)}")
    if estimate is not None:
        parts.append(f"expected {human_seconds(estimate)}")
    if not looked.final and snapshot.started_at is not None:
        parts.append(left(elapsed, looked.percent, estimate))
    return " · ".join(part for part in parts if part)


def left(elapsed: float, percent: float | None, estimate: float | None) -> str:
    """What is left of a running call: by its pace when it reports a percent above 0, else
    by the model's estimate (or how far past it it is); '' when neither says."""
    if percent is not None and 0 < percent < 100 and elapsed > 0:
        return f"{rough_seconds(elapsed * (100 - percent) / percent)} left at this pace"
    if estimate is None:
        return ""
    if elapsed <= estimate:
        return f"{rough_seconds(estimate - elapsed)} left"
    return f"{human_seconds(elapsed - estimate)} past the estimate"


def question_text(looked: Looked) -> Text | None:
    """What the running call asks the person, who asks and since when, the fields its form
    wants (or the page it asks them to open) and how to answer; None when it asks nothing."""
    asked = looked.widget.get("question")
    if looked.final or not isinstance(asked, dict):
        return None
    question = Question.from_json(asked)
    shown = Text(visible(question.message), "bold")
    since = human_seconds(max(0.0, looked.now - question.asked_at))
    shown.append(f"\n{visible(asked_by(question.source, looked.call.tool_name))}, {since} ago")
    try:
        fields = form_fields(question.form)
    except FormError as error:
        shown.append(f"\nits form cannot be filled in here: {visible(str(error))}", "dim")
        fields = []
    if fields:
        wanted = (f"{f.label}{' (required)' if f.required else ''}: {f.hint}" for f in fields)
        shown.append(f"\nfields: {visible(' · '.join(wanted))}", "dim")
    if question.url is not None:
        shown.append(f"\npage to open yourself: {visible(question.url)}", "dim")
    shown.append(f"\n{ANSWER_HINT}", "dim")
    return shown


def outcome(looked: Looked) -> tuple[str, Text] | None:
    """The heading and text of how the call ended (None while it runs)."""
    snapshot = looked.snapshot
    status = looked.status
    if status == CallStatus.ORPHANED.value:
        return "Outcome", Text("not known: no process is running this call", "dim")
    if not looked.final:
        return None
    if snapshot is None:
        told = "not kept here: the runtime forgot this call after it ended"
        return "Outcome", Text(f"{told} (b shows what the model reads)", "dim")
    if status == CallStatus.COMPLETED.value:
        return "Result", cut(readable(snapshot.result), RESULT_LINES, RESULT_CHARS, RAW_HINT)
    if status == CallStatus.CANCELLED.value:
        reason = snapshot.cancel_reason or (snapshot.error.message if snapshot.error else "")
        return "Cancelled", Text(visible(reason or "no reason given"))
    error = snapshot.error.message if snapshot.error else "no error message"
    return "Error", cut(Text(visible(error)), RESULT_LINES, RESULT_CHARS, RAW_HINT)


def readable(result: Json) -> Text:
    """A result as a person reads it: text as text, content blocks as their text (an image
    or a document as a line naming it), anything else as pretty-printed JSON."""
    if isinstance(result, str):
        return Text(visible(result))
    blocks = result.get("content") if isinstance(result, Mapping) else None
    if (
        isinstance(result, Mapping)
        and result.get("type") == CONTENT_RESULT
        and isinstance(blocks, list)
    ):
        return Text(visible("\n".join(block_text(block) for block in blocks)))
    return pretty(result)


def block_text(block: Json) -> str:
    """One content block of a result: its text, or a line saying what it is."""
    if not isinstance(block, Mapping):
        return compact(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    source = block.get("source")
    source = source if isinstance(source, Mapping) else {}
    media = source.get("media_type", "unknown type")
    data = source.get("data")
    size = f", {len(data) * 3 // 4:,} bytes" if isinstance(data, str) else ""
    if kind == "document":
        return f"[document {block.get('title', '')} ({media}{size})]"
    return f"[{kind} ({media}{size}): r shows its data]"


def raw(looked: Looked) -> str:
    """The call as JSON, as the page's peek gives it (of a call the runtime no longer holds,
    what the chat knows), each progress entry's time as ``after``: seconds since the call
    started (no epoch time); cut past ``RAW_CHARS``."""
    snapshot = looked.snapshot
    if snapshot is None:
        data: JsonObject = chat_widget(looked.call)
    else:
        data = peek(snapshot)
        data["progress"] = list(reports(data))
    if looked.child_chat is not None:
        data["child_chat"] = looked.child_chat
    text = visible(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    if len(text) <= RAW_CHARS:
        return text
    return f"{text[:RAW_CHARS]}\n… {len(text) - RAW_CHARS:,} more characters not shown"


def reports(peeked: JsonObject) -> Sequence[JsonObject]:
    """A call's progress entries as the page's ``peek`` gave them, each with its
    ``after`` (seconds since the call started: one definition for every front end) and
    without its epoch time ``at``."""
    return [
        {name: value for name, value in entry.items() if name != "at"}
        for entry in _objects(peeked["progress"])
    ]


def seconds_after(entry: JsonObject) -> float:
    """An entry's ``after`` (0 when not said: the call had not started)."""
    after = entry.get("after")
    return float(after) if isinstance(after, int | float) else 0.0


def pretty(value: Json) -> Text:
    """``value`` as indented JSON, each part that fits in ``PRETTY_WIDTH`` on one line (a
    huge one plainly indented: fitting costs a pass per level)."""
    if len(_dump(value)) > RAW_CHARS:
        return Text(visible(json.dumps(value, indent=2, ensure_ascii=False, default=str)))
    return Text(visible("\n".join(pretty_lines(value, 0))))


def pretty_lines(value: Json, indent: int, prefix: str = "", suffix: str = "") -> list[str]:
    """The lines of ``value`` indented ``indent`` columns, ``prefix`` (a key) before it and
    ``suffix`` (a comma) after: one line when it fits, else one per member."""
    pad = " " * indent
    one = f"{pad}{prefix}{_dump(value)}{suffix}"
    if len(one) <= PRETTY_WIDTH or not isinstance(value, dict | list) or not value:
        return [one]
    if isinstance(value, dict):
        opener, closer = "{", "}"
        members = [(f"{_dump(key)}: ", item) for key, item in value.items()]
    else:
        opener, closer = "[", "]"
        members = [("", item) for item in value]
    lines = [f"{pad}{prefix}{opener}"]
    for n, (key, item) in enumerate(members):
        lines += pretty_lines(item, indent + 2, key, "," if n < len(members) - 1 else "")
    return [*lines, f"{pad}{closer}{suffix}"]


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))


def compact(value: Json) -> str:
    """A payload on a line: a string as it is, an object as ``page: 4 · of: 10``, anything
    else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value:
        return " · ".join(f"{key}: {compact(item)}" for key, item in value.items())
    return _dump(value)


def cut(text: Text, lines: int, chars: int, hint: str) -> Text:
    """``text`` up to ``lines`` lines and ``chars`` characters, then a note of how much was
    left out (and ``hint``: where the rest is)."""
    plain = text.plain
    kept = plain[:chars]
    split = kept.split("\n")
    if len(split) > lines:
        kept = "\n".join(split[:lines])
    if len(kept) == len(plain):
        return text
    shown = text[: len(kept)]
    more_lines = plain.count("\n") - kept.count("\n")
    left_out = f"{len(plain) - len(kept):,} more characters"
    if more_lines:
        left_out += f" ({more_lines:,} more {'line' if more_lines == 1 else 'lines'})"
    shown.append(f"\n… {left_out} not shown; {hint}", "dim italic")
    return shown


def _objects(values: Json) -> Sequence[JsonObject]:
    return (
        [value for value in values if isinstance(value, dict)] if isinstance(values, list) else []
    )


def child_chat(child: Session) -> str:
    """A sub-agent's chat as lines of text: who said what, and each call with its status."""
    lines = [f"{child.config.name}'s chat (session {short_id(child.session_id)}):"]
    for entry in child.chat:
        lines.append(f"{entry.role}: {visible(entry.text)}")
        lines += [f"  {visible(call.tool_name)}: {call.status.value}" for call in entry.calls]
    return "\n".join(lines)
