#!/usr/bin/env python3
"""batch - record many cases, at most N at once (default 2).

    python3 batch.py [--parallel 2] [--full DIR] [--corpus DIR] CASES_FILE|-

CASES_FILE: one case per line, "agent scenario COLSxROWS [VIA]" (# comments
allowed; VIA: ssh, script, script-ssh, tend-run or tend-run-ssh, see `harness.py record --via`;
ACC_VERSION_TAG=1 names each case S-vVERSION@size, see harness.py).
Each case runs `harness.py record` (its own tmux server) with the full
recording in DIR/<agent>/<scenario>[~<via>]@<size>/ (default $ACC_TMP/recordings) and
the four corpus files copied into the corpus (default: the repository's
tests/corpus).  A log line per case goes to stdout.
"""
import argparse
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the tools
from harness import case_name  # noqa: E402  (ACC_VERSION_TAG=1 adds -vVERSION)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--full", default=os.path.join(os.environ.get("ACC_TMP", "/tmp/acc"), "recordings"))
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--logdir", default=None)
    ap.add_argument("--no-publish", action="store_true", help="do not copy into the corpus")
    a = ap.parse_args()
    src = sys.stdin if a.cases == "-" else open(a.cases)
    cases = []
    for line in src:
        line = line.split("#")[0].strip()
        if line:
            words = line.split()
            ag, sc, size = words[:3]
            cases.append((ag, sc, size, words[3] if len(words) > 3 else None))
    sem = threading.Semaphore(a.parallel)
    lock = threading.Lock()

    def run(ag, sc, size, via):
        with sem:
            w, h = (int(x) for x in size.split("x"))
            name = case_name(ag, sc, via, w, h)
            out = os.path.join(a.full, ag, name)
            cmd = [sys.executable, os.path.join(HERE, "harness.py"), "record", "--agent", ag, "--scenario", sc,
                   "--size", size, "--out", out]
            if via:
                cmd += ["--via", via]
            if a.corpus:
                cmd += ["--corpus", a.corpus]
            if a.no_publish:
                cmd += ["--no-publish"]
            t = time.time()
            r = subprocess.run(cmd, capture_output=True, text=True)
            if a.logdir:
                with open(os.path.join(a.logdir, "%s-%s.log" % (ag, name)), "w") as f:
                    f.write(r.stdout + r.stderr)
            last = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
            with lock:
                print("%s %s/%s rc=%d %.0fs | %s" % (time.strftime("%H:%M:%S"), ag, name, r.returncode,
                                                     time.time() - t, " || ".join(last[-3:])), flush=True)
            time.sleep(2)

    ths = []
    for c in cases:
        th = threading.Thread(target=run, args=c)
        th.start()
        ths.append(th)
        time.sleep(3)  # stagger starts (agent startup is the CPU-heavy part)
    for th in ths:
        th.join()


if __name__ == "__main__":
    main()
