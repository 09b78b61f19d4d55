#!/usr/bin/env python3
"""A fake Agent Client Protocol (v1) agent for tests (test fixture, never shipped).

Speaks ACP as the real agents do (gemini --acp, opencode acp, the Claude
and Codex adapters): JSON-RPC 2.0, one JSON object per line on stdin/stdout,
diagnostics on stderr. It answers `initialize`, `session/new`,
`session/set_mode`, `session/load` and `session/prompt`, takes the
`session/cancel` notification, and during a prompt streams `session/update`
notifications (thought, text, plan, tool_call, tool_call_update with a diff,
usage_update), asks the client `session/request_permission` before its tool
call and really runs the command (`sh -c` in the session's cwd) when allowed.
It can post to awtui's channel through the HTTP MCP server named in
`session/new`'s `mcpServers` (with the bearer header given there), and it
can show the edges real agents rarely show (see FAKE_ACP_MODE).

Controlled by environment variables:
  FAKE_ACP_MODE     comma list of (default `ok`):
      ok              text + one tool call that asks permission first
      malformed       before its tool call, prints a non-JSON line, a JSON
                      array, a response to an id it never got, a request
                      with an unknown method (waits 10 s at most for the
                      client's error answer), a line of FAKE_ACP_BIG_KIB KiB
                      (an agent_thought_chunk), a session/update for a
                      session that does not exist, and an agent_message_chunk
                      holding escape sequences (OSC 52 clipboard write, CSI)
      ask-after-cancel  on session/cancel, first asks request_permission for
                      the same tool once more (and runs it if that is
                      allowed, so a test sees it), then answers `cancelled`
      ignore-cancel   on session/cancel, never answers the prompt; keeps
                      running (also after stdin closes) until killed
      crash           exits with status 3 in the prompt, after one chunk
                      (with FAKE_ACP_CRASH_MARK: only when that file does
                      not exist yet, and it creates it: a crash once)
      fs              asks the client fs/read_text_file {path:
                      FAKE_ACP_FS_READ} and fs/write_text_file {path:
                      FAKE_ACP_FS_WRITE, content: FAKE_ACP_FS_CONTENT}
                      (each only when its variable is set) and reports the
                      outcome in a text chunk
      long            the allowed tool runs `sleep 600` as a child, writes
                      that child's pid to FAKE_ACP_PIDFILE, then reports
                      in_progress, until cancelled (the child is killed
                      and reaped on cancel)
      plan            sends a plan update (and a finished plan at the end)
      no-load         no loadSession capability; session/load is -32601
  FAKE_ACP_REPLY    the final text chunk (default "done")
  FAKE_ACP_COMMAND  the tool call's command (default `echo ran >> ran.txt`);
                    empty: no tool call at all
  FAKE_ACP_TITLE    the tool call's title (default: the command), so a
                    hostile agent can name its shell call like another tool
  FAKE_ACP_REPEAT   how many times the tool call is made per prompt (1)
  FAKE_ACP_REJECT_ENDS  if 1, a rejected tool call ends the turn `end_turn`
                    (as opencode does); otherwise the agent says it was
                    rejected and goes on (as gemini does)
  FAKE_ACP_AUTO_RUNS  if 1, in mode `auto` the tool runs without asking
                    (as the Claude adapter's auto mode); default: asks in
                    every mode
  FAKE_ACP_MCP      if set, post this text with channel_send through the
                    session's HTTP MCP server (tools/call, as an agent does)
  FAKE_ACP_ASK_MCP  if 1, before that post ask request_permission with the
                    title `channel_send (awtui MCP Server)` (as gemini does for MCP tools)
  FAKE_ACP_STATE    a directory for per-session state (<sessionId>.json:
                    prompts, mode, cwd) so a new process can session/load it;
                    unset: sessions live in this process only
  FAKE_ACP_LOG      append every JSON message received as one JSON line;
                    a response to one of this agent's requests carries the
                    extra key "_request" naming that request's method; a
                    line that is not JSON is logged as {"_unparsed": text};
                    a request of its own left unanswered past its wait is
                    logged as {"_unanswered": method}
  FAKE_ACP_PIDFILE  where `long` writes its sleep child's pid
  FAKE_ACP_FS_READ / FAKE_ACP_FS_WRITE / FAKE_ACP_FS_CONTENT  for `fs`
                    (content default "written by the fake acp agent\\n")
  FAKE_ACP_BIG_KIB  size of `malformed`'s long line in KiB (default 300)
  FAKE_ACP_IGNORE_TERM  if 1, SIGTERM is ignored (only SIGKILL ends it)
  FAKE_ACP_WAIT     seconds to wait for the client's answer to one of its
                    requests before giving up (default 600)
"""
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid

