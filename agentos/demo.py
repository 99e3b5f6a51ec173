"""The demo behind ``make run``: slow tools running side by side, one cancelled, one timing out.

Everything printed comes from the runtime's own event stream for the session,
so what you see is what a UI or a model would be told.
"""

from __future__ import annotations

import logging
import time

import anyio
import structlog
from pydantic import BaseModel, Field

from agentos import CallEvent, Runtime, ToolContext, tool


class CalendarRequest(BaseModel):
    person: str = Field(description="Whose calendar to read")
    seconds: float = Field(default=3.0, gt=0, le=60, description="How long the lookup takes")
    stall_at: int | None = Field(default=None, description="Percent at which the lookup hangs")


class ReportRequest(BaseModel):
    pages: int = Field(default=4, gt=0, le=100)


@tool
async def fetch_calendar(args: CalendarRequest, ctx: ToolContext) -> dict[str, object]:
    """Read someone's calendar (slowly), reporting progress as it goes."""
    steps = 5
    for step in range(1, steps + 1):
        percent = step * 100 // steps
        if args.stall_at is not None and percent >= args.stall_at:
            ctx.log(f"{args.person}'s calendar server stopped answering")
            await anyio.sleep_forever()
        await anyio.sleep(args.seconds / steps)
        ctx.progress({"percent": percent})
    return {"person": args.person, "free": ["10:00-11:00", "15:00-16:00"]}


@tool
def write_report(args: ReportRequest, ctx: ToolContext) -> str:
    """Write a report page by page in a worker thread; stops when cancelled."""
    for page in range(1, args.pages + 1):
        if ctx.wait_cancelled(0.4):
            return "stopped early"
        ctx.progress({"page": page, "of": args.pages})
    return f"{args.pages} pages written"


def describe(event: CallEvent, labels: dict[str, str], started: float) -> str:
    label = labels.get(event.call_id, event.call_id[:8])
    detail = ""
    if event.progress is not None:
        detail = str(event.progress.payload)
    elif event.error is not None:
        detail = event.error.message
    return f"{time.monotonic() - started:5.1f}s  {label:<16} {event.kind.value:<10} {detail}"


async def main() -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    started = time.monotonic()
    labels: dict[str, str] = {}
    async with Runtime([fetch_calendar, write_report], max_running_per_session=8) as runtime:
        print("agentos demo: five tool calls in one session, all running at once\n")
        async with runtime.subscribe("demo") as events, anyio.create_task_group() as group:

            async def show() -> None:
                async for event in events:
                    print(describe(event, labels, started))

            group.start_soon(show)
            plan = {
                "Jane": runtime.submit("fetch_calendar", {"person": "Jane"}, session_id="demo"),
                "Jack": runtime.submit(
                    "fetch_calendar", {"person": "Jack", "seconds": 2}, session_id="demo"
                ),
                "Joe (stalls)": runtime.submit(
                    "fetch_calendar", {"person": "Joe", "stall_at": 40}, session_id="demo"
                ),
                "Ann (timeout)": runtime.submit(
                    "fetch_calendar",
                    {"person": "Ann", "seconds": 30},
                    session_id="demo",
                    timeout=2.5,
                ),
                "report (thread)": runtime.submit("write_report", {"pages": 5}, session_id="demo"),
            }
            labels.update({call_id: label for label, call_id in plan.items()})
            await runtime.wait(plan["Jack"])
            await anyio.wait_all_tasks_blocked()  # let the event printer catch up
            joe = runtime.status(plan["Joe (stalls)"])
            print(
                f"\n  -> Joe's call is {joe.status.value}, last progress: "
                f"{joe.progress[-1].payload if joe.progress else None}; cancelling it\n"
            )
            outcome = runtime.cancel(plan["Joe (stalls)"], "stalled: the user gave up on Joe")
            print(f"  -> cancel took: {outcome.cancelled} (was {outcome.previous_status.value})\n")
            for call_id in plan.values():
                await runtime.wait(call_id)
            await anyio.wait_all_tasks_blocked()
            group.cancel_scope.cancel()
        print("\nfinal state:")
        for snapshot in runtime.list_calls("demo"):
            outcome_text = snapshot.result if snapshot.error is None else snapshot.error.message
            print(f"  {labels[snapshot.call_id]:<16} {snapshot.status.value:<10} {outcome_text}")
        stats = runtime.statistics()
        print(
            f"\n{stats.ticks} ticks, the longest {stats.max_tick_us:.0f} us; "
            f"the whole demo took {time.monotonic() - started:.1f}s"
        )


def run() -> None:
    anyio.run(main)


if __name__ == "__main__":
    run()
