#!/usr/bin/env python3
"""fakellm - a loopback-only fake LLM server for the `tend` agentlab.

Stdlib only.  Speaks just enough of four vendor APIs for real coding-agent
CLIs to run a turn against it:

  * Anthropic Messages API  (POST /v1/messages, SSE streaming)  - Claude Code
  * OpenAI Chat Completions (POST /v1/chat/completions, SSE)    - aider (litellm)
  * OpenAI Responses API    (POST /v1/responses, SSE)           - Codex CLI
  * Gemini API              (POST /v1beta/models/M:streamGenerateContent?alt=sse,
                             :generateContent, :countTokens)    - Gemini CLI

Behaviour is driven by a *scenario*: an ordered list of steps.  Every request
classified as a "main" (conversation-turn) request consumes the next step;
auxiliary requests (titles, token counts, next-speaker checks, quota probes...)
get a quick benign answer and consume nothing.  When the steps run out a short
"OK." text answer is given.

Ground truth: one JSON line per event is appended to the log file
(--log / FAKELLM_LOG):
  server_start, request, first_byte, stream_end, error_returned,
  client_gone, aux_response, scenario_set
Every line has "ts" (unix epoch seconds, float) and "event".

Control endpoints (loopback only):
  GET  /_ctl/health            -> {"ok":true,...}
  POST /_ctl/scenario          body {"scenario": "name"}  (resets the step pointer)
  GET  /_ctl/state             -> current scenario / step pointer / counters

Scenarios: idle, working_then_done, approval, question, error, long_tool, exit,
deny, esc_stream, ctrlc_stream, esc_tool, ctrlc_tool, multi_turn, resize,
approval_edit, approval_fetch, plan, long_output, error_429, error_overload,
error_401, error_conn, limit, limit_weekly, limit_resume (see build_scenarios
below; limit_response says what each provider sends for a plan limit).  Knobs (env): FAKELLM_STREAM_SECS (default 20) is the
duration of the slow answer of working_then_done; FAKELLM_LONG_CMD (default
"python3 -c 'import time; time.sleep(40)'; echo done" - Claude Code
refuses a foreground `sleep 40`); FAKELLM_APPROVAL_CMD (default "rm -rf ./build");
FAKELLM_ERROR_CODES (default "429,529,500") cycled for the error scenario;
FAKELLM_DUMP_DIR: when set, every request body is written there (debugging).

More control endpoints:
  POST /_ctl/close             stop listening (the port then refuses connections:
                               the error_conn scenario); logs listener_closed
  GET  /docs/...               a small HTML page (the target of approval_fetch)

Denials: when the newest tool result of a main request says the call was
rejected / denied / cancelled / interrupted, the request gets a short closing
text instead of the next step (logged as deny_seen; the step pointer does not
move), so an agent that reports a denial back to the model ends its turn.
"""

import argparse
import http.server
import itertools
import json
import os
import re
import socketserver
import subprocess
import sys
import threading
import time
import uuid

LOCK = threading.Lock()
STATE = {
    "scenario": "idle",
    "step": 0,
    "main_requests": 0,
    "aux_requests": 0,
    "req_seq": 0,
    "log_path": None,
    "dump_dir": None,
    "limit_resets": {},
}

POEM = (
    "Here is a short poem about terminals.\n\n"
    "A cursor blinks in patient green,\n"
    "the pane is quiet, swept and clean.\n"
    "A prompt is typed, the model wakes,\n"
    "and line by line the answer makes\n"
    "its slow way down the waiting screen,\n"
    "through every byte that lies between.\n\n"
    "Then tmux keeps it, split in two,\n"
    "a sidecar watching what we do:\n"
    "it reads the spinner, counts the dots,\n"
    "and names the states in tidy slots -\n"
    "idle, working, waiting, done -\n"
    "until the session's work is won.\n\n"
    "That is the whole poem; nothing else is needed."
)


STANZAS = [
    ("The pane wakes up", "a single cursor waits", "then the model speaks", "and fills the empty slates"),
    ("A window splits in two", "the left one reads a log", "the right one runs the tests", "and both cut through the fog"),
    ("The status line is green", "the clock ticks in the corner", "a session sleeps detached", "like a patient mourner"),
    ("A spinner turns and turns", "the tokens flow like rain", "the sidecar counts the dots", "and names the state again"),
    ("Then someone presses keys", "a dialog asks for leave", "the human answers yes", "the agent takes its reprieve"),
    ("The scrollback grows and grows", "a thousand lines of text", "the prompt comes back at last", "to ask what we want next"),
]


def long_poem(n_stanzas=12):
    out = ["Here is a long poem about terminals, in %d stanzas." % n_stanzas, ""]
    for i in range(n_stanzas):
        a, b, c, d = STANZAS[i % len(STANZAS)]
        out += ["%d." % (i + 1), a + ",", b + ",", c + ",", d + ".", ""]
    out.append("That is the end of the long poem.")
    return "\n".join(out)


def long_list(n=150):
    tips = ["split a pane with prefix %", "detach with prefix d", "list sessions with tmux ls",
            "rename a window with prefix ,", "zoom a pane with prefix z", "scroll with prefix [",
            "kill a pane with prefix x", "swap panes with prefix {", "show the clock with prefix t",
            "open a new window with prefix c"]
    out = ["Here are %d numbered tips about tmux:" % n, ""]
    for i in range(n):
        out.append("%d. Tip %d: %s." % (i + 1, i + 1, tips[i % len(tips)]))
    out += ["", "That is the full list of %d tips." % n]
    return "\n".join(out)


PLAN_TEXT = ("# Plan: add a hello command\n\n"
             "1. Create hello.py with a main() that prints hello.\n"
             "2. Add a short usage note to README.md.\n"
             "3. Run python3 hello.py to check the output.\n")

FETCH_PAGE = ("<html><head><title>Demo project docs</title></head><body>"
              "<h1>Demo project</h1><p>The demo project is a tiny repository used by the tend agentlab. "
              "It has a README and a build directory.</p></body></html>")


def env_float(name, default):
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return float(default)