MODES = {m.strip() for m in os.environ.get("FAKE_ACP_MODE", "ok").split(",") if m.strip()}
REPLY = os.environ.get("FAKE_ACP_REPLY", "done")
COMMAND = os.environ.get("FAKE_ACP_COMMAND", "echo ran >> ran.txt")
TITLE = os.environ.get("FAKE_ACP_TITLE")
REPEAT = int(os.environ.get("FAKE_ACP_REPEAT", "1"))
WAIT = float(os.environ.get("FAKE_ACP_WAIT", "600"))
STATE_DIR = os.environ.get("FAKE_ACP_STATE")
LOG = os.environ.get("FAKE_ACP_LOG")

KNOWN_MODES = {"ok", "malformed", "ask-after-cancel", "ignore-cancel", "crash", "fs",
               "long", "plan", "no-load"}
AVAILABLE_MODES = [
    {"id": "auto", "name": "Auto", "description": "Runs tools without asking"},
    {"id": "default", "name": "Ask", "description": "Asks before each tool"},
]
PERMISSION_OPTIONS = [
    {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always", "kind": "allow_always"},
    {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"},
]
ALLOWING = {"allow-once", "allow-always"}

# JSON-RPC error codes.
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = (
    -32700, -32600, -32601, -32602, -32603)


def note(msg):
    """A diagnostic on stderr (awtui keeps the tail to explain failures)."""
    try:
        sys.stderr.write(f"fake-acp: {msg}\n")
        sys.stderr.flush()
    except OSError:
        pass  # the client is gone: what remains is to clean up


class RpcError(Exception):
    """An error answer to one request."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Cancelled(Exception):
    """The running prompt was cancelled (session/cancel or a cancelled outcome)."""


# ---------------------------------------------------------------- transport

_write_lock = threading.Lock()
_log_lock = threading.Lock()


def write_line(text):
    """Writes one raw line to stdout (the only place stdout is written)."""
    with _write_lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def send(obj):
    write_line(json.dumps(obj))


def log(obj):
    if not LOG:
        return
    with _log_lock, open(LOG, "a") as f:
        f.write(json.dumps(obj) + "\n")


def respond(msg_id, result):
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def respond_error(msg_id, code, message):
    send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


class Outgoing:
    """This agent's own requests to the client, waiting for their answers."""

    def __init__(self):
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting = {}  # id -> (method, queue)

    def start(self, method, params):
        """Sends a request; returns a queue its response will be put on."""
        q = queue.Queue(maxsize=1)
        with self.lock:
            msg_id = self.next_id
            self.next_id += 1
            self.waiting[msg_id] = (method, q)
        send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return q

    def method_of(self, msg_id):
        with self.lock:
            entry = self.waiting.get(msg_id) if isinstance(msg_id, int) else None
        return entry[0] if entry else None

    def deliver(self, msg):
        with self.lock:
            entry = self.waiting.pop(msg.get("id"), None) if isinstance(msg.get("id"), int) else None
        if entry is None:
            note(f"response to an unknown id: {msg.get('id')!r}")
            return
        entry[1].put(msg)


OUT = Outgoing()


def request(method, params, timeout=None):
    """Sends a request and waits for its response (the whole message), or
    None after `timeout` (FAKE_ACP_WAIT) seconds. A cancel does not end the
    wait: ACP says the client answers pending permission requests
    `cancelled`, and a test sees it in FAKE_ACP_LOG."""
    q = OUT.start(method, params)
    limit = WAIT if timeout is None else timeout
    try:
        return q.get(timeout=limit)
    except queue.Empty:
        note(f"no answer to {method} within {limit} s")
        log({"_unanswered": method})
        return None


def update(session_id, body):
    send({"jsonrpc": "2.0", "method": "session/update",
          "params": {"sessionId": session_id, "update": body}})


def text_chunk(session_id, text, kind="agent_message_chunk"):
    update(session_id, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})


# ---------------------------------------------------------------- sessions

class Session:
    """One conversation: its cwd, MCP servers, mode and prompts so far."""

    def __init__(self, session_id, cwd, mcp_servers, mode="auto", prompts=None):
        self.id = session_id
        self.cwd = cwd
        self.mcp_servers = mcp_servers
        self.mode = mode
        self.prompts = list(prompts or [])
        self.cancel = threading.Event()
        self.running = False
        self.children = []
        self.lock = threading.Lock()

    def save(self):
        if not STATE_DIR:
            return
        os.makedirs(STATE_DIR, exist_ok=True)
        data = {"sessionId": self.id, "cwd": self.cwd, "mode": self.mode,
                "promptCount": len(self.prompts),
                "lastPrompt": self.prompts[-1] if self.prompts else None,
                "prompts": self.prompts}
        tmp = os.path.join(STATE_DIR, f".{self.id}.tmp")
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, state_path(self.id))

    def kill_children(self):
        with self.lock:
            children = list(self.children)
        for child in children:
            if child.poll() is None:
                try:
                    child.kill()
                except ProcessLookupError:
                    pass
            child.wait()


