#!/usr/bin/env python3
"""latency - how long a REAL agent's approval dialog takes to reach tend.

For each agent asked for: a private tmux server (`tmux -L tend-lat-...`),
the tend daemon for it (with TEND_TRACE), fakellm and the real CLI offline,
set up exactly as `harness.py record --scenario approval` does (its profiles
and `Case.setup`). The agent is known to tend from its process tree only:
nothing declares it (no TEND_AGENT).

Then, RUNS times in the same agent session (fakellm's step pointer is reset
between turns): submit the prompt, wait for the approval dialog, hold it,
approve, wait for the turn to end. Meanwhile:

  screen  `capture-pane` polled every POLL_MS (default 5 ms): when the
          dialog is first on screen (the midpoint of the capture that saw
          it), and after the approving key when the screen first changes.
  tend    the daemon's trace: when the `tmux` invocation that set
          `@tend_state` to waiting (and then away from it) returned. That is
          the moment a status line can show it, with no polling bias.
          `tend events` is read too, as a cross-check (`event_ms`).

Prints one JSON line per run and a summary (p50 / p90 / max per agent), and
writes everything to --out.

  ACC_TMP=/tmp/acc-lat tools/agentlab/latency.py --agents claude,codex --runs 5
  tools/agentlab/latency.py --tend target/release/tend --agents aider --runs 5
  tools/agentlab/latency.py --agents opencode --agent-dir opencode=/opt/agent2
  tools/agentlab/latency.py --agents continue --agent-dir continue=/opt/agent7 --via-tend-prompt

With --together every agent asked for runs in ONE tmux server under one
tend daemon, a window each, all driven at once: each dialog appears while
the other agents stream (the live tier for several agents sharing a
server). --foreign-pipe adds someone else's `pipe-pane` to every agent's
pane, as the agentlab's recorder (castrec.py, run.sh) has: tend then reads
those panes by capturing their screens, not from their pipes. --poll-ms
20 keeps four capture pollers from loading the machine themselves.
--busy N (with --together) adds N panes to that server replaying working
agents' recorded turns again and again, their agent declared: a dialog
measured beside a daemon busy parsing and evaluating other panes.

  tools/agentlab/latency.py --together --agents claude,codex,gemini,aider --runs 5 --poll-ms 20
  tools/agentlab/latency.py --together --foreign-pipe --agents claude,codex,gemini,aider --runs 5 --poll-ms 20
  tools/agentlab/latency.py --together --busy 9 --agents claude --runs 20

With --via-tend-prompt each turn's prompt is sent by `tend prompt` instead
of typed keys, and a turn whose request never reaches fakellm is an error:
the check that `tend prompt` submits to each agent (some take an Enter right
after a paste as part of it; their manifest's `[prompt] enter_after_ms`).

Exit status 2 when an agent could not be driven to its dialog (say which);
the summary then names what is missing rather than passing quietly.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PROMPT = harness.PROMPTS["approval"]
# Aider's y/n question stays in the scrollback once answered: its dialog is
# on screen only while it is the last line.
LAST_LINE_ONLY = {"aider"}


def pct(values, p):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round((len(s) - 1) * p)))]


class Poller(threading.Thread):
    """capture-pane every `every` seconds; keeps (t_start, t_end, text)."""

    def __init__(self, tm, pane, every):
        super().__init__(daemon=True)
        self.tm, self.pane, self.every = tm, pane, every
        self.samples = []
        self.lock = threading.Lock()
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            t0 = time.time()
            r = subprocess.run(["tmux", "-L", self.tm.socket, "capture-pane", "-p", "-t", self.pane],
                               capture_output=True, text=True)
            t1 = time.time()
            with self.lock:
                self.samples.append((t0, t1, r.stdout))
            left = self.every - (time.time() - t0)
            if left > 0:
                time.sleep(left)

    def since(self, t):
        with self.lock:
            return [s for s in self.samples if s[0] >= t]

    def trim(self, t):
        with self.lock:
            self.samples = [s for s in self.samples if s[0] >= t]


class Events(threading.Thread):
    """`tend events --json`, each line with the time it arrived."""

    def __init__(self, cmd, env):
        super().__init__(daemon=True)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env)
        self.lines = []
        self.lock = threading.Lock()

    def run(self):
        for line in self.proc.stdout:
            t = time.time()
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                self.lines.append((t, ev))

    def find(self, pred, since):
        with self.lock:
            for t, ev in self.lines:
                if t >= since and pred(ev):
                    return t, ev
        return None


def read_trace(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                us, _, rest = line.rstrip("\n").partition(" ")
                if us.isdigit():
                    out.append((int(us) / 1e6, rest))
    except OSError:
        pass
    return out


def published_after(trace, pane, since, want):
    """(time the state line was traced, time the publish after it returned)
    for the first state change of `pane` at or after `since` for which
    `want(state_word)` holds."""
    rx = re.compile(r"^state pane=%s state=(\S+)" % re.escape(pane))
    for i, (t, rest) in enumerate(trace):
        if t < since:
            continue
        m = rx.match(rest)
        if not m or not want(m.group(1)):
            continue
        for t2, rest2 in trace[i:]:
            if rest2.startswith("published"):
                return t, t2
        return t, None
    return None


def start_daemon(tend_cmd, home, trace_path):
    """Starts a tend daemon with its folders under `home` and its trace in
    `trace_path`, and follows its events: (env, Events)."""
    env = dict(os.environ)
    env.pop("TMUX", None)
    env.pop("TEND_AGENT", None)
    env.update({"XDG_RUNTIME_DIR": os.path.join(home, "run"), "XDG_STATE_HOME": os.path.join(home, "state"),
                "XDG_CONFIG_HOME": os.path.join(home, "config"), "TEND_TRACE": trace_path})
    for k in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME"):
        os.makedirs(env[k], mode=0o700, exist_ok=True)
    r = subprocess.run(tend_cmd("start"), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("tend start failed: %s %s" % (r.stdout, r.stderr))
    events = Events(tend_cmd("events", "--json"), env)
    events.start()
    return env, events


# The recorded working turns the --busy panes replay (tests/corpus).
BUSY_AGENTS = ["claude", "codex", "gemini", "aider"]


class Server:
    """One tmux server and one tend daemon shared by several agents
    (--together): each agent gets a window of its own; the daemon's trace
    holds every pane's lines."""

    def __init__(self, tend, size, outdir, foreign_pipe=False):
        self.tend, self.size, self.outdir = tend, size, outdir
        self.foreign_pipe = foreign_pipe
        self.socket = "tend-lat-together-%d" % os.getpid()
        self.trace_path = os.path.join(outdir, "together.trace")
        self.lock = threading.Lock()
        self.started = False
        self.env = None
        self.events = None

    def tend_cmd(self, *args):
        return [self.tend, "-L", self.socket] + list(args)

    def open_window(self, name, work, cmd):
        """A window running `cmd`; (pane id, pane pid). The first makes
        the server and starts the daemon."""
        w, h = self.size
        with self.lock:
            if not self.started:
                subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
                subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "acc",
                                "-n", "_hold", "-x", str(w), "-y", str(h), "sleep 1000000"], check=True)
                subprocess.run(["tmux", "-L", self.socket, "set", "-g", "default-size", "%dx%d" % (w, h)],
                               capture_output=True)
                self.start_tend()
                self.started = True
            out = subprocess.run(["tmux", "-L", self.socket, "new-window", "-d", "-P", "-F",
                                  "#{pane_id}\t#{pane_pid}", "-t", "acc:", "-n", name, "-c", work, cmd],
                                 capture_output=True, text=True, check=True).stdout
        pane, pid = out.strip().split("\t")
        if self.foreign_pipe:
            # what the agentlab's recorder does (harness.py's castrec): the
            # pane's pipe is someone else's, so tend reads the screen instead
            subprocess.run(["tmux", "-L", self.socket, "pipe-pane", "-O", "-t", pane, "cat >/dev/null"],
                           check=True)
        return pane, int(pid)

    def open_busy(self, n):
        """`n` more windows, each replaying a working agent's recorded turn
        again and again (`tend play --repeat`), its agent declared with
        TEND_AGENT: panes the daemon parses and evaluates all the time,
        beside the agents measured (the live bench's --latency-busy)."""
        corpus = os.path.join(harness.REPO, "tests", "corpus")
        for i in range(n):
            agent = BUSY_AGENTS[i % len(BUSY_AGENTS)]
            cast = os.path.join(corpus, agent, "working_then_done", "pane.cast")
            cmd = " ".join(shlex.quote(x) for x in [self.tend, "play", "--repeat", cast])
            subprocess.run(["tmux", "-L", self.socket, "new-window", "-d", "-t", "acc:", "-n", "busy%d" % i,
                            "-e", "TEND_AGENT=%s" % agent, cmd], check=True)

    def start_tend(self):
        d = os.path.join(self.outdir, "together-home")
        if os.path.exists(self.trace_path):
            os.unlink(self.trace_path)
        self.env, self.events = start_daemon(self.tend_cmd, d, self.trace_path)

    def close(self):
        if self.env:
            subprocess.run(self.tend_cmd("stop"), capture_output=True, env=self.env)
        if self.events:
            self.events.proc.terminate()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


