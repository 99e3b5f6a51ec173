"""``python -m tests.support.import_watch REPORT REFUSED MODULE [ARGS...]``:
``python -m MODULE ARGS``
as if the modules REFUSED names (comma-separated) were not installed, then the names of
the modules it imported written to REPORT as JSON; ``watched`` runs it from a test.

A refused module, or one inside it, fails to import as a missing one does
(``ModuleNotFoundError``). Standard library only: this runs before anything is refused.
"""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from collections.abc import Iterable
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

from tests.support import ROOT


class Refuse(MetaPathFinder):
    """Finds nothing for the refused modules, before any other finder looks."""

    def __init__(self, refused: Sequence[str]) -> None:
        self.refused = tuple(refused)

    def refuses(self, module: str) -> bool:
        return any(module == name or module.startswith(name + ".") for name in self.refused)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if self.refuses(fullname):
            raise ModuleNotFoundError(f"No module named {fullname!r} (refused)", name=fullname)
        return None


def main() -> None:
    report, refused, module, *args = sys.argv[1:]
    refuse = Refuse([name for name in refused.split(",") if name])
    loaded = sorted(filter(refuse.refuses, sys.modules))  # by site's .pth files, say
    sys.meta_path.insert(0, refuse)
    sys.argv = [module, *args]
    code: str | int | None = 0
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        code = exit.code
    finally:
        found = {"modules": sorted(sys.modules), "refused_but_loaded_first": loaded}
        Path(report).write_text(json.dumps(found))
    sys.exit(code)


def watched(
    env: dict[str, str], refused: Iterable[str], module: str, *args: str, report: Path
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run ``python -m MODULE ARGS`` so, in ``env``; how it ended and the modules it
    imported. None of the refused ones may have been imported before the refusal began."""
    done = subprocess.run(
        [sys.executable, "-m", __name__, str(report), ",".join(refused), module, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = json.loads(report.read_text())
    assert found["refused_but_loaded_first"] == [], found["refused_but_loaded_first"]
    return done, set(found["modules"])


if __name__ == "__main__":
    main()
