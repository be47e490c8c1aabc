#!/usr/bin/env bash
# run.sh - run the agentlab scenarios in panes of ONE tmux server, poll a
# state-reporting command every 250 ms, and score it against ground truth.
#
#   agentlab/run.sh [--dry] [--replay] [--set corpus|DIR] \
#                   [--agents "claude codex"] [--scenarios "idle approval"] \
#                   [--parallel N] [--out DIR]
#
#   (default)  live: real agent CLIs + fakellm, labels derived from this run's
#              fakellm log and driver events (needs agentlab/setup.sh first)
#   --replay   no agents: each pane plays back <set>/<agent>/<scenario>/pane.cast
#              and is scored against that recording's labels.json (identity
#              is not scored: the pane runs a player, not an agent)
#   --dry      use the built-in trivial baseline (baseline_state.py,
#              "silence = waiting") instead of $TEND_STATE_CMD
#   --set      which recordings --replay plays: "corpus" (default: the
#              repository's tests/corpus, every <agent>/<case>/ with a
#              labels.json, e.g. claude/approval or claude/deny@120x40), or a DIR
#              laid out the same way. --agents / --scenarios filter the cases
#              (a scenario name matches all its sizes). Live runs use
#              agents x scenarios at 200x50.
#
# Environment:
#   TEND_STATE_CMD  state command (default: "tend list --json"); must print a JSON
#                   array of {"pane": "%3", "agent": str|null, "state": str, "reason": str|null}.
#                   It runs with TMUX pointing at the harness server, and with
#                   TEND_TMUX_SOCKET=<socket path>, so plain `tmux` commands reach it.
#   AGENTS_DIR      where setup.sh installed the CLIs (default /opt/agents)
#   ACC_TMP         scratch dir for per-case HOME/work dirs and runs (default /tmp/acc);
#                   results go to $ACC_TMP/runs/<stamp>-<mode>/ unless --out is given
#   ACC_PARALLEL    cases at once (default 2 live, 8 replay)
#   ACC_GRACE       seconds after each boundary excluded from steady accuracy (2.0)
#   PYTHON          python3 to use
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export AGENTS_DIR="${AGENTS_DIR:-/opt/agents}"
export ACC_TMP="${ACC_TMP:-/tmp/acc}"
PY="${PYTHON:-python3}"

MODE=live
DRY=0
AGENTS="claude aider codex gemini"
SCENARIOS="idle working_then_done approval question error long_tool exit"
AGENTS_GIVEN=""
SCENARIOS_GIVEN=""
SET=corpus
PARALLEL="${ACC_PARALLEL:-}"
OUT=""

usage() { sed -n '2,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry) DRY=1 ;;
    --replay) MODE=replay ;;
    --agents) AGENTS="$2"; AGENTS_GIVEN="$2"; shift ;;
    --scenarios) SCENARIOS="$2"; SCENARIOS_GIVEN="$2"; shift ;;
    --set) SET="$2"; shift ;;
    --parallel) PARALLEL="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

if [ -z "$PARALLEL" ]; then
  if [ "$MODE" = replay ]; then PARALLEL=8; else PARALLEL=2; fi
fi

# the case list: "agent scenario" lines
case "$SET" in
  corpus|recordings) SET=corpus; SETDIR="$HERE/../../tests/corpus"
       if [ -d "$SETDIR" ]; then SETDIR="$(cd "$SETDIR" && pwd)"; fi ;;
  *) if [ ! -d "$SET" ]; then echo "run.sh: unknown set '$SET' (corpus or a directory)" >&2; exit 2; fi
     SETDIR="$(cd "$SET" && pwd)"
     if [ "$MODE" != replay ]; then echo "run.sh: --set DIR needs --replay" >&2; exit 2; fi ;;
esac
in_list() { # in_list WORD "LIST" (empty LIST = everything)
  [ -z "$2" ] && return 0
  case " $2 " in *" $1 "*) return 0 ;; esac
  return 1
}
CASES=""
if [ "$SET" = corpus ] && [ "$MODE" != replay ]; then
  for a in $AGENTS; do for s in $SCENARIOS; do CASES="$CASES$a $s
"; done; done
else
  for d in "$SETDIR"/*/*/; do
    d="${d%/}"; s="$(basename "$d")"; a="$(basename "$(dirname "$d")")"
    [ -f "$d/labels.json" ] || continue
    # a scenario filter matches "deny" as well as "deny@120x40"
    in_list "$a" "$AGENTS_GIVEN" && { in_list "$s" "$SCENARIOS_GIVEN" || in_list "${s%%@*}" "$SCENARIOS_GIVEN"; } \
      && CASES="$CASES$a $s
