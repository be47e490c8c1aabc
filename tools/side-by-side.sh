#!/usr/bin/env bash
# Several tend builds watching the same load at the same time, each on a
# private tmux server of its own: CPU of each daemon (all its threads, from
# the scheduler's own accounting) over the same windows, % of one core.
#
#   tools/side-by-side.sh [-l agents|real|idle] [-p PANES] [-w WINDOWS] [-s SECS] BIN...
#
#   tools/side-by-side.sh -l agents -p 10 -w 3 -s 30 /tmp/tend-before target/release/tend
#
# Measuring the builds one after another on a 2-vCPU VM lets whatever else
# the machine does land in one build's figure and not the other's; in the
# same seconds, the builds share it. The panes replay recordings with
# `tend play --repeat` (the *agents* load: the working turns of claude,
# codex, gemini and aider; *real*: every verified agent's 80x24 working
# turn), as the live bench's cost cells do (sidecar/benches/live.rs).
set -euo pipefail
cd "$(dirname "$0")/.."

load=agents panes=10 windows=3 secs=30 settle=8
while getopts "l:p:w:s:t:" o; do
  case "$o" in
    l) load=$OPTARG ;;
    p) panes=$OPTARG ;;
    w) windows=$OPTARG ;;
    s) secs=$OPTARG ;;
    t) settle=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if (($# == 0)); then
  echo "usage: $0 [-l agents|real|idle] [-p PANES] [-w WINDOWS] [-s SECS] [-t SETTLE] BIN..." >&2
  exit 2
fi

corpus="$PWD/tests/corpus"
case "$load" in
  agents) agents=(claude codex gemini aider) rec=working_then_done repeat=--repeat ;;
  real) agents=(aider claude codex gemini grok kilo opencode pi qwen) rec=working_then_done@80x24 repeat=--repeat ;;
  idle) agents=(claude codex gemini aider) rec=idle repeat= ;;
  *) echo "error: unknown load '$load' (agents, real or idle)" >&2; exit 2 ;;
esac

root=$(mktemp -d)
names=()
bins=()
cleanup() {
  for i in "${!names[@]}"; do
    XDG_RUNTIME_DIR="$root/$i/run" XDG_STATE_HOME="$root/$i/state" XDG_CONFIG_HOME="$root/$i/config" \
      "${bins[$i]}" -L "${names[$i]}" stop >/dev/null 2>&1 || true
    tmux -L "${names[$i]}" kill-server >/dev/null 2>&1 || true
  done
  rm -rf "$root"
}
trap cleanup EXIT

for bin in "$@"; do
  i=${#names[@]}
  bin=$(realpath "$bin")
  name="tend-sbs-$$-$i"
  names+=("$name")
  bins+=("$bin")
  mkdir -p "$root/$i/run" "$root/$i/state" "$root/$i/config"
  tmux -L "$name" -f /dev/null new-session -d -s main -x 200 -y 50
  for ((p = 0; p < panes; p++)); do
    agent=${agents[p % ${#agents[@]}]}
    tmux -L "$name" new-window -d "env TEND_AGENT=$agent '$bin' play '$corpus/$agent/$rec/pane.cast' $repeat"
  done
done
for i in "${!names[@]}"; do
  XDG_RUNTIME_DIR="$root/$i/run" XDG_STATE_HOME="$root/$i/state" XDG_CONFIG_HOME="$root/$i/config" \
    env -u TMUX "${bins[$i]}" -L "${names[$i]}" start >/dev/null
done
sleep "$settle"

pid_of() { pgrep -f "daemon -S /tmp/tmux-$(id -u)/$1\$" | head -1; }
cpu_ns() {
  local sum=0 t v
  for t in /proc/"$1"/task/*/schedstat; do
    read -r v _ <"$t" 2>/dev/null || continue
    sum=$((sum + v))
  done
  echo "$sum"
}
pids=()
for n in "${names[@]}"; do
  pid=$(pid_of "$n")
  [ -n "$pid" ] || { echo "error: no daemon for $n" >&2; exit 1; }
  pids+=("$pid")
done

printf '%-8s %5s' load panes
for bin in "${bins[@]}"; do printf ' | %s' "$bin"; done
printf '\n'
for ((w = 0; w < windows; w++)); do
  before=()
  for pid in "${pids[@]}"; do before+=("$(cpu_ns "$pid")"); done
  t0=$(date +%s%N)
  sleep "$secs"
  t1=$(date +%s%N)
  printf '%-8s %5s' "$load" "$panes"
  for i in "${!pids[@]}"; do
    after=$(cpu_ns "${pids[$i]}")
    awk -v a="$after" -v b="${before[$i]}" -v t=$((t1 - t0)) 'BEGIN { printf " | %.3f %%", 100 * (a - b) / t }'
  done
  printf '\n'
done
