#!/usr/bin/env python3
"""A stand-in for Claude Code in tend's restore tests (tend/tests/restore.rs),
installed as `claude` on the pane's PATH. It keeps the files Claude Code
2.1.332 keeps, in the same places and shapes (detector/agents/claude.toml,
[resume]): its session file `<config>/sessions/<pid>.json` while it runs
(removed when it ends), and the conversation `<config>/projects/<folder with
every other character than a letter or digit as ->/<id>.jsonl`, whose turns
name the folder. `--resume ID` takes a conversation up again in the folder it
belongs to (like Claude Code, it refuses one it cannot find there). Each start
is logged as a JSON line to $STANDIN_LOG. It reads lines until /exit or the
end of its input."""

import json
import os
import re
import signal
import sys
import time
import uuid

config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.environ["HOME"], ".claude")
args = sys.argv[1:]
resumed = None
if "--resume" in args and args.index("--resume") + 1 < len(args):
    resumed = args[args.index("--resume") + 1]
cwd = os.getcwd()
conversation = lambda sid: os.path.join(config, "projects", re.sub(r"[^A-Za-z0-9]", "-", cwd), sid + ".jsonl")
if resumed and not os.path.exists(conversation(resumed)):
    print("No conversation found with session ID: %s" % resumed, flush=True)
    sys.exit(1)
sid = resumed or str(uuid.uuid4())
pid = os.getpid()
with open("/proc/self/stat") as f:
    proc_start = f.read().rsplit(")", 1)[1].split()[19]
session_file = os.path.join(config, "sessions", "%d.json" % pid)


def log(event):
    path = os.environ.get("STANDIN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(dict(event, pid=pid, id=sid, cwd=cwd)) + "\n")


def turn(text):
    os.makedirs(os.path.dirname(conversation(sid)), exist_ok=True)
    with open(conversation(sid), "a") as f:
        f.write(json.dumps({"type": "user", "cwd": cwd, "sessionId": sid, "message": text}) + "\n")


def status(word):
    os.makedirs(os.path.dirname(session_file), exist_ok=True)
    body = {"pid": pid, "sessionId": sid, "cwd": cwd, "procStart": proc_start, "version": "2.1.332",
            "kind": "interactive", "status": word, "updatedAt": int(time.time() * 1000),
            "statusUpdatedAt": int(time.time() * 1000)}
    tmp = session_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(body, f)
    os.replace(tmp, session_file)


def end(*_):
    try:
        os.remove(session_file)
    except OSError:
        pass
    log({"event": "end"})
    os._exit(0)


signal.signal(signal.SIGHUP, end)
signal.signal(signal.SIGTERM, end)
status("idle")
log({"event": "start", "resumed": resumed is not None})
print("stand-in Claude Code: conversation %s%s" % (sid, " (resumed)" if resumed else ""), flush=True)
while True:
    try:
        line = input("> ")
    except EOFError:
        break
    if line.strip() == "/exit":
        break
    status("busy")
    turn(line)
    print("noted: %s" % line, flush=True)
    status("idle")
end()
