#!/usr/bin/env bash
# Short versions of the benchmarks in docs/PERFORMANCE.md, for CI: the same
# benchmark code with fewer samples and shorter runs (a few minutes in all).
# They print figures to compare with the document; they fail only when a
# benchmark cannot run, never on a figure (a shared CI machine is too noisy
# to judge speed by one run).
#
#   scripts/bench-short.sh
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }

say "detector throughput, evaluation and memory per pane (criterion, short)"
cargo bench -p tend-detector --bench throughput -- \
  --warm-up-time 1 --measurement-time 3 --sample-size 10 \
  'detector/(screen|pane|pane_burst|evaluation|evaluation_spinner|evaluation_full)$'

say "the status line's publish: every fact of 200 agent panes computed and diffed (criterion, short)"
cargo bench -p tend-core --bench publish -- \
  --warm-up-time 1 --measurement-time 2 --sample-size 10

say "process sampling of 50 panes (criterion, short)"
cargo bench -p tend --bench sampler -- \
  --warm-up-time 1 --measurement-time 2 --sample-size 10

say "daemon on a real tmux server: latency (alone, beside 9 busy agents), CPU, memory; side by side with a capture-pane poller and this machine's floor (waking every 30 ms and reading, nothing parsed; then with an emulator, and a whole detector, a pane)"
cargo bench -p tend --bench live -- \
  --latency-runs 20 --panes 10,50 --secs 5 --load agents,idle --floor 30 --floor-work screen,detector

say "remotes: 3 remotes x 5 panes over a stand-in ssh; remote dialog -> local status line"
cargo bench -p tend --bench remotes -- --remotes 3 --panes 5 --runs 5 --secs 3

say "tend run: a keystroke's and a frame's added latency (relayed vs direct, alternating), the relay's CPU beside cat from a pipe and from a pty (flat out, agents streaming)"
cargo bench -p tend --bench relay -- --runs 300 --mb 16 --secs 3 --rounds 1