class Run:
    def __init__(self, agent, tend, runs, poll_ms, hold, size, outdir, via_prompt=False, server=None):
        self.agent, self.tend, self.runs = agent, tend, runs
        self.via_prompt = via_prompt
        self.server = server
        self.poll = poll_ms / 1000.0
        self.hold = hold
        self.size = size
        self.outdir = outdir
        self.socket = server.socket if server else "tend-lat-%s-%d" % (agent, os.getpid())
        self.case = harness.Case(agent, "approval", os.path.join(outdir, agent), self.socket,
                                 shared=server is not None, size=size)
        self.prof = self.case.prof
        self.rx = re.compile(self.prof["approval_screen"])
        self.results = []
        self.events = None
        self.trace_path = None
        self.env = None

    def dialog_on(self, text):
        if self.agent in LAST_LINE_ONLY:
            lines = [ln for ln in text.splitlines() if ln.strip()]
            return bool(lines) and bool(self.rx.search(lines[-1]))
        return bool(self.rx.search(text))

    def tend_cmd(self, *args):
        return [self.tend, "-L", self.socket] + list(args)

    def open_together(self):
        c = self.case
        c.setup()
        c.pane, c.pane_pid = self.server.open_window(self.agent, c.work, harness.pane_command(c.env))
        c.t0 = time.time()
        self.trace_path = self.server.trace_path
        self.env = self.server.env
        self.events = self.server.events

    def open(self):
        if self.server:
            return self.open_together()
        c = self.case
        c.setup()
        w, h = self.size
        cmd = harness.pane_command(c.env)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "acc",
                        "-n", self.agent, "-x", str(w), "-y", str(h), "-c", c.work, cmd], check=True)
        out = c.tm.run("display", "-p", "-t", "acc:%s" % self.agent, "#{pane_id}\t#{pane_pid}")
        c.pane, pid = out.strip().split("\t")
        c.pane_pid = int(pid)
        c.t0 = time.time()
        d = c.tmpdir
        self.trace_path = os.path.join(self.outdir, "%s.trace" % self.agent)
        if os.path.exists(self.trace_path):
            os.unlink(self.trace_path)
        self.env, self.events = start_daemon(self.tend_cmd, d, self.trace_path)

    def close(self):
        if self.server:
            # the window goes with the agent; the server, at the end
            self.case.teardown()
            return
        subprocess.run(self.tend_cmd("stop"), capture_output=True, env=self.env)
        if self.events:
            self.events.proc.terminate()
        self.case.teardown()

    def reset_fake(self):
        req = urllib.request.Request("http://127.0.0.1:%d/_ctl/scenario" % self.case.port,
                                     data=json.dumps({"scenario": "approval"}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=5).read()

    def wait_identity(self, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            a = self.case.tm.run("show-options", "-pqv", "-t", self.case.pane, "@tend_agent", check=False).strip()
            if a == self.agent:
                return True
            time.sleep(0.2)
        return False

    def one(self, i, poller):
        c = self.case
        if i > 0:
            self.reset_fake()
        n_req0 = c.n_requests()
        if self.via_prompt:
            # The prompt goes the way a script sends it, and must arrive
            # without help: no second Enter.
            t_submit = time.time()
            r = subprocess.run(self.tend_cmd("prompt", c.pane, PROMPT, "--json"), capture_output=True,
                               text=True, env=self.env)
            end = time.time() + 10
            while time.time() < end and c.n_requests() == n_req0:
                time.sleep(0.1)
            if r.returncode != 0 or c.n_requests() == n_req0:
                return {"agent": self.agent, "run": i, "error": "tend prompt did not submit (exit %d: %s)"
                        % (r.returncode, (r.stdout + r.stderr).strip()[:200])}
        else:
            t_submit = c.submit(PROMPT, label=False)
        # Under load an Enter right after typed text is sometimes taken as
        # part of a paste: press it again while no request came.
        for _ in range(0 if self.via_prompt else 2):
            end = time.time() + 10
            while time.time() < end and c.n_requests() == n_req0:
                time.sleep(0.1)
            if c.n_requests() > n_req0:
                break
            c.keys([("Enter", False)], "submit_again")
        # the dialog
        t_dialog = None
        end = time.time() + 90
        while time.time() < end and t_dialog is None:
            for t0, t1, text in poller.since(t_submit):
                if self.dialog_on(text):
                    t_dialog = (t0 + t1) / 2
                    break
            time.sleep(0.05)
        near = [x for x in poller.since(t_dialog - 1.0) if x[0] <= t_dialog + 1.0]
        gaps = sorted(b[0] - a[0] for a, b in zip(near, near[1:]))
        poll_gap = round(gaps[len(gaps) // 2] * 1000, 1) if gaps else None
        if t_dialog is None:
            return {"agent": self.agent, "run": i, "error": "no dialog on screen within 90 s (requests %d -> %d)"
                    % (n_req0, c.n_requests())}
        time.sleep(self.hold)
        before = poller.since(time.time() - 0.1)
        before_text = before[-1][2] if before else None
        keys = self.prof["approve_keys"]
        if len(keys) > 1:
            c.keys(keys[:-1], "approve_type")
        t_key = time.time()
        c.keys(keys[-1:], "approve")
        t_left = None
        end = time.time() + 20
        while time.time() < end and t_left is None:
            for t0, t1, text in poller.since(t_key):
                if text != before_text and not self.dialog_on(text):
                    t_left = (t0 + t1) / 2
                    break
            time.sleep(0.05)
        # the turn ends (aider asks whether to add the output first)
        if self.agent == "aider":
            c.after_tool_prompts(timeout=30)
        else:
            c.wait_server(c.main_end(1), 60, "final_answer_end", note=False)
        time.sleep(1.5)
        trace = read_trace(self.trace_path)
        on = published_after(trace, c.pane, t_submit, lambda s: "Waiting" in s)
        off = published_after(trace, c.pane, t_key, lambda s: "Waiting" not in s)
        ev_on = self.events.find(lambda e: e.get("pane") == c.pane and e.get("state") == "waiting",
                                 t_submit)
        ev_off = self.events.find(lambda e: e.get("pane") == c.pane
                                  and e.get("event") == "pane.agent_status_changed"
                                  and e.get("state") != "waiting", t_key)
        ms = lambda a, b: None if a is None or b is None else round((a - b) * 1000, 1)  # noqa: E731
        rec = {
            "agent": self.agent, "run": i,
            "dialog_ms": ms(on[1] if on else None, t_dialog),
            "dialog_decided_ms": ms(on[0] if on else None, t_dialog),
            "dialog_event_ms": ms(ev_on[0] if ev_on else None, t_dialog),
            "leave_ms": ms(off[1] if off else None, t_left),
            "leave_from_key_ms": ms(off[1] if off else None, t_key),
            "leave_screen_from_key_ms": ms(t_left, t_key),
            "t_submit": t_submit, "t_dialog": t_dialog, "t_key": t_key, "t_left": t_left,
            "poll_ms": round(self.poll * 1000, 1),
            # what the capture poll really achieved around the dialog (a
            # loaded machine stretches it): the on-screen time is that uncertain
            "poll_gap_ms": poll_gap,
        }
        if on is None:
            rec["error"] = "tend never published waiting after the submit"
        return rec

    def go(self, opened=False):
        if not opened:
            self.open()
        c = self.case
        try:
            err = None
            if c.start_agent() is None:
                err = "agent never became ready (its ready screen %r did not show)" % self.prof["ready"]
            elif not self.wait_identity():
                err = "tend did not identify the agent from its process tree (@tend_agent)"
            if err:
                rec = {"agent": self.agent, "error": err}
                print(json.dumps(rec), flush=True)
                return [rec]
            time.sleep(2.0)
            poller = Poller(c.tm, c.pane, self.poll)
            poller.start()
            for i in range(self.runs):
                poller.trim(time.time() - 1)
                rec = self.one(i, poller)
                print(json.dumps(rec), flush=True)
                self.results.append(rec)
                if "error" in rec and rec.get("dialog_ms") is None and "dialog" in rec["error"]:
                    break
            poller.halt.set()
            return self.results
        finally:
            self.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    repo = harness.REPO
    default_tend = os.path.join(repo, "target", "release", "tend")
    if not os.path.exists(default_tend):
        default_tend = os.path.join(repo, "target", "debug", "tend")
    ap.add_argument("--agents", default="claude,codex,gemini,aider,opencode")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--poll-ms", type=float, default=5.0)
    ap.add_argument("--hold", type=float, default=1.5, help="seconds the dialog stays before approving")
    ap.add_argument("--size", default="120x40")
    ap.add_argument("--tend", default=default_tend)
    ap.add_argument("--agent-dir", action="append", default=[], metavar="AGENT=DIR",
                    help="where that agent is installed when not in AGENTS_DIR (e.g. opencode=/opt/agent2)")
    ap.add_argument("--via-tend-prompt", action="store_true",
                    help="send each turn's prompt with `tend prompt` (no second Enter): checks that it submits")
    ap.add_argument("--together", action="store_true",
                    help="every agent in ONE tmux server under one tend daemon, all driven at once "
                         "(each dialog appears while the other agents stream)")
    ap.add_argument("--foreign-pipe", action="store_true",
                    help="with --together: a pipe-pane of someone else's on every agent's pane (as the "
                         "agentlab's recorder has), so tend reads their screens instead of their pipes")
    ap.add_argument("--busy", type=int, default=0, metavar="N",
                    help="with --together: N more panes replaying working agents' recorded turns (tend play "
                         "--repeat, the agent declared) beside the agents measured")
    ap.add_argument("--out", default=os.path.join(harness.ACC_TMP, "latency"))
    a = ap.parse_args()
    if a.busy and not a.together:
        sys.exit("latency: --busy needs --together (the busy panes share the agents' server)")
    if not os.access(a.tend, os.X_OK):
        sys.exit("latency: no tend binary at %s: build it (cargo build --release -p tend) or pass --tend" % a.tend)
    if not shutil_which("tmux"):
        sys.exit("latency: tmux is not installed")
    size = harness.parse_size(a.size)
    os.makedirs(a.out, exist_ok=True)
    allres = {}
    failed = []
    dirs = dict(x.split("=", 1) for x in a.agent_dir if "=" in x)
    default_dir = harness.AGENTS_DIR
    if a.together:
        allres = together(a, size, dirs, default_dir)
        failed = [ag for ag, res in allres.items() if not any(r.get("dialog_ms") is not None for r in res)]
    for agent in [x for x in a.agents.split(",") if x and not a.together]:
        # base_env reads it at each case: the agent's own folder on PATH
        harness.AGENTS_DIR = dirs.get(agent, default_dir)
        if agent not in harness.PROFILES:
            sys.exit("latency: unknown agent %s (known: %s)" % (agent, ", ".join(harness.PROFILES)))
        try:
            res = Run(agent, a.tend, a.runs, a.poll_ms, a.hold, size, a.out, a.via_tend_prompt).go()
        except Exception as e:  # an agent that cannot be set up is reported, the others still run
            res = [{"agent": agent, "error": "%s: %s" % (type(e).__name__, e)}]
            print(json.dumps(res[0]), flush=True)
        allres[agent] = res
        if not any(r.get("dialog_ms") is not None for r in res):
            failed.append(agent)
    summary = {}
    for agent, res in allres.items():
        row = {"runs": sum(1 for r in res if r.get("dialog_ms") is not None)}
        for key in ("dialog_ms", "dialog_decided_ms", "dialog_event_ms", "leave_ms", "leave_from_key_ms",
                    "leave_screen_from_key_ms"):
            vals = [r[key] for r in res if r.get(key) is not None]
            row[key] = {"p50": pct(vals, 0.5), "p90": pct(vals, 0.9), "max": max(vals) if vals else None}
        summary[agent] = row
    with open(os.path.join(a.out, "latency.json"), "w") as f:
        json.dump({"tend": a.tend, "runs": allres, "summary": summary}, f, indent=1)
    print("\n%-9s %4s  %-22s %-22s %-22s" % ("agent", "runs", "dialog->@tend_state", "leave->@tend_state",
                                              "(decided, no publish)"))
    for agent, row in summary.items():
        f = lambda k: "p50 %s p90 %s" % (row[k]["p50"], row[k]["p90"])  # noqa: E731
        print("%-9s %4d  %-22s %-22s %-22s" % (agent, row["runs"], f("dialog_ms"), f("leave_ms"),
                                                f("dialog_decided_ms")))
    if failed:
        print("\nnot measured: %s (see the lines above)" % ", ".join(failed))
        sys.exit(2)


def together(a, size, dirs, default_dir):
    """Every agent at once in one server: the cases are set up one by one
    (harness.AGENTS_DIR is read at setup), then driven in threads."""
    server = Server(a.tend, size, a.out, a.foreign_pipe)
    runs = {}
    allres = {}
    try:
        for agent in [x for x in a.agents.split(",") if x]:
            if agent not in harness.PROFILES:
                sys.exit("latency: unknown agent %s (known: %s)" % (agent, ", ".join(harness.PROFILES)))
            harness.AGENTS_DIR = dirs.get(agent, default_dir)
            r = Run(agent, a.tend, a.runs, a.poll_ms, a.hold, size, a.out, a.via_tend_prompt, server=server)
            r.open()
            runs[agent] = r
        harness.AGENTS_DIR = default_dir
        server.open_busy(a.busy)

        def drive(agent, r):
            try:
                allres[agent] = r.go(opened=True)
            except Exception as e:  # one agent's failure is reported, the others go on
                allres[agent] = [{"agent": agent, "error": "%s: %s" % (type(e).__name__, e)}]
                print(json.dumps(allres[agent][0]), flush=True)

        threads = [threading.Thread(target=drive, args=(ag, r), daemon=True) for ag, r in runs.items()]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.close()
    return allres


def shutil_which(name):
    import shutil
    return shutil.which(name)


if __name__ == "__main__":
    main()