def state_path(session_id):
    safe = "".join(c for c in session_id if c.isalnum() or c in "-_")
    return os.path.join(STATE_DIR, f"{safe}.json")


SESSIONS = {}
INITIALIZED = threading.Event()
CLIENT = {"capabilities": None}


def need_session(params):
    sid = params.get("sessionId")
    session = SESSIONS.get(sid)
    if session is None:
        raise RpcError(INVALID_PARAMS, f"unknown session {sid!r}")
    return session


def check_cwd_and_servers(params):
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise RpcError(INVALID_PARAMS, f"cwd must be an absolute path, got {cwd!r}")
    servers = params.get("mcpServers")
    if not isinstance(servers, list):
        raise RpcError(INVALID_PARAMS, "mcpServers must be a list")
    return cwd, servers


def modes_of(session):
    return {"currentModeId": session.mode, "availableModes": AVAILABLE_MODES}


# ---------------------------------------------------------------- handlers

def on_initialize(params):
    if not isinstance(params.get("protocolVersion"), int):
        raise RpcError(INVALID_PARAMS, "protocolVersion missing")
    CLIENT["capabilities"] = params.get("clientCapabilities")
    INITIALIZED.set()
    return {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": "no-load" not in MODES,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
        },
        "agentInfo": {"name": "fake-acp-agent", "version": "1.0.0"},
        "authMethods": [],
    }


def on_new(params):
    cwd, servers = check_cwd_and_servers(params)
    session = Session("fake-" + uuid.uuid4().hex, cwd, servers)
    SESSIONS[session.id] = session
    session.save()
    return {"sessionId": session.id, "modes": modes_of(session)}


def on_load(params):
    if "no-load" in MODES:
        raise RpcError(METHOD_NOT_FOUND, "Method not found: session/load")
    cwd, servers = check_cwd_and_servers(params)
    sid = params.get("sessionId")
    session = SESSIONS.get(sid)
    if session is None and STATE_DIR and isinstance(sid, str) and os.path.exists(state_path(sid)):
        with open(state_path(sid)) as f:
            data = json.load(f)
        session = Session(sid, cwd, servers, data.get("mode", "auto"), data.get("prompts"))
        SESSIONS[sid] = session
    if session is None:
        raise RpcError(INTERNAL, "No previous sessions found for this project.")
    session.cwd, session.mcp_servers = cwd, servers
    for text in session.prompts:
        text_chunk(session.id, text, "user_message_chunk")
    return {"modes": modes_of(session)}


