#!/usr/bin/env python3
"""A scripted ACP agent for the live-structure tests (list --json, run
--json, the web page): JSON-RPC over stdio, one session, one script of
turns.

FAKE_ACP_SCRIPT names a JSON file holding a list of turns (the last one
repeats), each an object:
  updates: session/update `update` objects sent in order on the prompt
  flood:   N more tool_call updates with fresh ids (a hostile flood)
  text:    the answer's text (one agent_message_chunk), default "done"
  hold:    true: the prompt is answered only by session/cancel
           (stopReason "cancelled")
FAKE_ACP_LOG, when set, names a file that gets every method received,
one a line (so a test sees session/cancel arrive).
"""

import json
import os
import sys

SESSION = "live-1"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def log(method):
    path = os.environ.get("FAKE_ACP_LOG")
    if path:
        with open(path, "a") as f:
            f.write(method + "\n")


def update(u):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": SESSION, "update": u}})


def turns():
    with open(os.environ["FAKE_ACP_SCRIPT"]) as f:
        return json.load(f)


def play(turn):
    for u in turn.get("updates", []):
        update(u)
    for i in range(int(turn.get("flood", 0))):
        update({"sessionUpdate": "tool_call", "toolCallId": "flood-%d" % i,
                "title": "flood %d" % i, "kind": "execute", "status": "in_progress"})
    update({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": turn.get("text", "done")}})


def main():
    script = turns()
    n = 0
    holding = None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method = msg.get("method")
        if method:
            log(method)
        mid = msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": 1,
                "agentCapabilities": {"loadSession": False}}})
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": SESSION}})
        elif method == "session/prompt":
            turn = script[min(n, len(script) - 1)]
            n += 1
            play(turn)
            if turn.get("hold"):
                holding = mid
            else:
                send({"jsonrpc": "2.0", "id": mid, "result": {
                    "stopReason": "end_turn",
                    "usage": {"inputTokens": 120, "outputTokens": 7}}})
        elif method == "session/cancel":
            if holding is not None:
                send({"jsonrpc": "2.0", "id": holding, "result": {"stopReason": "cancelled"}})
                holding = None
        elif mid is not None and method:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": "no " + method}})


if __name__ == "__main__":
    main()
