"""The JSON value type that crosses every boundary: inputs, results, progress."""

from __future__ import annotations

from typing import TypeAlias

Json: TypeAlias = "bool | int | float | str | list[Json] | dict[str, Json] | None"
JsonObject: TypeAlias = "dict[str, Json]"
