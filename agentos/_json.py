"""Turning what tools hand back into plain JSON values."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel

from components import Json

_SCALARS = (str, int, float, bool, type(None))


def to_json(value: Any) -> Json:
    """A plain JSON copy of ``value``; raises TypeError or ValueError if it has none.

    Pydantic models are dumped in JSON mode; containers are copied, so a tool
    that keeps mutating its own object cannot change a stored result.
    """
    if isinstance(value, _SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{value!r} is not a JSON number")
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    text = json.dumps(value, allow_nan=False)
    return json.loads(text)  # type: ignore[no-any-return]
