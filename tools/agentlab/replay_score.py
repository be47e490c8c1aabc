#!/usr/bin/env python3
"""replay_score - score `tend replay --json` against recorded labels, offline.

  replay_score.py --tend PATH [--set DIR] [--only GLOB] [--screen-only] [--json OUT]
                  [--grace 2.0] [--step 0.25]

DIR defaults to the repository's tests/corpus.

For every DIR/<agent>/<case>/ holding pane.cast + labels.json, runs
  tend replay DIR/<agent>/<case>/pane.cast --agent <agent> --json
and reads its transitions: a JSON array, or one JSON object per line, each with
a time ("t", "time" or "at", seconds on the recording's clock), "state" and
"reason". The state at time x is the last transition at or before x.

Samples every --step seconds over each labelled segment; skips label null and
[T+unc_lo, T+unc_hi+grace] around boundaries (the steady core).
  exact  : predicted state == label state (and reason, when waiting)
  coarse : 3 classes W (working, quiet) / B (waiting approval|question|error) / R (rest)
  caught : every labelled waiting(approval|question|error) segment has >=1 sample
           predicted waiting with that reason inside it
  false_demand : samples labelled working predicted waiting/completed
  false_completed_s : seconds labelled working (or waiting) predicted completed,
                      boundaries included
Cases whose labels carry expect_no_demand count any waiting/completed sample as
a false demand. Prints a table and a last line with the pooled figures.

--only GLOB keeps the cases whose "<agent>/<case>" matches (e.g. '*~tend-run*').
--screen-only replays each recording with the agent's own reports (OSC 7501,
recorded under `tend run`) cut out of its bytes: what tend reads of the same
run from the screen alone, to set beside the scores with the agent's word.
"""
import argparse, fnmatch, glob, json, os, re, shutil, subprocess, sys, tempfile

# an OSC 7501 sequence (a report or the query), ended by BEL or ST
PSP = re.compile(r"\x1b\]7501;[^\x07\x1b]*(?:\x07|\x1b\\)")


