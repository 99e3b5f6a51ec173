"""``agentos chat`` in a real pseudo-terminal (80x24): it draws, takes a typed message, shows
the model's answer, moves to the calls with tab and opens one with enter (its raw JSON with
r), and quits on ctrl+c with the session saved; without a terminal it says so at once."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

from tests._cli import ROOT, agentos, env

__all__ = ["env"]  # fixtures

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")


def test_chat_in_a_terminal_takes_a_message_and_shows_the_answer(env: dict[str, str]) -> None:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    shown = bytearray()

    def until(pattern: bytes) -> bool:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if ready:
                try:
                    shown.extend(os.read(controller, 65536))
                except OSError:  # the terminal closed
                    return False
            if re.search(pattern, ESCAPES.sub(b"", bytes(shown))):
                return True
        return False

    def exit_code(process: subprocess.Popen[bytes]) -> int | None:
        """The process's exit code, reading what it draws meanwhile: a terminal nobody reads
        fills up, and a program drawing to it blocks before it can exit."""
        deadline = time.monotonic() + 20
        while process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if ready:
                try:
                    shown.extend(os.read(controller, 65536))
                except OSError:  # the terminal closed
                    break
        try:
            return process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None

    with subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "chat"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env={**env, "TERM": "xterm-256color"},
        cwd=ROOT,
        start_new_session=True,
    ) as process:
        os.close(terminal)
        try:
            assert until(rb"Write a message"), bytes(shown)[-2000:]
            os.write(controller, b"what is the weather in Oslo?\r")
            assert until(rb"Oslo: clear"), bytes(shown)[-2000:]
            os.write(controller, b"\t")
            assert until(rb"Cancel call"), "the footer shows the calls' keys"
            os.write(controller, b"\r")
            assert until(rb"weather +completed"), bytes(shown)[-2000:]
            assert until(rb"Result"), bytes(shown)[-2000:]
            os.write(controller, b"r")  # the raw JSON
            assert until(rb'"status": "completed"'), bytes(shown)[-2000:]
            os.write(controller, b"q")  # closes the details
            os.write(controller, b"\x03")  # ctrl+c
            assert exit_code(process) == 0, bytes(shown)[-2000:]
        finally:
            if process.poll() is None:
                process.kill()
            os.close(controller)
    listed = agentos(env, "sessions", "--json").lines
    assert len(listed) == 1, "the session was saved"


def test_chat_without_a_terminal_says_so_instead_of_waiting(env: dict[str, str]) -> None:
    refused = agentos(env, "chat")
    assert refused.code == 2, refused
    assert "agentos chat needs a terminal" in refused.err and "agentos run" in refused.err


def test_chat_with_stderr_redirected_is_refused_too(env: dict[str, str]) -> None:
    """Textual draws on stderr: with it in a file, the screen would go there."""
    controller, terminal = pty.openpty()
    try:
        finished = subprocess.run(
            [sys.executable, "-m", "agentos.cli", "chat"],
            stdin=terminal,
            stdout=terminal,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            timeout=20,
            text=True,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert finished.returncode == 2 and "needs a terminal" in finished.stderr
