#!/usr/bin/env python3
"""Captures Claude Code's session files (`<config>/sessions/<pid>.json`) as
they change, for tend's tests of the session-file channel.

    session_capture.py watch GLOB OUT.jsonl [--secs N]
        every version of every file matching GLOB (a `sessions/*.json`
        glob), each with its time, mode and owner, until N seconds pass
        (polls every 20 ms: a lab tool, not tend's way of watching);
    session_capture.py scrub IN.jsonl OUT.jsonl
        the same timeline with what names this machine or this run
        replaced: the session id, the folders, the machine id in
        `pidDomain`, the socket path; `t` made seconds from the first line.

Used beside `harness.py record --agent claude ...`; the scrubbed timelines are
tend's fixtures in detector/tests/session_files/. The `<pid>.<hash>.key`
files beside the session files hold a peer token and are never captured.
"""
import argparse
import glob
import json
import os
import re
import sys
import time


def watch(pattern, out_path, secs):
    seen = {}
    end = time.time() + secs
    with open(out_path, "a", encoding="utf-8") as out:
        while time.time() < end:
            cur = {}
            for p in glob.glob(pattern):
                if not p.endswith(".json"):
                    continue
                try:
                    st = os.lstat(p)
                    with open(p, "rb") as f:
                        body = f.read(1 << 20)
                except OSError:
                    continue
                cur[p] = body
                if seen.get(p) != body:
                    out.write(json.dumps({"t": time.time(), "file": os.path.basename(p),
                                          "mode": oct(st.st_mode & 0o7777), "uid": st.st_uid,
                                          "body": body.decode("utf-8", "replace")}) + "\n")
                    out.flush()
            for p in seen:
                if p not in cur:
                    out.write(json.dumps({"t": time.time(), "file": os.path.basename(p), "gone": True}) + "\n")
                    out.flush()
            seen = cur
            time.sleep(0.02)


SESSION = "00000000-0000-4000-8000-000000000001"


def scrub_body(body):
    d = json.loads(body)
    if "sessionId" in d:
        d["sessionId"] = SESSION
    if "cwd" in d:
        d["cwd"] = "/home/user/work"
    if isinstance(d.get("pidDomain"), str):
        d["pidDomain"] = re.sub(r"linux:[0-9a-f]+:", "linux:" + "0" * 32 + ":", d["pidDomain"])
    if isinstance(d.get("messagingSocketPath"), str):
        d["messagingSocketPath"] = "/tmp/cc-socks/%s.sock" % d.get("pid", 0)
    return json.dumps(d, separators=(",", ":"))


def scrub(src, dst):
    t0 = None
    lines = []
    with open(src, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if not r.get("file", r.get("path", "")).endswith(".json"):
                continue
            t0 = r["t"] if t0 is None else t0
            o = {"t": round(r["t"] - t0, 3)}
            if r.get("gone"):
                o["gone"] = True
            else:
                o["body"] = scrub_body(r["body"])
            lines.append(json.dumps(o))
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("watch")
    w.add_argument("glob")
    w.add_argument("out")
    w.add_argument("--secs", type=float, default=300)
    s = sub.add_parser("scrub")
    s.add_argument("src")
    s.add_argument("dst")
    a = ap.parse_args()
    if a.cmd == "watch":
        watch(a.glob, a.out, a.secs)
    else:
        scrub(a.src, a.dst)


if __name__ == "__main__":
    sys.exit(main())
