"""Every error agentos raises to the code that calls it: one family, one module.

``AgentOSError`` is the base. Misuse (a call out of order, from the wrong
thread, on something closed or ended) is a ``UsageError``; a lookup that
finds nothing is a ``LookupError`` too, so ``except LookupError`` keeps working.
Messages say what happened and what to do in library terms; the CLI adds its
own flags to them.
"""

from __future__ import annotations


class AgentOSError(Exception):
    """Base class for errors raised by agentos."""


class UsageError(AgentOSError, RuntimeError):
    """agentos was used the wrong way: out of order, twice, or on something ended."""


class WrongThreadError(UsageError):
    """A loop-thread method called from another thread, or a ``*_threadsafe`` one from the
    loop's own thread; the message names the form to use instead."""


class RuntimeClosedError(UsageError):
    """The runtime is not running (not entered yet, or already closed)."""


class SessionEndedError(UsageError):
    """The session is stopped or failed: it takes no more messages (``Host.resume`` it)."""


class SessionBusyError(UsageError):
    """``Host.unload`` would lose work: the session is mid-turn, or (without a store)
    has calls whose outcome the model has not heard. ``cancel=True`` ends them."""


class UnknownCallError(AgentOSError, LookupError):
    """No call with this id exists in the caller's scope.

    An id that belongs to another session gets exactly this error too, so
    scope never leaks whether a call exists.
    """

    def __init__(self, call_id: object) -> None:
        self.call_id = call_id
        super().__init__(f"no tool call with id {call_id!r}")


class UnknownSessionError(AgentOSError, LookupError):
    """No session with this id is loaded here (or stored, for ``resume``)."""

    def __init__(self, session_id: object) -> None:
        self.session_id = session_id
        super().__init__(f"no session with id {session_id!r}")


class AmbiguousIdError(AgentOSError, LookupError):
    """The start of an id that the person typed is the start of several ids: ``candidates``
    lists them (each with what it names), and the message names the first few."""

    def __init__(self, message: str, candidates: tuple[str, ...] = ()) -> None:
        self.candidates = candidates
        super().__init__(message)


class CallCancelled(AgentOSError):
    """Raised inside a sync tool by ``ToolContext.check_cancelled`` once its call is cancelled."""


class ToolDefinitionError(AgentOSError, TypeError):
    """A function cannot be turned into a tool (say which parameter is wrong)."""


class ToolsetError(AgentOSError):
    """A toolset (an MCP server) could not start: the message names it and says why."""


class ToolboxError(AgentOSError):
    """A capability call the toolbox refuses; ``code`` is stable, ``message`` is for the model."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ProviderError(AgentOSError):
    """A model call failed for good (after the client's own retries); ``kind`` says how."""

    def __init__(self, kind: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


class StoreError(AgentOSError):
    """The store cannot be used; the message names the file and what to do.

    ``other_file_helps``: pointing the store at another file is a way out (a front end adds
    how its users do that: the command line names ``--db`` and ``AGENTOS_DB``).
    """

    def __init__(self, message: str = "", *, other_file_helps: bool = False) -> None:
        super().__init__(message)
        self.other_file_helps = other_file_helps


class SessionInUseError(StoreError):
    """Another live host holds the session's lease: this one must not load or write it."""

    def __init__(self, session_id: str, holder: str, seconds_left: float) -> None:
        self.session_id = session_id
        self.holder = holder
        self.seconds_left = seconds_left
        super().__init__(
            f"{self.in_use}; wait for it to finish, or take it over with resume(..., steal=True)"
        )

    @property
    def in_use(self) -> str:
        """Who holds the session, and for how long."""
        return (
            f"session {self.session_id!r} is in use by {self.holder} (its lease runs "
            f"{self.seconds_left:.0f}s more unless renewed)"
        )


class SessionConflictError(StoreError):
    """The session was written (or taken over) by another host since this one loaded it.

    The write is refused so that nothing the other host wrote is replaced; the
    session that gets this stops writing.
    """
