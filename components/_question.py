"""What a running call asks a person, and the answer it gets (an MCP server's elicitation,
an A2A agent's ``input-required``). A call that asks stays ``running``: its question is
part of what a person sees of it until it is answered or the call ends."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from components._json import Json
from components._json import JsonObject


class AnswerAction(StrEnum):
    """What the person did with a question (the words of MCP elicitation)."""

    ACCEPT = "accept"
    """Answered: ``content`` holds the form's values (None for a question with no form)."""
    DECLINE = "decline"
    """Said no, or nobody could be asked (``reason`` says which)."""
    CANCEL = "cancel"
    """Dismissed it without choosing."""


@dataclass(frozen=True, slots=True)
class Question:
    """``message`` for the person; ``form`` the JSON Schema of the answer (an object of
    flat fields), or ``url`` a page to open instead; ``source`` who asks (``mcp server
    files``); ``asked_at`` epoch seconds."""

    message: str
    form: dict[str, Json] | None = None  # JsonObject: an alias that | cannot join
    url: str | None = None
    source: str | None = None
    asked_at: float = 0.0

    def to_json(self) -> JsonObject:
        return {
            "message": self.message,
            "form": self.form,
            "url": self.url,
            "source": self.source,
            "asked_at": self.asked_at,
        }

    @classmethod
    def from_json(cls, value: Json) -> Question:
        """The question a ``question`` progress entry carries (``to_json``'s shape)."""
        fields = value if isinstance(value, dict) else {}
        form, url, source, at = (fields.get(k) for k in ("form", "url", "source", "asked_at"))
        return cls(
            message=str(fields.get("message", "")),
            form=form if isinstance(form, dict) else None,
            url=url if isinstance(url, str) else None,
            source=source if isinstance(source, str) else None,
            asked_at=float(at) if isinstance(at, int | float) else 0.0,
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """The person's answer: ``content`` the form's values when accepted; ``reason`` why it
    was declined or cancelled when nobody chose it (no one to ask, the call ended)."""

    action: AnswerAction
    content: dict[str, Json] | None = None
    reason: str | None = None

    def to_json(self) -> JsonObject:
        """What the call's progress says of it: the action and reason, never the content
        (a person's answer may be a secret; the asker alone gets it)."""
        return {"action": self.action.value, "reason": self.reason}
