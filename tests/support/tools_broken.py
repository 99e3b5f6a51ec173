"""A module whose import fails: naming it is one clear error."""

raise RuntimeError("broken on purpose")
