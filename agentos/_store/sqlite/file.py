"""The store's file on disk: created private, watched for replacement, its errors explained.

A file or folder the store creates is private to the user (0600, 0700). A
file deleted or replaced under a running store is noticed before the next
write, which then fails rather than going to the old, unlinked file. What
SQLite says about a file becomes one ``StoreError`` line saying what to do.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from agentos._errors import StoreError


class FileWatch:
    """Whether the path still names the database file that was opened."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._identity = identity(path)
        """The file opened (device, inode): a write checks the path still names it."""
        self._companions: dict[Path, tuple[int, int] | None] = {}
        """Its -wal and -shm files, as opened."""
        self._gone = False
        """The path names another file now (or none): nothing more is written."""

    def note_companions(self) -> None:
        """Remember the -wal and -shm files SQLite made beside the file, once it is open."""
        for suffix in ("-wal", "-shm"):
            companion = Path(f"{self.path}{suffix}")
            self._companions[companion] = identity(companion, missing_ok=True)

    def check(self) -> None:
        """Raise if the path no longer names the file opened (deleted, or replaced).

        The first time, our -wal and -shm files are taken from beside the path:
        SQLite leaves them when the file has moved, and whoever opens the file
        there next would read our pages as theirs.
        """
        if not self._gone and identity(self.path, missing_ok=True) != self._identity:
            self._gone = True
            for companion, known in self._companions.items():
                if known is not None and identity(companion, missing_ok=True) == known:
                    with contextlib.suppress(OSError):
                        companion.unlink()
        if self._gone:
            raise StoreError(
                f"the database {self.path} was deleted or replaced while this process had it "
                "open; nothing more is written (restart agentos to use the file there now)"
            )


def create_private(path: Path) -> None:
    """Create the missing folders (0700) and the file (0600); what exists is left as it is.

    SQLite gives the ``-wal`` and ``-shm`` files the database file's mode.
    """
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
            folder.chmod(0o700)  # whatever the umask
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    try:
        os.fchmod(descriptor, 0o600)
    finally:
        os.close(descriptor)


def identity(path: Path, *, missing_ok: bool = False) -> tuple[int, int] | None:
    """The file's (device, inode); None if it is missing and ``missing_ok``."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise
    return stat.st_dev, stat.st_ino


def explain(path: Path, error: sqlite3.Error) -> StoreError:
    """A one-line, actionable description of what SQLite said about ``path``."""
    text = str(error)
    lowered = text.lower()
    if "locked" in lowered or "busy" in lowered:
        return StoreError(
            f"the database {path} is locked by another writer; stop the other agentos "
            "process, or use another file",
            other_file_helps=True,
        )
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return StoreError(
            f"cannot write the database {path} ({text}); choose a writable location",
            other_file_helps=True,
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreError(
            f"the database {path} is corrupt or not an SQLite file ({text}); it was left "
            "as it is: move it aside or restore a backup"
        )
    return StoreError(f"the database {path} failed: {text}")
