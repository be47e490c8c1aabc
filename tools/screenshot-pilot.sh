#!/usr/bin/env bash
# Takes docs/pilot.png: the fleet view (`tend pilot`) as `prefix A` opens it
# in a popup on a real tmux client — xterm on a virtual X display (Xvfb),
# attached to a tmux server started with no configuration, after
# `tend start` and `tend demo`. The popup is opened with the command the key
# runs (display-popup on that client); the picture is the xterm window as X
# draws it (xwd), converted to PNG.
#
#   tools/screenshot-pilot.sh [OUT.png]       # default docs/pilot.png
#
# Needs what tools/screenshot.sh needs:
#   apt-get install xvfb xterm x11-apps imagemagick fonts-dejavu-core
# and a built tend (TEND=path, else target/release/tend, target/debug/tend,
# or tend on $PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/pilot.png}
tend=${TEND:-}
for c in target/release/tend target/debug/tend "$(command -v tend || true)"; do
  [ -z "$tend" ] && [ -n "$c" ] && [ -x "$c" ] && tend=$c
done
[ -n "$tend" ] || { echo "error: build tend first (cargo build -p tend)" >&2; exit 1; }
tend=$(realpath "$tend")
for t in Xvfb xterm xwd; do
  command -v "$t" >/dev/null || { echo "error: $t is missing (see the top of $0)" >&2; exit 1; }
done
convert=
for c in "$(command -v convert || true)" /usr/bin/convert /usr/bin/convert-im6.q16; do
  if [ -z "$convert" ] && [ -n "$c" ] && "$c" -version 2>/dev/null | grep -q ImageMagick; then convert=$c; fi
done
[ -n "$convert" ] || { echo "error: ImageMagick's convert is missing (see the top of $0)" >&2; exit 1; }

sock="tend-pilot-shot-$$"
display=":$((80 + $$ % 9))"
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

needs() {
  tmux -L "$sock" list-windows -t tend-demo -F '#{@tend_window_glyph}' | grep -c '●' || true
}
for _ in $(seq 1 600); do
  [ "$(needs)" = 4 ] && break
  sleep 0.2
done
[ "$(needs)" = 4 ] || { echo "error: the demo agents never all waited at once" >&2; exit 1; }
client=$(tmux -L "$sock" list-clients -F '#{client_name}' | head -n 1)
tmux -L "$sock" display-popup -c "$client" -E -w 90% -h 85% \
  "'$tend' -L '$sock' pilot --client '$client'" &
pids+=($!)
sleep 3
xwd -display "$display" -name tend-shot -silent | "$convert" xwd:- "$out"
rm -rf "$config"
echo "wrote $out"
