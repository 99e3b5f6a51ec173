"""How one call runs: the options ``Runtime.submit`` takes beside the call's ids."""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentos._kernel.checks import check_optional_texts
from agentos._kernel.checks import check_retries
from agentos._kernel.checks import check_seconds
from agentos._kernel.checks import optional_texts
from components import quick_init


@quick_init
@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call runs. Build it once and pass it to any number of submits.

    ``timeout``: seconds from the start (a deferred call's: from submission) after which
    the call ends ``failed`` (timed out); None takes the tool's, else the runtime's
    default; ``math.inf`` means none. ``overdue_after``: seconds after which the owner
    hears the call is overdue (it goes on), and again each interval while it runs;
    ``overdue_max``: the interval doubles each time, up to these seconds (None: it stays
    ``overdue_after``). ``deferred``: never run here; ``complete``
    gives it its outcome. ``runner``: a registered ``IsolatedRunner`` does the work.
    ``retries``: run the work again after a failure (up to 10 times), within the same
    call. ``attempt_timeout``: seconds each attempt may run; one past it fails timed out
    and the next starts (``timeout`` still bounds the whole call). ``label``: a name for
    the call in logs and listings. ``disposition``: how the caller runs it (a session's
    ``run_isolated``, ``run_sync``, ...), which an isolated runner's request carries
    (None: ``run_isolated``). ``trace_parent``: the W3C ``traceparent`` of the call's
    span, which the tool can read (``ToolContext.trace_parent``) and pass on.
    ``nobody_to_ask``: why nobody is there to answer the call's questions (a board's
    autonomous turn made it): a question it asks (``ToolContext.ask``) is declined at once
    with these words, whatever the host's ``ask_person`` (None: the host's hook decides).
    """

    timeout: float | None = None
    overdue_after: float | None = None
    overdue_max: float | None = None
    deferred: bool = False
    runner: str | None = None
    retries: int = 0
    attempt_timeout: float | None = None
    label: str | None = None
    disposition: str | None = None
    trace_parent: str | None = None
    nobody_to_ask: str | None = None

    def check(self) -> None:
        """``ValueError`` or ``TypeError`` naming the first option that is wrong."""
        if self.timeout is not None and self.timeout != math.inf:
            check_seconds("timeout", self.timeout)
        if self.overdue_after is not None:
            check_seconds("overdue_after", self.overdue_after)
        if self.overdue_max is not None:
            check_seconds("overdue_max", self.overdue_max)
        check_retries(self.retries)
        if self.attempt_timeout is not None:
            check_seconds("attempt_timeout", self.attempt_timeout)
        if optional_texts(
            self.label, self.runner, self.disposition, self.trace_parent, self.nobody_to_ask
        ):
            return
        check_optional_texts(
            label=self.label,
            runner=self.runner,
            disposition=self.disposition,
            trace_parent=self.trace_parent,
            nobody_to_ask=self.nobody_to_ask,
        )


DEFAULT_OPTIONS = CallOptions()
