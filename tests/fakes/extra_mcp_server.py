#!/usr/bin/env python3
"""A tiny stdio MCP server for tests: one tool, `fixture_echo_7f3a`.

Given to an agent as an extra `mcp:` server, it proves the agent's CLI
connected to it next to awtui's own server: the tool shows up in the tool
list the CLI sends to the (fake) model.
"""
import json
import sys

TOOL = {
    "name": "fixture_echo_7f3a",
    "description": "Echoes its text (FIXTURE-MCP-TOOL).",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
    },
}


def reply(msg_id, result=None, error=None):
    out = {"jsonrpc": "2.0", "id": msg_id}
    if error is not None:
        out["error"] = error
    else:
        out["result"] = result
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method = msg.get("method", "")
    msg_id = msg.get("id")
    if msg_id is None:
        continue  # a notification
    params = msg.get("params") or {}
    if method == "initialize":
        reply(msg_id, {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fixture", "version": "1.0.0"},
        })
    elif method == "tools/list":
        reply(msg_id, {"tools": [TOOL]})
    elif method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        reply(msg_id, {"content": [{"type": "text", "text": text}]})
    elif method == "ping":
        reply(msg_id, {})
    else:
        reply(msg_id, error={"code": -32601, "message": "method not found: " + method})
