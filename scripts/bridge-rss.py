#!/usr/bin/env python3
"""The resident memory of one `awtui mcp` bridge (docs/figures.md, "Installing").

Usage: scripts/bridge-rss.py AWTUI_BINARY WORKFLOW_FOLDER INSTANCE AGENT

Starts the bridge five times against a running instance (`awtui start
--background` first), sends `initialize` and 200 pings through it, and
prints VmRSS of the bridge process (after its hand-over to `awtui-mcp`)
each time and their median, in KiB.
"""
import json
import os
import subprocess
import sys


def one(binary, root, instance, agent):
    p = subprocess.Popen(
        [binary, "mcp", "--instance", instance, "--agent", agent, "--dir", root],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def call(i, method, params):
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit("the bridge closed its output")
            answer = json.loads(line)
            if answer.get("id") == i:
                return answer

    call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "rss", "version": "0"}})
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    p.stdin.flush()
    for k in range(200):
        call(10 + k, "ping", {})
    with open(f"/proc/{p.pid}/status") as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
    exe = os.readlink(f"/proc/{p.pid}/exe")
    p.kill()
    p.wait()
    return rss, exe


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    runs = [one(*sys.argv[1:]) for _ in range(5)]
    sizes = sorted(r for r, _ in runs)
    print(f"{runs[0][1]}: VmRSS {[r for r, _ in runs]} KiB, median {sizes[2]} KiB")


if __name__ == "__main__":
    main()
