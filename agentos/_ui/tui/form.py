"""A question's form as a terminal asks it: each field of the JSON Schema (an object of flat
properties, MCP elicitation's ``requestedSchema``) with what it takes, and the answer typed
per the schema from what the person wrote, or what is wrong with each field. The terminal UI's
answer screen and ``agentos run``'s prompt both read forms through here, so they accept the
same answers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import datetime
from urllib.parse import urlparse

from components import Json
from components import JsonObject

TEXT, NUMBER, INTEGER, BOOLEAN, CHOICE, CHOICES = (
    "string",
    "number",
    "integer",
    "boolean",
    "choice",
    "choices",
)
YES = ("y", "yes", "true", "1")
NO = ("n", "no", "false", "0")


class FormError(ValueError):
    """A form no person can fill in here: not an object of flat fields."""


class FieldProblem(ValueError):
    """What is wrong with what a person wrote in one field (said to them as it is)."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field: its ``name`` in the answer, ``label`` (its title, else its name), ``kind``
    (``string``, ``number``, ``integer``, ``boolean``, ``choice``, ``choices``), whether it is
    ``required``, its ``choices`` (value, title) and the rest of its ``schema`` (limits,
    format, default)."""

    name: str
    label: str
    kind: str
    required: bool
    description: str | None = None
    choices: tuple[tuple[str, str], ...] = ()
    schema: JsonObject = field(default_factory=dict)

    @property
    def hint(self) -> str:
        """What the field takes, in words: ``a whole number, 1 to 14``."""
        if self.kind in (CHOICE, CHOICES):
            titles = ", ".join(title for _, title in self.choices)
            return f"one of: {titles}" if self.kind == CHOICE else f"any of (commas): {titles}"
        words = {NUMBER: "a number", INTEGER: "a whole number", BOOLEAN: "yes or no"}
        said = words.get(self.kind) or str(self.schema.get("format") or "text")
        low, high = self.schema.get("minimum"), self.schema.get("maximum")
        if self.kind in (NUMBER, INTEGER) and (low is not None or high is not None):
            said += f", {_limits(low, high, '')}"
        shortest, longest = self.schema.get("minLength"), self.schema.get("maxLength")
        if self.kind == TEXT and (shortest is not None or longest is not None):
            said += f", {_limits(shortest, longest, ' characters')}"
        return said

    @property
    def default_text(self) -> str:
        """The schema's default as a person would type it ('' when none)."""
        default = self.schema.get("default")
        if default is None:
            return ""
        if isinstance(default, bool):
            return "yes" if default else "no"
        if isinstance(default, list):
            return ", ".join(self._title(str(value)) for value in default)
        if self.kind == CHOICE:
            return self._title(str(default))
        return str(default)

    def read(self, typed: str) -> Json:
        """The value ``typed`` gives this field, typed per its schema; None when left empty
        and not required. ``FieldProblem`` says what is wrong."""
        typed = typed.strip()
        if not typed:
            if self.required:
                raise FieldProblem("required: write a value")
            return None
        if self.kind == BOOLEAN:
            if typed.lower() in YES:
                return True
            if typed.lower() in NO:
                return False
            raise FieldProblem(f"{typed!r} is not yes or no")
        if self.kind in (NUMBER, INTEGER):
            return self._number(typed)
        if self.kind == CHOICE:
            return self._choice(typed)
        if self.kind == CHOICES:
            picked = [self._choice(part.strip()) for part in typed.split(",") if part.strip()]
            return list(dict.fromkeys(picked))
        return self._text(typed)

    def _number(self, typed: str) -> Json:
        try:
            number: float = int(typed)
        except ValueError:
            if self.kind == INTEGER:
                raise FieldProblem(f"{typed!r} is not a whole number") from None
            try:
                number = float(typed)
            except ValueError:
                raise FieldProblem(f"{typed!r} is not a number") from None
            if not math.isfinite(number):
                raise FieldProblem(f"{typed!r} is not a number") from None
        low, high = self.schema.get("minimum"), self.schema.get("maximum")
        if isinstance(low, int | float) and number < low:
            raise FieldProblem(f"{typed} is below the least allowed, {low}")
        if isinstance(high, int | float) and number > high:
            raise FieldProblem(f"{typed} is above the most allowed, {high}")
        return number

    def _choice(self, typed: str) -> str:
        for value, title in self.choices:
            if typed in (value, title):
                return value
        folded = [value for value, title in self.choices if typed.casefold() == title.casefold()]
        if len(folded) == 1:
            return folded[0]
        raise FieldProblem(f"{typed!r} is not one of: {', '.join(t for _, t in self.choices)}")

    def _text(self, typed: str) -> str:
        shortest, longest = self.schema.get("minLength"), self.schema.get("maxLength")
        if isinstance(shortest, int) and len(typed) < shortest:
            raise FieldProblem(f"too short: at least {shortest} characters")
        if isinstance(longest, int) and len(typed) > longest:
            raise FieldProblem(f"too long: at most {longest} characters")
        kind = self.schema.get("format")
        if kind == "email" and ("@" not in typed or typed.startswith("@") or " " in typed):
            raise FieldProblem(f"{typed!r} is not an email address")
        if kind == "uri" and not (urlparse(typed).scheme and urlparse(typed).netloc):
            raise FieldProblem(f"{typed!r} is not a URL (https://...)")
        try:
            if kind == "date":
                date.fromisoformat(typed)
            elif kind == "date-time":
                datetime.fromisoformat(typed)
        except ValueError:
            raise FieldProblem(f"{typed!r} is not a {kind} (ISO 8601: 2026-12-06)") from None
        return typed

    def _title(self, value: str) -> str:
        return next((title for known, title in self.choices if known == value), value)


