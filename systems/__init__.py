"""Behaviour: one esper processor per concern, run each tick in a fixed order.

Systems import only ``components``. They are plain synchronous code over the
world and the shared ``TickContext``; what needs the async shell (starting or
interrupting work, waking waiters, delivering events) is written to
``TickContext.effects`` for the kernel to perform after the tick.
"""

from systems._delivery import DeliverySystem
from systems._executor import ExecutorSystem
from systems._ingest import IngestSystem
from systems._introspection import IntrospectionSystem
from systems._lifecycle import transition
from systems._scheduler import SchedulerSystem
from systems._timeout import TimeoutSystem

PHASES = (
    IngestSystem,
    SchedulerSystem,
    ExecutorSystem,
    TimeoutSystem,
    IntrospectionSystem,
    DeliverySystem,
)
"""The tick's phases, in the order they run."""

__all__ = [
    "PHASES",
    "DeliverySystem",
    "ExecutorSystem",
    "IngestSystem",
    "IntrospectionSystem",
    "SchedulerSystem",
    "TimeoutSystem",
    "transition",
]
