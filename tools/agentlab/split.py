#!/usr/bin/env python3
"""Writes tests/corpus/SPLIT.toml: which recordings are held out.

The rule was fixed before any detection rule was written against the new
recordings (when 14 of them existed), and it looks only at names, so that
nobody could choose the held-out cases by how tend does on them: a recording
named `agent/scenario@WxH` (every recording beyond the first 28 200x50 ones,
whose names have no `@`) is held out when the SHA-256 of its name, read as a
number, is divisible by 3. Detection rules are written against the other
recordings only; detector/tests/corpus.rs reports both parts and checks that
no manifest cites a held-out recording.

Every recording at 100x30, 160x45 or 140x35 is held out as well, whatever the
agent: batches recorded after the agent's rules were frozen, at sizes no
earlier recording of it has (for agents added later, e.g. Kilo Code, the only
held-out recordings).

Recordings at the wide-screen batch's sizes (140x40, 200x50, 250x60 and a
tall narrow 72x60, recorded from 2026-12-05 for every agent) are split by the
name rule whatever the agent, the five added later included: the rule was
fixed before the batch was recorded.

Recordings of a newer version of an agent (`agent/scenario-vVERSION@WxH`,
recorded with ACC_VERSION_TAG=1) are split like an agent added later: held
out exactly at the fresh sizes, recorded after the manifest change.

Recordings of a plan's usage limit (`agent/limit…@WxH`: limit,
limit_weekly, limit_resume; issue #46) are split like an agent added
later: read to write the limit rules at 80x24 and 120x40, held out at the
fresh sizes, recorded after the manifests' limit rules were committed.

Recordings of an agent behind a wrapper (`agent/scenario~VIA@WxH`, made with
`harness.py record --via ssh|script|script-ssh|tend-run|tend-run-ssh`) have a rule of their own:
held out exactly when at 140x35, the batch recorded through ssh after the
others and never read; the others (through ssh at 120x40, through a script
at 100x30) were read to check their labels and are in-sample, whatever
their name's hash or size.

BURNED lists held-out recordings that were looked at to mend a rule after all
(each with why): from then on they count as in-sample, and the held-out
figure is taken without them.

    python3 tools/agentlab/split.py [CORPUS_DIR]
"""
import hashlib
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tests", "corpus")

HEADER = """# The corpus split. Detection rules are written against every recording
# not listed in `holdout`; the held-out recordings are replayed only to
# measure (detector/tests/corpus.rs), never read while writing rules, and no
# manifest may cite one.
#
# Method, fixed before any rule was written against the new recordings and
# looking only at names: a recording named `agent/scenario@WxH` (every one
# beyond the first 28 200x50 recordings) is held out when the SHA-256 of its
# name, read as a number, is divisible by 3 (aider, Claude Code, Codex,
# Gemini CLI and Qwen Code; recordings of the other agents added later were
# read whole to write their rules and are in-sample). Every recording at
# 100x30, 160x45 or 140x35 is held out too, whatever the agent: batches
# recorded after the agent's rules were frozen, at sizes no earlier recording
# of it has. Recordings behind a wrapper (`agent/scenario~VIA@WxH`: ssh, a
# script, a script running ssh) are held out exactly when at 140x35 (the
# batch recorded through ssh after the others and never read); the rest of
# them were read to check their labels and are in-sample. Recordings of a
# newer version of an agent (`agent/scenario-vVERSION@WxH`) are held out
# exactly at those fresh sizes, recorded after the manifest change, and so
# are the recordings of a plan's usage limit (`agent/limit…@WxH`). The
# wide-screen batch (140x40, 200x50, 250x60 and a tall narrow 72x60, every
# agent) is split by the name rule, whatever the agent. `burned`
# lists held-out recordings that were looked at to mend a rule after all:
# they count as in-sample from then on. Regenerate with
# `python3 tools/agentlab/split.py`.
"""

# Held out by the rule, then read to mend a rule: in-sample from then on.
BURNED = {
    "codex/error_401@80x24": "a 401 message wrapped at the pane's edge was never read as an error",
    "codex/plan@120x40": "the plan dialog's footer differs from the approval dialog's",
    "gemini/plan@120x40": "the plan dialog offers no 'No' option and read as a question",
    "aider/question@100x30": "a slow start-up's output read as a turn, and its silence as waiting",
    "qwen/approval@80x24": "read while setting the recorder up: the approval dialog comes seconds after the tool call",
    "qwen/working_then_done@80x24": "read while setting the recorder up: the first turn the profile drove",
    "aider/exit@160x45": "read with aider/exit: '/exit' submitted read as work until aider ended",
    "aider/ctrlc_stream@80x24": "Ctrl-C mid-stream read as a finished turn: at 24 rows the cut reply pushed its prompt out of sight",
    "opencode/working_then_done@72x60": "the finished turn read as work: at 72 columns the footer wraps 'ctrl+p' and 'commands' apart",
}


