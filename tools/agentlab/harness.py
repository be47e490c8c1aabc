#!/usr/bin/env python3
"""harness - drive REAL coding-agent CLIs in tmux against fakellm and record.

Subcommands
  record  --agent A --scenario S [--size COLSxROWS] [--via WRAPPER] [--out DIR]
          [--corpus DIR | --no-publish]
          own tmux server `tmux -L acc-A-S-COLSxROWS`; the full recording goes to
          DIR (default $ACC_TMP/recordings/A/S@COLSxROWS/), then labels.json,
          meta.json, pane.cast and procs.jsonl are copied to
          CORPUS/A/S@COLSxROWS/ (default CORPUS: the repository's tests/corpus).
          --via starts the agent behind a wrapper and names the case S~WRAPPER:
            ssh         `ssh localhost` to a private sshd on 127.0.0.1 (its own host
                        key and authorized_keys), whose remote command cds into the
                        work dir and runs the agent with the case's environment
            script      `~/run-agent.sh`, a #!/bin/sh script that runs the agent as
                        a child (not exec): the tree shows `sh run-agent.sh` above it
            script-ssh  the same script, running the agent through `ssh localhost`
            tend-run    `tend run -- AGENT`: tend's PTY relay, which answers the
                        agent's OSC 7501 query, so that an agent speaking the
                        Program Status Protocol reports its state into the pane's
                        bytes (pane.cast); the tend binary is $ACC_TEND (default:
                        the repository's target/release/tend, else `tend` on PATH)
            tend-run-ssh  `tend run -- ssh localhost …` (as ssh, behind the relay)
  case    --agent A --scenario S --socket NAME --out DIR [--via WRAPPER]
          same flow, but as one window of an existing shared tmux server
          (used by run.sh to run several cases under one server)
  replay  --from RECDIR --socket NAME --out DIR
          a window whose pane plays RECDIR/pane.cast back (no agent, no server);
          the window gets the recording's size, and asciicast resize events
          ("r") in the cast are applied at their times
  list    [--cases]  print agents and scenarios (JSON), or with --cases one
          "agent scenario" line per case
  scrub   DIR...  replace machine paths by same-length placeholders (record does it)

Per case directory
  meta.json        agent, scenario, versions, t0 (epoch), size, pane id, ...
  pane.cast        asciinema v2 cast of the raw pane output (tmux pipe-pane -O)
  snapshots.jsonl  capture-pane -p -e -J every 1 s (+ alternate_on, cursor, cmd, title,
                   size [cols, rows])
  procs.jsonl      process tree under the pane (+ adopted daemons) every 1 s
  remote_procs.jsonl  with --via ssh/script-ssh: the processes sshd started for the
                   case (the agent behind ssh, out of the pane's tree) every 1 s
  fakellm.jsonl    fakellm ground-truth log
  events.jsonl     driver log: keys sent, screens seen, server events waited on;
                   events carrying "label" define the expected state timeline
  labels.json      derived by labels.py from events.jsonl (+ pane.cast)

Environment knobs (all optional):
  AGENTS_DIR (default /opt/agents)  where setup.sh installed the CLIs
  ACC_TMP    (default /tmp/acc)     per-case HOME and work dirs
  ACC_WIDTH / ACC_HEIGHT (200 / 50)  default window size of a case (record: --size)
  ACC_CORPUS       default corpus folder for record (the repository's tests/corpus)
  ACC_SCRUB=0      keep machine paths in what `record` writes
  ACC_KEEP_TMP=1   keep the per-case scratch dir (agent logs, transcripts) after the case
  ACC_VERSION_TAG=1  name the case S-vVERSION[~VIA]@COLSxROWS (VERSION: the installed
                   agent's, from its package): recordings of a newer version of an agent
                   already in the corpus, kept apart from the earlier version's
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
AGENTS_DIR = os.environ.get("AGENTS_DIR", "/opt/agents")
ACC_TMP = os.environ.get("ACC_TMP", "/tmp/acc")
WIDTH = int(os.environ.get("ACC_WIDTH", "200"))
HEIGHT = int(os.environ.get("ACC_HEIGHT", "50"))
PY = sys.executable or "python3"

BASE_SCENARIOS = ["idle", "working_then_done", "approval", "question", "error", "long_tool", "exit"]
NEW_SCENARIOS = ["deny", "esc_stream", "ctrlc_stream", "esc_tool", "ctrlc_tool", "multi_turn", "resize",
                 "approval_edit", "approval_fetch", "plan", "long_output",
                 "error_429", "error_overload", "error_401", "error_conn", "background",
                 "limit", "limit_weekly", "limit_resume"]
SCENARIOS = BASE_SCENARIOS + NEW_SCENARIOS
ERROR_SCENARIOS = ("error", "error_429", "error_overload", "error_401")
# a plan's usage limit (fakellm limit_response): the agent stops and says when
# the limit resets; limit_resume's reset comes during the case, and the driver
# types "continue" after it, as a user would (or tend's resume)
LIMIT_SCENARIOS = ("limit", "limit_weekly", "limit_resume")
TOOL_PREAPPROVED = ("long_tool", "esc_tool", "ctrlc_tool", "background")
# what an agent lacks (see NOTES.md, "Scenarios an agent does not have")
UNSUPPORTED = {
    "aider": {"approval_fetch": "aider has no web-fetch tool the model can call (only the user's /web command)",
              "plan": "aider has no plan mode with an approval dialog"},
    "codex": {"approval_fetch": "codex has no fetch tool (only a hosted web_search, not run locally)"},
    # Pi 0.73 runs every tool without asking ("No permission popups", its
    # README) and has no question tool and no plan mode (both only through
    # extensions)
    "pi": {k: "Pi has no approval dialogs: its tools run without asking (README: 'No permission popups')"
           for k in ("approval", "deny", "approval_edit", "approval_fetch")} | {
        "question": "Pi has no question tool (only through an extension)",
        "plan": "Pi has no plan mode (README: 'No plan mode')"},
    "grok": {"question": "Grok CLI 0.0.34 has no question tool",
             "plan": "Grok CLI 0.0.34 has no plan mode",
             "approval_fetch": "Grok CLI 0.0.34 has no web-fetch tool"},
    "vibe": {"approval_edit": "Mistral Vibe 3.0 starts in 'accept edits' mode: write_file runs unasked",
             "approval_fetch": "Mistral Vibe 3.0 has no web-fetch tool",
             "plan": "Mistral Vibe 3.0 has no plan dialog recorded here",
             "question": "Mistral Vibe 3.0's ask_user_question takes another argument shape than fakellm sends: no dialog comes up (not recorded yet)"},
    "continue": {"approval_fetch": "Continue CLI 1.5.47 runs its Fetch tool without asking (permission allow)",
                 "plan": "Continue CLI 1.5.47 has no plan mode with an approval dialog"},
}
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CORPUS = os.environ.get("ACC_CORPUS", os.path.join(REPO, "tests", "corpus"))
CORPUS_FILES = ("labels.json", "meta.json", "pane.cast", "procs.jsonl")
AGENTS = ["claude", "aider", "codex", "gemini", "opencode", "kilo", "qwen", "pi", "grok", "continue", "kimi", "vibe",
          "cline"]
# what `--via` can put between the pane's shell and the agent (see NOTES.md,
# "Behind a wrapper"); the case is then named `<scenario>~<via>`.  tend-run
# and tend-run-ssh put tend's own relay (`tend run --`) in front of the agent
# or of ssh: the agent's OSC 7501 reports are then in the recording
VIAS = ("ssh", "script", "script-ssh", "tend-run", "tend-run-ssh")


def tend_binary():
    """The `tend` that --via tend-run puts in front of the agent."""
    t = os.environ.get("ACC_TEND")
    if t:
        return os.path.abspath(t)
    built = os.path.join(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")),
                         "target", "release", "tend")
    return built if os.path.exists(built) else (shutil.which("tend") or "tend")
SSHD = "/usr/sbin/sshd"

FAKE_ANTHROPIC_KEY = "sk-ant-api03-" + "fakefakefake" * 7 + "AAAAAAAA-0123456789abcdefghijAA"

PROMPTS = {
    "working_then_done": "Write a short poem about tmux.",
    "approval": "Clean the build directory.",
    "question": "Set up the new service.",
    "error": "Write a short poem about tmux.",
    "long_tool": "Run the long command.",
    "deny": "Clean the build directory.",
    "esc_stream": "Write a long poem about terminals.",
    "ctrlc_stream": "Write a long poem about terminals.",
    "esc_tool": "Run the long command.",
    "ctrlc_tool": "Run the long command.",
    "multi_turn": ["Write a haiku about tmux.", "Now one about panes.", "And one about windows."],
    "resize": "Write a long poem about terminals.",
    "approval_edit": "Create hello.py that prints hello.",
    "approval_fetch": "Summarize the project docs page.",
    "plan": "Plan how to add a hello command.",
    "long_output": "List 150 numbered tips about tmux.",
    "error_429": "Write a short poem about tmux.",
    "error_overload": "Write a short poem about tmux.",
    "error_401": "Write a short poem about tmux.",
    "error_conn": "Write a short poem about tmux.",
    "background": "Run the long command in the background.",
    "limit": "Write a short poem about tmux.",
    "limit_weekly": "Write a short poem about tmux.",
    "limit_resume": "Write a short poem about tmux.",
}


# ----------------------------------------------------------------- profiles

def base_env(home, run_id):
    path = ":".join([
        os.path.join(AGENTS_DIR, "node_modules", ".bin"),
        os.path.join(AGENTS_DIR, "venv", "bin"),
        "/usr/local/bin", "/usr/bin", "/bin"])
    return {
        "PATH": path, "HOME": home, "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
        "TERM": "tmux-256color", "COLORTERM": "truecolor", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "PS1": "acc$ ", "ACC_RUN_ID": run_id, "TZ": "UTC",
        # generic: no pagers in tool output
        "PAGER": "cat", "GIT_PAGER": "cat",
    }


def setup_claude(home, work, port, scenario):
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    ver = agent_version("claude") or "2.1.332"
    cfg = {
        "hasCompletedOnboarding": True, "lastOnboardingVersion": ver, "lastReleaseNotesSeen": ver,
        "theme": "dark", "numStartups": 3, "autoUpdates": False,
        "customApiKeyResponses": {"approved": [FAKE_ANTHROPIC_KEY[-20:]], "rejected": []},
        "projects": {work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                            "allowedTools": []}},
        "bypassPermissionsModeAccepted": True,
        # dialogs/nudges observed with 2.1.332 (keys learned by answering them once)
        "hasSeenAutoDefaultNotice": True, "hasSeenAutoDefaultNudge": True,
        "hasResetAutoModeOptInForDefaultOffer": True, "opusProMigrationComplete": True,
        "officialMarketplaceAutoInstallAttempted": True, "officialMarketplaceAutoInstalled": False,
        "officialMarketplaceAutoInstallNextRetryTime": 4102444800000,
        "lastClawdEntranceVersion": ver, "migrationVersion": 15,
    }
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    settings = {"theme": "dark", "permissions": {"defaultMode": "default"},
                "skipDangerousModePermissionPrompt": True}
    if scenario in TOOL_PREAPPROVED:
        # --dangerously-skip-permissions is refused when running as root, so the
        # long command is pre-approved with a permission rule instead
        settings["permissions"]["allow"] = ["Bash"]
    if scenario == "approval_fetch":
        # the domain-safety preflight would ask a remote service about 127.0.0.1
        settings["skipWebFetchPreflight"] = True
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump(settings, f, indent=1)
    env = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
        "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY,
        "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
        "DISABLE_FEEDBACK_COMMAND": "1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
        "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
        # bounded retries so the error scenario ends (default is 10 with backoff)
        "CLAUDE_CODE_MAX_RETRIES": os.environ.get("ACC_CLAUDE_MAX_RETRIES", "4"),
    }
    if scenario in ("approval_fetch", "plan"):
        # 2.1.332 defers WebFetch / ExitPlanMode behind ToolSearch; offer them directly
        env["ENABLE_TOOL_SEARCH"] = "false"
    if scenario in LIMIT_SCENARIOS:
        # Claude Code draws its own usage-limit screen ("You've hit your
        # 5-hour limit · resets 3pm") only for a claude.ai subscriber or a
        # gateway sign-in; an API key gets "API Error: Request rejected (429)".
        # A bearer token whose `aud` is "claude-gateway" with a custom
        # ANTHROPIC_BASE_URL is a gateway sign-in (see NOTES.md, "Plan limits")
        del env["ANTHROPIC_API_KEY"]
        env["ANTHROPIC_AUTH_TOKEN"] = gateway_token()
    return env, "claude"


def gateway_token():
    """An unsigned JWT saying `aud: claude-gateway` (Claude Code reads the
    claim to tell a gateway bearer; the fake server checks nothing)."""
    import base64

    def b64(obj):
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return "%s.%s.%s" % (b64({"alg": "none", "typ": "JWT"}),
                         b64({"aud": "claude-gateway", "sub": "acc-user", "iat": 1700000000, "exp": 4102444800}),
                         "fakesig")


def setup_codex(home, work, port, scenario):
    d = os.path.join(home, ".codex")
    os.makedirs(d, exist_ok=True)
    approval = "on-request"
    sandbox = "workspace-write"
    if scenario == "approval_edit":
        # on-request auto-approves patches inside a writable workspace; with a
        # read-only sandbox the patch needs the user's approval
        # (approval_policy = "untrusted" is refused by 0.171: "no longer supported")
        sandbox = "read-only"
    toml = f'''# written by agentlab/harness.py
model = "gpt-5.1-codex"
model_provider = "fakellm"
approval_policy = "{approval}"
sandbox_mode = "{sandbox}"
check_for_update_on_startup = false

[model_providers.fakellm]
name = "fakellm"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "FAKELLM_API_KEY"
wire_api = "responses"
request_max_retries = 3
stream_max_retries = 3

[projects."{work}"]
trust_level = "trusted"

[analytics]
enabled = false

[feedback]
enabled = false
'''
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write(toml)
    env = {"FAKELLM_API_KEY": "sk-fake-codex", "CODEX_HOME": d, "NO_UPDATE_NOTIFIER": "1"}
    cmd = "codex"
    if scenario in TOOL_PREAPPROVED:
        cmd = "codex --dangerously-bypass-approvals-and-sandbox"
    return env, cmd


def setup_gemini(home, work, port, scenario):
    d = os.path.join(home, ".gemini")
    os.makedirs(d, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                    "enableAutoUpdateNotification": False,
                    # bounded retries so the error scenario ends (default 10, backoff 5s..30s)
                    "maxAttempts": int(os.environ.get("ACC_GEMINI_MAX_ATTEMPTS", "4"))},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "ui": {"theme": "Default"},
    }
    if scenario == "plan":
        # exit_plan_mode needs an existing plan file in the plans directory; keep
        # it inside the project (plans/) and write the plan there beforehand
        settings["general"]["plan"] = {"directory": "plans"}
        os.makedirs(os.path.join(work, "plans"), exist_ok=True)
        with open(os.path.join(work, "plans", "hello-plan.md"), "w") as f:
            f.write("# Plan: add a hello command\n\n1. Create hello.py with a main() that prints hello.\n"
                    "2. Add a short usage note to README.md.\n3. Run python3 hello.py to check the output.\n")
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump(settings, f, indent=1)
    env = {"GEMINI_API_KEY": "fake-gemini-key",
           "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port,
           "NO_UPDATE_NOTIFIER": "1"}
    cmd = "gemini"
    if scenario in TOOL_PREAPPROVED:
        cmd = "gemini --yolo"
    return env, cmd


def setup_aider(home, work, port, scenario):
    conf = "\n".join([
        "model: openai/gpt-4o",
        "check-update: false",
        "show-release-notes: false",
        "analytics-disable: true",
        "gitignore: false",
        "auto-commits: false",
        "show-model-warnings: false",
        "",
    ])
    with open(os.path.join(home, ".aider.conf.yml"), "w") as f:
        f.write(conf)
    # aider downloads litellm's model price table at start (24h cache); pre-fill the
    # cache from the copy bundled with litellm so it never reaches the network.
    cache = os.path.join(home, ".aider", "caches")
    os.makedirs(cache, exist_ok=True)
    import glob
    src = glob.glob(os.path.join(AGENTS_DIR, "venv", "lib", "python3*", "site-packages", "litellm",
                                 "model_prices_and_context_window_backup.json"))
    if src:
        shutil.copy(src[0], os.path.join(cache, "model_prices_and_context_window.json"))
    env = {"OPENAI_API_BASE": "http://127.0.0.1:%d/v1" % port, "OPENAI_API_KEY": "sk-fake-aider",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_ANALYTICS_DISABLE": "true",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return env, "aider"


def setup_opencode(home, work, port, scenario):
    """OpenCode (opencode-ai): a custom OpenAI-compatible provider in
    ~/.config/opencode/opencode.json; every tool asks (permission "ask")."""
    d = os.path.join(home, ".config", "opencode")
    os.makedirs(d, exist_ok=True)
    perm = "allow" if scenario in TOOL_PREAPPROVED else "ask"
    # a plan limit is OpenCode Go's (fakellm FAKELLM_CHAT_LIMIT=opencode_go):
    # the provider is named `opencode-go`, the one whose limit OpenCode's TUI
    # shows as a "Go limit reached" dialog
    prov = "opencode-go" if scenario in LIMIT_SCENARIOS else "fakellm"
    cfg = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False, "share": "disabled",
        "model": prov + "/fake-model", "small_model": prov + "/fake-model",
        "provider": {prov: {
            "npm": "@ai-sdk/openai-compatible", "name": prov,
            "options": {"baseURL": "http://127.0.0.1:%d/v1" % port, "apiKey": "sk-fake-opencode"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                      "limit": {"context": 128000, "output": 4096}}}}},
        "enabled_providers": [prov],
        "permission": {"bash": perm, "edit": perm, "webfetch": perm},
        "lsp": False, "formatter": False,
    }
    with open(os.path.join(d, "opencode.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    env = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
           "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
           "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_ENABLE_QUESTION_TOOL": "1",
           "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1"}
    return env, "opencode"


def setup_kilo(home, work, port, scenario):
    """Kilo Code (@kilocode/cli, an OpenCode fork): the same custom
    OpenAI-compatible provider as OpenCode's, in ~/.config/kilo/kilo.json;
    only that provider is enabled (the built-in Kilo Gateway is not), every
    tool asks (permission "ask")."""
    d = os.path.join(home, ".config", "kilo")
    os.makedirs(d, exist_ok=True)
    perm = "allow" if scenario in TOOL_PREAPPROVED else "ask"
    cfg = {
        "$schema": "https://app.kilo.ai/config.json",
        "autoupdate": False, "share": "disabled",
        "model": "fakellm/fake-model", "small_model": "fakellm/fake-model",
        "provider": {"fakellm": {
            "npm": "@ai-sdk/openai-compatible", "name": "fakellm",
            "options": {"baseURL": "http://127.0.0.1:%d/v1" % port, "apiKey": "sk-fake-kilo"},
            "models": {"fake-model": {"name": "Fake Model", "tool_call": True,
                                      "limit": {"context": 128000, "output": 4096}}}}},
        "enabled_providers": ["fakellm"], "disabled_providers": ["kilo"],
        "permission": {"bash": perm, "edit": perm, "webfetch": perm},
        "lsp": False, "formatter": False,
        # under load the first prompt's snapshot (a shadow git repo) takes so
        # long that Kilo asks "Do you want to disable Snapshots for this
        # repository?" before it starts the turn
        "snapshot": False,
    }
    with open(os.path.join(d, "kilo.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    env = {"KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1",
           "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1",
           "KILO_DISABLE_SHARE": "1", "KILO_ENABLE_QUESTION_TOOL": "1",
           "KILO_DISABLE_CODEBASE_INDEXING": "1", "KILO_DISABLE_SESSION_INGEST": "1",
           "KILO_DISABLE_PRESENCE": "1", "KILO_DISABLE_EXTERNAL_SKILLS": "1",
           "KILO_DISABLE_CLAUDE_CODE": "1", "KILO_TELEMETRY_LEVEL": "off",
           "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1"}
    return env, "kilo"


def setup_qwen(home, work, port, scenario):
    """Qwen Code: OpenAI auth against fakellm (env + ~/.qwen/settings.json)."""
    d = os.path.join(home, ".qwen")
    os.makedirs(d, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "model": {"name": "fake-model"},
        # after each turn a background agent extracts "memories" with a request
        # that offers tools (it would read as the next turn); off
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
        "modelProviders": {"openai": [{"id": "fake-model", "name": "fake-model",
                                       "baseUrl": "http://127.0.0.1:%d/v1" % port,
                                       "envKey": "OPENAI_API_KEY"}]},
        "ui": {"theme": "Default"},
        # Qwen Code 0.24 starts in "Auto mode" (an LLM classifier approves or
        # blocks each tool call: no approval dialog, and the classifier's
        # request would take a scenario step); the mode users get when they
        # leave it is "default" (ask). 0.15 asks already.
        "tools": {"approvalMode": "default"},
    }
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump(settings, f, indent=1)
    env = {"OPENAI_API_KEY": "sk-fake-qwen", "OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % port,
           "OPENAI_MODEL": "fake-model", "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1",
           # it opens a warm-up connection to the provider's default URL at start
           # (skipped for a custom base URL; off anyway)
           "QWEN_CODE_DISABLE_PRECONNECT": "1"}
    cmd = "qwen"
    if scenario in TOOL_PREAPPROVED:
        cmd = "qwen --yolo"
    return env, cmd


def chatgpt_token():
    """An unsigned JWT as a ChatGPT sign-in's access token: Pi's Codex
    provider reads the account id from its `https://api.openai.com/auth`
    claim (the fake server checks nothing)."""
    import base64

    def b64(obj):
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()
    return "%s.%s.%s" % (b64({"alg": "none", "typ": "JWT"}),
                         b64({"https://api.openai.com/auth": {"chatgpt_account_id": "acc-fakellm",
                                                              "chatgpt_plan_type": "pro"},
                              "sub": "acc-user", "iat": 1700000000, "exp": 4102444800}),
                         "fakesig")


def setup_pi(home, work, port, scenario):
    """Pi (@mariozechner/pi-coding-agent): a custom provider in
    ~/.pi/agent/models.json speaking openai-completions.  A plan limit is a
    ChatGPT sign-in's instead (Pi's `openai-codex-responses` API, the one its
    /login ChatGPT provider uses, with a ChatGPT-style bearer): fakellm's
    Codex usage_limit_reached, which Pi words itself."""
    d = os.path.join(home, ".pi", "agent")
    os.makedirs(d, exist_ok=True)
    limit = scenario in LIMIT_SCENARIOS
    models = {"providers": {"fakellm": {
        "baseUrl": "http://127.0.0.1:%d%s" % (port, "" if limit else "/v1"),
        "api": "openai-codex-responses" if limit else "openai-completions",
        "apiKey": chatgpt_token() if limit else "sk-fake-pi",
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False, "input": ["text"],
                    "contextWindow": 128000, "maxTokens": 4096,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}
    with open(os.path.join(d, "models.json"), "w") as f:
        json.dump(models, f, indent=1)
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump({"defaultProvider": "fakellm", "defaultModel": "fake-model",
                   "quietStartup": False, "collapseChangelog": True}, f, indent=1)
    env = {"PI_SKIP_VERSION_CHECK": "1", "PI_OFFLINE": "1", "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1"}
    return env, "pi --provider fakellm --model fake-model"


def setup_grok(home, work, port, scenario):
    """Grok CLI (@vibe-kit/grok-cli): the OpenAI SDK against fakellm, base URL
    and key in ~/.grok/user-settings.json (and env).  The model is not named
    grok-*, so no xAI search parameters are sent.  Shell commands and file
    writes ask (no auto-edit)."""
    d = os.path.join(home, ".grok")
    os.makedirs(d, exist_ok=True)
    settings = {"apiKey": "sk-fake-grok", "baseURL": "http://127.0.0.1:%d/v1" % port,
                "defaultModel": "fake-model", "models": ["fake-model"], "settingsVersion": 2}
    with open(os.path.join(d, "user-settings.json"), "w") as f:
        json.dump(settings, f, indent=1)
    env = {"GROK_API_KEY": "sk-fake-grok", "GROK_BASE_URL": "http://127.0.0.1:%d/v1" % port,
           "GROK_MODEL": "fake-model", "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1"}
    return env, "grok"


def setup_continue(home, work, port, scenario):
    """Continue CLI (@continuedev/cli, `cn`): a local config.yaml with one
    OpenAI-compatible model on fakellm, passed with --config (no hub login);
    the CLI's own update (a fetch of api.continue.dev, then `npm install -g`)
    off in ~/.continue/index/globalContext.json, its metrics off by env."""
    d = os.path.join(home, ".continue")
    os.makedirs(os.path.join(d, "index"), exist_ok=True)
    with open(os.path.join(d, "index", "globalContext.json"), "w") as f:
        json.dump({"autoUpdateCli": False}, f, indent=1)
    config = os.path.join(d, "config.yaml")
    with open(config, "w") as f:
        f.write("name: acc\nversion: 1.0.0\nschema: v1\nmodels:\n"
                "  - name: fake\n    provider: openai\n    model: fake-model\n"
                "    apiBase: http://127.0.0.1:%d/v1\n    apiKey: sk-fake-continue\n"
                "    roles: [chat, edit, apply]\n" % port)
    env = {"CONTINUE_CLI_ENABLE_TELEMETRY": "0", "CONTINUE_METRICS_ENABLED": "0",
           "CONTINUE_CLI_AUTO_UPDATED": "1", "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1"}
    return env, "cn --config %s" % shlex.quote(config)


def setup_cline(home, work, port, scenario):
    """Cline CLI 3 (npm `cline`, a Bun-compiled binary from @cline/cli-linux-x64):
    one `openai-compatible` provider on fakellm in ~/.cline/data/settings/
    providers.json (what `cline auth -p openai-compatible -k … -m … -b …`
    writes), telemetry and auto-update off and tool auto-approval off in
    global-settings.json, the ClinePass notice marked as shown.  `cline -i`
    starts the TUI, which starts a hub daemon (`cline --cline-hub-daemon`,
    127.0.0.1, its own session) that outlives it; teardown kills it by
    ACC_RUN_ID like other leftovers."""
    d = os.path.join(home, ".cline", "data", "settings")
    os.makedirs(d, exist_ok=True)
    providers = {"version": 1, "lastUsedProvider": "openai-compatible", "modes": {}, "providers": {
        "openai-compatible": {"settings": {
            "provider": "openai-compatible", "apiKey": "sk-fake-cline", "model": "fake-model",
            "baseUrl": "http://127.0.0.1:%d/v1" % port},
            "updatedAt": "2026-12-05T10:00:00.000Z", "tokenSource": "manual"}}}
    with open(os.path.join(d, "providers.json"), "w") as f:
        json.dump(providers, f, indent=2)
    with open(os.path.join(d, "global-settings.json"), "w") as f:
        json.dump({"autoUpdateEnabled": False, "telemetryOptOut": True, "toolAutoApprove": False}, f, indent=2)
    with open(os.path.join(d, "cli-notices.json"), "w") as f:
        json.dump({"shown": {"cline-cli-cline-pass-intro": True}}, f, indent=2)
    env = {"CLINE_NO_AUTO_UPDATE": "1", "CLINE_DISABLE_CLINE_PASS_NOTICE": "1", "DO_NOT_TRACK": "1",
           "DISABLE_TELEMETRY": "1", "NO_UPDATE_NOTIFIER": "1"}
    return env, "cline -i"


def setup_kimi(home, work, port, scenario):
    """Kimi CLI (PyPI kimi-cli 1.51.0, the last release before the package
    became a stub that installs Kimi Code): one `openai_legacy` provider on
    fakellm in ~/.kimi/config.toml, telemetry off there, no update check."""
    d = os.path.join(home, ".kimi")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write('default_model = "fake"\ntelemetry = false\n\n'
                '[providers.fake]\ntype = "openai_legacy"\nbase_url = "http://127.0.0.1:%d/v1"\n'
                'api_key = "sk-fake-kimi"\n\n'
                '[models.fake]\nprovider = "fake"\nmodel = "fake-model"\nmax_context_size = 128000\n' % port)
    env = {"KIMI_CLI_NO_AUTO_UPDATE": "1", "DO_NOT_TRACK": "1"}
    return env, "kimi"


def setup_vibe(home, work, port, scenario):
    """Mistral Vibe (PyPI mistral-vibe 3.0.x, `vibe`: a Rust TUI, vibe-rs, over
    a Python app server): one generic OpenAI-style provider on fakellm in
    ~/.vibe/config.toml, its key from an env var."""
    d = os.path.join(home, ".vibe")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.toml"), "w") as f:
        f.write('active_model = "fake"\nenable_update_checks = false\nenable_telemetry = false\nenable_auto_update = false\n\n[[providers]]\nname = "fake"\n'
                'api_base = "http://127.0.0.1:%d/v1"\napi_key_env_var = "FAKE_VIBE_KEY"\n\n'
                '[[models]]\nname = "fake-model"\nprovider = "fake"\nalias = "fake"\n' % port)
    env = {"FAKE_VIBE_KEY": "sk-fake-vibe", "DO_NOT_TRACK": "1"}
    return env, "vibe"


PROFILES = {
    "claude": dict(
        setup=setup_claude,
        ready=r"\? for shortcuts|mode on",
        approval_screen=r"Do you want to proceed\?",
        question_screen=r"Enter to select",
        approve_keys=[("1", False)],
        answer_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        submit_delay=0.4,
        dialog_screen=r"Do you want to|Would you like to proceed|Exit plan mode\?",
        dialog_approve_keys=[("Enter", False)],
        plan_screen=r"plan mode on",
        conn_error_screen=r"API Error: ",
        interrupted_screen=r"Interrupted · What should Claude do instead\?",
        error_quiet=20, error_max=240,
    ),
    "codex": dict(
        setup=setup_codex,
        # codex first draws a bare composer ("› Ask Codex to do anything" /
        # "? for shortcuts", under load with a logo animation) while it connects
        # to its daemon; keys typed then are kept but Enter / Shift+Tab are lost.
        # Ready = the full footer "← for agents · ? for shortcuts"
        ready=r"← for agents",
        approval_screen=r"Would you like to run the following command\?",
        question_screen=r"Question 1/1",
        approve_keys=[("y", True)],
        answer_keys=[("Enter", False)],
        exit_keys=[("/quit", True), ("Enter", False)],
        pre_question_keys=[("BTab", False)],  # Plan mode: request_user_input only works there
        # typed text arrives in one burst; an Enter soon after it is taken as part
        # of a paste (dropped) more often under load: wait longer before Enter
        submit_delay=1.5,
        # the first Enter after the typed prompt is often dropped right after start:
        # press it again when no request follows (only codex; aider may take
        # seconds before its request, building its repo map, and a second
        # Enter would answer its next y/n prompt)
        submit_retry=True,
        sent_screen=r"Ask Codex to do anything|esc to interrupt",
        ready_settle=1.0,
        dialog_screen=r"Would you like to|Implement this plan\?",
        dialog_approve_keys=[("Enter", False)],
        plan_screen=r"Plan mode",
        conn_error_screen=r"(?m)^■ ",
        interrupted_screen=r"Conversation interrupted",
        # one Ctrl-C while a turn runs opens a menu (the task keeps running):
        # "Task is still running / Choose what happens to the current task."
        # "1. Cancel task" (default) is what the key was meant for
        ctrlc_menu_screen=r"Choose what happens to the current task",
        ctrlc_menu_keys=[("Enter", False)],
        error_quiet=20, error_max=240,
    ),
    "gemini": dict(
        setup=setup_gemini,
        ready=r"Type your message",
        approval_screen=r"Allow execution",
        question_screen=r"Answer Questions",
        approve_keys=[("1", False)],
        answer_keys=[("Enter", False)],
        exit_keys=[("/quit", True), ("Enter", False)],
        submit_delay=0.6,
        dialog_screen=r"Allow execution|Apply this change\?|Ready to start implementation\?|Do you want to proceed\?",
        dialog_approve_keys=[("Enter", False)],
        # approval-mode line: "Shift+Tab to accept edits" (default) -> "auto-accept
        # edits Shift+Tab to plan" -> "plan Shift+Tab to manual"
        plan_screen=r"plan Shift\+Tab to manual",
        conn_error_screen=r"\[API Error|✕ ",
        conn_max=130,  # gave up ~95 s after the prompt ("fetch failed sending request")
        interrupted_screen=r"Request cancelled",
        error_quiet=25, error_max=90,
        # the usage-limit dialog ("Usage limit reached for all Pro models." /
        # "● 1. Keep trying  2. Stop"): 1 keeps trying (its radio list takes
        # the option's digit, as the approval dialog's); the Gemini API's
        # daily quota (limit_weekly) names no reset
        limit_resume_keys=[("1", False)],
        limit_reset_hidden=("limit_weekly",),
    ),
    "aider": dict(
        setup=setup_aider,
        ready=r"(?m)^>\s*$",
        approval_screen=r"Run shell command\?",
        question_screen=r"PostgreSQL or SQLite\?",
        approve_keys=[("y", True), ("Enter", False)],
        answer_keys=[("PostgreSQL", True), ("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        add_output_screen=r"Add command output to the chat\?",
        add_output_keys=[("n", True), ("Enter", False)],
        submit_delay=0.4,
        text_question=True,
        dialog_screen=r"\(Y\)es/\(N\)o",
        dialog_approve_keys=[("y", True), ("Enter", False)],
        deny_keys=[("n", True), ("Enter", False)],
        interrupted_screen=r"KeyboardInterrupt|\^C",
        error_quiet=40, error_max=240,
    ),
}

# What the agents that speak Chat Completions with tools share (OpenCode and
# every agent added after it): fakellm counts only a request that offers
# tools as a turn (their titles and summaries come without), Enter answers a
# question, and each profile below names only what differs.
CHAT_TOOLS = dict(
    answer_keys=[("Enter", False)],
    submit_delay=0.6,
    fake_env={"FAKELLM_CHAT_REQUIRE_TOOLS": "1"},
    error_quiet=30, error_max=200,
)

PROFILES.update({
    "opencode": dict(
        CHAT_TOOLS,
        setup=setup_opencode,
        # a plan limit is OpenCode Go's, which OpenCode retries by itself at
        # its reset (retry-after): limit_resume types nothing
        fake_env={"FAKELLM_CHAT_REQUIRE_TOOLS": "1", "FAKELLM_CHAT_LIMIT": "opencode_go"},
        limit_resumes_itself=True,
        # full-screen opentui on the alternate screen; idle footer "ctrl+p commands"
        ready=r"ctrl\+p commands",
        approval_screen=r"Permission required",
        question_screen=r"esc dismiss",
        approve_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        sent_screen=r"esc interrupt",
        ready_settle=1.0,
        dialog_screen=r"Permission required",
        dialog_approve_keys=[("Enter", False)],
        # the permission dialog's options are "Allow once  Allow always  Reject"
        deny_keys=[("Right", False), ("Right", False), ("Enter", False)],
        interrupted_screen=r"(?i)interrupted|aborted",
        conn_error_screen=r"(?i)error|unable to connect|ECONNREFUSED",
    ),
    # Kilo Code: an OpenCode fork with the same opentui TUI (see NOTES.md)
    "kilo": dict(
        CHAT_TOOLS,
        setup=setup_kilo,
        ready=r"ctrl\+p commands",
        ready_timeout=180,  # 35-80 s to its home screen on the loaded machine
        approval_screen=r"Permission required",
        question_screen=r"esc dismiss",
        approve_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        sent_screen=r"esc interrupt",
        ready_settle=1.0,
        dialog_screen=r"Permission required",
        dialog_approve_keys=[("Enter", False)],
        deny_keys=[("Right", False), ("Right", False), ("Enter", False)],
        # Reject opens a second stage: "△ Reject permission" / "Tell Kilo what
        # to do differently" / "enter confirm  esc cancel"; Enter confirms it
        deny_confirm_screen=r"Tell Kilo what to do differently",
        deny_confirm_keys=[("Enter", False)],
        interrupted_screen=r"(?i)interrupted|aborted",
        conn_error_screen=r"(?i)error|unable to connect|ECONNREFUSED",
    ),
    "qwen": dict(
        CHAT_TOOLS,
        setup=setup_qwen,
        # the input box comes first with the footer "⠋ Initializing..." for up to
        # 4 s more; a prompt typed then is queued ("Press ↑ to edit queued
        # messages") and sent once the footer reads "? for shortcuts"
        # 0.24: the footer reads "⏸ Ask permissions (shift + tab to cycle)"
        # (or "Auto mode …") instead of "? for shortcuts"
        ready=r"\? for shortcuts|\(shift \+ tab to cycle\)",
        approval_screen=r"Allow execution",
        question_screen=r"Enter: (Select|Confirm)|Space/Enter: Toggle",
        approve_keys=[("1", False)],
        exit_keys=[("/quit", True), ("Enter", False)],
        dialog_screen=r"Allow execution|Apply this change\?|Do you want to proceed\?",
        dialog_approve_keys=[("Enter", False)],
        interrupted_screen=r"Request cancelled",
        conn_error_screen=r"\[API Error|✕ ",
        # under load the dialog comes up to 25 s after the tool call's stream end
        # (the tool box and a frozen spinner meanwhile)
        dialog_wait=90,
    ),
    "pi": dict(
        CHAT_TOOLS,
        setup=setup_pi,
        # inline TUI (no alternate screen); ready = the footer's context gauge
        # "0.0%/128k (auto)" (the model name alone also matches the typed
        # command line)
        ready=r"\d%/\d+k",
        # Pi has no approval or question dialogs: tools run without asking
        approval_screen=r"(?!)",
        question_screen=r"(?!)",
        approve_keys=[("Enter", False)],
        exit_keys=[("/quit", True), ("Enter", False)],
        sent_screen=r"to interrupt\)",
        interrupted_screen=r"Operation aborted|Aborted after",
        conn_error_screen=r"(?i)error|Connection",
    ),
    "grok": dict(
        CHAT_TOOLS,
        setup=setup_grok,
        # Ink UI inline on the main screen; the footer under the input box
        # reads "⏸ auto-edit: off (shift + tab)  ≋ fake-model"
        ready=r"auto-edit: (off|on)",
        approval_screen=r"Do you want to proceed with this operation\?",
        question_screen=r"(?!)",  # no question tool
        approve_keys=[("Enter", False)],
        # "/exit" opens the command list and its Enter only picks the entry;
        # the bare word "exit" quits at once (its start-up hint)
        exit_keys=[("exit", True), ("Enter", False)],
        sent_screen=r"esc to interrupt",
        dialog_screen=r"Do you want to proceed with this operation\?",
        dialog_approve_keys=[("Enter", False)],
        # options: Yes / Yes, and don't ask again this session / No / No, with feedback
        deny_keys=[("Down", False), ("Down", False), ("Enter", False)],
        interrupted_screen=r"(?i)interrupted|cancelled|aborted",
        conn_error_screen=r"(?i)error",
    ),
    "continue": dict(
        CHAT_TOOLS,
        setup=setup_continue,
        # inline Ink UI; the input box reads "Ask anything, @ for context, / for
        # slash commands, ! for shell mode" and the footer "◉ Continue CLI"
        ready=r"Ask anything",
        approval_screen=r"Would you like to continue\?",
        # AskQuestion: "? <question>" over the options and "↑/↓ navigate, Enter select"
        question_screen=r"↑/↓ navigate, Enter select",
        # choices "> Continue (tab)" / "Continue + don't ask again (shift+tab)" /
        # "No, and tell Continue what to do differently (esc)"
        approve_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        # text and Enter in one burst do not submit (the box takes the burst
        # as a paste): the Enter comes well after the text
        submit_delay=1.0,
        sent_screen=r"esc to interrupt",
        dialog_screen=r"Would you like to continue\?",
        dialog_approve_keys=[("Enter", False)],
        deny_keys=[("Escape", False)],
        interrupted_screen=r"(?i)interrupted|cancel",
        conn_error_screen=r"(?i)error",
    ),
    "cline": dict(
        CHAT_TOOLS,
        setup=setup_cline,
        # full-screen TUI: the input box "❯ Ask anything..." between two rules,
        # over "fake-model (100) $0.00 … ○ Plan ● Act (Tab)", the folder and
        # "Auto-approve all disabled (Shift+Tab)"
        ready=r"Auto-approve all (disabled|enabled)",
        # "Cline needs permission" / "Approve tool call?" / the tool name / the
        # command / "[y] Approve   [n] Deny"
        approval_screen=r"Approve tool call\?",
        question_screen=r"PostgreSQL",
        approve_keys=[("y", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        dialog_screen=r"Approve tool call\?",
        dialog_approve_keys=[("y", False)],
        deny_keys=[("n", False)],
        interrupted_screen=r"(?i)interrupt|abort|cancel",
        conn_error_screen=r"(?i)error",
    ),
    "kimi": dict(
        CHAT_TOOLS,
        setup=setup_kimi,
        # prompt_toolkit UI inline: an input area between '── input ──' and a
        # rule, over the status line 'agent (fake-model ○)  ~/work … ctrl-x:
        # toggle mode | shift-tab: plan mode'
        ready=r"context: \d+(\.\d+)?%",
        # a box '╭─ approval ─…' with '<Tool> is requesting approval to …', the
        # choices '→ [1] Approve once' … '[4] Reject, tell the model what to do
        # instead' and '▲/▼ select  1/2/3/4 choose  ↵ confirm'
        approval_screen=r"is requesting approval",
        question_screen=r"(?i)PostgreSQL",
        approve_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        sent_screen=r"(?i)esc|interrupt|thinking",
        dialog_screen=r"is requesting approval",
        dialog_approve_keys=[("Enter", False)],
        deny_keys=[("Down", False), ("Down", False), ("Enter", False)],
        interrupted_screen=r"(?i)interrupted|cancel",
        # not a bare "error": the status line shows the case's folder
        # ('…/kimi-error_conn-…/work')
        conn_error_screen=r"Network connection failed|LLM provider error|Request timed out",
    ),
    "vibe": dict(
        CHAT_TOOLS,
        setup=setup_vibe,
        # a '>' prompt between two rules (the upper one ends in the mode,
        # '─ accept edits ─'), the status line '<dir> [PID n] … 0/200k tokens (0%)'
        ready=r"tokens \(\d+%\)",
        # a box 'Permission for the file_system.bash tool (rm *)', the command,
        # '1. Allow once' … '4. Deny', '↑↓/jk navigate  Enter select  Esc reject'
        approval_screen=r"Permission for the",
        question_screen=r"(?i)PostgreSQL",
        approve_keys=[("Enter", False)],
        exit_keys=[("/exit", True), ("Enter", False)],
        sent_screen=r"(?i)esc|interrupt",
        dialog_screen=r"Permission for the",
        deny_keys=[("Escape", False)],
        dialog_approve_keys=[("Enter", False)],
        interrupted_screen=r"(?i)interrupted|cancel",
        conn_error_screen=r"(?i)connection (error|refused)|failed",
    ),
})

_VERSIONS = {}


def case_name(agent, scenario, via, w, h):
    """`S[~VIA]@WxH`, or with ACC_VERSION_TAG=1 `S-vVERSION[~VIA]@WxH`: the
    scenario names have no `-v`, so the corpus tells versions apart by it
    (split.py, detector/tests/corpus.rs)."""
    tag = ""
    if os.environ.get("ACC_VERSION_TAG", "0") == "1":
        ver = agent_version(agent)
        if not ver:
            sys.exit("ACC_VERSION_TAG=1: no installed version of %s under %s" % (agent, AGENTS_DIR))
        tag = "-v" + ver
    return "%s%s%s@%dx%d" % (scenario, tag, "~" + via if via else "", w, h)


def agent_version(agent):
    if agent in _VERSIONS:
        return _VERSIONS[agent]
    v = None
    try:
        if agent in ("aider", "kimi", "vibe"):
            dist = {"aider": "aider-chat", "kimi": "kimi-cli", "vibe": "mistral-vibe"}[agent]
            out = subprocess.run([os.path.join(AGENTS_DIR, "venv", "bin", "python"), "-c",
                                  "import importlib.metadata as m;print(m.version(%r))" % dist],
                                 capture_output=True, text=True, timeout=60).stdout.strip()
        else:
            pkg = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex",
                   "gemini": "@google/gemini-cli", "opencode": "opencode-ai", "kilo": "@kilocode/cli",
                   "qwen": "@qwen-code/qwen-code",
                   # Pi moved to @earendil-works with 1.0 (the old name stopped at 0.73.1)
                   "pi": ("@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"),
                   "grok": "@vibe-kit/grok-cli", "continue": "@continuedev/cli", "cline": "cline"}[agent]
            out = None
            for name in (pkg if isinstance(pkg, tuple) else (pkg,)):
                path = os.path.join(AGENTS_DIR, "node_modules", name, "package.json")
                if os.path.exists(path):
                    with open(path) as f:
                        out = json.load(f)["version"]
                    break
        v = out or None
    except Exception:
        v = None
    _VERSIONS[agent] = v
    return v


# --------------------------------------------------------------------- tmux

class Tmux:
    def __init__(self, socket):
        self.socket = socket

    def run(self, *args, check=True, capture=True):
        r = subprocess.run(["tmux", "-L", self.socket] + list(args), capture_output=capture, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("tmux %s failed: %s" % (" ".join(args), r.stderr.strip()))
        return r.stdout if capture else ""

    def alive(self):
        return subprocess.run(["tmux", "-L", self.socket, "list-sessions"], capture_output=True).returncode == 0


def pane_command(env):
    parts = ["env", "-i"] + ["%s=%s" % (k, v) for k, v in sorted(env.items())] + \
            ["/bin/bash", "--noprofile", "--norc", "-i"]
    # the short sleep lets pipe-pane attach before the shell prints its prompt;
    # exec keeps the shell as the pane's own process (pane_pid)
    return "sleep 0.6; exec " + " ".join(shlex.quote(p) for p in parts)


def ensure_server(tm, width=WIDTH, height=HEIGHT):
    """Create the (shared) server with a placeholder session if not running."""
    if tm.alive():
        return
    subprocess.run(["tmux", "-L", tm.socket, "-f", "/dev/null", "new-session", "-d", "-s", "acc",
                    "-n", "_hold", "-x", str(width), "-y", str(height), "sleep 1000000"], check=True)
    # NB: tmux 3.3a crashes ("server exited unexpectedly") on new-window in a
    # detached session when window-size is "manual"; default-size is enough.
    for opt in (["set", "-g", "default-size", "%dx%d" % (width, height)],
                ["set", "-g", "remain-on-exit", "off"],
                ["set", "-g", "history-limit", "5000"]):
        tm.run(*opt, check=False)


# ------------------------------------------------------------------ procfs

def read_proc(pid):
    d = "/proc/%d" % pid
    try:
        with open(d + "/stat") as f:
            st = f.read()
        rp = st.rindex(")")
        fields = st[rp + 2:].split()
        ppid = int(fields[1])
        state = fields[0]
        pgid, tpgid = int(fields[2]), int(fields[5])
        utime, stime = int(fields[11]), int(fields[12])
        start = int(fields[19])
        try:
            exe = os.readlink(d + "/exe")
        except OSError:
            exe = None
        with open(d + "/comm") as f:
            comm = f.read().rstrip("\n")
        with open(d + "/cmdline", "rb") as f:
            cmdline = [x.decode("utf-8", "replace") for x in f.read().split(b"\0") if x]
        # pgid and tpgid (the terminal's foreground group, absent without a
        # terminal) say who holds the pane: a wrapper such as ssh, or the shell
        return {"pid": pid, "ppid": ppid, "pgid": pgid, "tpgid": tpgid if tpgid > 0 else None,
                "state": state, "exe": exe, "comm": comm, "cmdline": cmdline,
                "cpu_ticks": utime + stime, "start_ticks": start}
    except (OSError, ValueError):
        return None


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def env_has(pid, needle):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return needle in f.read()
    except OSError:
        return False


def proc_tree(root_pid, run_id):
    """Processes under root_pid plus processes that carry ACC_RUN_ID=run_id in
    their environment (daemons that re-parented to init, e.g. codex app-server)."""
    procs = {}
    for pid in all_pids():
        p = read_proc(pid)
        if p:
            procs[pid] = p
    kids = {}
    for p in procs.values():
        kids.setdefault(p["ppid"], []).append(p["pid"])
    out, seen = [], set()

    def walk(pid, depth, origin):
        if pid in seen or pid not in procs:
            return
        seen.add(pid)
        rec = dict(procs[pid])
        rec["depth"] = depth
        rec["origin"] = origin
        out.append(rec)
        for c in sorted(kids.get(pid, [])):
            walk(c, depth + 1, origin)
    walk(root_pid, 0, "pane")
    needle = ("ACC_RUN_ID=%s\0" % run_id).encode()
    for pid in sorted(procs):
        if pid not in seen and procs[pid]["ppid"] not in seen and env_has(pid, needle):
            walk(pid, 0, "adopted")
    return out


def env_tree(needle):
    """Processes carrying `needle` (b"NAME=value\0") in their environment and
    everything below them: the agent that sshd started for a `--via ssh`
    case, outside the pane's tree.  Depth counts from the topmost carrier."""
    procs = {}
    for pid in all_pids():
        p = read_proc(pid)
        if p:
            procs[pid] = p
    kids = {}
    for p in procs.values():
        kids.setdefault(p["ppid"], []).append(p["pid"])
    carriers = {pid for pid in procs if env_has(pid, needle)}
    out, seen = [], set()

    def walk(pid, depth):
        if pid in seen or pid not in procs:
            return
        seen.add(pid)
        rec = dict(procs[pid])
        rec["depth"] = depth
        out.append(rec)
        for c in sorted(kids.get(pid, [])):
            walk(c, depth + 1)
    for pid in sorted(carriers):
        if procs[pid]["ppid"] not in carriers:
            walk(pid, 0)
    return out