def on_set_mode(params):
    session = need_session(params)
    mode = params.get("modeId")
    if mode not in {m["id"] for m in AVAILABLE_MODES}:
        raise RpcError(INVALID_PARAMS, f"unknown mode {mode!r}")
    session.mode = mode
    session.save()
    update(session.id, {"sessionUpdate": "current_mode_update", "currentModeId": mode})
    return {}


def prompt_text(blocks):
    if not isinstance(blocks, list):
        raise RpcError(INVALID_PARAMS, "prompt must be a list of content blocks")
    parts = []
    for block in blocks:
        if not isinstance(block, dict) or "type" not in block:
            raise RpcError(INVALID_PARAMS, f"not a content block: {block!r}")
        if block["type"] == "text":
            parts.append(block.get("text", ""))
        elif block["type"] == "resource_link":
            parts.append(f"[{block.get('uri')}]")
        elif block["type"] == "resource":
            parts.append(block.get("resource", {}).get("text", ""))
    return "".join(parts)


def on_prompt(msg_id, params):
    """Runs in its own thread so the reader keeps taking messages (cancel)."""
    try:
        session = need_session(params)
        text = prompt_text(params.get("prompt"))
        with session.lock:
            if session.running:
                raise RpcError(INVALID_REQUEST, "a prompt is already running in this session")
            session.running = True
            session.cancel.clear()
    except RpcError as e:
        respond_error(msg_id, e.code, e.message)
        return
    session.prompts.append(text)
    session.save()
    error = None
    try:
        result = Turn(session).run(text)
    except Cancelled:
        after_cancel(session)
        result = {"stopReason": "cancelled"}
    except Exception as e:  # a bug in the fake: say so, answer an error
        note(f"prompt failed: {e!r}")
        error = f"fake agent error: {e}"
    # The session is free again before the answer goes out: the client
    # may send its next prompt as soon as it reads it.
    session.kill_children()
    with session.lock:
        session.running = False
    if error is None:
        respond(msg_id, result)
    else:
        respond_error(msg_id, INTERNAL, error)


def after_cancel(session):
    """What the agent does between session/cancel and its `cancelled` answer."""
    if "ask-after-cancel" in MODES:
        turn = Turn(session)
        allowed = turn.ask_plain("call-after-cancel", COMMAND or "true", "execute",
                                 {"command": COMMAND or "true"})
        if allowed:
            note("a permission asked after cancel was allowed: running it")
            subprocess.run(["sh", "-c", COMMAND or "true"], cwd=session.cwd)
    if "ignore-cancel" in MODES:
        note("ignoring the cancel: never answering, children left running")
        while True:
            time.sleep(3600)
    session.kill_children()


# ---------------------------------------------------------------- one turn