def build_scenarios():
    stream_secs = env_float("FAKELLM_STREAM_SECS", 20)
    ttft = env_float("FAKELLM_TTFT", 2.0)  # "thinking" time before a step's first byte
    long_cmd = os.environ.get(
        "FAKELLM_LONG_CMD", "python3 -c 'import time; time.sleep(40)'; echo done")
    appr_cmd = os.environ.get("FAKELLM_APPROVAL_CMD", "rm -rf ./build")
    codes = [int(c) for c in os.environ.get("FAKELLM_ERROR_CODES", "429,529,500").split(",") if c.strip()]
    n_err = int(os.environ.get("FAKELLM_ERROR_COUNT", "1000"))
    interrupt_secs = env_float("FAKELLM_INTERRUPT_STREAM_SECS", 30)
    resize_secs = env_float("FAKELLM_RESIZE_STREAM_SECS", 24)
    turn_secs = env_float("FAKELLM_TURN_SECS", 5)
    interrupt_cmd = os.environ.get(
        "FAKELLM_INTERRUPT_CMD", "python3 -c 'import time; time.sleep(60)'; echo done")
    deny_reply = {"kind": "text", "text": "Understood - I will leave it as it is.", "duration": 1.0, "ttft": ttft}

    def errs(status):
        return [{"kind": "error", "status": status} for _ in range(n_err)]
    return {
        "idle": [],
        "exit": [],
        "working_then_done": [
            {"kind": "text", "text": POEM, "duration": stream_secs, "ttft": ttft},
        ],
        "approval": [
            {"kind": "tool", "command": appr_cmd,
             "text": "I'll remove the build directory.",
             "description": "Remove the build directory", "escalate": True, "ttft": ttft},
            {"kind": "text", "text": "Removed the ./build directory.", "duration": 2.0, "ttft": ttft},
        ],
        "question": [
            {"kind": "question",
             "question": "Which database should the new service use?",
             "header": "Database",
             "options": [["PostgreSQL", "Relational, strong consistency"],
                         ["SQLite", "Embedded, zero setup"]], "ttft": ttft},
            {"kind": "text", "text": "Great - I will go with that choice.", "duration": 2.0, "ttft": ttft},
        ],
        "error": [
            {"kind": "error", "status": codes[i % len(codes)]} for i in range(n_err)
        ],
        "long_tool": [
            {"kind": "tool", "command": long_cmd,
             "text": "Running the long command now.",
             "description": "Run the long command", "escalate": False, "ttft": ttft},
            {"kind": "text", "text": "The long command finished and printed done.", "duration": 2.0, "ttft": ttft},
        ],
        # --- interrupted / cut-short turns
        "deny": [
            {"kind": "tool", "command": appr_cmd,
             "text": "I'll remove the build directory.",
             "description": "Remove the build directory", "escalate": True, "ttft": ttft},
            deny_reply,
        ],
        "esc_stream": [{"kind": "text", "text": long_poem(12), "duration": interrupt_secs, "ttft": ttft}],
        "ctrlc_stream": [{"kind": "text", "text": long_poem(12), "duration": interrupt_secs, "ttft": ttft}],
        "esc_tool": [
            {"kind": "tool", "command": interrupt_cmd, "text": "Running the long command now.",
             "description": "Run the long command", "escalate": False, "ttft": ttft},
            {"kind": "text", "text": "The long command finished and printed done.", "duration": 2.0, "ttft": ttft},
        ],
        "ctrlc_tool": [
            {"kind": "tool", "command": interrupt_cmd, "text": "Running the long command now.",
             "description": "Run the long command", "escalate": False, "ttft": ttft},
            {"kind": "text", "text": "The long command finished and printed done.", "duration": 2.0, "ttft": ttft},
        ],
        # --- several turns, window resizes, long output
        "multi_turn": [
            {"kind": "text", "text": "A haiku about tmux:\n\nPanes split the dark screen,\nsessions sleep but never die,\nprefix key, then peace.",
             "duration": turn_secs, "ttft": ttft},
            {"kind": "text", "text": "A haiku about panes:\n\nLeft pane holds the logs,\nright pane runs the failing test,\nboth wait for the fix.",
             "duration": turn_secs, "ttft": ttft},
            {"kind": "text", "text": "A haiku about windows:\n\nWindow number three\nhides behind the status bar,\nprefix three, it's back.",
             "duration": turn_secs, "ttft": ttft},
        ],
        "resize": [{"kind": "text", "text": long_poem(10), "duration": resize_secs, "ttft": ttft}],
        "long_output": [{"kind": "text", "text": long_list(150), "duration": env_float("FAKELLM_LONG_OUTPUT_SECS", 12),
                         "ttft": ttft}],
        # --- other dialogs
        "approval_edit": [
            {"kind": "write", "path": "hello.py", "content": 'print("hello")\n',
             "text": "I'll create hello.py.", "description": "Create hello.py", "ttft": ttft},
            {"kind": "text", "text": "Created hello.py; it prints hello.", "duration": 2.0, "ttft": ttft},
        ],
        "approval_fetch": [
            {"kind": "fetch", "url_path": "/docs/index.html", "text": "I'll fetch the docs page.",
             "ttft": ttft},
            {"kind": "text", "text": "The docs page says the demo project is a tiny repository with a README and a build directory.",
             "duration": 2.0, "ttft": ttft},
        ],
        "plan": [
            {"kind": "plan", "plan": PLAN_TEXT, "plan_file": "hello-plan.md", "text": "Here is my plan.",
             "ttft": ttft},
            {"kind": "text", "text": "Plan approved. I would now create hello.py as planned.", "duration": 2.0,
             "ttft": ttft},
        ],
        # --- API errors: one status each; "overload" is 529 for Anthropic, 503 elsewhere
        "error_429": errs(429),
        "error_overload": errs("overload"),
        "error_401": errs(401),
        "error_conn": errs(503),   # never served: the listener is closed before the turn
        # --- a plan's usage limit (limit_response): every request until the
        # reset is refused; limit_resume's reset comes during the recording
        # and the request after it is answered
        "limit": [{"kind": "limit", "reset_in": env_float("FAKELLM_LIMIT_RESET_SECS", 3 * 3600 + 600)}],
        "limit_weekly": [{"kind": "limit", "window": "seven_day", "daily": True,
                          "reset_in": env_float("FAKELLM_LIMIT_RESET_SECS", 3 * 86400)}],
        "limit_resume": [
            {"kind": "limit", "reset_in": env_float("FAKELLM_LIMIT_RESET_SECS", 60)},
            {"kind": "text", "text": POEM, "duration": env_float("FAKELLM_LIMIT_ANSWER_SECS", 8), "ttft": ttft},
        ],
        # --- a shell in the background: the turn's text ends while it runs on;
        # the agent hears of its end and answers that (the third step)
        "background": [
            {"kind": "tool", "command": os.environ.get("FAKELLM_BACKGROUND_CMD", "sleep 12; echo finished"),
             "text": "Running the long command in the background.",
             "description": "Run the long command", "escalate": False, "background": True, "ttft": ttft},
            {"kind": "text", "text": "The long command runs in the background; I will tell you when it ends.",
             "duration": 2.0, "ttft": ttft},
            {"kind": "text", "text": "The long command finished and printed finished.", "duration": 2.0,
             "ttft": ttft},
        ],
    }


SCENARIOS = build_scenarios()
DEFAULT_STEP = {"kind": "text", "text": "OK.", "duration": 0.5}


# --------------------------------------------------------------------------- log

def log_event(event, **kw):
    rec = {"ts": round(time.time(), 4), "event": event}
    rec.update(kw)
    line = json.dumps(rec, sort_keys=False)
    with LOCK:
        path = STATE["log_path"]
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()


DENY_RX = re.compile(r"(?i)(reject|denied|declin|doesn't want|does not want|did not approve|not approved|"
                     r"cancel|interrupt|aborted|user chose not)")
DENY_STEP = {"kind": "text", "text": "Understood - I will leave it as it is.", "duration": 1.0, "ttft": 0.5}


def next_step(tool_result=None, rid=None):
    """Consume and return the next scenario step (thread-safe).  A request whose
    newest tool result reports a denial/cancel gets a closing text (index -2)
    and does not consume a step."""
    if tool_result and DENY_RX.search(tool_result):
        log_event("deny_seen", id=rid, tool_result=tool_result[:300])
        with LOCK:
            STATE["main_requests"] += 1
        time.sleep(DENY_STEP["ttft"])
        return -2, DENY_STEP
    passed = None
    with LOCK:
        steps = SCENARIOS.get(STATE["scenario"], [])
        i = STATE["step"]
        STATE["main_requests"] += 1
        step = steps[i] if i < len(steps) else DEFAULT_STEP
        if step.get("kind") == "limit":
            # a plan limit holds every request until its reset, then the
            # scenario goes on with the next step
            reset = STATE["limit_resets"].setdefault(i, limit_reset_at(step))
            if time.time() < reset:
                return i, dict(step, reset_at=reset)
            passed = (i, reset)
            i += 1
            step = steps[i] if i < len(steps) else DEFAULT_STEP
        STATE["step"] = i + 1
    if passed:
        # logged outside LOCK: log_event takes it too
        log_event("limit_reset_passed", step=passed[0], reset_at=passed[1])
    if step.get("ttft"):
        time.sleep(step["ttft"])
    return i, step