"
  done
fi
if [ -z "$CASES" ]; then echo "run.sh: no cases selected" >&2; exit 2; fi

if [ "$DRY" = 1 ]; then
  STATE_CMD="$PY $HERE/baseline_state.py"
else
  STATE_CMD="${TEND_STATE_CMD:-tend list --json}"
  first="${STATE_CMD%% *}"
  if ! command -v "$first" >/dev/null 2>&1; then
    echo "run.sh: state command '$first' not found (set TEND_STATE_CMD, or use --dry)" >&2
    exit 2
  fi
fi

if [ "$MODE" = live ]; then
  for a in $(printf '%s' "$CASES" | cut -d' ' -f1 | sort -u); do
    case "$a" in
      claude) need="$AGENTS_DIR/node_modules/.bin/claude" ;;
      codex) need="$AGENTS_DIR/node_modules/.bin/codex" ;;
      gemini) need="$AGENTS_DIR/node_modules/.bin/gemini" ;;
      aider) need="$AGENTS_DIR/venv/bin/aider" ;;
      *) echo "unknown agent $a" >&2; exit 2 ;;
    esac
    if [ ! -x "$need" ]; then
      echo "run.sh: $a not installed at $need (run $HERE/setup.sh, or use --replay)" >&2
      exit 2
    fi
  done
fi

SOCK="acc-run-$$"
# `|| true`: under `set -e` the assignment takes the status of its last
# substitution, and a false test there ended the script without a word.
OUT="${OUT:-$ACC_TMP/runs/$(date +%Y%m%d-%H%M%S)-$MODE$([ "$DRY" = 1 ] && echo -dry || true)$([ "$SET" != corpus ] && echo "-$(basename "$SETDIR")" || true)}"
mkdir -p "$OUT"
rm -f "$OUT/.stop" "$OUT/predictions.jsonl"

tmux -L "$SOCK" -f /dev/null new-session -d -s acc -n _hold -x 200 -y 50 'sleep 1000000'
# (not window-size manual: tmux 3.3a then crashes on new-window in a detached session)
tmux -L "$SOCK" set -g default-size 200x50 >/dev/null
tmux -L "$SOCK" set -g history-limit 5000 >/dev/null
SOCK_PATH="$(tmux -L "$SOCK" display -p '#{socket_path}')"
SERVER_PID="$(tmux -L "$SOCK" display -p '#{pid}')"

POLL_PID=""
cleanup() {
  touch "$OUT/.stop" 2>/dev/null || true
  if [ -n "$POLL_PID" ]; then wait "$POLL_PID" 2>/dev/null || true; fi
  tmux -L "$SOCK" kill-server 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "run.sh: mode=$MODE dry=$DRY set=$SET socket=$SOCK out=$OUT"
echo "run.sh: state command: $STATE_CMD"
TMUX="$SOCK_PATH,$SERVER_PID,0" TEND_TMUX_SOCKET="$SOCK_PATH" \
  "$PY" "$HERE/score.py" poll --cmd "$STATE_CMD" --out "$OUT/predictions.jsonl" \
  --stop-file "$OUT/.stop" --interval 0.25 &
POLL_PID=$!

running=0
fail=0
while read -r a s; do
    [ -n "$a" ] || continue
    if [ "$MODE" = replay ]; then
      src="$SETDIR/$a/$s"
      if [ ! -f "$src/labels.json" ] || [ ! -f "$src/pane.cast" ]; then
        echo "run.sh: no recording for $a/$s, skipped" >&2
        continue
      fi
      "$PY" "$HERE/harness.py" replay --from "$src" --socket "$SOCK" --out "$OUT/$a/$s" >/dev/null </dev/null &
    else
      "$PY" "$HERE/harness.py" case --agent "$a" --scenario "$s" --socket "$SOCK" --out "$OUT/$a/$s" </dev/null &
    fi
    running=$((running + 1))
    if [ "$running" -ge "$PARALLEL" ]; then
      wait -n || fail=$((fail + 1))
      running=$((running - 1))
    fi
done <<EOF_CASES
$CASES
EOF_CASES
while [ "$running" -gt 0 ]; do
  wait -n || fail=$((fail + 1))
  running=$((running - 1))
done

touch "$OUT/.stop"
wait "$POLL_PID" 2>/dev/null || true
POLL_PID=""
[ "$fail" -gt 0 ] && echo "run.sh: $fail case(s) reported problems (see meta.json notes)" >&2

"$PY" "$HERE/score.py" score --run "$OUT"