def screen_only_copy(case, tmp):
    """A copy of the case's pane.cast (and procs.jsonl) without OSC 7501."""
    out = os.path.join(tmp, "pane.cast")
    with open(os.path.join(case, "pane.cast"), encoding="utf-8", errors="surrogateescape") as f:
        lines = f.read().splitlines()
    with open(out, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(lines[0] + "\n")
        for l in lines[1:]:
            if "7501" in l:
                ev = json.loads(l)
                if isinstance(ev[2], str):
                    ev[2] = PSP.sub("", ev[2])
                l = json.dumps(ev)
            f.write(l + "\n")
    if os.path.exists(os.path.join(case, "procs.jsonl")):
        shutil.copy(os.path.join(case, "procs.jsonl"), os.path.join(tmp, "procs.jsonl"))
    return out

HERE = os.path.dirname(os.path.abspath(__file__))

def load_preds(out):
    out = out.strip()
    if not out:
        return []
    try:
        v = json.loads(out)
        items = v if isinstance(v, list) else v.get("transitions", [v])
    except ValueError:
        items = [json.loads(l) for l in out.splitlines() if l.strip().startswith("{")]
    res = []
    for it in items:
        t = it.get("t", it.get("time", it.get("at")))
        if t is None:
            continue
        res.append((float(t), it.get("state"), it.get("reason")))
    res.sort(key=lambda x: x[0])
    return res

def at(preds, x):
    cur = (None, None)
    for t, s, r in preds:
        if t <= x:
            cur = (s, r)
        else:
            break
    return cur

def cls(s, r):
    if s in ("working", "quiet", "directing"):
        return "W"
    if s == "waiting" and r in ("approval", "question", "error"):
        return "B"
    return "R"

def score(case, tend, grace, step, screen_only=False):
    if screen_only:
        with tempfile.TemporaryDirectory() as tmp:
            return score_cast(case, screen_only_copy(case, tmp), tend, grace, step)
    return score_cast(case, os.path.join(case, "pane.cast"), tend, grace, step)


def score_cast(case, cast, tend, grace, step):
    meta = json.load(open(os.path.join(case, "meta.json")))
    lab = json.load(open(os.path.join(case, "labels.json")))
    agent = lab.get("expected_agent") or meta.get("agent")
    cmd = [tend, "replay", cast, "--json"]
    if agent:
        cmd[3:3] = ["--agent", agent]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"case": case, "error": "timeout"}
    if p.returncode != 0:
        return {"case": case, "error": "exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])}
    try:
        preds = load_preds(p.stdout)
    except Exception as e:
        return {"case": case, "error": "unparsable output: %s" % e}
    tl = lab["timeline"]
    dur = lab.get("duration") or (tl[-1]["t"] + 5)
    nodemand = lab.get("expect_no_demand", False)
    excl = []
    for b in tl[1:]:
        lo, hi = (b.get("unc") or [0, 0])[:2]
        excl.append((b["t"] + min(lo, 0), b["t"] + max(hi, 0) + grace))
    n = ex = co = fd = 0
    false_done = 0.0
    segs = []
    for i, b in enumerate(tl):
        end = tl[i + 1]["t"] if i + 1 < len(tl) else dur
        segs.append((b, end))
    caught_need = caught_ok = 0
    misses = []
    for b, end in segs:
        st, rs = b.get("state"), b.get("reason")
        need = st == "waiting" and rs in ("approval", "question", "error")
        hit = False
        x = b["t"]
        while x < end:
            if st is not None or nodemand:
                ps, pr = at(preds, x)
                inwin = any(a <= x < c for a, c in excl)
                # every sample, boundaries included: how long a finished turn
                # was shown while the agent still worked
                if st in ("working", "waiting") and ps == "completed":
                    false_done += step
                if need and ps == "waiting" and pr == rs and x >= b["t"] + min((b.get("unc") or [0])[0], 0):
                    hit = True
                if not inwin:
                    if nodemand:
                        n += 1
                        bad = ps in ("waiting", "completed")
                        fd += bad
                        ex += not bad
                        co += not bad
                    else:
                        n += 1
                        e = ps == st and (st != "waiting" or pr == rs)
                        ex += e
                        co += cls(ps, pr) == cls(st, rs)
                        if st == "working" and ps in ("waiting", "completed"):
                            fd += 1
                        if not e and len(misses) < 4:
                            misses.append("t=%.1f label %s%s got %s%s" % (x, st, "/" + rs if rs else "", ps, "/" + pr if pr else ""))
            x += step
        if need:
            caught_need += 1
            caught_ok += hit
    return {"case": os.path.relpath(case), "n": n, "exact": ex / n if n else None, "coarse": co / n if n else None,
            "false_demand": fd, "caught": "%d/%d" % (caught_ok, caught_need), "caught_ok": caught_ok,
            "caught_need": caught_need, "misses": misses, "transitions": len(preds),
            "false_completed_s": round(false_done, 2)}

def main():
    ap = argparse.ArgumentParser(description="score `tend replay --json` against recorded labels, offline")
    ap.add_argument("--tend", required=True, help="the tend binary to run")
    ap.add_argument("--set", default=os.path.normpath(os.path.join(HERE, "..", "..", "tests", "corpus")),
                    help="folder of <agent>/<case>/ recordings (default: the repository's tests/corpus)")
    ap.add_argument("--only", help="keep cases whose <agent>/<case> matches this glob")
    ap.add_argument("--screen-only", action="store_true",
                    help="cut the agent's own reports (OSC 7501) out of each recording first")
    ap.add_argument("--json")
    ap.add_argument("--grace", type=float, default=2.0)
    ap.add_argument("--step", type=float, default=0.25)
    a = ap.parse_args()
    cases = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(a.set, "*", "*", "labels.json")))
    if a.only:
        cases = [c for c in cases if fnmatch.fnmatch("/".join(c.split(os.sep)[-2:]), a.only)]
    rows = [score(c, a.tend, a.grace, a.step, a.screen_only) for c in cases]
    N = EX = CO = FD = CN = CO_K = 0
    FC = 0.0
    errs = 0
    for r in rows:
        if "error" in r:
            errs += 1
            print("%-40s ERROR %s" % (r["case"][-40:], r["error"]))
            continue
        print("%-40s n=%4d exact=%.3f coarse=%.3f caught=%s false_demand=%d false_completed=%.1fs %s" % (
            r["case"][-40:], r["n"], r["exact"] or 0, r["coarse"] or 0, r["caught"], r["false_demand"],
            r["false_completed_s"], "; ".join(r["misses"][:2])))
        FC += r["false_completed_s"]
        N += r["n"]; EX += r["exact"] * r["n"] if r["exact"] is not None else 0
        CO += r["coarse"] * r["n"] if r["coarse"] is not None else 0
        FD += r["false_demand"]; CN += r["caught_need"]; CO_K += r["caught_ok"]
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    ok = N > 0
    print("POOLED cases=%d errors=%d exact=%.3f coarse=%.3f caught=%d/%d false_demand=%d false_completed=%.1fs" % (
        len(rows), errs, EX / N if ok else 0, CO / N if ok else 0, CO_K, CN, FD, FC))

if __name__ == "__main__":
    main()
