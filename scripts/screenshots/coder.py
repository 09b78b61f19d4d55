#!/usr/bin/env python3
# The coder of scripts/screenshots/team.yaml: takes the schema task,
# writes it in its worktree, completes it, and starts on the login form.
import json, os, subprocess, sys
sys.stdin.read()
awtui = os.environ["AWTUI_BIN"]

def call(tool, args):
    r = subprocess.run([awtui, "ctx", "--json", "call", tool, json.dumps(args)],
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}

me = call("agent_register", {"name": "coder", "runtime": "custom"}).get("id")
wf = call("workflow_list", {}).get("workflows", [{}])[0].get("id")
tasks = {t["name"]: t for t in call("workflow_next_tasks", {"workflow_id": wf}).get("tasks", [])}
schema = tasks.get("schema")
if me and schema:
    call("task_claim", {"task_id": schema["id"], "agent_id": me})
    os.makedirs("db", exist_ok=True)
    with open("db/schema.sql", "w") as f:
        f.write("CREATE TABLE users (\n  id INTEGER PRIMARY KEY,\n  email TEXT UNIQUE NOT NULL,\n"
                "  password_hash TEXT NOT NULL\n);\n")
    with open("app.py", "a") as f:
        f.write("\ndef find_user(email):\n    return db.one('SELECT * FROM users WHERE email = ?', email)\n")
    call("task_update_status", {"id": schema["id"], "status": "completed",
                                "outcome": "users table with a unique email"})
    login = [t for t in call("workflow_next_tasks", {"workflow_id": wf}).get("tasks", [])
             if t["name"] == "login"]
    if login:
        call("task_claim", {"task_id": login[0]["id"], "agent_id": me})
        call("task_update_status", {"id": login[0]["id"], "status": "in_progress"})
        call("checkpoint_add", {"task_id": login[0]["id"], "type": "progress",
                                "summary": "form drafted, handler next"})
print("Schema done (db/schema.sql); on the login form now.")