class Turn:
    """One session/prompt: the updates it streams and the tools it runs."""

    def __init__(self, session):
        self.s = session
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0

    def checkpoint(self):
        if self.s.cancel.is_set():
            raise Cancelled()

    def say(self, text, kind="agent_message_chunk"):
        self.checkpoint()
        self.output_tokens += max(1, len(text) // 4)
        text_chunk(self.s.id, text, kind)

    def run(self, text):
        self.input_tokens = max(1, len(text) // 4)
        n = len(self.s.prompts)
        self.say(f"Thinking about prompt {n}.", "agent_thought_chunk")
        self.say(f"Working on prompt {n}. ")
        if "crash" in MODES and crash_now():
            note("crashing mid-prompt (simulated)")
            os._exit(3)
        if "plan" in MODES:
            self.plan("in_progress")
        if "malformed" in MODES:
            self.malformed()
        if "fs" in MODES:
            self.fs()
        if os.environ.get("FAKE_ACP_MCP"):
            self.mcp_post(os.environ["FAKE_ACP_MCP"])
        if COMMAND:
            for _ in range(REPEAT):
                if not self.tool(COMMAND) and os.environ.get("FAKE_ACP_REJECT_ENDS") == "1":
                    return self.finish()
        if "plan" in MODES:
            self.plan("completed")
        self.say(REPLY)
        return self.finish()

    def finish(self):
        self.checkpoint()
        used = self.input_tokens + self.output_tokens
        update(self.s.id, {"sessionUpdate": "usage_update", "used": used, "size": 200000,
                           "cost": {"amount": 0.01, "currency": "USD"}})
        return {"stopReason": "end_turn",
                "usage": {"inputTokens": self.input_tokens, "outputTokens": self.output_tokens,
                          "totalTokens": used}}

    def plan(self, status):
        self.checkpoint()
        update(self.s.id, {"sessionUpdate": "plan", "entries": [
            {"content": "Read the task", "priority": "high", "status": "completed"},
            {"content": "Run the command", "priority": "medium", "status": status},
            {"content": "Report back", "priority": "low",
             "status": "completed" if status == "completed" else "pending"},
        ]})

    # -- permission

    def ask(self, tool_call):
        """Asks request_permission; True when an allowing option was chosen.
        Raises Cancelled when the turn is cancelled or the outcome is."""
        self.checkpoint()
        response = request("session/request_permission", {
            "sessionId": self.s.id, "toolCall": tool_call, "options": PERMISSION_OPTIONS})
        if response is None or "error" in response:
            note(f"permission request failed: {response!r}")
            self.checkpoint()
            return False
        outcome = (response.get("result") or {}).get("outcome") or {}
        if outcome.get("outcome") == "cancelled":
            raise Cancelled()
        self.checkpoint()
        chosen = outcome.get("optionId")
        if outcome.get("outcome") != "selected" or chosen not in {o["optionId"] for o in PERMISSION_OPTIONS}:
            note(f"answer is not one of the options offered: {outcome!r}")
            self.say(f"The permission answer {json.dumps(outcome)} is not one I offered. ")
            return False
        return chosen in ALLOWING

    def ask_plain(self, call_id, title, kind, raw_input):
        """A permission request outside the cancellation checks (after cancel)."""
        response = request("session/request_permission", {
            "sessionId": self.s.id,
            "toolCall": {"toolCallId": call_id, "title": title, "kind": kind, "rawInput": raw_input},
            "options": PERMISSION_OPTIONS})
        outcome = ((response or {}).get("result") or {}).get("outcome") or {}
        return outcome.get("outcome") == "selected" and outcome.get("optionId") in ALLOWING

    # -- the shell tool

    def tool(self, command):
        """One execute tool call: announce, ask, run. False when rejected."""
        self.calls += 1
        call_id = f"call-{len(self.s.prompts)}-{self.calls}"
        raw = {"command": command}
        title = TITLE or command
        self.checkpoint()
        update(self.s.id, {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title,
                           "kind": "execute", "status": "pending", "rawInput": raw,
                           "locations": [{"path": self.s.cwd}]})
        auto = self.s.mode == "auto" and os.environ.get("FAKE_ACP_AUTO_RUNS") == "1"
        if not auto and not self.ask({"toolCallId": call_id, "title": title,
                                      "kind": "execute", "rawInput": raw}):
            update(self.s.id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                               "status": "failed", "content": [
                                   {"type": "content", "content": {"type": "text",
                                                                   "text": "Rejected by the user."}}]})
            self.say(f"The command `{command}` was rejected, so I did not run it. ")
            return False
        if "long" in MODES:
            self.run_long(call_id)
        else:
            self.run_command(call_id, command)
        return True

    def run_command(self, call_id, command):
        before = snapshot(self.s.cwd)
        update(self.s.id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                           "status": "in_progress"})
        child = self.spawn(["sh", "-c", command])
        while True:
            try:
                out, _ = child.communicate(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                self.checkpoint()
        self.checkpoint()
        content = [{"type": "content", "content": {"type": "text", "text": out.decode(errors="replace")}}]
        content += diffs(self.s.cwd, before, snapshot(self.s.cwd))
        update(self.s.id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                           "status": "completed" if child.returncode == 0 else "failed",
                           "content": content, "rawOutput": {"exitCode": child.returncode}})
        self.say(f"Ran `{command}` (exit {child.returncode}). ")

    def run_long(self, call_id):
        child = self.spawn(["sleep", "600"])
        pidfile = os.environ.get("FAKE_ACP_PIDFILE")
        if pidfile:
            tmp = pidfile + ".tmp"
            with open(tmp, "w") as f:
                f.write(str(child.pid))
            os.replace(tmp, pidfile)
        update(self.s.id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                           "status": "in_progress"})
        while child.poll() is None:
            if self.s.cancel.wait(0.05):
                raise Cancelled()
        self.checkpoint()

    def spawn(self, argv):
        child = subprocess.Popen(argv, cwd=self.s.cwd, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        with self.s.lock:
            self.s.children.append(child)
        return child

    # -- the edges

    def malformed(self):
        write_line("this line is not JSON {")
        write_line(json.dumps(["a", "JSON", "array"]))
        send({"jsonrpc": "2.0", "id": 987654321, "result": {"stopReason": "end_turn"}})
        response = request("fake/unknown_method", {"sessionId": self.s.id}, timeout=10)
        note(f"unknown method answered: {response!r}")
        big = int(os.environ.get("FAKE_ACP_BIG_KIB", "300")) * 1024
        text_chunk(self.s.id, "x" * big, "agent_thought_chunk")
        update("fake-no-such-session", {"sessionUpdate": "agent_message_chunk",
                                        "content": {"type": "text", "text": "from nowhere"}})
        self.say("escape:\x1b]52;c;cHduZWQ=\x07:\x1b[2J\x1b[31mred\x1b[0m:\x9b31m:end. ")

    def fs(self):
        read_path = os.environ.get("FAKE_ACP_FS_READ")
        if read_path:
            r = request("fs/read_text_file", {"sessionId": self.s.id, "path": read_path})
            self.say("fs read: " + describe(r, lambda res: f"{len(res.get('content', ''))} chars") + ". ")
        write_path = os.environ.get("FAKE_ACP_FS_WRITE")
        if write_path:
            content = os.environ.get("FAKE_ACP_FS_CONTENT", "written by the fake acp agent\n")
            r = request("fs/write_text_file", {"sessionId": self.s.id, "path": write_path,
                                               "content": content})
            self.say("fs write: " + describe(r, lambda res: "ok") + ". ")

    def mcp_post(self, message):
        self.calls += 1
        call_id = f"mcp-{len(self.s.prompts)}-{self.calls}"
        raw = {"message": message}
        if os.environ.get("FAKE_ACP_ASK_MCP") == "1" and not self.ask(
                {"toolCallId": call_id, "title": "channel_send (awtui MCP Server)", "kind": "other", "rawInput": raw}):
            self.say("I was not allowed to post to the channel. ")
            return
        self.checkpoint()
        update(self.s.id, {"sessionUpdate": "tool_call", "toolCallId": call_id,
                           "title": "channel_send (awtui MCP Server)", "kind": "other", "status": "in_progress",
                           "rawInput": raw})
        try:
            result = mcp_call(self.s.mcp_servers, "channel_send", raw)
            failed = result is None or "error" in result or result["result"].get("isError")
            detail = json.dumps(result)
        except Exception as e:
            failed, detail = True, f"{type(e).__name__}: {e}"
        if failed:
            note(f"channel_send failed: {detail}")
        update(self.s.id, {"sessionUpdate": "tool_call_update", "toolCallId": call_id,
                           "status": "failed" if failed else "completed",
                           "content": [{"type": "content", "content": {"type": "text", "text": detail}}]})
        self.say("channel_send failed. " if failed else "Posted to the channel. ")


def crash_now():
    """Whether `crash` crashes this time (FAKE_ACP_CRASH_MARK: once)."""
    mark = os.environ.get("FAKE_ACP_CRASH_MARK")
    if not mark:
        return True
    try:
        fd = os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def describe(response, ok):
    if response is None:
        return "no answer"
    if "error" in response:
        err = response["error"] or {}
        return f"error {err.get('code')} {err.get('message')}"
    return ok(response.get("result") or {})


def snapshot(cwd, limit=64 * 1024):
    """The small regular files directly in cwd, to report diffs."""
    files = {}
    try:
        names = os.listdir(cwd)
    except OSError:
        return files
    for name in names:
        path = os.path.join(cwd, name)
        try:
            if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) <= limit:
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[path] = f.read()
        except OSError:
            pass
    return files


