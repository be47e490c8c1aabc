#!/usr/bin/env python3
"""A stand-in agent that speaks OSC 7501 (the Program Status Protocol) as
Claude Code 2.1 does.

It asks the terminal whether it listens -- ``ESC ] 7501 ; ? BEL`` and a DA1
request -- and reports only if the query comes back before the DA1 reply.
Then it steps through a turn, one step per ``n`` typed into it (``q``
quits with the exit code given by ``--exit``):

  start   idle (``app=fake-agent``)
  n       working
  n       blocked, kind=permission, msg "approve Bash: rm -rf ./build"
  n       working, a background task (child ``bash-1``, title "Run the long
          command"), the turn's text ends (the screen looks finished), then
          working with msg "1 shell still running"
  n       the task ends (``clear`` for ``bash-1``), then done

With ``--screens DIR`` it draws ``ready.bin``, ``working.bin`` and
``finished.bin`` from DIR (a real agent's recorded output) at start, at the
first step and at the third; otherwise a line of text per step. With
``--burst MB`` it prints that much at full speed just before the permission
report (a report must survive output tend had to drop). With
``--force`` it reports whether or not the terminal listens (a program that
ignores the handshake). Every step also prints nothing else: what a test
sees is what tend makes of it.
"""

import argparse
import base64
import os
import re
import select
import sys
import termios
import time
import tty

ECHO = b"\x1b]7501;?\x1b\\"
DA1_REPLY = re.compile(rb"\x1b\[\?[0-9;]*c")


def out(b):
    while b:
        n = os.write(1, b)
        b = b[n:]


def report(body):
    out(b"\x1b]7501;" + body.encode() + b"\x1b\\")


def b64(s):
    return base64.b64encode(s.encode()).decode()


def handshake(fd, timeout):
    """Sends the query and DA1; True when the echo comes first. Reads on
    until the DA1 reply too, so that it is not taken for keys."""
    out(b"\x1b]7501;?\x07\x1b[c")
    buf = b""
    listening = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        chunk = os.read(fd, 1024)
        if not chunk:
            break
        buf += chunk
        echo = buf.find(ECHO)
        da1 = DA1_REPLY.search(buf)
        if listening is None:
            if echo >= 0 and (da1 is None or echo < da1.start()):
                listening = True
            elif da1 is not None:
                listening = False
        if da1 is not None:
            break
    return bool(listening)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--screens")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("--burst", type=float, default=0.0,
                    help="MB printed at full speed just before the permission report")
    # Unknown words are ignored: a test runs it as a look-alike of
    # `tend run` (`exec -a tend … run`).
    a, _ = ap.parse_known_args()

    def screen(name, fallback):
        if a.screens:
            with open(os.path.join(a.screens, name), "rb") as f:
                out(f.read())
        else:
            out(fallback.encode())

    fd = 0
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        listening = handshake(fd, 10.0)
        talk = listening or a.force
        say = report if talk else (lambda body: None)
        screen("ready.bin", "fake agent: %s\r\n> " % ("listened to" if listening else "not listened to"))
        say("state=idle:app=fake-agent")
        step = 0
        while True:
            key = os.read(fd, 1)
            if not key or key == b"q":
                break
            if key != b"n":
                continue
            step += 1
            if step == 1:
                say("state=working:app=fake-agent")
                screen("working.bin", "\r\nworking...\r\n")
            elif step == 2:
                if a.burst:
                    line = b"".join(b"%07d burst of output at full speed\r\n" % i for i in range(1000))
                    for _ in range(max(1, int(a.burst * 1024 * 1024 / len(line)))):
                        out(line)
                say("state=blocked:kind=permission:app=fake-agent:msg=" + b64("approve Bash: rm -rf ./build"))
                if not a.screens:
                    out(b"\r\nAllow rm -rf ./build? (y/n)\r\n")
            elif step == 3:
                say("state=working:app=fake-agent")
                say("state=working:app=fake-agent:id=bash-1:title=" + b64("Run the long command"))
                screen("finished.bin", "\r\ndone with the turn\r\n> ")
                say("state=working:app=fake-agent:msg=" + b64("1 shell still running"))
            elif step == 4:
                say("state=clear:id=bash-1")
                say("state=done:app=fake-agent")
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
    sys.exit(a.exit)


if __name__ == "__main__":
    main()