def limit_reset_at(step):
    """The reset of a plan limit served from now: `reset_in` seconds ahead,
    moved up to the next whole minute, because the agents draw the reset to
    the minute ("resets 3:05pm", "Try again at 3:05 PM") and a recording's
    label must say the time the screen shows."""
    t = time.time() + float(step.get("reset_in", 3 * 3600))
    return float(int(t // 60 + (1 if t % 60 else 0)) * 60)


def peek_step():
    """The step the next main request would get, without consuming it."""
    with LOCK:
        steps = SCENARIOS.get(STATE["scenario"], [])
        i = STATE["step"]
        return i, (steps[i] if i < len(steps) else DEFAULT_STEP)


def chunk_text(text, n):
    """Split text into about n chunks on word boundaries."""
    words = re.findall(r"\S+\s*|\s+", text)
    if n <= 1 or len(words) <= 1:
        return [text]
    per = max(1, len(words) // n)
    out = []
    for k in range(0, len(words), per):
        out.append("".join(words[k:k + per]))
    return out


def text_plan(step):
    dur = float(step.get("duration", 1.0))
    chunks = chunk_text(step["text"], max(1, int(dur * 3)))
    delay = dur / max(1, len(chunks))
    return chunks, delay


# ------------------------------------------------------------ classification

def last_user_text_anthropic(body):
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if isinstance(c, str):
            return c, False
        texts, has_result = [], False
        for b in c or []:
            if b.get("type") == "text":
                texts.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                has_result = True
        return "\n".join(texts), has_result
    return "", False


def tool_names_anthropic(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def classify_anthropic(body):
    """Main = a streamed turn of the primary agent loop (has tools, >=5)."""
    names = tool_names_anthropic(body)
    if not body.get("stream"):
        return False, "nonstream"
    if len(names) < 5:
        return False, "few_tools"
    text, has_result = last_user_text_anthropic(body)
    sysp = body.get("system")
    sys_txt = json.dumps(sysp)[:20000] if sysp else ""
    # forked side-queries (prompt suggestion, memory, summaries) reuse the tools
    # but carry their own instruction in the last user message
    for pat in ("prompt suggestion", "suggest what the user", "Your task is to create a detailed summary",
                "predict", "[SUGGESTION MODE"):
        if pat.lower() in text.lower() and "acc-user" not in text:
            return False, "side_query"
    if body.get("max_tokens") == 1:
        return False, "probe"
    return True, "tool_result" if has_result else "user"


def classify_openai_chat(body):
    """aider sends no tools: every chat request is a turn.  Agents that drive
    tools through Chat Completions (OpenCode, Qwen Code, Crush, Pi, ...) also
    send side requests without tools (session titles, summaries): with
    FAKELLM_CHAT_REQUIRE_TOOLS=1 only a request that offers tools is a turn."""
    if not body.get("messages"):
        return False, "empty"
    if body.get("tools"):
        return True, "chat_tools"
    if os.environ.get("FAKELLM_CHAT_REQUIRE_TOOLS") == "1":
        return False, "chat_no_tools"
    return True, "chat"


def chat_tools(body):
    """{name: parameters schema} of the function tools a chat request offers."""
    out = {}
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        fn = t.get("function") if isinstance(t.get("function"), dict) else t
        name = fn.get("name")
        if name:
            out[name] = fn.get("parameters") or {}
    return out


def tool_result_chat(body):
    """Text of the tool results after the newest assistant message ('' if the
    newest message is the user's)."""
    out = []
    for m in reversed(body.get("messages") or []):
        role = m.get("role")
        if role == "tool":
            c = m.get("content")
            out.append(c if isinstance(c, str) else json.dumps(c))
            continue
        if role == "user" and not out:
            # some clients send tool results as user content parts
            c = m.get("content")
            if isinstance(c, list) and any(isinstance(x, dict) and "tool" in str(x.get("type", ""))
                                           for x in c):
                return json.dumps(c)
        break
    return "\n".join(out)


# Tools an agent offers only after the model asked its tool search for them
# (Qwen Code 0.15 defers ask_user_question and exit_plan_mode behind
# `tool_search`, as a real model would find them): the step first calls the
# search with `select:<name>`, then, once the tool is offered, the tool itself.
DEFERRED_TOOLS = {"question": "ask_user_question", "plan": "exit_plan_mode"}
TOOL_SEARCH_NAMES = ("tool_search", "ToolSearch")


# tool names per step kind, first match wins (the agents name them differently)
CHAT_TOOL_NAMES = {
    "tool": ["bash", "run_shell_command", "shell", "execute_command", "run_terminal_cmd", "Bash",
             "exec", "execute", "terminal", "run_commands"],
    "write": ["write", "write_file", "create_file", "Write", "write_to_file", "edit", "str_replace_editor",
              "WriteFile", "editor"],
    "fetch": ["webfetch", "web_fetch", "fetch", "WebFetch", "read_url", "url_fetch", "FetchURL", "fetch_web_content"],
    "question": ["question", "ask_user", "ask_followup_question", "AskUserQuestion", "ask_user_question",
                 "AskQuestion", "ask_question"],
    "plan": ["exit_plan_mode", "ExitPlanMode", "plan_exit"],
}


def chat_tool_call(step, tools):
    """(name, arguments) of the tool call a step makes in a chat request, from
    the tools the agent offers; (None, None) when it offers none that fits."""
    kind = step["kind"]
    name = next((n for n in CHAT_TOOL_NAMES.get(kind, []) if n in tools), None)
    if name is None:
        low = {n.lower(): n for n in tools}
        name = next((low[n.lower()] for n in CHAT_TOOL_NAMES.get(kind, []) if n.lower() in low), None)
    if name is None:
        return None, None
    props = (tools.get(name) or {}).get("properties") or {}
    required = (tools.get(name) or {}).get("required") or []
    args = {}

    def put(keys, value):
        for k in keys:
            if k in props:
                args[k] = value
                return True
        return False
    if kind == "tool":
        put(["command", "cmd", "commandLine"], step["command"])
        put(["commands"], [step["command"]])  # Cline CLI 3: run_commands takes a list
        put(["description"], step.get("description", "Run a command"))
        put(["is_background"], bool(step.get("background")))
        if "requires_approval" in props:
            args["requires_approval"] = True
    elif kind == "write":
        path = workdir_path(step["path"])
        put(["filePath", "file_path", "path", "absolute_path"], path)
        put(["content", "contents", "text", "file_text", "new_text"], step["content"])
        if name == "str_replace_editor":
            args["command"] = "create"
    elif kind == "fetch":
        put(["url", "urls"], fetch_url(step))
        if "requests" in props:  # Cline CLI 3: fetch_web_content takes a list of {url, prompt}
            args["requests"] = [{"url": fetch_url(step),
                                 "prompt": "Summarize what this page says about the project."}]
        put(["prompt"], "Summarize what this page says about the project.")
        put(["format"], "text")
    elif kind == "question":
        opts = [{"label": l, "description": d} for l, d in step["options"]]
        if "questions" in props:
            args["questions"] = [{"question": step["question"], "header": step["header"],
                                  "options": opts, "multiple": False, "multiSelect": False}]
        else:
            put(["question", "text", "prompt"], step["question"])
            put(["options", "choices", "follow_up"], [l for l, _ in step["options"]])
    elif kind == "plan":
        put(["plan", "text"], step["plan"])
    for k in required:
        if k not in args:
            typ = (props.get(k) or {}).get("type")
            args[k] = {"boolean": False, "integer": 0, "number": 0, "array": []}.get(typ, "")
    return name, args


def classify_responses(body):
    tools = body.get("tools") or []
    if not tools:
        return False, "no_tools"
    return True, "responses"


def classify_gemini(path, body):
    if ":streamGenerateContent" in path:
        tools = body.get("tools") or []
        if tools:
            return True, "stream_with_tools"
        return False, "stream_no_tools"
    return False, "aux"


def tool_result_anthropic(body):
    """Text of the tool results in the newest user message ('' if none)."""
    msgs = body.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        if not isinstance(c, list):
            return ""
        out = []
        for b in c:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                cc = b.get("content")
                if isinstance(cc, str):
                    out.append(cc)
                elif isinstance(cc, list):
                    out += [x.get("text", "") for x in cc if isinstance(x, dict)]
        return "\n".join(out)
    return ""


def tool_result_responses(body):
    inp = body.get("input") or []
    if not isinstance(inp, list):
        return ""
    for it in reversed(inp):
        if not isinstance(it, dict):
            continue
        if it.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            o = it.get("output")
            return o if isinstance(o, str) else json.dumps(o)
        if it.get("role") == "user":
            return ""
    return ""


def tool_result_gemini(body):
    for c in reversed(body.get("contents") or []):
        if c.get("role") != "user":
            continue
        parts = [p["functionResponse"] for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p]
        return json.dumps(parts) if parts else ""
    return ""


def workdir_path(rel):
    wd = os.environ.get("FAKELLM_WORKDIR") or os.getcwd()
    return os.path.join(wd, rel)


def fetch_url(step):
    return "http://127.0.0.1:%d%s" % (STATE.get("port") or 0, step.get("url_path", "/docs/index.html"))


def apply_patch_text(step):
    lines = ["*** Begin Patch", "*** Add File: %s" % step["path"]]
    lines += ["+" + l for l in step["content"].rstrip("\n").split("\n")]
    lines.append("*** End Patch")
    return "\n".join(lines) + "\n"


def aider_edit_block(step):
    """aider's default (diff) edit format: a SEARCH/REPLACE block; an empty
    SEARCH on a missing file makes aider ask 'Create new file?'."""
    return ("%s\n\n%s\n```python\n<<<<<<< SEARCH\n=======\n%s>>>>>>> REPLACE\n```\n" % (
        step.get("text", ""), step["path"], step["content"]))


# -------------------------------------------------------------- handler

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakellm/1.0"

    def log_message(self, fmt, *args):  # silence default stderr logging
        pass

    # ---------------------------------------------------------------- utils
    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        if self.headers.get("Content-Encoding", "").lower() in ("gzip",):
            import gzip
            raw = gzip.decompress(raw)
        elif self.headers.get("Content-Encoding", "").lower() in ("zstd",) and raw:
            # Pi's Codex provider compresses its SSE request bodies (Node's
            # zlib.zstdCompressSync); this Python has no zstd module, the
            # zstd tool decodes them
            try:
                raw = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True, timeout=10,
                                     check=True).stdout
            except (OSError, subprocess.SubprocessError):
                pass
        try:
            return raw, json.loads(raw.decode("utf-8")) if raw else {}
        except Exception:
            return raw, {}

    def _json(self, code, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _sse_start(self, extra_headers=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.close_connection = True

    def _sse(self, data, event=None):
        out = ""
        if event:
            out += "event: %s\n" % event
        out += "data: %s\n\n" % (data if isinstance(data, str) else json.dumps(data))
        self.wfile.write(out.encode("utf-8"))
        self.wfile.flush()

    def _dump(self, rid, raw):
        d = STATE.get("dump_dir")
        if not d:
            return
        try:
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "%s.json" % rid), "wb") as f:
                f.write(raw)
        except OSError:
            pass

    def _new_rid(self):
        with LOCK:
            STATE["req_seq"] += 1
            return "r%d" % STATE["req_seq"]

    # ------------------------------------------------------------- routing
    def do_GET(self):
        p = self.path.split("?")[0]
        if p == "/_ctl/health":
            return self._json(200, {"ok": True, "scenario": STATE["scenario"]})
        if p == "/_ctl/state":
            with LOCK:
                return self._json(200, {k: v for k, v in STATE.items() if k not in ("log_path", "server")})
        rid = self._new_rid()
        log_event("request", id=rid, method="GET", path=self.path, main=False, why="get",
                  ua=self.headers.get("User-Agent", "")[:80])
        if p.startswith("/docs"):
            data = FETCH_PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            log_event("page_served", id=rid, path=self.path)
            return
        if p.endswith("/models") or p.endswith("/v1/models"):
            return self._json(200, {"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fakellm"}],
                "models": []})
        if p.startswith("/v1beta/models"):
            return self._json(200, {"models": [{"name": "models/gemini-2.5-pro",
                                                "supportedGenerationMethods": ["generateContent"]}]})
        return self._json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        p = self.path.split("?")[0]
        if p == "/_ctl/scenario":
            _, body = self._read_body()
            name = body.get("scenario", "idle")
            with LOCK:
                STATE["scenario"] = name
                STATE["step"] = 0
                STATE["limit_resets"] = {}
            log_event("scenario_set", scenario=name)
            return self._json(200, {"ok": True, "scenario": name})
        if p == "/_ctl/close":
            self._read_body()
            STATE["closing"] = True
            self._json(200, {"ok": True, "closing": True})
            threading.Thread(target=STATE["server"].shutdown, daemon=True).start()
            return
        raw, body = self._read_body()
        rid = self._new_rid()
        self._dump(rid, raw)
        try:
            if p.endswith("/messages/count_tokens"):
                log_event("request", id=rid, api="anthropic", path=p, main=False, why="count_tokens")
                return self._json(200, {"input_tokens": 1000})
            if p.endswith("/messages"):
                return self.anthropic(rid, p, body)
            if p.endswith("/chat/completions"):
                return self.openai_chat(rid, p, body)
            if p.endswith("/responses"):
                return self.openai_responses(rid, p, body)
            if "/models/" in p and ":" in p:
                return self.gemini(rid, p, body)
            log_event("request", id=rid, path=p, main=False, why="unknown_path")
            return self._json(404, {"error": {"message": "unknown path %s" % p}})
        except (BrokenPipeError, ConnectionResetError) as e:
            log_event("client_gone", id=rid, error=type(e).__name__)

    # ------------------------------------------------------------ anthropic
    def anthropic(self, rid, path, body):
        main, why = classify_anthropic(body)
        model = body.get("model", "")
        text, _ = last_user_text_anthropic(body)
        names = tool_names_anthropic(body)
        log_event("request", id=rid, api="anthropic", path=path, main=main, why=why, model=model,
                  stream=bool(body.get("stream")), ntools=len(names),
                  max_tokens=body.get("max_tokens"), last_user=text[:160])
        if not main:
            return self.anthropic_aux(rid, body)
        idx, step = next_step(tool_result_anthropic(body), rid)
        kind = step["kind"]
        if kind == "error":
            return self.error_response(rid, "anthropic", step["status"], idx)
        if step["kind"] == "limit":
            return self.limit_response(rid, "anthropic", step, idx)
        mid = "msg_" + uuid.uuid4().hex[:20]
        self._sse_start({"request-id": "req_" + rid})
        usage = {"input_tokens": 1200, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        self._sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}, "message_start")
        log_event("first_byte", id=rid, api="anthropic", step=idx, kind=kind)
        block = 0
        stop = "end_turn"
        if kind == "text":
            chunks, delay = text_plan(step)
            self._sse({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}, "content_block_start")
            for c in chunks:
                time.sleep(delay)
                self._sse({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": c}}, "content_block_delta")
            self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        else:
            if step.get("text"):
                self._sse({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}, "content_block_start")
                self._sse({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": step["text"]}}, "content_block_delta")
                self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
                block = 1
            if kind == "question" and "AskUserQuestion" in names:
                tname = "AskUserQuestion"
                tinput = {"questions": [{
                    "question": step["question"], "header": step["header"], "multiSelect": False,
                    "options": [{"label": l, "description": d} for l, d in step["options"]]}]}
            elif kind == "question":
                # no question tool: plain text ending in a question
                q = step["question"] + " Options: " + ", ".join(l for l, _ in step["options"]) + "?"
                self._sse({"type": "content_block_start", "index": block,
                           "content_block": {"type": "text", "text": ""}}, "content_block_start")
                self._sse({"type": "content_block_delta", "index": block,
                           "delta": {"type": "text_delta", "text": q}}, "content_block_delta")
                self._sse({"type": "content_block_stop", "index": block}, "content_block_stop")
                tname = None
            elif kind == "write":
                tname = "Write"
                tinput = {"file_path": workdir_path(step["path"]), "content": step["content"]}
            elif kind == "fetch":
                tname = "WebFetch"
                tinput = {"url": fetch_url(step), "prompt": "Summarize what this page says about the project."}
            elif kind == "plan":
                tname = "ExitPlanMode"
                tinput = {"plan": step["plan"]}
            else:
                tname = "Bash"
                tinput = {"command": step["command"], "description": step.get("description", "")}
                if step.get("background"):
                    tinput["run_in_background"] = True
            if tname:
                tid = "toolu_" + uuid.uuid4().hex[:22]
                self._sse({"type": "content_block_start", "index": block, "content_block": {
                    "type": "tool_use", "id": tid, "name": tname, "input": {}}}, "content_block_start")
                js = json.dumps(tinput)
                for k in range(0, len(js), 40):
                    self._sse({"type": "content_block_delta", "index": block,
                               "delta": {"type": "input_json_delta", "partial_json": js[k:k + 40]}},
                              "content_block_delta")
                self._sse({"type": "content_block_stop", "index": block}, "content_block_stop")
                stop = "tool_use"
        self._sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                   "usage": {"output_tokens": 60}}, "message_delta")
        self._sse({"type": "message_stop"}, "message_stop")
        log_event("stream_end", id=rid, api="anthropic", step=idx, kind=kind, stop_reason=stop,
                  tool=tname if kind != "text" else None)

    def anthropic_aux(self, rid, body):
        mid = "msg_" + uuid.uuid4().hex[:20]
        model = body.get("model", "")
        txt = "Fake session"
        if body.get("stream"):
            self._sse_start()
            self._sse({"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1}}}, "message_start")
            self._sse({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}, "content_block_start")
            self._sse({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": txt}}, "content_block_delta")
            self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
            self._sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                       "usage": {"output_tokens": 3}}, "message_delta")
            self._sse({"type": "message_stop"}, "message_stop")
        else:
            self._json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                             "content": [{"type": "text", "text": txt}], "stop_reason": "end_turn",
                             "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 3}})
        log_event("aux_response", id=rid, api="anthropic")

    # ---------------------------------------------------------------- errors
    def error_response(self, rid, api, status, idx):
        if status == "overload":
            status = 529 if api == "anthropic" else 503
        msgs = {401: "Invalid API key (fakellm)",429: "Rate limit exceeded (fakellm)", 529: "Overloaded (fakellm)",
                500: "Internal server error (fakellm)", 503: "Service unavailable (fakellm)"}
        msg = msgs.get(status, "error %d (fakellm)" % status)
        headers = {}
        if status == 429:
            headers["retry-after"] = "2"
        if api == "anthropic":
            etype = {429: "rate_limit_error", 529: "overloaded_error", 500: "api_error",
                     401: "authentication_error"}.get(status, "api_error")
            obj = {"type": "error", "error": {"type": etype, "message": msg}}
        elif api == "gemini":
            st = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 529: "UNAVAILABLE",
                  401: "UNAUTHENTICATED"}.get(status, "INTERNAL")
            obj = {"error": {"code": status, "message": msg, "status": st}}
        else:
            etype = {429: "rate_limit_exceeded", 500: "server_error", 503: "server_error",
                     401: "invalid_api_key"}.get(status, "server_error")
            obj = {"error": {"message": msg, "type": etype, "param": None, "code": etype}}
        self._json(status, obj, headers)
        log_event("error_returned", id=rid, api=api, step=idx, status=status)

    # ---------------------------------------------------------- plan limits
    def limit_response(self, rid, api, step, idx):
        """A plan's usage limit, as each provider sends it: unlike a plain
        429 (error_response: retry-after 2, the agent retries) it names when
        the limit resets, and the agents stop and say so.

        * anthropic: the 429 of a subscriber's (or a Claude gateway's) usage
          limit, `anthropic-ratelimit-unified-status: rejected` with the
          window that ran out (`-representative-claim`) and its reset (Unix
          seconds).  Claude Code composes "You've hit your 5-hour limit ·
          resets 3pm (UTC)" from these headers only for a subscriber or a
          gateway sign-in (its bundle: the 429 branch reads them when the
          account is claude.ai or the bearer is a gateway token; the
          gateway protocol it embeds, "Usage-limit headers", gives the
          headers and says that with `representative-claim` "the client
          composes its own 'You've hit your limit' line"); harness.py signs
          the limit cases in with a gateway token for that reason.
        * openai_responses (Codex): 429 `{"error": {"type":
          "usage_limit_reached", "plan_type", "resets_at"}}`
          (codex-rs/codex-api/src/api_bridge.rs maps it to
          UsageLimitReached; "You've hit your usage limit. ... try again at
          3:05 PM.", codex-rs error.rs).
        * gemini: 429 RESOURCE_EXHAUSTED whose ErrorInfo says QUOTA_EXHAUSTED
          from the Code Assist domain, with a RetryInfo delay (gemini-cli
          classifyGoogleError: TerminalQuotaError with the delay; the CLI
          shows "Usage limit reached for <model>. Access resets at 3:05 PM
          UTC."); `step["daily"]` sends the Gemini API's free-tier daily
          quota instead (a QuotaFailure whose quotaId says PerDay: "You have
          exhausted your daily quota on this model.", no reset time).
        * openai_chat: OpenAI's own quota answer, 429 `insufficient_quota`
          (no reset time; the chat agents show it as an error).  With
          FAKELLM_CHAT_LIMIT=opencode_go, the answer of OpenCode's own gateway
          to an OpenCode Go subscriber at a 5-hour or weekly limit instead:
          429 `{"type": "error", "error": {"type": "GoUsageLimitError"},
          "metadata": {"workspace", "limitName"}}` with `retry-after` the
          seconds to the window's end (OpenCode 1.18's SessionRetry reads the
          type, the limit's name and retry-after: "5 hour usage limit reached.
          It will reset in 3 hours 10 minutes. …", retried at the reset; its
          TUI adds a "Go limit reached" dialog for the opencode-go provider)."""
        reset = int(step["reset_at"])
        secs = max(1, int(reset - time.time()))
        headers = {"retry-after": str(secs)}
        if api == "anthropic":
            claim = step.get("window", "five_hour")
            short = {"five_hour": "5h", "seven_day": "7d"}.get(claim, "5h")
            headers.update({
                "x-should-retry": "false",
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": str(reset),
                "anthropic-ratelimit-unified-representative-claim": claim,
                "anthropic-ratelimit-unified-%s-status" % short: "rejected",
                "anthropic-ratelimit-unified-%s-reset" % short: str(reset),
                "anthropic-ratelimit-unified-%s-utilization" % short: "1.0",
                "anthropic-ratelimit-unified-%s-surpassed-threshold" % short: "1.0",
            })
            obj = {"type": "error", "error": {
                "type": "rate_limit_error",
                "message": "This request would exceed your account's rate limit. Please try again later."}}
        elif api == "openai_responses":
            # no x-codex-primary-* usage headers: with them Codex 0.171 puts
            # a model-switch nudge ("Approaching rate limits / Switch to …?")
            # under the limit line, a dialog of its own
            obj = {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                             "plan_type": step.get("plan", "pro"), "resets_at": reset,
                             "resets_in_seconds": secs}}
        elif api == "gemini":
            model = "gemini-2.5-pro"
            if step.get("daily"):
                details = [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": model}, "quotaValue": "50"}]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "%ds" % secs}]
                msg = ("You exceeded your current quota, please check your plan and billing details. "
                       "* Quota exceeded for metric: generativelanguage.googleapis.com/"
                       "generate_content_free_tier_requests, limit: 50, model: %s" % model)
            else:
                details = [
                    {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "QUOTA_EXHAUSTED",
                     "domain": "cloudcode-pa.googleapis.com", "metadata": {"model": model}},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "%ds" % secs}]
                # not "exhausted your capacity": gemini-cli takes that for a
                # busy model and waits the delay out in silence
                msg = "Resource has been exhausted (e.g. check quota)."
            obj = {"error": {"code": 429, "message": msg, "status": "RESOURCE_EXHAUSTED", "details": details}}
        elif os.environ.get("FAKELLM_CHAT_LIMIT") == "opencode_go":
            name = {"five_hour": "5 hour", "seven_day": "weekly"}.get(step.get("window", "five_hour"), "5 hour")
            obj = {"type": "error",
                   "error": {"type": "GoUsageLimitError",
                             "message": "%s usage limit reached." % name.capitalize()},
                   "metadata": {"workspace": "wrk_fakellm", "limitName": name}}
        else:
            obj = {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                                        "details.", "type": "insufficient_quota", "param": None,
                             "code": "insufficient_quota"}}
        self._json(429, obj, headers)
        log_event("limit_returned", id=rid, api=api, step=idx, reset_at=reset, status=429)

    # ------------------------------------------------------------ openai chat
    def openai_chat(self, rid, path, body):
        main, why = classify_openai_chat(body)
        msgs = body.get("messages") or []
        last = ""
        for m in reversed(msgs):
            if m.get("role") == "user":
                c = m.get("content")
                last = c if isinstance(c, str) else json.dumps(c)
                break
        log_event("request", id=rid, api="openai_chat", path=path, main=main, why=why,
                  model=body.get("model"), stream=bool(body.get("stream")), last_user=last[-160:],
                  tools=sorted(chat_tools(body))[:40])
        if not main:
            return self.openai_chat_aux(rid, body)
        tools = chat_tools(body)
        reveal = self.chat_reveal_deferred(rid, body, tools)
        if reveal:
            return reveal
        idx, step = next_step(tool_result_chat(body) if tools else None, rid)
        kind = step["kind"]
        if kind == "error":
            return self.error_response(rid, "openai_chat", step["status"], idx)
        if step["kind"] == "limit":
            return self.limit_response(rid, "openai_chat", step, idx)
        if tools and kind != "text":
            name, args = chat_tool_call(step, tools)
            if name:
                return self.openai_chat_tool(rid, body, idx, step, name, args)
        if kind == "text":
            chunks, delay = text_plan(step)
        elif kind == "question":
            chunks, delay = [step["question"] + " Options: " +
                             " or ".join(l for l, _ in step["options"]) + "?"], 0.1
        elif kind == "write":
            chunks, delay = [aider_edit_block(step)], 0.1
        elif kind == "fetch":
            chunks, delay = ["I cannot fetch web pages from here: %s" % fetch_url(step)], 0.1
        elif kind == "plan":
            chunks, delay = [step["plan"]], 0.1
        else:  # tool -> markdown shell block (aider suggests shell commands)
            chunks, delay = [step.get("text", "") + "\n\n```bash\n" + step["command"] + "\n```\n"], 0.1
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = body.get("model", "fake-model")
        if not body.get("stream"):
            time.sleep(delay * len(chunks))
            self._json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                             "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "".join(chunks)}}],
                             "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}})
            log_event("first_byte", id=rid, api="openai_chat", step=idx, kind=kind)
            log_event("stream_end", id=rid, api="openai_chat", step=idx, kind=kind)
            return

        def chunk(delta, finish=None):
            return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self._sse_start()
        self._sse(chunk({"role": "assistant", "content": ""}))
        log_event("first_byte", id=rid, api="openai_chat", step=idx, kind=kind)
        for c in chunks:
            time.sleep(delay)
            self._sse(chunk({"content": c}))
        fin = chunk({}, "stop")
        fin["usage"] = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
        self._sse(fin)
        self._sse("[DONE]")
        log_event("stream_end", id=rid, api="openai_chat", step=idx, kind=kind)

    def chat_reveal_deferred(self, rid, body, tools):
        """When the next step needs a tool the agent keeps behind its tool
        search, answer with the search call (`select:<name>`) and keep the
        step for the request that follows (logged as step -3, kind
        tool_search, so no scenario boundary is taken from it)."""
        result = tool_result_chat(body) if tools else None
        if not tools or (result and DENY_RX.search(result)):
            return None
        _, step = peek_step()
        want = DEFERRED_TOOLS.get(step.get("kind"))
        search = next((n for n in TOOL_SEARCH_NAMES if n in tools), None)
        if not want or want in tools or not search:
            return None
        props = (tools.get(search) or {}).get("properties") or {}
        args = {"query": "select:" + want}
        if "max_results" in props:
            args["max_results"] = 1
        log_event("deferred_tool_search", id=rid, tool=want)
        time.sleep(float(step.get("ttft", 0) or 0))
        self.openai_chat_tool(rid, body, -3, {"kind": "tool_search"}, search, args)
        return True

    def openai_chat_aux(self, rid, body):
        """A side request (title, summary): a short benign answer."""
        STATE["aux_requests"] += 1
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = body.get("model", "fake-model")
        txt = "Fake session"
        if body.get("stream"):
            self._sse_start()
            for delta, fin in (({"role": "assistant", "content": txt}, None), ({}, "stop")):
                self._sse({"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                           "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]})
            self._sse("[DONE]")
        else:
            self._json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                             "model": model, "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": txt}}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})
        log_event("aux_response", id=rid, api="openai_chat")

    def openai_chat_tool(self, rid, body, idx, step, name, args):
        """A step answered with a function call (text first when the step has some)."""
        cid = "chatcmpl-" + uuid.uuid4().hex[:20]
        model = body.get("model", "fake-model")
        call_id = "call_" + uuid.uuid4().hex[:20]
        js = json.dumps(args)

        def chunk(delta, finish=None):
            return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if not body.get("stream"):
            msg = {"role": "assistant", "content": step.get("text") or None,
                   "tool_calls": [{"id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": js}}]}
            self._json(200, {"id": cid, "object": "chat.completion", "created": int(time.time()),
                             "model": model, "choices": [{"index": 0, "finish_reason": "tool_calls",
                                                          "message": msg}],
                             "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}})
            log_event("first_byte", id=rid, api="openai_chat", step=idx, kind=step["kind"])
            log_event("stream_end", id=rid, api="openai_chat", step=idx, kind=step["kind"], tool=name)
            return
        self._sse_start()
        self._sse(chunk({"role": "assistant", "content": ""}))
        log_event("first_byte", id=rid, api="openai_chat", step=idx, kind=step["kind"])
        if step.get("text"):
            self._sse(chunk({"content": step["text"]}))
        self._sse(chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                         "function": {"name": name, "arguments": ""}}]}))
        for k in range(0, len(js), 40):
            self._sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": js[k:k + 40]}}]}))
        fin = chunk({}, "tool_calls")
        fin["usage"] = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
        self._sse(fin)
        self._sse("[DONE]")
        log_event("stream_end", id=rid, api="openai_chat", step=idx, kind=step["kind"], tool=name)

    # ------------------------------------------------------- openai responses
    def openai_responses(self, rid, path, body):
        main, why = classify_responses(body)
        tools = body.get("tools") or []
        tnames = [t.get("name") or t.get("type") for t in tools]
        inp = body.get("input") or []
        last = ""
        has_out = False
        if isinstance(inp, list):
            for it in reversed(inp):
                if it.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                    has_out = True
                    break
                if it.get("role") == "user":
                    c = it.get("content")
                    if isinstance(c, list):
                        last = " ".join(x.get("text", "") for x in c if isinstance(x, dict))
                    else:
                        last = str(c)
                    break
        log_event("request", id=rid, api="openai_responses", path=path, main=main, why=why,
                  model=body.get("model"), stream=bool(body.get("stream")), ntools=len(tools),
                  tools=tnames[:30], after_tool=has_out, last_user=last[-160:])
        if not main:
            return self.responses_stream(rid, -1, {"kind": "text", "text": "Fake title", "duration": 0},
                                         body, aux=True)
        idx, step = next_step(tool_result_responses(body), rid)
        if step["kind"] == "error":
            return self.error_response(rid, "openai_responses", step["status"], idx)
        if step["kind"] == "limit":
            return self.limit_response(rid, "openai_responses", step, idx)
        return self.responses_stream(rid, idx, step, body)

    def responses_stream(self, rid, idx, step, body, aux=False):
        kind = step["kind"]
        resp_id = "resp_" + uuid.uuid4().hex[:20]
        model = body.get("model", "fake-model")
        tools = body.get("tools") or []
        by_name = {(t.get("name") or t.get("type")): t for t in tools}
        self._sse_start()
        base = {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model,
                "status": "in_progress", "output": []}
        self._sse({"type": "response.created", "response": base}, "response.created")
        if not aux:
            log_event("first_byte", id=rid, api="openai_responses", step=idx, kind=kind)
        out_index = 0
        tool_used = None

        def text_item(text, chunks, delay):
            nonlocal out_index
            mid = "msg_" + uuid.uuid4().hex[:16]
            self._sse({"type": "response.output_item.added", "output_index": out_index,
                       "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                                "content": []}}, "response.output_item.added")
            self._sse({"type": "response.content_part.added", "item_id": mid, "output_index": out_index,
                       "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
                      "response.content_part.added")
            for c in chunks:
                if delay:
                    time.sleep(delay)
                self._sse({"type": "response.output_text.delta", "item_id": mid, "output_index": out_index,
                           "content_index": 0, "delta": c}, "response.output_text.delta")
            self._sse({"type": "response.output_text.done", "item_id": mid, "output_index": out_index,
                       "content_index": 0, "text": text}, "response.output_text.done")
            item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
            self._sse({"type": "response.output_item.done", "output_index": out_index, "item": item},
                      "response.output_item.done")
            out_index += 1

        if kind == "text":
            chunks, delay = text_plan(step) if step.get("duration") else ([step["text"]], 0)
            text_item(step["text"], chunks, delay)
        elif kind == "question" and "request_user_input" in by_name and \
                os.environ.get("FAKELLM_CODEX_QUESTION_TOOL", "1") == "1":
            call_id = "call_" + uuid.uuid4().hex[:16]
            args = {"questions": [{
                "id": step["header"].lower(), "header": step["header"], "question": step["question"],
                "options": [{"label": l, "description": d} for l, d in step["options"]]}]}
            item = {"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16], "call_id": call_id,
                    "name": "request_user_input", "arguments": json.dumps(args), "status": "completed"}
            self._sse({"type": "response.output_item.added", "output_index": 0, "item": item},
                      "response.output_item.added")
            self._sse({"type": "response.output_item.done", "output_index": 0, "item": item},
                      "response.output_item.done")
            tool_used = "request_user_input"
        elif kind == "question":
            q = step["question"] + " Options: " + " or ".join(l for l, _ in step["options"]) + "?"
            text_item(q, [q], 0.05)
        elif kind == "plan":
            # Plan mode: a <proposed_plan> block makes the TUI offer "Implement this plan?"
            t = "%s\n\n<proposed_plan>\n%s</proposed_plan>\n" % (step.get("text", ""), step["plan"])
            text_item(t, chunk_text(t, 6), 0.1)
        elif kind == "fetch":
            t = "I have no fetch tool here (%s)." % fetch_url(step)
            text_item(t, [t], 0.05)
        else:
            if step.get("text"):
                text_item(step["text"], [step["text"]], 0.05)
            call_id = "call_" + uuid.uuid4().hex[:16]
            fid = "fc_" + uuid.uuid4().hex[:16]
            item = None
            if kind == "write":
                # codex runs apply_patch through its shell tool and intercepts it
                cmd = "apply_patch <<'EOF'\n%sEOF" % apply_patch_text(step)
            else:
                cmd = step["command"]
            for name in ("shell_command", "exec_command", "shell", "local_shell"):
                if name not in by_name:
                    continue
                props = (by_name[name].get("parameters") or {}).get("properties") or {}
                if name == "local_shell":
                    item = {"type": "local_shell_call", "id": fid, "call_id": call_id, "status": "completed",
                            "action": {"type": "exec", "command": ["bash", "-lc", cmd]}}
                else:
                    if name == "shell":
                        args = {"command": ["bash", "-lc", cmd]}
                    elif name == "exec_command":
                        args = {"cmd": cmd}
                    else:
                        args = {"command": cmd}
                    if "workdir" in props:
                        args["workdir"] = os.environ.get("FAKELLM_WORKDIR") or None
                        if args["workdir"] is None:
                            del args["workdir"]
                    if step.get("escalate"):
                        if "sandbox_permissions" in props:
                            args["sandbox_permissions"] = "require_escalated"
                            args["justification"] = step.get("description", "needs approval")
                        elif "with_escalated_permissions" in props:
                            args["with_escalated_permissions"] = True
                            args["justification"] = step.get("description", "needs approval")
                    if "timeout_ms" in props:
                        args["timeout_ms"] = 120000
                    if "yield_time_ms" in props:
                        args["yield_time_ms"] = 120000
                    item = {"type": "function_call", "id": fid, "call_id": call_id, "name": name,
                            "arguments": json.dumps(args), "status": "completed"}
                tool_used = name
                break
            if item is None:
                text_item("```bash\n%s\n```" % cmd, ["```bash\n%s\n```" % cmd], 0)
            else:
                self._sse({"type": "response.output_item.added", "output_index": out_index, "item": item},
                          "response.output_item.added")
                self._sse({"type": "response.output_item.done", "output_index": out_index, "item": item},
                          "response.output_item.done")
                out_index += 1
        done = dict(base)
        done["status"] = "completed"
        done["usage"] = {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": 60, "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": 1260}
        self._sse({"type": "response.completed", "response": done}, "response.completed")
        if aux:
            log_event("aux_response", id=rid, api="openai_responses")
        else:
            log_event("stream_end", id=rid, api="openai_responses", step=idx, kind=kind, tool=tool_used)

    # ----------------------------------------------------------------- gemini
    def gemini(self, rid, path, body):
        model = path.split("/models/")[1].split(":")[0]
        method = path.rsplit(":", 1)[1]
        main, why = classify_gemini(path, body)
        fdecls = []
        for t in body.get("tools") or []:
            for fd in t.get("functionDeclarations") or []:
                fdecls.append(fd.get("name"))
        last = ""
        after_tool = False
        for c in reversed(body.get("contents") or []):
            if c.get("role") == "user":
                parts = c.get("parts") or []
                if any("functionResponse" in p for p in parts):
                    after_tool = True
                last = " ".join(p.get("text", "") for p in parts if isinstance(p, dict))
                break
        log_event("request", id=rid, api="gemini", path=path, main=main, why=why, model=model,
                  method=method, ntools=len(fdecls), after_tool=after_tool, last_user=last[-160:])
        if method == "countTokens":
            return self._json(200, {"totalTokens": 1000})
        if method == "embedContent":
            return self._json(200, {"embedding": {"values": [0.0] * 8}})
        if not main:
            # Aux calls (next-speaker check, loop detection, routing, titles) often
            # ask for JSON; one object satisfying all known schemas.
            txt = json.dumps({"reasoning": "fakellm aux answer", "next_speaker": "user",
                              "model_choice": "flash", "unproductive_state_confidence": 0.0,
                              "confidence": 0.0, "title": "Fake session"})
            resp = {"candidates": [{"content": {"role": "model", "parts": [{"text": txt}]},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                                      "totalTokenCount": 20}, "modelVersion": model}
            if method == "streamGenerateContent":
                self._sse_start()
                self._sse(resp)
            else:
                self._json(200, resp)
            log_event("aux_response", id=rid, api="gemini")
            return
        idx, step = next_step(tool_result_gemini(body) if after_tool else None, rid)
        kind = step["kind"]
        if kind == "error":
            return self.error_response(rid, "gemini", step["status"], idx)
        if step["kind"] == "limit":
            return self.limit_response(rid, "gemini", step, idx)
        self._sse_start()

        def cand(parts, finish=None):
            c = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                c["finishReason"] = finish
            return {"candidates": [c], "usageMetadata": {"promptTokenCount": 1200,
                    "candidatesTokenCount": 20, "totalTokenCount": 1220}, "modelVersion": model,
                    "responseId": "resp_" + rid}
        first = True
        tool_used = None
        if kind == "text":
            chunks, delay = text_plan(step)
            for i, c in enumerate(chunks):
                if not first:
                    time.sleep(delay)
                self._sse(cand([{"text": c}], "STOP" if i == len(chunks) - 1 else None))
                if first:
                    log_event("first_byte", id=rid, api="gemini", step=idx, kind=kind)
                    first = False
        elif kind == "question":
            q = step["question"] + " Options: " + " or ".join(l for l, _ in step["options"]) + "?"
            if "ask_user" in fdecls:
                tool_used = "ask_user"
                self._sse(cand([{"functionCall": {"name": "ask_user", "args": {"questions": [{
                    "question": step["question"], "header": step["header"], "type": "choice",
                    "multiSelect": False,
                    "options": [{"label": l, "description": d} for l, d in step["options"]]}]}}}], "STOP"))
            else:
                self._sse(cand([{"text": q}], "STOP"))
            log_event("first_byte", id=rid, api="gemini", step=idx, kind=kind)
        elif kind in ("write", "fetch", "plan"):
            parts = []
            if step.get("text"):
                parts.append({"text": step["text"] + "\n"})
            if kind == "write" and "write_file" in fdecls:
                tool_used = "write_file"
                args = {"file_path": workdir_path(step["path"]), "content": step["content"]}
            elif kind == "fetch" and "web_fetch" in fdecls:
                tool_used = "web_fetch"
                args = {"prompt": "Summarize %s" % fetch_url(step)}
            elif kind == "plan" and "exit_plan_mode" in fdecls:
                tool_used = "exit_plan_mode"
                args = {"plan_filename": step.get("plan_file", "plan.md")}
            else:
                args = None
                parts.append({"text": "(no %s tool offered)" % kind})
            if args is not None:
                parts.append({"functionCall": {"name": tool_used, "args": args}})
            self._sse(cand(parts, "STOP"))
            log_event("first_byte", id=rid, api="gemini", step=idx, kind=kind)
        else:
            parts = []
            if step.get("text"):
                parts.append({"text": step["text"] + "\n"})
            if "run_shell_command" in fdecls:
                tool_used = "run_shell_command"
                parts.append({"functionCall": {"name": "run_shell_command", "args": {
                    "command": step["command"], "description": step.get("description", "")}}})
            else:
                parts.append({"text": "```bash\n%s\n```" % step["command"]})
            self._sse(cand(parts, "STOP"))
            log_event("first_byte", id=rid, api="gemini", step=idx, kind=kind)
        log_event("stream_end", id=rid, api="gemini", step=idx, kind=kind, tool=tool_used)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=int(os.environ.get("FAKELLM_PORT", "0")))
    ap.add_argument("--scenario", default=os.environ.get("FAKELLM_SCENARIO", "idle"))
    ap.add_argument("--log", default=os.environ.get("FAKELLM_LOG"))
    ap.add_argument("--port-file", default=os.environ.get("FAKELLM_PORT_FILE"),
                    help="write the bound port here (useful with --port 0)")
    ap.add_argument("--dump-dir", default=os.environ.get("FAKELLM_DUMP_DIR"))
    a = ap.parse_args()
    if a.scenario not in SCENARIOS:
        sys.exit("unknown scenario %r; known: %s" % (a.scenario, ", ".join(SCENARIOS)))
    STATE["scenario"] = a.scenario
    STATE["log_path"] = a.log
    STATE["dump_dir"] = a.dump_dir
    srv = Server(("127.0.0.1", a.port), Handler)  # loopback only, by design
    port = srv.server_address[1]
    STATE["server"] = srv
    STATE["port"] = port
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(a.port_file + ".tmp", a.port_file)
    log_event("server_start", port=port, scenario=a.scenario, pid=os.getpid())
    try:
        srv.serve_forever(poll_interval=0.2)
        if STATE.get("closing"):
            # /_ctl/close: stop listening; new connections are refused from now on
            srv.server_close()
            log_event("listener_closed", port=port)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