def asked_by(source: str | None, tool_name: str) -> str:
    """Who asks: the question's source (``mcp server files``), else the call's tool."""
    return f"asked by {source}" if source else f"asked by the tool {tool_name}"


def form_fields(form: Mapping[str, Json] | None) -> list[Field]:
    """The fields of a question's ``form`` in its order (none without one); ``FormError`` for
    a form that is not an object of flat fields."""
    if form is None:
        return []
    properties = form.get("properties", {})
    required = form.get("required", [])
    if form.get("type", "object") != "object" or not isinstance(properties, dict):
        raise FormError("the form is not a JSON Schema object of fields")
    if not isinstance(required, list):
        raise FormError("the form's 'required' is not a list of field names")
    return [_field(name, schema, name in required) for name, schema in properties.items()]


def read_answer(
    fields: Sequence[Field], typed: Mapping[str, str]
) -> tuple[dict[str, Json], dict[str, str]]:
    """The answer's content from what was ``typed`` in each field (by name), fields left empty
    left out; and what is wrong, by field name (nothing: the content can be sent)."""
    content: dict[str, Json] = {}
    problems: dict[str, str] = {}
    for each in fields:
        try:
            value = each.read(typed.get(each.name, ""))
        except FieldProblem as problem:
            problems[each.name] = str(problem)
            continue
        if value is not None:
            content[each.name] = value
    return content, problems


def _field(name: str, schema: Json, required: bool) -> Field:
    if not isinstance(schema, dict):
        raise FormError(f"field {name!r} has no schema object")
    kind = schema.get("type", TEXT)
    title, description = schema.get("title"), schema.get("description")
    label = title if isinstance(title, str) and title else name
    described = description if isinstance(description, str) and description else None
    choices = _choices(schema)
    if kind == "array":
        items = schema.get("items")
        choices = _choices(items) if isinstance(items, dict) else ()
        if not choices:
            raise FormError(f"field {name!r} is a list of what cannot be chosen here")
        return Field(name, label, CHOICES, required, described, choices, schema)
    if choices:
        return Field(name, label, CHOICE, required, described, choices, schema)
    if kind not in (TEXT, NUMBER, INTEGER, BOOLEAN):
        raise FormError(f"field {name!r} is of type {kind!r}, which cannot be typed here")
    return Field(name, label, str(kind), required, described, (), schema)


def _choices(schema: JsonObject) -> tuple[tuple[str, str], ...]:
    """A field's choices: ``enum`` (titled by ``enumNames``), or ``oneOf``/``anyOf`` of
    ``const`` and ``title``."""
    values = schema.get("enum")
    if isinstance(values, list):
        names = schema.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(values) else values
        return tuple((str(value), str(title)) for value, title in zip(values, titles, strict=True))
    options = schema.get("oneOf", schema.get("anyOf"))
    if isinstance(options, list):
        return tuple(
            (str(option["const"]), str(option.get("title") or option["const"]))
            for option in options
            if isinstance(option, dict) and "const" in option
        )
    return ()


def _limits(low: Json, high: Json, unit: str) -> str:
    if low is not None and high is not None:
        return f"{low} to {high}{unit}"
    return f"at least {low}{unit}" if low is not None else f"at most {high}{unit}"
