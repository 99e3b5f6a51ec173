"""A hand-written MCP server over stdio that misbehaves as its environment asks, for the tests
of what a server may not do to its host.

Tools: ``echo`` (says ``text`` back); ``big`` (a text result of ``size`` characters, in one
line); ``yell`` (writes ``size`` bytes to stderr with no newline, then answers);
``self_ref`` (input schema ``{"type": "object", "$ref": "#"}``); ``loop_on_a`` (a schema
that refers to itself only when the input has ``a``); ``hang`` (never answers); ``cancels``
(the reasons of the ``notifications/cancelled`` it has read). ``NAMES``: more tools, each
named (comma-separated) and answering its own name. ``PAD``: characters of description
padding each listed tool, for a huge tool list. ``LIST_DELAY``: seconds before each answer
to ``tools/list``. ``YELL_AND_EXIT``: bytes written to stderr with no newline at start,
before exiting with code 3. ``RESOURCES=broken``: says it has resources, and answers
``resources/list`` with nothing a client can read; ``PROMPTS=broken`` the same of prompts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

OBJECT = {"type": "object"}
PAD = "x" * int(os.environ.get("PAD", "0"))


def listed() -> list[dict[str, Any]]:
    tools = [
        {"name": "echo", "inputSchema": {**OBJECT, "properties": {"text": {"type": "string"}}}},
        {"name": "big", "inputSchema": {**OBJECT, "properties": {"size": {"type": "integer"}}}},
        {"name": "yell", "inputSchema": {**OBJECT, "properties": {"size": {"type": "integer"}}}},
        {"name": "self_ref", "inputSchema": {"type": "object", "$ref": "#"}},
        {"name": "hang", "inputSchema": OBJECT},
        {"name": "cancels", "inputSchema": OBJECT},
        {
            "name": "loop_on_a",
            "inputSchema": {**OBJECT, "properties": {"a": {"$ref": "#/properties/a"}}},
        },
    ]
    names = os.environ.get("NAMES", "")
    tools += [{"name": name, "inputSchema": OBJECT} for name in names.split(",") if name]
    for tool in tools:
        tool["description"] = f"{tool['name']} {PAD}"
    return tools


def call(name: str, args: dict[str, Any]) -> str:
    if name == "echo":
        return str(args.get("text", ""))
    if name == "big":
        return "b" * int(args["size"])
    if name == "yell":
        sys.stderr.write("y" * int(args["size"]))
        sys.stderr.flush()
        return "yelled"
    return name


CANCEL_REASONS: list[str] = []


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method = request.get("method")
    if method == "notifications/cancelled":
        CANCEL_REASONS.append(str(request.get("params", {}).get("reason")))
    if "id" not in request:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {
                "tools": {"listChanged": True},
                **({"resources": {}} if os.environ.get("RESOURCES") == "broken" else {}),
                **({"prompts": {}} if os.environ.get("PROMPTS") == "broken" else {}),
            },
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    elif method == "tools/list":
        time.sleep(float(os.environ.get("LIST_DELAY", "0")))
        result = {"tools": listed()}
    elif method == "tools/call":
        params = request["params"]
        if params["name"] == "hang":
            return None
        if params["name"] == "cancels":
            return reply(request, json.dumps(CANCEL_REASONS))
        text = call(params["name"], params.get("arguments") or {})
        return reply(request, text)
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def reply(request: dict[str, Any], text: str) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


if "YELL_AND_EXIT" in os.environ:
    sys.stderr.write("y" * int(os.environ["YELL_AND_EXIT"]))
    sys.stderr.flush()
    sys.exit(3)
for line in sys.stdin:
    if line.strip():
        answered = answer(json.loads(line))
        if answered is not None:
            sys.stdout.write(json.dumps(answered) + "\n")
            sys.stdout.flush()
