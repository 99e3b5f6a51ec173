"""``agentos chat`` in a real pseudo-terminal (80x24): it draws, takes a typed message, shows
the model's answer, moves to the calls with tab and opens one with enter (its raw JSON with
r), and quits on ctrl+c with the session saved; without a terminal it says so at once."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from tests.support import ROOT
from tests.support.cli import agentos
from tests.support.cli import chat_in_a_terminal

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")


def test_chat_in_a_terminal_takes_a_message_and_shows_the_answer(env: dict[str, str]) -> None:
    with chat_in_a_terminal(env) as chat:
        assert chat.until(rb"Write a message"), chat.tail
        chat.write(b"what is the weather in Oslo?\r")
        assert chat.until(rb"Oslo: clear"), chat.tail
        chat.write(b"\t")
        assert chat.until(rb"Cancel call"), "the footer shows the calls' keys"
        chat.write(b"\r")
        assert chat.until(rb"weather +completed"), chat.tail
        assert chat.until(rb"Result"), chat.tail
        chat.write(b"r")  # the raw JSON
        assert chat.until(rb'"status": "completed"'), chat.tail
        chat.write(b"q")  # closes the details
        chat.write(b"\x03")  # ctrl+c
        assert chat.exit_code() == 0, chat.tail


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