def diffs(cwd, before, after):
    return [{"type": "diff", "path": path, "oldText": before.get(path), "newText": text}
            for path, text in sorted(after.items()) if before.get(path) != text]


# ---------------------------------------------------------------- MCP

def mcp_call(servers, tool, arguments, timeout=30):
    """One MCP session over streamable HTTP with the first http server the
    client gave in mcpServers: initialize, initialized, tools/call."""
    server = next((s for s in servers if isinstance(s, dict) and s.get("type") == "http"), None)
    if server is None:
        raise RuntimeError(f"no http MCP server in mcpServers: {json.dumps(servers)}")
    headers = {h["name"]: h["value"] for h in server.get("headers", [])}
    headers.update({"Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream"})

    def post(body, session=None):
        h = dict(headers)
        if session:
            h["Mcp-Session-Id"] = session
        req = urllib.request.Request(server["url"], data=json.dumps(body).encode(), headers=h)
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            sid = resp.headers.get("Mcp-Session-Id") or session
            text = resp.read().decode()
        for line in text.splitlines():
            if line.startswith("data:"):
                text = line[5:].strip()
        return sid, (json.loads(text) if text.strip() else None)

    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fake-acp-agent", "version": "1.0.0"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    _, result = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}}, sid)
    return result


# ---------------------------------------------------------------- dispatch