def descendants(root):
    """Every process below `root` (by /proc parent links), deepest last."""
    kids = {}
    for pid in all_pids():
        p = read_proc(pid)
        if p:
            kids.setdefault(p["ppid"], []).append(pid)
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


class Sshd:
    """A private sshd on 127.0.0.1 for `--via ssh` (set up as
    tend/tests/remote.rs sets one up): its own host key, an authorized_keys
    holding one fresh client key, and an ssh_config naming it `localhost`, so
    the pane types `ssh -F ~/.ssh/config -t localhost ...`.  Needs
    /usr/sbin/sshd (Debian: openssh-server; its service need not run)."""

    def __init__(self, sshd_dir, home):
        self.dir = sshd_dir
        self.ssh_dir = os.path.join(home, ".ssh")
        self.config = os.path.join(self.ssh_dir, "config")
        self.proc = None
        self.port = None

    def keygen(self, path):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "acc", "-f", path],
                       check=True, capture_output=True)

    def start(self):
        if not os.access(SSHD, os.X_OK):
            raise RuntimeError("--via ssh needs %s (apt-get install openssh-server)" % SSHD)
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.ssh_dir, exist_ok=True)
        host_key = os.path.join(self.dir, "host_key")
        client_key = os.path.join(self.ssh_dir, "id_ed25519")
        self.keygen(host_key)
        self.keygen(client_key)
        shutil.copy(client_key + ".pub", os.path.join(self.dir, "authorized_keys"))
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        d = self.dir
        with open(os.path.join(d, "sshd_config"), "w") as f:
            f.write("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s/authorized_keys\n"
                    "PidFile %s/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                    "PermitRootLogin prohibit-password\nPrintMotd no\nPrintLastLog no\n"
                    # the login shell runs the remote command (`bash -c ...`), and
                    # Debian's bash reads ~/.bashrc when started by sshd at SHLVL
                    # < 2: the session would depend on this machine's root
                    # dotfiles (here a pyenv rehash that waits 60 s on a stale
                    # lock); SHLVL=1 makes bash a nested shell, which skips it
                    "SetEnv SHLVL=1\n"
                    "LogLevel VERBOSE\n" % (self.port, host_key, d, d))
        with open(host_key + ".pub") as f:
            host_pub = f.read().strip()
        known = os.path.join(self.ssh_dir, "known_hosts")
        with open(known, "w") as f:
            f.write("[localhost]:%d,[127.0.0.1]:%d %s\n" % (self.port, self.port, host_pub))
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip() or "root"
        # ssh reads ~ from the password database, not $HOME: absolute paths
        with open(self.config, "w") as f:
            f.write("Host localhost\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n"
                    "  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n"
                    "  StrictHostKeyChecking yes\n  LogLevel ERROR\n" % (self.port, user, client_key, known))
        # sshd refuses to start as root without its privilege separation
        # directory (normally made by the service's unit)
        os.makedirs("/run/sshd", exist_ok=True)
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", os.path.join(d, "sshd_config")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(d, "sshd.log"), "a"))
        end = time.time() + 20
        while time.time() < end:
            r = subprocess.run(["ssh", "-F", self.config, "-o", "BatchMode=yes", "localhost", "true"],
                               stdin=subprocess.DEVNULL, capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.3)
        raise RuntimeError("sshd on port %d does not let the key in: %s" % (
            self.port, open(os.path.join(d, "sshd.log")).read()[-2000:]))

    def stop(self):
        """Stops the listener and every connection it forked, by pid."""
        if not self.proc:
            return
        for pid in descendants(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.kill()
        self.proc.wait()
        self.proc = None


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


# -------------------------------------------------------------------- case

class Case:
    def __init__(self, agent, scenario, outdir, socket, shared, size=None, via=None):
        self.agent, self.scenario, self.outdir = agent, scenario, outdir
        self.via = via  # None, or one of VIAS: what runs between the pane's shell and the agent
        self.sshd = None
        self.wrapper_cmd = None
        self.socket, self.shared = socket, shared
        self.tm = Tmux(socket)
        self.prof = PROFILES.get(agent, {})
        self.run_id = "%s-%s-%s" % (agent, scenario, uuid.uuid4().hex[:8])
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.fake = None
        self.port = None
        self.pane = None
        self.pane_pid = None
        self.agent_pid = None
        self.t0 = None
        self.notes = []
        self.width, self.height = size or (WIDTH, HEIGHT)
        self.size0 = (self.width, self.height)
        self.resizes = []

    # ---- logging
    def ev(self, event, ts=None, **kw):
        ts = time.time() if ts is None else ts
        rec = {"ts": round(ts, 4), "t": round(ts - self.t0, 4) if self.t0 else None, "event": event}
        rec.update(kw)
        with self.lock:
            with open(os.path.join(self.outdir, "events.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")
        return rec

    def label(self, state, reason=None, ts=None, src="key", unc=(0.0, 0.3), resets_at=None, **kw):
        lab = {"state": state}
        if reason:
            lab["reason"] = reason
        if resets_at is not None:
            lab["resets_at"] = resets_at
        return self.ev("label", ts=ts, label=lab, src=src, unc=list(unc), **kw)

    # ---- fakellm
    def start_fake(self):
        portfile = os.path.join(self.tmpdir, "port")
        log = os.path.join(self.outdir, "fakellm.jsonl")
        env = dict(os.environ)
        env["FAKELLM_WORKDIR"] = self.work
        env.update(self.prof.get("fake_env", {}))
        self.fake = subprocess.Popen([PY, os.path.join(HERE, "fakellm.py"), "--port", "0",
                                      "--scenario", self.scenario, "--log", log,
                                      "--port-file", portfile],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.tmpdir, "fakellm.err"), "w"),
                                     env=env)
        for _ in range(100):
            if os.path.exists(portfile):
                self.port = int(open(portfile).read())
                return
            time.sleep(0.05)
        raise RuntimeError("fakellm did not start")

    def server_events(self):
        path = os.path.join(self.outdir, "fakellm.jsonl")
        out = []
        try:
            with open(path) as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
        except OSError:
            pass
        return out

    # ---- screen
    def capture(self, escapes=False):
        args = ["capture-pane", "-p", "-J", "-t", self.pane]
        if escapes:
            args.insert(2, "-e")
        return self.tm.run(*args, check=False)

    def pane_info(self):
        out = self.tm.run("display", "-p", "-t", self.pane,
                          "#{alternate_on}\t#{cursor_x}\t#{cursor_y}\t#{pane_current_command}\t#{pane_dead}"
                          "\t#{pane_title}\t#{pane_width}\t#{pane_height}",
                          check=False).rstrip("\n").split("\t")
        if len(out) < 6:
            return None
        info = {"alt": out[0] == "1", "cursor": [int(out[1] or 0), int(out[2] or 0)], "cmd": out[3],
                "dead": out[4] == "1", "title": out[5]}
        if len(out) >= 8 and out[6].isdigit() and out[7].isdigit():
            info["size"] = [int(out[6]), int(out[7])]
        return info

    def sampler(self):
        snap_f = open(os.path.join(self.outdir, "snapshots.jsonl"), "a")
        proc_f = open(os.path.join(self.outdir, "procs.jsonl"), "a")
        remote_f = open(os.path.join(self.outdir, "remote_procs.jsonl"), "a") if self.sshd else None
        next_snap = time.time()
        last_children = None
        while not self.stop.is_set():
            now = time.time()
            # exit watcher (0.1 s): the agent is the shell's child
            kids = children(self.pane_pid) if self.pane_pid else []
            if last_children is not None and kids != last_children:
                self.ev("pane_children", children=kids, prev=last_children)
            last_children = kids
            if now >= next_snap:
                next_snap += 1.0
                info = self.pane_info() or {}
                screen = self.capture(escapes=True)
                rec = {"ts": round(now, 4), "t": round(now - self.t0, 4)}
                rec.update(info)
                rec["screen"] = screen
                snap_f.write(json.dumps(rec) + "\n")
                snap_f.flush()
                if self.pane_pid:
                    tree = proc_tree(self.pane_pid, self.run_id)
                    proc_f.write(json.dumps({"ts": round(now, 4), "t": round(now - self.t0, 4),
                                             "procs": tree}) + "\n")
                    proc_f.flush()
                if remote_f:
                    remote_f.write(json.dumps({"ts": round(now, 4), "t": round(now - self.t0, 4),
                                               "procs": env_tree(self.remote_needle())}) + "\n")
                    remote_f.flush()
            time.sleep(0.1)
        snap_f.close()
        proc_f.close()
        if remote_f:
            remote_f.close()

    def wait_screen(self, regex, timeout, what, label=None, reason=None, quiet=False):
        rx = re.compile(regex)
        end = time.time() + timeout
        while time.time() < end:
            t = time.time()
            if rx.search(self.capture()):
                self.ev("screen_seen", ts=t, what=what, regex=regex)
                if label:
                    self.label(label, reason, ts=t, src="screen:" + what, unc=(-0.25, 0.0))
                return t
            time.sleep(0.2)
        self.ev("screen_timeout", what=what, regex=regex)
        if not quiet:
            self.notes.append("timeout waiting for screen %s (%s)" % (what, regex))
        return None

    def wait_server(self, pred, timeout, what, since=0, note=True):
        """First fakellm event (from index `since` of the log on) matching pred."""
        end = time.time() + timeout
        while time.time() < end:
            for e in self.server_events()[since:]:
                if pred(e):
                    self.ev("server_seen", what=what, server_event=e)
                    return e
            time.sleep(0.2)
        self.ev("server_timeout", what=what)
        if note:
            self.notes.append("timeout waiting for server %s" % what)
        return None

    def keys(self, seq, purpose):
        """seq: list of (keys, literal) pairs sent in order."""
        t_first = None
        for k, literal in seq:
            args = ["send-keys", "-t", self.pane]
            if literal:
                args.append("-l")
            args.append(k)
            t = time.time()
            self.tm.run(*args, check=False)
            self.ev("keys", keys=k, literal=literal, purpose=purpose)
            t_first = t_first or t
            time.sleep(0.15)
        return t_first

    def n_requests(self):
        return sum(1 for e in self.server_events() if e.get("event") == "request")

    def submit(self, text, label=True, confirm=True):
        """Type text, press Enter.  For agents with submit_retry (codex), the
        Enter must make the agent send a request within 5 s, else Enter is
        pressed again (codex often drops an Enter that arrives right after the
        typed text); the working label goes on the Enter that took effect."""
        n0 = self.n_requests()
        self.keys([(text, True)], "type_prompt")
        time.sleep(self.prof.get("submit_delay", 0.4))
        for attempt in range(3):
            t = time.time()
            self.keys([("Enter", False)], "submit" if attempt == 0 else "submit_again")
            if not self.prof.get("submit_retry"):
                break
            if not confirm:
                # no server to ask (error_conn): the composer's placeholder coming
                # back (or the working line) shows the Enter was taken
                if self.wait_screen(self.prof.get("sent_screen", r"esc to interrupt"), 5,
                                    "submitted", quiet=True) is not None:
                    break
                self.ev("submit_not_taken", attempt=attempt)
                self.notes.append("Enter #%d not taken; pressed again" % (attempt + 1))
                continue
            end = time.time() + 5
            while time.time() < end and self.n_requests() == n0:
                time.sleep(0.1)
            if self.n_requests() > n0:
                break
            self.ev("submit_no_request", attempt=attempt)
            self.notes.append("Enter #%d sent no request; pressed again" % (attempt + 1))
        if label:
            self.label("working", ts=t, src="key:submit")
        return t

    def main_end(self, step):
        return lambda e: e.get("event") == "stream_end" and e.get("step") == step

    # ---- lifecycle
    def setup(self):
        os.makedirs(self.outdir, exist_ok=True)
        for fn in ("events.jsonl", "snapshots.jsonl", "procs.jsonl", "remote_procs.jsonl", "fakellm.jsonl",
                   "pane.cast"):
            p = os.path.join(self.outdir, fn)
            if os.path.exists(p):
                os.unlink(p)
        self.tmpdir = os.path.join(ACC_TMP, self.run_id)
        self.home = os.path.join(self.tmpdir, "home")
        self.work = os.path.join(self.tmpdir, "work")
        os.makedirs(self.home, exist_ok=True)
        os.makedirs(os.path.join(self.work, "build"), exist_ok=True)
        with open(os.path.join(self.work, "README.md"), "w") as f:
            f.write("# demo project\n\nA tiny repository used by the tend agentlab.\n")
        with open(os.path.join(self.work, "build", "app.o"), "w") as f:
            f.write("fake object file\n")
        g = ["git", "-C", self.work]
        subprocess.run(g + ["init", "-q", "-b", "main"], check=True)
        subprocess.run(g + ["config", "user.email", "acc@example.invalid"], check=True)
        subprocess.run(g + ["config", "user.name", "acc"], check=True)
        subprocess.run(g + ["add", "README.md"], check=True)
        subprocess.run(g + ["commit", "-q", "-m", "init"], check=True)
        env = base_env(self.home, self.run_id)
        self.start_fake()
        aenv, self.launch = self.prof["setup"](self.home, self.work, self.port, self.scenario)
        env.update(aenv)
        self.env = env
        if self.via:
            self.setup_via()

    def remote_needle(self):
        return ("ACC_REMOTE_RUN_ID=%s\0" % self.run_id).encode()

    def setup_via(self):
        """The agent behind a wrapper (--via): what the pane's shell is given
        to run goes to self.wrapper_cmd; self.launch stays the agent's own
        command.  Both scripts live in the case's HOME, not in the work repo.

        ssh: sshd forwards no environment, so the remote command is a small
        launcher, ~/remote-agent.sh, that cds into the work dir and runs the
        agent under `env -i` with the case's environment (the fake model
        server's URL, HOME, config) and ssh's own SSH_* variables.  It carries
        ACC_REMOTE_RUN_ID instead of ACC_RUN_ID, so procs.jsonl does not adopt
        it (the pane's tree must show only ssh); the sampler writes it to
        remote_procs.jsonl and teardown ends it by that mark.

        script: ~/run-agent.sh runs the agent (or, for script-ssh, the ssh
        command) as a child, not by exec, so the tree is bash → sh
        run-agent.sh → agent (or ssh)."""
        agent_cmd = self.launch
        if self.via in ("ssh", "script-ssh", "tend-run-ssh"):
            self.sshd = Sshd(os.path.join(self.tmpdir, "sshd"), self.home)
            self.sshd.start()
            renv = {k: v for k, v in self.env.items() if k != "ACC_RUN_ID"}
            renv["ACC_REMOTE_RUN_ID"] = self.run_id
            assigns = " ".join(shlex.quote("%s=%s" % kv) for kv in sorted(renv.items()))
            ssh_vars = " ".join('"%s=${%s}"' % (k, k) for k in ("SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY"))
            remote = os.path.join(self.home, "remote-agent.sh")
            with open(remote, "w") as f:
                f.write("#!/bin/sh\n# run by sshd for the pane's `ssh localhost` (agentlab --via %s):\n"
                        "# sshd forwards no environment, so the case's is set here\n"
                        "cd %s || exit 1\nexec env -i %s %s %s\n"
                        % (self.via, shlex.quote(self.work), assigns, ssh_vars, self.launch))
            os.chmod(remote, 0o755)
            # typed into the pane; bash expands each ~ to the case's HOME
            agent_cmd = "ssh -F ~/.ssh/config -t localhost ~/remote-agent.sh"
            self.ev("sshd", port=self.sshd.port, pid=self.sshd.proc.pid)
        if self.via in ("script", "script-ssh"):
            script = os.path.join(self.home, "run-agent.sh")
            inner = agent_cmd.replace("~/", '"$HOME"/')
            with open(script, "w") as f:
                f.write("#!/bin/sh\n# starts the agent as a child, not by exec (agentlab --via %s)\n"
                        "cd %s || exit 1\n%s\nstatus=$?\nexit $status\n"
                        % (self.via, shlex.quote(self.work), inner))
            os.chmod(script, 0o755)
            agent_cmd = "~/run-agent.sh"
        if self.via in ("tend-run", "tend-run-ssh"):
            # the relay holds the pane's terminal; the agent (or ssh) runs on
            # the relay's own pty, below `tend run-session`
            # a copy in the case's scratch dir: the recording names it under
            # the scrubbed $ACC_TMP, not this machine's build folder
            built = tend_binary()
            self.tend = os.path.join(self.tmpdir, "bin", "tend")
            os.makedirs(os.path.dirname(self.tend), exist_ok=True)
            shutil.copy2(shutil.which(built) or built, self.tend)
            agent_cmd = "%s run -- %s" % (shlex.quote(self.tend), agent_cmd)
            self.ev("tend_run", tend=self.tend, built=built)
        self.wrapper_cmd = agent_cmd

    def open_pane(self):
        cmd = pane_command(self.env)
        name = "%s-%s" % (self.agent, self.scenario)
        if self.shared:
            ensure_server(self.tm)
            out = self.tm.run("new-window", "-d", "-P", "-F", "#{pane_id}\t#{pane_pid}", "-t", "acc:",
                              "-n", name, "-c", self.work, cmd)
        else:
            if self.tm.alive():
                self.tm.run("kill-server", check=False)
                time.sleep(0.3)
            subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "acc",
                            "-n", name, "-x", str(self.width), "-y", str(self.height), "-c", self.work, cmd],
                           check=True)
            for opt in (["set", "-g", "history-limit", "5000"],):
                self.tm.run(*opt, check=False)
            out = self.tm.run("display", "-p", "-t", "acc:%s" % name, "#{pane_id}\t#{pane_pid}")
        self.pane, pid = out.strip().split("\t")
        self.pane_pid = int(pid)
        self.t0 = time.time()
        self.tm.run("resize-window", "-t", self.pane, "-x", str(self.width), "-y", str(self.height), check=False)
        self.castrec_pidfile = os.path.join(self.tmpdir, "castrec.pid")
        self.resize_file = os.path.join(self.tmpdir, "castrec.resize")
        rec = ("TERM=tmux-256color exec %s %s --out %s --width %d --height %d --t0 %.4f --title %s"
               " --pidfile %s --resize-file %s") % (
            shlex.quote(PY), shlex.quote(os.path.join(HERE, "castrec.py")),
            shlex.quote(os.path.join(self.outdir, "pane.cast")), self.width, self.height, self.t0,
            shlex.quote(name), shlex.quote(self.castrec_pidfile), shlex.quote(self.resize_file))
        self.tm.run("pipe-pane", "-O", "-t", self.pane, rec)
        self.ev("case_start", t0=self.t0, pane=self.pane, pane_pid=self.pane_pid, socket=self.socket)
        self.label(None, ts=self.t0, src="start", unc=(0, 0))

    def write_meta(self, status):
        meta = {
            "agent": self.agent, "scenario": self.scenario, "agent_version": agent_version(self.agent),
            "t0": self.t0, "width": self.size0[0], "height": self.size0[1],
            "size": "%dx%d" % self.size0, "resizes": self.resizes, "socket": self.socket,
            "pane": self.pane, "pane_pid": self.pane_pid, "agent_pid": self.agent_pid,
            "launch": self.launch, "fakellm_port": self.port, "run_id": self.run_id,
            # --via: the wrapper and what the pane's shell was told to run
            # (agent_pid is then the wrapper's pid: the shell's child)
            "via": self.via, "wrapper_command": self.wrapper_cmd,
            "tmux": subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip(),
            "env": {k: v for k, v in self.env.items() if k not in ("PATH",)},
            "paths": {"AGENTS_DIR": AGENTS_DIR, "ACC_TMP": ACC_TMP, "home": self.home, "work": self.work},
            "status": status, "notes": self.notes,
            "prompt": PROMPTS.get(self.scenario),
            "case": "%s/%s" % (self.agent, case_name(self.agent, self.scenario, self.via, *self.size0)),
        }
        with open(os.path.join(self.outdir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)

    def teardown(self):
        self.stop.set()
        if self.shared:
            self.tm.run("kill-window", "-t", self.pane, check=False)
        else:
            self.tm.run("kill-server", check=False)
        time.sleep(1.0)
        if self.sshd:
            self.sshd.stop()
        # leftovers we started (daemons re-parented to init; the agent behind
        # ssh and its daemons), by PID
        needles = [("ACC_RUN_ID=%s\0" % self.run_id).encode(), self.remote_needle()]
        for pid in all_pids():
            if pid != os.getpid() and any(env_has(pid, n) for n in needles):
                try:
                    os.kill(pid, signal.SIGTERM)
                    self.ev("killed_leftover", pid=pid, proc=read_proc(pid))
                except OSError:
                    pass
        time.sleep(0.5)
        for pid in all_pids():
            if pid != os.getpid() and any(env_has(pid, n) for n in needles):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if self.fake:
            self.fake.terminate()
            try:
                self.fake.wait(5)
            except subprocess.TimeoutExpired:
                self.fake.kill()
        # the scratch HOME is big (codex copies its 300 MB binary into
        # $CODEX_HOME/packages); keep it only when asked to
        if os.environ.get("ACC_KEEP_TMP") != "1":
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def resize(self, cols, rows):
        """Resize the window and put an asciicast "r" event into the cast."""
        t = time.time()
        self.tm.run("resize-window", "-t", self.pane, "-x", str(cols), "-y", str(rows), check=False)
        try:
            with open(self.resize_file, "w") as f:
                f.write("%dx%d" % (cols, rows))
            with open(self.castrec_pidfile) as f:
                os.kill(int(f.read().strip()), signal.SIGUSR1)
        except (OSError, ValueError) as e:
            self.notes.append("resize event not recorded in cast: %s" % e)
        self.width, self.height = cols, rows
        self.resizes.append([round(t - self.t0, 3), "%dx%d" % (cols, rows)])
        self.ev("resize", ts=t, size="%dx%d" % (cols, rows))
        return t

    # ---- the flows
    def start_agent(self):
        self.wait_screen(r"acc\$", 10, "shell_prompt")
        time.sleep(0.5)
        self.keys([(self.wrapper_cmd or self.launch, True), ("Enter", False)], "launch")
        t = self.wait_screen(self.prof["ready"], self.prof.get("ready_timeout", 90), "ready", label="idle")
        if t and self.prof.get("ready_settle"):
            # codex draws its composer before it takes keys (its daemon is still
            # starting): keys sent in the first seconds are dropped
            time.sleep(self.prof["ready_settle"])
        for _ in range(50):
            kids = children(self.pane_pid)
            if kids:
                self.agent_pid = kids[0]
                break
            time.sleep(0.1)
        self.ev("agent_pid", pid=self.agent_pid, proc=read_proc(self.agent_pid) if self.agent_pid else None)
        return t

    def wait_agent_exit(self, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if not children(self.pane_pid):
                t = time.time()
                self.ev("agent_exit", pid=self.agent_pid)
                self.label("exited", ts=t, src="proc:exit", unc=(-0.1, 0.0))
                return t
            time.sleep(0.05)
        self.notes.append("agent did not exit within %ss" % timeout)
        return None

    def flow(self):
        p = self.prof
        s = self.scenario
        if self.start_agent() is None:
            raise RuntimeError("agent never became ready")
        if s in NEW_SCENARIOS:
            return self.flow_new(s)
        if s == "idle":
            time.sleep(20)
            return
        if s == "exit":
            time.sleep(5)
            self.keys(p["exit_keys"], "exit")
            self.wait_agent_exit(20)
            time.sleep(5)
            return
        time.sleep(3)
        if s == "question" and p.get("pre_question_keys"):
            self.enter_plan_mode()
        self.submit(PROMPTS[s])
        if s == "working_then_done":
            e = self.wait_server(self.main_end(0), 90, "answer_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            time.sleep(10)
        elif s == "approval":
            e = self.wait_server(self.main_end(0), 60, "tool_call_end")
            if e:
                self.label("waiting", "approval", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            self.wait_screen(p["approval_screen"], p.get("dialog_wait", 20), "approval_dialog")
            time.sleep(15)
            t = self.keys(p["approve_keys"], "approve")
            self.label("working", ts=t, src="key:approve")
            if not self.after_tool_prompts():
                e = self.wait_server(self.main_end(1), 60, "final_answer_end")
                if e:
                    self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            time.sleep(10)
        elif s == "question":
            e = self.wait_server(self.main_end(0), 60, "question_end")
            if e:
                self.label("waiting", "question", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            self.wait_screen(p["question_screen"], p.get("dialog_wait", 20), "question_dialog")
            time.sleep(15)
            if p.get("text_question"):
                self.keys(p["answer_keys"][:1], "answer_type")
                time.sleep(p.get("submit_delay", 0.4))
                t = self.keys(p["answer_keys"][1:], "answer")
            else:
                t = self.keys(p["answer_keys"], "answer")
            self.label("working", ts=t, src="key:answer")
            e = self.wait_server(self.main_end(1), 60, "final_answer_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            time.sleep(10)
        elif s == "error":
            self.wait_error_phase()
            time.sleep(10)
        elif s == "long_tool":
            e = self.wait_server(self.main_end(0), 60, "tool_call_end")
            if self.agent == "aider":
                # aider cannot pre-approve shell commands (--yes-always never runs them)
                if e:
                    self.label("waiting", "approval", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
                self.wait_screen(p["approval_screen"], 20, "approval_dialog")
                time.sleep(1.0)
                t = self.keys(p["approve_keys"], "approve")
                self.label("working", ts=t, src="key:approve")
                self.after_tool_prompts(timeout=120, final=True)
            else:
                e = self.wait_server(self.main_end(1), 150, "final_answer_end")
                if e:
                    self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            time.sleep(10)

    # ---- helpers of the newer scenarios
    def first_byte(self, step):
        return lambda e: e.get("event") == "first_byte" and e.get("step") == step

    def main_request_after(self, t):
        return lambda e: e.get("event") == "request" and e.get("main") and e.get("ts", 0) > t

    def tool_procs(self, needle="time.sleep(60)"):
        """The long tool's own process (python3 ...), not the shell around it."""
        procs = proc_tree(self.pane_pid, self.run_id)
        if self.sshd:
            procs += env_tree(self.remote_needle())
        return [p for p in procs
                if p.get("comm") not in ("bash", "sh") and needle in " ".join(p.get("cmdline", []))]

    def wait_exit_quick(self, timeout):
        """Has the agent exited within timeout? (label exited at detection)"""
        end = time.time() + timeout
        while time.time() < end:
            if not children(self.pane_pid):
                t = time.time()
                self.ev("agent_exit", pid=self.agent_pid)
                self.label("exited", ts=t, src="proc:exit", unc=(-0.1, 0.0))
                return t
            time.sleep(0.05)
        return None

    def enter_plan_mode(self, tries=5):
        """Shift+Tab until the agent's plan-mode indicator is on screen."""
        rx = re.compile(self.prof.get("plan_screen", r"(?i)plan mode"))
        for i in range(tries):
            if rx.search(self.capture()):
                self.ev("screen_seen", what="plan_mode", presses=i)
                return True
            self.keys([("BTab", False)], "mode_cycle")
            time.sleep(1.0)
        ok = bool(rx.search(self.capture()))
        if not ok:
            self.notes.append("plan mode indicator never seen")
        return ok

    def deny_keys(self):
        if self.prof.get("deny_keys"):
            return self.prof["deny_keys"]
        m = re.search(r"(\d)\.\s+No\b", self.capture())
        if m:
            return [(m.group(1), True)]
        self.notes.append("no 'N. No' option on screen; sent Escape to deny")
        return [("Escape", False)]

    def after_interrupt(self, t_key, what, tool_alive=None, stream_id=None, step=0):
        """Decide what an interrupt key did.  Ground truth: the agent process
        (/proc), the server (client_gone / a new request), the tool process."""
        p = self.prof
        if what == "ctrlc" and p.get("ctrlc_menu_screen"):
            if self.wait_screen(p["ctrlc_menu_screen"], 2.5, "ctrlc_menu", quiet=True) is not None:
                # the task goes on while the menu is up (working); the user then
                # picks "Cancel task": that key cuts the turn short
                time.sleep(3.0)
                t_key = self.keys(p["ctrlc_menu_keys"], "cancel_task")
                self.notes.append("ctrlc: one Ctrl-C opened the 'Choose what happens to the current task' "
                                  "menu; the task went on until 'Cancel task' was chosen")
                what = "cancel_task"
        if self.wait_exit_quick(3.0):
            self.notes.append("%s: the agent exited" % what)
            return "exited"
        # did the agent report the interruption to the model and carry on?
        fu = self.wait_server(self.main_request_after(t_key), 3.0, "followup_request", note=False)
        if fu:
            self.notes.append("%s: the agent sent a new request after the key (it carried on)" % what)
            self.label("working", ts=t_key, src="key:" + what)
            e = self.wait_server(lambda x: x.get("event") == "stream_end" and x.get("id") == fu["id"], 60,
                                 "followup_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            return "continued"
        if stream_id is not None:
            gone = any(e.get("event") == "client_gone" and e.get("id") == stream_id for e in self.server_events())
            ended = any(e.get("event") == "stream_end" and e.get("id") == stream_id for e in self.server_events())
            if not gone and not ended:
                # the next chunk write fails within ~0.5 s of the client closing
                time.sleep(1.5)
                gone = any(e.get("event") == "client_gone" and e.get("id") == stream_id
                           for e in self.server_events())
            self.ev("interrupt_check", stream_id=stream_id, client_gone=gone)
            if not gone:
                self.notes.append("%s: the stream went on (key ignored)" % what)
                e = self.wait_server(self.main_end(step), 120, "answer_end")
                if e:
                    self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
                return "ignored"
        if tool_alive is not None:
            end = time.time() + 4
            alive = True
            while time.time() < end:
                alive = bool(self.tool_procs())
                if not alive:
                    break
                time.sleep(0.2)
            interrupted = bool(re.search(p.get("interrupted_screen", r"(?!)"), self.capture()))
            self.ev("interrupt_check", tool_alive=alive, interrupted_on_screen=interrupted)
            if alive and not interrupted:
                self.notes.append("%s: the key was ignored: the tool kept running and the agent "
                                  "said nothing" % what)
                return "ignored"
            if alive:
                self.notes.append("%s: the turn was interrupted but the tool process kept running" % what)
        self.label("waiting", "prompt", ts=t_key, src="key:" + what, unc=(0.0, 0.5))
        return "interrupted"

    def dialog_turn(self, reason="approval", hold=8.0, approve=True, step=0):
        """Tool/dialog step `step` ends -> waiting(reason); after `hold` s approve
        (working, then completed at the next step's end) or deny (waiting(prompt))."""
        p = self.prof
        e = self.wait_server(self.main_end(step), 60, "dialog_step_end")
        if e:
            self.label("waiting", reason, ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
        if self.wait_screen(p.get("dialog_screen", p["approval_screen"]), p.get("dialog_wait", 20),
                            "dialog") is None:
            self.notes.append("dialog not seen on screen")
        time.sleep(hold)
        if not approve:
            if p.get("deny_confirm_screen"):
                # a second stage asks what to do instead (Kilo: "Tell Kilo what to
                # do differently"); the dialog is still up, so the key that
                # confirms it (with no text) is the deny
                self.keys(self.deny_keys(), "reject_stage")
                if self.wait_screen(p["deny_confirm_screen"], 10, "reject_stage") is not None:
                    time.sleep(2.0)
                t = self.keys(p["deny_confirm_keys"], "deny")
            else:
                t = self.keys(self.deny_keys(), "deny")
            return self.after_interrupt(t, "deny")
        t = self.keys(p.get("dialog_approve_keys", p["approve_keys"]), "approve")
        self.label("working", ts=t, src="key:approve")
        if self.agent == "aider":
            self.after_tool_prompts(timeout=30)
        else:
            e = self.wait_server(self.main_end(step + 1), 60, "final_answer_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
        return "approved"

    def close_server(self):
        import urllib.request
        req = urllib.request.Request("http://127.0.0.1:%d/_ctl/close" % self.port, data=b"{}", method="POST")
        urllib.request.urlopen(req, timeout=5).read()
        time.sleep(0.5)
        import socket
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
            self.notes.append("port still accepting after close")
        except OSError as e:
            self.ev("server_closed", port=self.port, connect_error=str(e))

    def flow_new(self, s):
        p = self.prof
        small = self.agent == "gemini"  # 60-80 KB/s while working: keep gemini cases short
        tail = 6 if small else 8
        time.sleep(3)
        if s == "plan":
            self.enter_plan_mode()
        if s == "error_conn":
            self.close_server()
            time.sleep(1)
            self.submit(PROMPTS[s], confirm=False)
            self.wait_conn_error(max_total=p.get("conn_max", 90))
            time.sleep(tail)
            return
        if s == "multi_turn":
            for i, prompt in enumerate(PROMPTS[s]):
                self.submit(prompt)
                e = self.wait_server(self.main_end(i), 60, "answer_end_%d" % i)
                if e:
                    self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
                if self.agent == "aider":
                    self.wait_last_line({"prompt_back": r"^>\s*$"}, 10)
                time.sleep(4)
            time.sleep(tail - 4)
            return
        self.submit(PROMPTS[s])
        if s in ("deny",):
            self.dialog_turn("approval", hold=6 if small else 8, approve=False)
        elif s in ("approval_edit", "approval_fetch", "plan"):
            self.dialog_turn("approval", hold=6 if small else 8, approve=True)
        elif s in ("esc_stream", "ctrlc_stream"):
            fb = self.wait_server(self.first_byte(0), 60, "first_byte")
            time.sleep(4 if small else 6)
            key = "Escape" if s == "esc_stream" else "C-c"
            t = self.keys([(key, False)], "interrupt")
            self.after_interrupt(t, s.split("_")[0], stream_id=fb["id"] if fb else None)
        elif s in ("esc_tool", "ctrlc_tool"):
            e = self.wait_server(self.main_end(0), 60, "tool_call_end")
            if self.agent == "aider":
                if e:
                    self.label("waiting", "approval", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
                self.wait_screen(p["approval_screen"], 20, "approval_dialog")
                time.sleep(1.0)
                t = self.keys(p["approve_keys"], "approve")
                self.label("working", ts=t, src="key:approve")
            end = time.time() + 20
            while time.time() < end and not self.tool_procs():
                time.sleep(0.2)
            if self.tool_procs():
                self.ev("tool_running")
            else:
                self.notes.append("tool process never seen")
            time.sleep(8)
            key = "Escape" if s == "esc_tool" else "C-c"
            t = self.keys([(key, False)], "interrupt")
            r = self.after_interrupt(t, s.split("_")[0], tool_alive=True)
            if r == "ignored":
                # the turn goes on as in long_tool
                if self.agent == "aider":
                    self.after_tool_prompts(timeout=90, final=True)
                else:
                    e = self.wait_server(self.main_end(1), 90, "final_answer_end")
                    if e:
                        self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            elif r == "interrupted" and self.agent == "aider":
                # aider may still ask about the (interrupted) command's output
                what, t2 = self.wait_last_line({"add_output_prompt": p["add_output_screen"],
                                                "prompt_back": r"^>\s*$"}, 10)
                self.ev("after_interrupt_screen", what=what)
        elif s == "resize":
            self.wait_server(self.first_byte(0), 60, "first_byte")
            time.sleep(4)
            self.resize(80, 24)
            time.sleep(6)
            self.resize(120, 40)
            e = self.wait_server(self.main_end(0), 90, "answer_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
        elif s == "long_output":
            e = self.wait_server(self.main_end(0), 90, "answer_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
        elif s == "background":
            # a shell started in the background (fakellm: `sleep 12; echo
            # finished`, run_in_background); the turn's text ends while it
            # runs on.  Working until the agent has heard that the shell
            # ended and answered that (the request after the shell's end,
            # step 2): the screen shows the turn finished long before
            e = self.wait_server(self.main_end(1), 60, "text_end")
            if e:
                self.ev("turn_text_end", ts=e["ts"])
            e = self.wait_server(self.main_end(2), 60, "after_background_end")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            else:
                self.notes.append("no request after the background shell ended")
        elif s in ERROR_SCENARIOS:
            self.wait_error_phase(quiet=p.get("error_quiet", 45), max_total=p.get("error_max", 300))
        elif s in LIMIT_SCENARIOS:
            self.limit_turn(resume=(s == "limit_resume"), quiet=p.get("limit_quiet", 12))
        time.sleep(tail)

    def wait_conn_error(self, max_total=90):
        """error_conn: the server is closed, so there is no server log of the
        attempts; the give-up moment is read off the screen (the agent's error
        text, or for aider its '>' prompt coming back after the error)."""
        p = self.prof
        if self.agent == "aider":
            end = time.time() + max_total
            seen_err = False
            while time.time() < end:
                scr = self.capture()
                if not seen_err and re.search(r"(?i)connection|APIConnectionError", scr):
                    seen_err = True
                    self.ev("screen_seen", what="conn_error_text")
                if seen_err:
                    lines = [l for l in scr.split("\n") if l.strip()]
                    if lines and re.search(r"^>\s*$", lines[-1]):
                        t = time.time()
                        self.ev("screen_seen", ts=t, what="prompt_back")
                        self.label("waiting", "error", ts=t, src="screen:prompt_back_after_error",
                                   unc=(-0.25, 0.0))
                        return t
                time.sleep(0.2)
        else:
            t = self.wait_screen(p.get("conn_error_screen", r"(?i)error"), max_total, "conn_error_text",
                                 label="waiting", reason="error")
            if t:
                return t
        self.notes.append("agent still retrying after %ss (label stays working; trimmed)" % max_total)
        return None

    def wait_last_line(self, patterns, timeout):
        """Wait until the last non-blank screen line matches one of patterns
        ({name: regex}); returns (name, t) or (None, None)."""
        rx = {k: re.compile(v) for k, v in patterns.items()}
        end = time.time() + timeout
        while time.time() < end:
            t = time.time()
            lines = [l for l in self.capture().split("\n") if l.strip()]
            last = lines[-1] if lines else ""
            for k, r in rx.items():
                if r.search(last):
                    self.ev("screen_seen", ts=t, what=k, regex=r.pattern, line=last[:200])
                    return k, t
            time.sleep(0.2)
        self.ev("screen_timeout", what="/".join(patterns))
        self.notes.append("timeout waiting for last line %s" % "/".join(patterns))
        return None, None

    def after_tool_prompts(self, timeout=30, final=False):
        """aider: after an approved shell command there is no new model request;
        it either asks 'Add command output to the chat?' (when the command printed
        something) or goes straight back to its '>' prompt.  Both are read off the
        screen (src screen:...)."""
        p = self.prof
        if not p.get("add_output_screen"):
            return False
        what, t = self.wait_last_line({"add_output_prompt": p["add_output_screen"],
                                       "prompt_back": r"^>\s*$"}, timeout)
        if what == "add_output_prompt":
            self.label("waiting", "prompt", ts=t, src="screen:add_output_prompt", unc=(-0.25, 0.0))
            time.sleep(3)
            tk = self.keys(p["add_output_keys"], "add_output_answer")
            # answering 'n' returns aider to its prompt: the turn is over
            self.label("completed", ts=tk, src="key:add_output_answer")
        elif what == "prompt_back":
            self.label("completed", ts=t, src="screen:prompt_back", unc=(-0.25, 0.0))
        return True

    def limit_turn(self, resume=False, quiet=12, max_total=150):
        """A plan limit: the server refuses every request until the reset
        (fakellm limit_response).  The agent may ask again a few times before
        it shows its limit screen: the label goes on the last refusal once
        none has come for `quiet` s.  With resume, the driver types
        "continue" once the reset has passed (2 s after it), as a user
        would; the server then answers it."""
        start = time.time()
        last = None
        while time.time() - start < max_total:
            evs = [e for e in self.server_events() if e.get("event") == "limit_returned"]
            if evs:
                last = evs[-1]
                if time.time() - last["ts"] > quiet:
                    break
            time.sleep(0.5)
        if last is None:
            self.notes.append("no limit refusal served")
            return
        n = sum(1 for e in self.server_events() if e.get("event") == "limit_returned")
        self.ev("limit_phase_end", n_refusals=n, reset_at=last["reset_at"])
        # the reset goes into the label only where the agent shows it
        shown = self.scenario not in self.prof.get("limit_reset_hidden", ())
        self.label("waiting", "limit", ts=last["ts"], src="server:last_limit", unc=(0.0, 1.0),
                   resets_at=int(last["reset_at"]) if shown else None, n_refusals=n)
        if not resume:
            time.sleep(float(os.environ.get("ACC_LIMIT_HOLD", "10")))
            return
        by_tend = os.environ.get("ACC_LIMIT_RESUMER") == "tend"
        if by_tend or self.prof.get("limit_resumes_itself"):
            # a tend daemon on this case's tmux server resumes it ([limits]
            # resume), or the agent asks again by itself at the reset
            # (OpenCode: retry-after): the driver types nothing and waits
            # for its request
            who = "tend" if by_tend else "agent"
            e = self.wait_server(lambda e: e.get("event") == "request" and e.get("main")
                                 and e["ts"] > last["reset_at"],
                                 max(0.0, last["reset_at"] - time.time()) + 120, "resume_by_" + who)
            if not e:
                self.notes.append("%s sent no request after the reset" % who)
                return
            self.ev("resumed_by_" + who, after_reset=round(e["ts"] - last["reset_at"], 2))
            self.label("working", ts=e["ts"], src="server:request_after_reset", unc=(-1.0, 0.0))
            e = self.wait_server(lambda e: e.get("event") == "stream_end" and e.get("kind") == "text"
                                 and e.get("step", -1) >= 1, 90, "answer_after_reset")
            if e:
                self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
            time.sleep(5)
            return
        time.sleep(max(0.0, last["reset_at"] + 2 - time.time()))
        n0 = self.n_requests()
        if self.prof.get("limit_resume_keys"):
            # the limit screen is a dialog: its own answer asks again
            t = self.keys(self.prof["limit_resume_keys"], "resume_keys")
        else:
            self.keys([("continue", True)], "type_continue")
            time.sleep(self.prof.get("submit_delay", 0.4))
            t = self.keys([("Enter", False)], "submit_continue")
        self.label("working", ts=t, src="key:continue")
        e = self.wait_server(lambda e: e.get("event") == "stream_end" and e.get("kind") == "text"
                             and e.get("step", -1) >= 1, 90, "answer_after_reset")
        if e:
            self.label("completed", ts=e["ts"], src="server:stream_end", unc=(0.0, 0.5))
        elif self.n_requests() == n0:
            self.notes.append("continue sent no request")

    def wait_error_phase(self, quiet=45, max_total=300):
        """Wait until the agent stops retrying (no main request for `quiet` s)."""
        start = time.time()
        last_req = start
        n_seen = 0
        while time.time() - start < max_total:
            evs = [e for e in self.server_events() if e.get("event") == "error_returned"]
            if len(evs) != n_seen:
                n_seen = len(evs)
                last_req = evs[-1]["ts"]
            if n_seen and time.time() - last_req > quiet:
                break
            time.sleep(0.5)
        evs = [e for e in self.server_events() if e.get("event") == "error_returned"]
        self.ev("error_phase_end", n_errors=len(evs), gave_up=bool(evs) and time.time() - evs[-1]["ts"] > quiet)
        if evs and time.time() - evs[-1]["ts"] > quiet:
            self.label("waiting", "error", ts=evs[-1]["ts"], src="server:last_error", unc=(0.0, 1.0),
                       n_errors=len(evs))
        else:
            self.notes.append("agent still retrying after %ss" % max_total)

    def run(self):
        status = "ok"
        try:
            self.setup()
        except Exception:
            if self.sshd:
                self.sshd.stop()
            if self.fake:
                self.fake.kill()
            raise
        sampler = None
        try:
            self.open_pane()
            sampler = threading.Thread(target=self.sampler, daemon=True)
            sampler.start()
            self.flow()
        except Exception as e:  # keep whatever was recorded
            status = "error: %s" % e
            self.notes.append(status)
        finally:
            self.ev("case_end")
            self.label("end", ts=time.time(), src="end", unc=(0, 0))
            self.stop.set()
            if sampler:
                sampler.join(3)
            self.write_meta(status)
            self.teardown()
        try:
            subprocess.run([PY, os.path.join(HERE, "labels.py"), self.outdir], check=False)
        except Exception:
            pass
        return status


def cast_resizes(path):
    """asciinema v2 resize events [(t, cols, rows)] of a cast."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            f.readline()
            for line in f:
                try:
                    t, kind, data = json.loads(line)
                except ValueError:
                    continue
                if kind == "r":
                    c, r = data.split("x")
                    out.append((float(t), int(c), int(r)))
    except OSError:
        pass
    return out


def replay(src, outdir, socket):
    """A pane that plays src/pane.cast; labels copied from the recording.  The
    window gets the recording's size, and the cast's resize events ("r") are
    replayed by resizing the window at the same times."""
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(src, "meta.json")) as f:
        meta = json.load(f)
    tm = Tmux(socket)
    ensure_server(tm, meta.get("width", WIDTH), meta.get("height", HEIGHT))
    name = "replay-%s-%s" % (meta["agent"], meta["scenario"])
    with open(os.path.join(src, "labels.json")) as f:
        lab = json.load(f)
    dur = lab.get("duration", 60)
    t0 = time.time() + 0.5
    cmd = "exec %s %s --t0 %.4f --until %.2f %s" % (
        shlex.quote(PY), shlex.quote(os.path.join(HERE, "castplay.py")), t0, dur + 0.5,
        shlex.quote(os.path.join(src, "pane.cast")))
    out = tm.run("new-window", "-d", "-P", "-F", "#{pane_id}\t#{pane_pid}", "-t", "acc:", "-n", name,
                 "env TERM=tmux-256color TEND_AGENT=%s sh -c %s" % (shlex.quote(meta["agent"]), shlex.quote(cmd)))
    pane, pid = out.strip().split("\t")
    w, h = meta.get("width", WIDTH), meta.get("height", HEIGHT)
    tm.run("resize-window", "-t", pane, "-x", str(w), "-y", str(h), check=False)
    rmeta = dict(meta)
    rmeta.update({"mode": "replay", "source": os.path.relpath(src, outdir), "t0": t0, "pane": pane,
                  "pane_pid": int(pid), "socket": socket, "identity_scored": False})
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump(rmeta, f, indent=1)
    shutil.copy(os.path.join(src, "labels.json"), os.path.join(outdir, "labels.json"))
    for t, c, r in cast_resizes(os.path.join(src, "pane.cast")):
        time.sleep(max(0.0, t0 + t - time.time()))
        tm.run("resize-window", "-t", pane, "-x", str(c), "-y", str(r), check=False)
    time.sleep(max(0, t0 + dur + 1 - time.time()))
    tm.run("kill-window", "-t", pane, check=False)
    return "ok"


def tmp_placeholder(prefix):
    """The same-length stand-in for the scratch prefix "$ACC_TMP/": "/home/me/"
    for the default /tmp/acc, else "/home/me/<tail>/" with the tail of the
    prefix's last folder name (/tmp/acc-kilo/ -> /home/me/kilo/), so that
    every scrubbed recording reads as under /home/me."""
    base = "/home/me/"
    extra = len(prefix) - len(base)
    if extra == 0:
        return base
    name = os.path.basename(prefix.rstrip("/"))
    if extra < 2 or len(name) < extra - 1:
        sys.exit("ACC_TMP=%s: the scrubbed recordings need a stand-in of the same length; use /tmp/acc "
                 "or a folder whose path is at least 2 characters longer (e.g. /tmp/acc-NAME)" % prefix)
    return base + name[len(name) - (extra - 1):] + "/"


def scrub(case_dir):
    """Replace this machine's install/scratch prefixes in a recording by
    placeholders of the SAME length (so cursor positions in pane.cast stay
    right): the real $AGENTS_DIR -> "$AGENTS_DIR" and "$ACC_TMP/" -> "/home/me/"
    (both exact for the defaults /opt/agents and /tmp/acc; another ACC_TMP gets
    "/home/me/<tail>/", see tmp_placeholder).  Used by `record`
    (ACC_SCRUB=0 turns it off), the same convention as the stored recordings."""
    pairs = []
    if AGENTS_DIR and AGENTS_DIR != "/":
        pairs.append((AGENTS_DIR.rstrip("/"), "$AGENTS_DIR"))
    if ACC_TMP and ACC_TMP != "/":
        pairs.append((ACC_TMP.rstrip("/") + "/", tmp_placeholder(ACC_TMP.rstrip("/") + "/")))
        if len(ACC_TMP.rstrip("/")) == len("/home/me"):
            # an agent may cut a long path right after the prefix (gemini's footer
            # after a resize)
            pairs.append((ACC_TMP.rstrip("/"), "/home/me"))
    for fn in sorted(os.listdir(case_dir)):
        path = os.path.join(case_dir, fn)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        new = text
        for a, b in pairs:
            new = new.replace(a, b)
        if fn == "meta.json":
            try:
                m = json.loads(new)
                m.setdefault("paths", {}).update({"AGENTS_DIR": "$AGENTS_DIR", "ACC_TMP": "$ACC_TMP"})
                new = json.dumps(m, indent=1)
            except ValueError:
                pass
        if new != text:
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(new)


def parse_size(text):
    m = re.match(r"^(\d+)x(\d+)$", text.strip())
    if not m:
        raise argparse.ArgumentTypeError("size must be COLSxROWS, e.g. 120x40")
    return int(m.group(1)), int(m.group(2))


def main():
    ap = argparse.ArgumentParser(description="agentlab driver: record / replay real agent CLIs in tmux")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--agent", required=True, choices=AGENTS)
    r.add_argument("--scenario", required=True, choices=SCENARIOS)
    r.add_argument("--size", default="%dx%d" % (WIDTH, HEIGHT), type=parse_size,
                   help="window size COLSxROWS (default %(default)s); stored in meta.json")
    r.add_argument("--out", help="where the full recording goes (default: $ACC_TMP/recordings/A/S@WxH)")
    r.add_argument("--corpus", default=CORPUS,
                   help="after recording, copy %s into CORPUS/A/S@WxH/ (default: the repository's "
                        "tests/corpus)" % " ".join(CORPUS_FILES))
    r.add_argument("--no-publish", action="store_true", help="do not copy into the corpus")
    r.add_argument("--via", choices=VIAS,
                   help="start the agent behind a wrapper (ssh localhost, a script, a script running "
                        "ssh); the case is named S~VIA@WxH")
    c = sub.add_parser("case")
    c.add_argument("--agent", required=True, choices=AGENTS)
    c.add_argument("--scenario", required=True, choices=SCENARIOS)
    c.add_argument("--socket", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--via", choices=VIAS)
    p = sub.add_parser("replay")
    p.add_argument("--from", dest="src", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--out", required=True)
    sc = sub.add_parser("scrub")
    sc.add_argument("dirs", nargs="+")
    ls = sub.add_parser("list")
    ls.add_argument("--cases", action="store_true",
                    help="print the cases, one 'agent scenario' per line")
    a = ap.parse_args()
    if a.cmd == "list":
        if a.cases:
            for ag in AGENTS:
                for s in SCENARIOS:
                    print(ag, s)
        else:
            print(json.dumps({"agents": AGENTS, "scenarios": SCENARIOS}))
        return
    if a.cmd == "replay":
        print(replay(a.src, a.out, a.socket))
        return
    if a.cmd == "scrub":
        for d in a.dirs:
            scrub(d)
        return
    if a.cmd == "record":
        w, h = a.size
        name = case_name(a.agent, a.scenario, a.via, w, h)
        if a.scenario in UNSUPPORTED.get(a.agent, {}):
            sys.exit("%s/%s: not supported: %s" % (a.agent, a.scenario, UNSUPPORTED[a.agent][a.scenario]))
        out = a.out or os.path.join(ACC_TMP, "recordings", a.agent, name)
        case = Case(a.agent, a.scenario, out, "acc-%s-%s" % (a.agent, name.replace("@", "-")), shared=False,
                    size=(w, h), via=a.via)
    else:
        case = Case(a.agent, a.scenario, a.out, a.socket, shared=True, via=a.via)
    status = case.run()
    if a.cmd == "record" and os.environ.get("ACC_SCRUB", "1") != "0":
        scrub(case.outdir)
    if a.cmd == "record" and not a.no_publish and a.corpus:
        dest = os.path.join(a.corpus, a.agent, name)
        os.makedirs(dest, exist_ok=True)
        for fn in CORPUS_FILES:
            if os.path.exists(os.path.join(case.outdir, fn)):
                shutil.copy(os.path.join(case.outdir, fn), os.path.join(dest, fn))
        print("published to %s" % dest)
    print("%s/%s: %s %s (in %s)" % (a.agent, a.scenario, status, "; ".join(case.notes), case.outdir))
    sys.exit(0 if status == "ok" else 1)


if __name__ == "__main__":
    main()
