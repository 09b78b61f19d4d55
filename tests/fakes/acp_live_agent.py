#!/usr/bin/env python3
"""A small ACP agent for the control room's live view test (tests/tui_e2e.rs).

Speaks the Agent Client Protocol (JSON-RPC, one object a line) on stdin and
stdout. Every prompt's text and every cancel are appended, one JSON object a
line, to the log file named by its first argument, so the test sees what
reached the agent.

- A prompt whose new messages (after "## New messages for you"; the recent
  channel messages before them are history) hold LONG starts a tool call that never ends by itself
  (`execute`, "sleep 1000", in_progress) and streams a line of text; the
  prompt is answered `cancelled` when `session/cancel` comes.
- Any other prompt streams a text, a finished `edit` call on notes.md with a
  diff, a plan with one of three steps done and a usage report, then ends
  the turn.

Standard library only.
"""

import json
import sys

LOG = sys.argv[1]
SESSION = "live-session-1"


def log(entry):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def answer(msg_id, result):
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def update(session, body):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session, "update": body}})


def text(session, words):
    update(session, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": words}})


def short_turn(session):
    text(session, "streamed hello from the fake agent")
    update(session, {
        "sessionUpdate": "tool_call", "toolCallId": "edit-1",
        "title": "Edit notes", "kind": "edit", "status": "in_progress",
        "locations": [{"path": "notes.md"}],
    })
    update(session, {
        "sessionUpdate": "tool_call_update", "toolCallId": "edit-1",
        "status": "completed",
        "content": [{"type": "diff", "path": "notes.md",
                     "oldText": "old line\n", "newText": "new line\n"}],
    })
    update(session, {"sessionUpdate": "plan", "entries": [
        {"content": "read", "status": "completed", "priority": "high"},
        {"content": "edit", "status": "in_progress", "priority": "high"},
        {"content": "test", "status": "pending", "priority": "low"},
    ]})
    update(session, {"sessionUpdate": "usage_update", "used": 1234,
                     "size": 100000, "cost": {"amount": 0.05, "currency": "USD"}})


def long_turn(session):
    text(session, "starting the long run")
    update(session, {
        "sessionUpdate": "tool_call", "toolCallId": "long-1",
        "title": "sleep 1000", "kind": "execute", "status": "in_progress",
    })


def main():
    waiting = None  # the id of a prompt that waits for a cancel
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method = msg.get("method")
        params = msg.get("params") or {}
        msg_id = msg.get("id")
        if method == "initialize":
            answer(msg_id, {"protocolVersion": 1,
                            "agentCapabilities": {"loadSession": True}})
        elif method in ("session/new", "session/load"):
            log({"method": method})
            answer(msg_id, {"sessionId": SESSION} if method == "session/new" else {})
        elif method == "session/prompt":
            words = " ".join(p.get("text", "") for p in params.get("prompt", []))
            session = params.get("sessionId", SESSION)
            log({"method": method, "session": session, "text": words})
            new = words.split("## New messages for you", 1)[-1]
            if "LONG" in new:
                long_turn(session)
                waiting = msg_id
            else:
                short_turn(session)
                answer(msg_id, {"stopReason": "end_turn"})
        elif method == "session/cancel":
            log({"method": method})
            if waiting is not None:
                session = params.get("sessionId", SESSION)
                update(session, {"sessionUpdate": "tool_call_update",
                                 "toolCallId": "long-1", "status": "failed"})
                answer(waiting, {"stopReason": "cancelled"})
                waiting = None
        elif msg_id is not None and method is not None:
            send({"jsonrpc": "2.0", "id": msg_id,
                  "error": {"code": -32601, "message": "not supported: " + method}})


if __name__ == "__main__":
    main()
