#!/usr/bin/env bash
# Takes the README's pictures from a real tmux client: xterm on a virtual X
# display (Xvfb), attached to a tmux server started with no configuration,
# after `tend start` and `tend demo` and nothing else. The picture is the
# xterm window as X draws it (xwd), converted to PNG. Only tend's own
# notifications are turned off (a private config), so that a passing
# "Aider finished" message does not cover the status line in the picture.
#
#   tools/screenshot.sh [OUT.png]          # the status line: docs/status-line.png
#   tools/screenshot.sh pilot [OUT.png]    # the fleet view as `prefix A` opens it
#                                          # in a popup: docs/pilot.png
#
# Needs: Xvfb, xterm, xwd (x11-apps), ImageMagick's convert, DejaVu fonts
#   apt-get install xvfb xterm x11-apps imagemagick fonts-dejavu-core
# and a built tend (TEND=path, else target/release/tend, target/debug/tend,
# or tend on $PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
what=status
if [ "${1:-}" = pilot ]; then
  what=pilot
  shift
fi
out=${1:-docs/status-line.png}
[ "$what" = pilot ] && out=${1:-docs/pilot.png}
tend=${TEND:-}
for c in target/release/tend target/debug/tend "$(command -v tend || true)"; do
  [ -z "$tend" ] && [ -n "$c" ] && [ -x "$c" ] && tend=$c
done
[ -n "$tend" ] || { echo "error: build tend first (cargo build -p tend)" >&2; exit 1; }
tend=$(realpath "$tend")
for t in Xvfb xterm xwd; do
  command -v "$t" >/dev/null || { echo "error: $t is missing (see the top of $0)" >&2; exit 1; }
done
# The first convert that is ImageMagick's (a stand-in may come first on $PATH).
convert=
for c in "$(command -v convert || true)" /usr/bin/convert /usr/bin/convert-im6.q16; do
  if [ -z "$convert" ] && [ -n "$c" ] && "$c" -version 2>/dev/null | grep -q ImageMagick; then convert=$c; fi
done
[ -n "$convert" ] || { echo "error: ImageMagick's convert is missing (see the top of $0)" >&2; exit 1; }

sock="tend-shot-$$"
display=":$((90 + $$ % 9))"
# The recordings were made at 200x50: a smaller client would re-wrap them.
cols=200 rows=50
pids=()
cleanup() {
  "$tend" -L "$sock" stop >/dev/null 2>&1 || true
  tmux -L "$sock" kill-server 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

config=$(mktemp -d)
mkdir -p "$config/tend"
printf '[notifications]\nenabled = false\n' >"$config/tend/config.toml"
export XDG_CONFIG_HOME=$config
Xvfb "$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
pids+=($!)
tmux -L "$sock" -f /dev/null new-session -d -s main -x "$cols" -y "$rows"
"$tend" -L "$sock" start
"$tend" -L "$sock" demo --detached
DISPLAY=$display xterm -T tend-shot -geometry "${cols}x${rows}+0+0" \
  -fa 'DejaVu Sans Mono' -fs 8 -bg black -fg grey90 \
  -e env -u TMUX TERM=xterm-256color tmux -L "$sock" attach -t tend-demo &
pids+=($!)

tmux -L "$sock" select-window -t tend-demo:0
# The replayed agents loop: shoot when all four wait on you (● on every
# window), and keep the status line's picture only if they still do right
# after it.
needs() {
  tmux -L "$sock" list-windows -t tend-demo -F '#{@tend_window_glyph}' | grep -c '●' || true
}
shoot() {
  xwd -display "$display" -name tend-shot -silent | "$convert" xwd:- "$out"
}
shot=
for _ in $(seq 1 600); do
  if [ "$(needs)" = 4 ]; then
    if [ "$what" = pilot ]; then
      # What `prefix A` runs, on the one client.
      client=$(tmux -L "$sock" list-clients -F '#{client_name}' | head -n 1)
      tmux -L "$sock" display-popup -c "$client" -E -w 90% -h 85% \
        "'$tend' -L '$sock' pilot --client '$client'" &
      pids+=($!)
      sleep 3
      shoot
      shot=1
      break
    fi
    sleep 0.3
    shoot
    if [ "$(needs)" = 4 ]; then shot=1; break; fi
  fi
  sleep 0.2
done
[ -n "$shot" ] || { echo "error: the demo agents never all waited at once" >&2; exit 1; }
rm -rf "$config"
echo "wrote $out ($(tmux -L "$sock" show -gqv @tend_summary))"
