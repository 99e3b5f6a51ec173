"""The person's view of the board (seed 004): which agent nodes the chat shows, the call
widgets of the ones it hides, and late answers that reintroduce themselves."""

from __future__ import annotations

import pytest

from agentos import CallStatus
from agentos.board import CANCEL_TOOL
from agentos.board import STATUS_TOOL
from agentos.board import Board
from agentos.board import BoardAct
from agentos.board import BoardNode
from agentos.board import BoardTrigger
from agentos.board import ChatEntry

SHOWN = {
    (BoardTrigger.USER, BoardAct.STARTED),
    (BoardTrigger.USER, BoardAct.FINAL),
    (BoardTrigger.RESULT, BoardAct.FINAL),
}


def turn_that(board: Board, parent: int, trigger: BoardTrigger, did: BoardAct) -> BoardNode:
    """An agent node with words that did ``did``."""
    node = board.open_turn(parent, trigger, text=f"{trigger.value} {did.value}", at=5.0)
    if did is BoardAct.LOOKED:
        board.add_call(node.display_id, f"s{node.display_id}", STATUS_TOOL, {}, background=False)
    elif did is BoardAct.STARTED:
        board.add_call(node.display_id, f"w{node.display_id}", "work", {"n": 1}, background=True)
    assert board.did(node.display_id) is did
    return node


def entry(board: Board, node_id: int) -> ChatEntry | None:
    return next((e for e in board.chat() if e.node_id == node_id), None)


@pytest.mark.parametrize("did", list(BoardAct))
@pytest.mark.parametrize("trigger", list(BoardTrigger))
def test_the_visibility_table(trigger: BoardTrigger, did: BoardAct) -> None:
    board = Board()
    ask = board.post_user("q", at=1.0)
    node = turn_that(board, ask.display_id, trigger, did)
    shown = entry(board, node.display_id)
    if (trigger, did) in SHOWN:
        assert shown is not None
        assert shown.text == node.text
        assert shown.role == "agent"
        assert shown.at == 5.0
    elif did is BoardAct.STARTED:  # hidden words, but the spinner is on screen
        assert shown is not None
        assert shown.text == ""
        assert [call.status for call in shown.calls] == [CallStatus.PENDING]
    else:
        assert shown is None
    assert len(board.nodes) == 2  # nothing is deleted from the board
    assert node.text in board.render().text


def test_every_user_post_is_shown_in_creation_order() -> None:
    board = Board()
    first = board.post_user("one", at=1.0)
    board.post_user("two", at=2.0)
    board.post_user("three", reply_to=first.display_id, at=3.0)
    assert [(e.node_id, e.role, e.text, e.at) for e in board.chat()] == [
        (1, "user", "one", 1.0),
        (2, "user", "two", 2.0),
        (3, "user", "three", 3.0),
    ]


def test_a_new_thread_post_is_always_shown_and_the_look_that_posted_it_is_not() -> None:
    board = Board()
    ask = board.post_user("temperature?")
    kill = board.open_turn(ask.display_id, BoardTrigger.TIMER, text="Stopping it.")
    board.add_call(kill.display_id, "k", CANCEL_TOOL, {"tool_call_id": "t"}, background=False)
    board.add_call(kill.display_id, "n", "new_thread", {"text": "How now?"}, background=False)
    posted = board.new_thread("The tool keeps stalling. How would you like to proceed?")
    assert [e.node_id for e in board.chat()] == [ask.display_id, posted.display_id]
    assert board.chat()[-1].text == posted.text


def test_an_agent_node_without_words_is_hidden_even_where_the_table_shows() -> None:
    board = Board()
    ask = board.post_user("q")
    silent = board.open_turn(ask.display_id, BoardTrigger.USER)
    assert entry(board, silent.display_id) is None
    board.add_call(silent.display_id, "w", "work", {}, background=True)
    widget = entry(board, silent.display_id)
    assert widget is not None
    assert widget.text == ""
    assert len(widget.calls) == 1


def test_a_silent_retry_shows_a_fresh_spinner_and_a_killed_call_its_end() -> None:
    board = Board()
    ask = board.post_user("temperature in Warsaw?")
    start = board.open_turn(ask.display_id, BoardTrigger.USER, text="Checking!")
    board.add_call(start.display_id, "t1", "temperature", {"city": "Warsaw"}, background=True)
    visit = board.open_turn(start.display_id, BoardTrigger.TIMER, text="Stalled. Stopping it.")
    board.add_call(visit.display_id, "k", CANCEL_TOOL, {"tool_call_id": "t1"}, background=False)
    board.settle("k", CallStatus.COMPLETED, "cancelled")
    board.settle("t1", CallStatus.CANCELLED, "cancelled")
    retry = board.open_turn(start.display_id, BoardTrigger.RESULT, text="Trying again.")
    board.add_call(retry.display_id, "t2", "temperature", {"city": "Warsaw"}, background=True)
    chat = board.chat()
    assert [(e.node_id, e.text) for e in chat] == [
        (ask.display_id, ask.text),
        (start.display_id, start.text),
        (retry.display_id, ""),
    ]
    assert [(c.call_id, c.status) for c in chat[1].calls] == [("t1", CallStatus.CANCELLED)]
    assert [(c.call_id, c.tool_name, c.tool_input) for c in chat[2].calls] == [
        ("t2", "temperature", {"city": "Warsaw"})
    ]


def test_a_late_answer_quotes_its_question_and_a_timely_one_does_not() -> None:
    board = Board()
    build = board.post_user("how long will the build take? " + "and more " * 10)
    work = board.open_turn(build.display_id, BoardTrigger.USER, text="Starting it.")
    board.add_call(work.display_id, "b", "build", {}, background=True)
    weather = board.post_user("meanwhile, the weather?")
    board.open_turn(weather.display_id, BoardTrigger.USER, text="Sunny.")
    board.settle("b", CallStatus.COMPLETED, "4 minutes")
    late = board.open_turn(work.display_id, BoardTrigger.RESULT, text="About 4 minutes.")
    texts = {e.node_id: e.text for e in board.chat()}
    assert texts[work.display_id] == "Starting it."
    assert texts[weather.display_id + 1] == "Sunny."
    reintroduced = texts[late.display_id]
    assert reintroduced.endswith(": About 4 minutes.")
    assert "how long will the build take?" in reintroduced
    assert len(reintroduced) < len(build.text)  # the question is shortened
    assert board.nodes[late.display_id].text == "About 4 minutes."  # only the chat says it


def test_an_answer_under_a_follow_up_quotes_nothing_when_the_follow_up_is_the_latest() -> None:
    board = Board()
    ask = board.post_user("first")
    follow = board.post_user("second", reply_to=ask.display_id)
    answer = board.open_turn(follow.display_id, BoardTrigger.USER, text="Both done.")
    assert entry(board, answer.display_id) == ChatEntry(
        answer.display_id, "agent", "Both done.", 0.0
    )