# Recordings (by name prefix) whose screen holds nothing that tells the
# labelled state from the one tend reads, with what was looked for: the
# corpus test holds them to coarse >= 99 % instead of the exact bars, and
# keeps them in the pooled figures.
NO_SCREEN_EVIDENCE = {
    "cline/esc_stream@": "Cline CLI 3.0.65 draws an Esc'd answer exactly as a finished one ('*' for "
                         "the spinner, the same colour, no notice, title or bell), so the interrupted "
                         "turn reads as completed",
}


# A second held-out batch, recorded after the rules were frozen (commit
# e73f86c), at sizes no earlier recording has: every recording at these
# sizes is held out.
# A third batch at 140x35, recorded on 2026-12-03 with the rules of commit
# 640a456 (the last rule change before it), is held out the same way.
FRESH_SIZES = ("@100x30", "@160x45", "@140x35")


# The agents the name rule applies to: their second set was recorded in one
# batch before rules were written against it (Qwen Code: its recordings were
# split by the rule before its rules were rewritten). Recordings of other
# agents added later were read whole to write their rules: in-sample.
SPLIT_AGENTS = ("aider", "claude", "codex", "gemini", "qwen")


# Recordings behind a wrapper (`scenario~VIA@WxH`, harness.py record --via):
# the batch at this size, recorded through ssh after the in-sample ones
# (through ssh at 120x40, through a script at 100x30, read to check their
# labels), is held out and was never read; no other wrapper recording is,
# whatever the hash of its name or its size.
WRAPPER_HELD_SIZE = "@140x35"


# Recordings of a newer version of an agent already in the corpus
# (`agent/scenario-vVERSION@WxH`, harness.py with ACC_VERSION_TAG=1) are split
# like an agent added later: read to write the rules at their first sizes,
# held out at the fresh sizes recorded after the manifest change, whatever the
# hash of their name.
VERSIONED = re.compile(r"-v\d[^/@~]*(~[^@]*)?@")


# Recordings of a plan's usage limit (fakellm's limit scenarios): read to
# write the limit rules at their first sizes, held out at the fresh sizes
# recorded after those rules were committed, whatever the hash of the name.
LIMIT = re.compile(r"^[^/]+/limit(_[a-z]+)?@")


# The wide-screen batch (2026-12-05): every agent at the widths users run
# full-screen agents at, and a tall narrow pane. Fixed before any of it was
# recorded: at these sizes a recording of any agent, the five added later
# included, is held out when the SHA-256 of its name is divisible by 3, as
# the first agents' second set was; the rest are read to write rules.
WIDE_SIZES = ("@140x40", "@200x50", "@250x60", "@72x60")


def hashed_out(name):
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0


def held_out(name):
    if "~" in name.split("/", 1)[-1]:
        return name.endswith(WRAPPER_HELD_SIZE)
    # the wide-screen batch is hash-split whatever the version (fixed before
    # any versioned recording at these sizes was made)
    if name.endswith(WIDE_SIZES):
        return hashed_out(name)
    if VERSIONED.search(name) or LIMIT.search(name):
        return name.endswith(FRESH_SIZES)
    # the fresh sizes are held out for every agent: an agent added later has
    # its rules written on its other recordings, then a batch at these sizes
    if name.endswith(FRESH_SIZES):
        return True
    if name.endswith(WIDE_SIZES):
        return hashed_out(name)
    if not name.startswith(tuple(a + "/" for a in SPLIT_AGENTS)):
        return False
    return "@" in name and hashed_out(name)


def main():
    names = []
    for agent in sorted(os.listdir(ROOT)):
        d = os.path.join(ROOT, agent)
        if not os.path.isdir(d):
            continue
        for case in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, case, "labels.json")):
                names.append(f"{agent}/{case}")
    held = [n for n in names if held_out(n) and n not in BURNED]
    with open(os.path.join(ROOT, "SPLIT.toml"), "w") as f:
        f.write(HEADER)
        f.write("holdout = [\n")
        for n in held:
            f.write(f'  "{n}",\n')
        f.write("]\n\n")
        f.write("# Looked at after all; in-sample now.\n")
        f.write("burned = [\n")
        for n, why in sorted(BURNED.items()):
            f.write(f'  "{n}",  # {why}\n')
        f.write("]\n\n")
        f.write("# Recordings (by name prefix) whose screen cannot tell the labelled state\n"
                "# from tend's reading: held to coarse >= 99 % instead of the exact bars.\n")
        f.write("[no_screen_evidence]\n")
        for prefix, why in sorted(NO_SCREEN_EVIDENCE.items()):
            f.write(f'"{prefix}" = "{why}"\n')
    print(f"{len(names)} recordings, {len(held)} held out, {len(BURNED)} burned")


if __name__ == "__main__":
    main()
