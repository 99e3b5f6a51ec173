"""Naming the public home of what agentos exports (``agentos``, ``agentos.board``, ...)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterable
from collections.abc import Mapping


def claim(value: object, home: str) -> None:
    """Name ``home`` as the module of a public class or function defined in our packages.

    Tracebacks, reprs and docs then show ``agentos.Runtime`` rather than the private
    module it lives in today; pickling finds it there too.
    """
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return
    if value.__module__.partition(".")[0] not in ("agentos", "components"):
        return
    if inspect.isclass(value):
        # get_type_hints reads a class's string annotations in the namespace of its
        # ``__module__``: evaluate them where they were written, while it still is.
        # (One that cannot be evaluated stays a string, as
        # tests/project/test_public_surface.py says.)
        own = inspect.get_annotations(value)
        if own and any(isinstance(hint, str) for hint in own.values()):
            try:
                hints = typing.get_type_hints(value, include_extras=True)
            except (NameError, TypeError):
                pass
            else:
                value.__annotations__ = {name: hints[name] for name in own}
    value.__module__ = home


def claim_all(namespace: Mapping[str, object], names: Iterable[str], home: str) -> None:
    """``claim`` each of ``names`` in ``namespace`` for ``home``."""
    for name in names:
        claim(namespace[name], home)
