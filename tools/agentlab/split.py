#!/usr/bin/env python3
"""Writes tests/corpus/SPLIT.toml: which recordings are held out.

The rule was fixed before the recordings it applies to were made, so that
nobody could choose the held-out cases by how tend does on them: a recording
named `agent/scenario@WxH` (every recording beyond the first 28 200x50 ones,
whose names have no `@`) is held out when the SHA-256 of its name, read as a
number, is divisible by 3. Detection rules are written against the other
recordings only; detector/tests/corpus.rs reports both parts and checks that
no manifest cites a held-out recording.

    python3 tools/agentlab/split.py [CORPUS_DIR]
"""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "tests", "corpus")

HEADER = """# The corpus split. Detection rules are written against every recording
# not listed here; the held-out recordings below are replayed only to
# measure (detector/tests/corpus.rs), never read while writing rules, and no
# manifest may cite one.
#
# Method, fixed before the new recordings were made: a recording named
# `agent/scenario@WxH` (every recording beyond the first 28 200x50 ones) is
# held out when the SHA-256 of its name, read as a number, is divisible by 3.
# Regenerate with `python3 tools/agentlab/split.py`.
"""


def held_out(name):
    return "@" in name and int(hashlib.sha256(name.encode()).hexdigest(), 16) % 3 == 0


def main():
    names = []
    for agent in sorted(os.listdir(ROOT)):
        d = os.path.join(ROOT, agent)
        if not os.path.isdir(d):
            continue
        for case in sorted(os.listdir(d)):
            if os.path.isfile(os.path.join(d, case, "labels.json")):
                names.append(f"{agent}/{case}")
    held = [n for n in names if held_out(n)]
    with open(os.path.join(ROOT, "SPLIT.toml"), "w") as f:
        f.write(HEADER)
        f.write("holdout = [\n")
        for n in held:
            f.write(f'  "{n}",\n')
        f.write("]\n")
    print(f"{len(names)} recordings, {len(held)} held out")


if __name__ == "__main__":
    main()
