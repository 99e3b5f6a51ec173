"""The reason given for a cancel, told to the server. The SDK's own ``notifications/cancelled``
says ``caller cancelled``; it is written from the task of the call being cancelled, so on
its way out it takes that call's reason (``ToolContext.cancel_reason``) instead."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from types import TracebackType
from typing import Any
from typing import Self

from agentos._kernel.context import ToolContext

_REASON: ContextVar[Callable[[], str | None] | None] = ContextVar("mcp_cancel_reason", default=None)


@contextmanager
def told_why(ctx: ToolContext) -> Iterator[None]:
    """While ``ctx``'s call talks to the server, a cancel it sends carries its reason."""
    token = _REASON.set(lambda: ctx.cancel_reason)
    try:
        yield
    finally:
        _REASON.reset(token)


class ReasonedWrites:
    """A session's write stream whose cancel notifications carry the call's reason."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: Any, /) -> None:
        reason_of = _REASON.get()
        if reason_of is not None:
            message: Any = getattr(item, "message", None)
            if getattr(message, "method", None) == "notifications/cancelled":
                reason = reason_of()
                if reason:
                    params = {**(message.params or {}), "reason": reason}
                    item = replace(item, message=message.model_copy(update={"params": params}))
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self._inner.aclose()
        return None
