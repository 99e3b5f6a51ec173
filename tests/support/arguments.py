"""The arguments of the tests' tools that take none: ``Empty`` (the kernel and sessions tests)."""

from __future__ import annotations

from pydantic import BaseModel


class Empty(BaseModel):
    pass
