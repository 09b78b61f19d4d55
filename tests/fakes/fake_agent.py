#!/usr/bin/env python3
"""A stand-in for the agent CLIs in tests (test fixture, never shipped).

Behaves as `claude`, `codex`, `cursor-agent`, `gemini` or `opencode`
depending on the name it is run as (tests symlink it). It checks the
arguments, environment and MCP config awtui gives it, optionally calls the
real MCP server with the token it was given, and prints that CLI's real
event format.

Controlled by environment variables:
  FAKE_MODE   ok (default) | fail | crash | hang | error-result | gate
              (gate: claude/cursor-agent report their session, then wait
              until the file FAKE_GATE exists before answering)
  FAKE_REPLY  the answer text (default "done")
  FAKE_MCP    if set, call channel_send with this message through MCP
  FAKE_ARGV_LOG  append the argv as a JSON line to this file
  FAKE_NO_TOOLS  if set, do not connect to awtui's MCP server (claude and
              cursor-agent report it as failed in their init event);
              otherwise, like the real CLIs, list awtui's tools at start
  FAKE_ASK    claude: before answering, ask awtui's permission_request about
              this JSON {"tool": ..., "input": ...} (as Claude Code does with
              --permission-prompt-tool) and append the answer's text to the
              file FAKE_ASK_LOG
"""
import json
import os
import sys
import time
import urllib.request

NAME = os.path.basename(sys.argv[0])
ARGS = sys.argv[1:]
MODE = os.environ.get("FAKE_MODE", "ok")
REPLY = os.environ.get("FAKE_REPLY", "done")


def die(msg, code=64):
    sys.stderr.write(f"fake {NAME}: {msg}\n")
    sys.exit(code)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def arg_after(flag):
    try:
        return ARGS[ARGS.index(flag) + 1]
    except (ValueError, IndexError):
        return None


def require(cond, msg):
    if not cond:
        die(msg)


def mcp_call(tool, arguments, timeout=30, on_timeout=None):
    """One MCP session over streamable HTTP: initialize, then `tool`
    (tools/call), or tools/list when `tool` is None. When the call takes
    longer than `timeout` and `on_timeout` is given, it is called with a
    function that posts a notification in the session, and its result is
    returned (as Claude Code's SDK sends notifications/cancelled)."""
    url = os.environ["AWTUI_MCP_URL"]
    token = os.environ["AWTUI_TOKEN"]
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }

    def post(body, session=None):
        h = dict(headers)
        if session:
            h["Mcp-Session-Id"] = session
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=h)
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            sid = resp.headers.get("Mcp-Session-Id") or session
            text = resp.read().decode()
        for line in text.splitlines():
            if line.startswith("data:"):
                text = line[5:].strip()
        return sid, (json.loads(text) if text.strip() else None)

    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": f"fake-{NAME}", "version": "0"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    if tool is None:
        _, result = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, sid)
    else:
        try:
            _, result = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}}, sid)
        except TimeoutError:
            if on_timeout is None:
                raise
            return on_timeout(lambda body: post(body, sid))
    return result


def list_tools():
    """What every real CLI does at start: list the MCP server's tools.
    Best effort: some tests give an address nobody listens on."""
    try:
        mcp_call(None, None)
    except Exception:
        pass


def check_common():
    for var in ("AWTUI_AGENT", "AWTUI_INSTANCE", "AWTUI_MCP_URL", "AWTUI_TOKEN", "AWTUI_MCP_CONFIG"):
        require(os.environ.get(var), f"{var} is not set")
    with open(os.environ["AWTUI_MCP_CONFIG"]) as f:
        cfg = json.load(f)
    server = cfg["mcpServers"]["awtui"]
    require(server["url"] == os.environ["AWTUI_MCP_URL"], "mcp config url differs")
    require(server["headers"]["Authorization"] == "Bearer ${AWTUI_TOKEN}",
            "mcp config must name the token variable, not hold the token")


def check_claude():
    cfg_path = arg_after("--mcp-config")
    require(cfg_path, "--mcp-config missing")
    require("--strict-mcp-config" in ARGS, "--strict-mcp-config missing")
    require("-p" in ARGS and arg_after("--output-format") == "stream-json", "not -p stream-json")
    require("--verbose" in ARGS, "--verbose missing (stream-json needs it)")
    require("mcp__awtui" in (arg_after("--allowedTools") or ""), "context tools not allowed")
    require(os.environ.get("MCP_CONNECTION_NONBLOCKING") == "false", "MCP_CONNECTION_NONBLOCKING")
    require(os.environ.get("ENABLE_TOOL_SEARCH") == "false", "ENABLE_TOOL_SEARCH")
    with open(cfg_path) as f:
        require("awtui" in json.load(f)["mcpServers"], "awtui server missing from --mcp-config")


def check_codex():
    require(ARGS[:2] == ["exec", "--json"], "not codex exec --json")
    joined = " ".join(ARGS)
    require("mcp_servers.awtui.required=true" in joined, "required = true missing")
    require('default_tools_approval_mode="approve"' in joined, "approval mode missing")
    require('bearer_token_env_var="AWTUI_TOKEN"' in joined, "bearer token env missing")


