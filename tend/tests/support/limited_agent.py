#!/usr/bin/env python3
"""A stand-in for Claude Code at its plan's usage limit, for
tend/tests/limits.rs: draws Claude Code 2.1.332's limit screen (as
tests/corpus/claude/limit@80x24 shows it: the limit as the last message above
the input box) with the reset the test names, then writes every line typed
into it, with the Unix time it came, to LOG; at the first it draws Claude
Code's working screen (the footer's "esc to interrupt").

    limited_agent.py RESET_UNIX LOG

The reset is drawn with its seconds (Claude Code draws only the minute), so
that a test need not wait for a whole minute: tend reads the words either
way."""
import datetime
import os
import sys
import termios
import time

RULE = "\u2500" * 60


def draw(lines, footer):
    out = "\x1b[2J\x1b[H" + "\r\n".join(lines) + "\r\n" + RULE + "\r\n\u276f \r\n" + RULE + "\r\n" + footer
    sys.stdout.write(out)
    sys.stdout.flush()


def main():
    reset, log = float(sys.argv[1]), sys.argv[2]
    t = datetime.datetime.fromtimestamp(reset, datetime.timezone.utc)
    words = "%d:%02d:%02d%s (UTC)" % ((t.hour % 12) or 12, t.minute, t.second, "am" if t.hour < 12 else "pm")
    # Typed text is read, not echoed onto the screen: the screen is ours.
    fd = sys.stdin.fileno()
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    asked = ["\u276f Write a short poem about tmux.",
             "  \u23bf  You've hit your 5-hour limit \u00b7 resets " + words, ""]
    draw(asked, "  \u23f8 manual mode on \u00b7 ? for shortcuts")
    n = 0
    for line in sys.stdin:
        n += 1
        with open(log, "a") as f:
            f.write("%.3f %s\n" % (time.time(), line.rstrip("\n")))
        if n == 1:
            draw(asked + ["\u276f " + line.strip(), "", "\u00b7 Vibing\u2026 (1s)"],
                 "  \u23f8 manual mode on \u00b7 esc to interrupt")
    time.sleep(3600)


if __name__ == "__main__":
    main()
