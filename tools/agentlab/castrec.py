#!/usr/bin/env python3
"""castrec - turn a tmux `pipe-pane -O` byte stream into an asciinema v2 cast.

Usage (from tmux):  pipe-pane -O -t %3 'exec python3 castrec.py --out pane.cast --width 200 --height 50 --t0 1796000000.123'

Reads raw pane output on stdin, writes one `[seconds, "o", data]` line per
read() chunk, seconds relative to --t0 (unix epoch float; default: now).  The
header carries the usual asciinema fields plus "t0" (float epoch) so the cast
lines up with the other logs of a recording.  Multi-byte UTF-8 sequences split
across reads are kept whole with an incremental decoder; invalid bytes are
replaced.  Flushes every line, exits on EOF (when the pane closes or the pipe
is turned off).

Resize events: with --pidfile PATH the recorder writes its pid there; the
driver resizes the tmux window, writes "COLSxROWS" to --resize-file and sends
SIGUSR1, and the recorder appends an asciicast `[seconds, "r", "COLSxROWS"]`
line at that moment (between two output lines, never inside one).
"""
import argparse
import codecs
import json
import os
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--width", type=int, default=200)
    ap.add_argument("--height", type=int, default=50)
    ap.add_argument("--t0", type=float, default=None)
    ap.add_argument("--title", default="")
    ap.add_argument("--pidfile", default=None)
    ap.add_argument("--resize-file", default=None)
    a = ap.parse_args()
    t0 = a.t0 if a.t0 is not None else time.time()
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fd = sys.stdin.fileno()
    with open(a.out, "w", encoding="utf-8") as f:
        hdr = {"version": 2, "width": a.width, "height": a.height, "timestamp": int(t0),
               "t0": t0, "env": {"TERM": os.environ.get("TERM", "tmux-256color")}}
        if a.title:
            hdr["title"] = a.title
        f.write(json.dumps(hdr) + "\n")
        f.flush()

        def on_resize(signum, frame):
            # runs in the main thread between two statements of the loop below
            try:
                with open(a.resize_file or (a.out + ".resize")) as rf:
                    size = rf.read().strip()
            except OSError:
                return
            if size:
                f.write(json.dumps([round(time.time() - t0, 6), "r", size]) + "\n")
                f.flush()
        signal.signal(signal.SIGUSR1, on_resize)
        if a.pidfile:
            with open(a.pidfile, "w") as pf:
                pf.write(str(os.getpid()))
        while True:
            try:
                chunk = os.read(fd, 65536)
            except InterruptedError:
                continue
            now = time.time()
            if not chunk:
                rest = dec.decode(b"", final=True)
                if rest:
                    f.write(json.dumps([round(now - t0, 6), "o", rest]) + "\n")
                break
            text = dec.decode(chunk)
            if text:
                f.write(json.dumps([round(now - t0, 6), "o", text]) + "\n")
                f.flush()


if __name__ == "__main__":
    main()