def main():
    if os.environ.get("FAKE_ARGV_LOG"):
        with open(os.environ["FAKE_ARGV_LOG"], "a") as f:
            f.write(json.dumps({"name": NAME, "argv": ARGS}) + "\n")
    check_common()
    {"claude": check_claude, "codex": check_codex}.get(NAME, lambda: None)()
    prompt = sys.stdin.read() if not sys.stdin.isatty() else ""
    no_tools = bool(os.environ.get("FAKE_NO_TOOLS"))
    if not no_tools:
        list_tools()
    if MODE == "crash":
        die("segmentation fault (simulated)", 139)
    if MODE == "hang":
        # A child in the same process group must die with us.
        os.spawnlp(os.P_NOWAIT, "sleep", "sleep", "300")
        time.sleep(300)
    session = "sess-" + os.environ["AWTUI_AGENT"]
    resumed = arg_after("--resume") or arg_after("--session") or (ARGS[ARGS.index("resume") + 1] if "resume" in ARGS else None)
    if os.environ.get("FAKE_MCP"):
        result = mcp_call("channel_send", {"message": os.environ["FAKE_MCP"]})
        require(result and not result.get("error") and not result["result"].get("isError"),
                f"channel_send failed: {result}")
    reply = REPLY + (f" (resumed {resumed})" if resumed else "")
    failed = MODE in ("fail", "error-result")
    if NAME in ("claude", "cursor-agent"):
        init = {"type": "system", "subtype": "init", "session_id": session}
        if no_tools:
            init["mcp_servers"] = [{"name": "awtui", "status": "failed"}]
        emit(init)
        if MODE == "gate":
            while not os.path.exists(os.environ["FAKE_GATE"]):
                time.sleep(0.05)
        if os.environ.get("FAKE_ASK"):
            tool = "mcp__awtui__permission_request"
            require(arg_after("--permission-prompt-tool") == tool, "--permission-prompt-tool missing")
            require(arg_after("--permission-mode") == "default", "permissions: ask needs mode default")
            ask = json.loads(os.environ["FAKE_ASK"])
            # As Claude Code: wait MCP_TOOL_TIMEOUT ms (60 s unset), then
            # cancel the call and go on without an answer.
            wait = int(os.environ.get("MCP_TOOL_TIMEOUT", "60000")) / 1000

            def give_up(notify):
                notify({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2, "reason": "Request timed out"}})
                return None
            result = mcp_call("permission_request", {
                "tool_name": ask["tool"], "input": ask["input"], "tool_use_id": "toolu_ask"},
                timeout=wait, on_timeout=give_up)
            text = json.dumps({"timed_out": wait}) if result is None \
                else result["result"]["content"][0]["text"]
            with open(os.environ["FAKE_ASK_LOG"], "a") as f:
                f.write(text + "\n")
            if result is None:
                # The turn goes on after the CLI gave up (the model is
                # told the call failed and carries on).
                time.sleep(float(os.environ.get("FAKE_ASK_AFTER", "0")))
        if os.environ.get("FAKE_MCP"):
            emit({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "mcp__awtui__channel_send", "input": {}}]}})
            emit({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1"}]}})
        emit({"type": "result", "subtype": "error_during_execution" if failed else "success",
              "is_error": failed, "result": reply, "session_id": session, "total_cost_usd": 0.25,
              "usage": {"input_tokens": 100, "output_tokens": 20}})
    elif NAME == "codex":
        emit({"type": "thread.started", "thread_id": session})
        emit({"type": "turn.started"})
        emit({"type": "item.completed", "item": {"type": "agent_message", "text": reply}})
        if failed:
            emit({"type": "turn.failed", "error": {"message": "simulated failure"}})
        else:
            emit({"type": "turn.completed", "usage": {"input_tokens": 100, "output_tokens": 20}})
    elif NAME == "gemini":
        require(arg_after("-m"), "gemini needs -m")
        require(arg_after("--output-format") == "stream-json", "gemini needs stream-json")
        require("--skip-trust" in ARGS, "gemini needs --skip-trust")
        home = os.environ.get("GEMINI_CLI_HOME")
        require(home, "GEMINI_CLI_HOME missing")
        with open(os.path.join(home, ".gemini", "settings.json")) as f:
            require("awtui" in json.load(f)["mcpServers"], "awtui server missing from settings")
        print("Loaded cached credentials.")
        emit({"type": "init", "session_id": session, "model": "m"})
        emit({"type": "message", "role": "assistant", "content": reply, "delta": True})
        if failed:
            emit({"type": "result", "status": "error", "error": {"message": "simulated failure"},
                  "stats": {"input_tokens": 100, "output_tokens": 20}})
        else:
            emit({"type": "result", "status": "success",
                  "stats": {"input_tokens": 100, "output_tokens": 20}})
    elif NAME == "opencode":
        inline = json.loads(os.environ.get("OPENCODE_CONFIG_CONTENT") or "{}")
        require("awtui" in inline.get("mcp", {}), "OPENCODE_CONFIG_CONTENT lacks awtui's server")
        emit({"type": "step_start", "sessionID": session, "part": {}})
        emit({"type": "text", "sessionID": session, "part": {"type": "text", "text": reply}})
        emit({"type": "step_finish", "sessionID": session,
              "part": {"tokens": {"input": 100, "output": 20}, "cost": 0.25}})
        if failed:
            emit({"type": "error", "sessionID": session, "error": {"message": "simulated failure"}})
    else:
        print(reply)
    sys.exit(1 if failed else 0)


main()