REQUESTS = {
    "initialize": on_initialize,
    "session/new": on_new,
    "session/load": on_load,
    "session/set_mode": on_set_mode,
}


def on_request(msg):
    method, msg_id, params = msg["method"], msg["id"], msg.get("params") or {}
    if method != "initialize" and not INITIALIZED.is_set():
        respond_error(msg_id, INVALID_REQUEST, f"{method} before initialize")
        return
    if method == "session/prompt":
        threading.Thread(target=on_prompt, args=(msg_id, params), daemon=True).start()
        return
    handler = REQUESTS.get(method)
    if handler is None:
        respond_error(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        return
    try:
        respond(msg_id, handler(params))
    except RpcError as e:
        respond_error(msg_id, e.code, e.message)


def on_notification(msg):
    if msg["method"] == "session/cancel":
        session = SESSIONS.get((msg.get("params") or {}).get("sessionId"))
        if session is None:
            note(f"cancel for an unknown session: {msg!r}")
            return
        session.cancel.set()


def handle(line):
    try:
        msg = json.loads(line)
    except ValueError:
        log({"_unparsed": line[:4096]})
        note(f"not JSON: {line[:200]!r}")
        send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}})
        return
    if not isinstance(msg, dict):
        log({"_unparsed": line[:4096]})
        return
    if "method" not in msg and "id" in msg:
        method = OUT.method_of(msg["id"])
        log(dict(msg, _request=method) if method else msg)
        OUT.deliver(msg)
    elif "method" in msg and "id" in msg:
        log(msg)
        on_request(msg)
    elif "method" in msg:
        log(msg)
        on_notification(msg)
    else:
        log(msg)


def main():
    unknown = MODES - KNOWN_MODES
    if unknown:
        note(f"unknown FAKE_ACP_MODE {sorted(unknown)}; known: {sorted(KNOWN_MODES)}")
        sys.exit(64)
    if os.environ.get("FAKE_ACP_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", errors="replace").strip()
        if line:
            handle(line)
    note("stdin closed")
    for session in list(SESSIONS.values()):
        if "ignore-cancel" not in MODES or not session.cancel.is_set():
            session.kill_children()
    if "ignore-cancel" in MODES and any(s.cancel.is_set() for s in SESSIONS.values()):
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
