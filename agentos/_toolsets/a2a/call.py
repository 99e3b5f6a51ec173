"""A call of a remote agent's tool, from the model's message to the call's outcome: the task
runs (``task.py``), and at each state it settles in the call does what the state says. Done:
its artifacts are the result; failed, rejected, cancelled by the agent, or wanting an
authentication agentos cannot give: the call fails saying so; input-required: the person is
asked and the answer goes back on the same task (or, ``input = "model"``, the call ends
with the question for the model to answer in a follow-up call). A cancel of the call
cancels the task; an agent that cannot be reached or answers what is not A2A fails the
call naming the agent.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

import anyio

from agentos._kernel.context import ToolContext
from agentos._kernel.tools import ToolFailure
from agentos._toolsets.a2a.parts import FREE_TEXT
from agentos._toolsets.a2a.parts import INTERRUPTED
from agentos._toolsets.a2a.parts import answer_message
from agentos._toolsets.a2a.parts import question_of
from agentos._toolsets.a2a.parts import result_of
from agentos._toolsets.a2a.parts import text_of
from agentos._toolsets.a2a.parts import user_message
from agentos._toolsets.a2a.task import Remote
from agentos._toolsets.a2a.task import RemoteTask
from agentos._toolsets.mcp.transport import leaf_error
from components import AnswerAction
from components import Json

Asker = Literal["person", "model"]


async def call_agent(
    remote: Remote,
    args: dict[str, Any],
    ctx: ToolContext,
    asker: Asker,
    resumed: str | None = None,
) -> Json | ToolFailure:
    """Run the model's ``args`` (``message``, perhaps ``data``, and the
    ``context_id``/``task_id`` to go on with) as a task of ``remote``, or go on with the
    task ``resumed`` after a restart."""
    task = RemoteTask(remote, ctx)
    try:
        if resumed is not None:
            await task.resume(resumed)
        else:
            if args.get("task_id"):  # an answer to the task's question: read which it is
                task.task_id = str(args["task_id"])
                await task.read()
                task.answering()
            message = user_message(
                str(args["message"]),
                args.get("data"),
                task_id=args.get("task_id"),
                context_id=args.get("context_id") or task.context_id,
            )
            await task.send(message)
        while True:
            await task.follow()
            if task.state != "input_required" or task.reply is not None:
                return _ended(task)
            if asker == "model":
                return _question_for_the_model(task)
            declined = await _ask_the_person(task)
            if declined is not None:
                await task.cancel(declined)
                return ToolFailure(f"A2A agent {remote.name!r}: {declined}")
    except anyio.get_cancelled_exc_class():
        await task.cancel(ctx.cancel_reason)
        raise
    except Exception as error:
        failed = _failed(remote.name, task, error)
        if task.seen and not (asker == "model" and task.state in INTERRUPTED):
            await task.cancel(f"the call that followed the task failed: {failed}")
        return ToolFailure(failed)


def _ended(task: RemoteTask) -> Json | ToolFailure:
    """The outcome of a task that ended (or an answer without a task)."""
    name = task.remote.name
    if task.reply is not None:
        return result_of(list(task.reply.parts), None, task.context_id)
    said = "" if task.status_message is None else text_of(task.status_message.parts)
    if task.state == "completed":
        parts = task.artifact_parts()
        if not parts and task.status_message is not None:
            parts = list(task.status_message.parts)
        return result_of(parts, task.task_id, task.context_id)
    what = {
        "failed": "the task failed",
        "cancelled": "the agent cancelled the task",
        "rejected": "the agent rejected the task",
        "auth_required": "the agent asks for an authentication agentos cannot give",
    }.get(task.state, f"the task ended {task.state}")
    return ToolFailure(f"A2A agent {name!r}: {what} (task {task.task_id}){_colon(said)}")


def _question_for_the_model(task: RemoteTask) -> Json:
    """The call's result when the model answers the agent's questions (an agentos agent's
    confirmation: with ``accept``, ``decline`` or ``cancel``)."""
    asking = question_of(task.status_message)
    confirmation = asking.peer and asking.form is None  # a page is opened, then accepted
    answer = "accept, decline or cancel" if confirmation else "your answer"
    result: dict[str, Json] = {
        "input_required": asking.text,
        "task_id": task.task_id,
        "context_id": task.context_id,
        "how": f"call this tool again with {answer} as message, and this task_id and context_id",
    }
    if asking.form is not None:
        result["answer_schema"] = asking.form
    if asking.url is not None:
        result["url"] = asking.url
    return result


async def _ask_the_person(task: RemoteTask) -> str | None:
    """Ask the call's person what the agent asks and send the answer on the task; why
    not, when the person declined or nobody could be asked and the agent is not agentos
    (whose call hears the decline as its answer; None: the answer went). An agentos
    agent's question with no form and no URL is a confirmation: accept or decline."""
    asking = question_of(task.status_message)
    source = f"A2A agent {task.remote.name}"
    form = None if asking.url is not None else asking.form
    if form is None and asking.url is None and not asking.peer:
        form = FREE_TEXT  # another agent's question without a form asks for free text
    answer = await task.ctx.ask(asking.text, form=form, url=asking.url, source=source)
    if answer.action is not AnswerAction.ACCEPT and not asking.peer:
        why = f": {answer.reason}" if answer.reason else ""
        return f"the person did not answer its question ({answer.action.value}{why})"
    assert task.task_id is not None  # an input-required state is a task's
    task.answering()
    await task.send(answer_message(answer, asking, task.task_id, task.context_id))
    return None


def _failed(name: str, task: RemoteTask, error: BaseException) -> str:
    """Why a call failed on the way: the agent could not be reached, its answer was not
    A2A, or it said an error."""
    error = leaf_error(error)
    where = "" if task.task_id is None else f" (task {task.task_id})"
    said = str(error) or type(error).__name__
    return f"A2A agent {name!r}{where}: {said}"


def _colon(said: str) -> str:
    return f": {said}" if said else ""
