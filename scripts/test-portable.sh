#!/usr/bin/env bash
# tend's daemon tests on Linux with the portable platform backend
# (docs/decisions/0009-platform-backends.md): the daemons the tests start,
# and the samplers they make themselves, read processes through sysinfo,
# find an agent's end by asking, read the panes' pipes with poll(2) and
# wait with tokio's timer — what tend does on macOS.
#
#   scripts/test-portable.sh          # the platform and daemon-facing tests
#   scripts/test-portable.sh --all    # every test of the tend crate
#
# TEND_PLATFORM reaches every daemon through the environment `tend start`
# passes on; each daemon logs the backend it uses at start.
set -euo pipefail
cd "$(dirname "$0")/.."

export TEND_PLATFORM=portable
case "${1:-}" in
  --all) exec cargo test -p tend -p tend-daemon -p tend-platform -p tend-core ;;
  "")
    # The process source's, the daemon's and the commands' own tests, then
    # the daemon suites, on the portable backend.
    cargo test -p tend-platform -p tend-daemon -p tend --lib
    exec cargo test -p tend --test tests -- platform:: tmux_e2e:: identity_tmux:: faults:: \
      status_line::
    ;;
  *)
    echo "usage: $0 [--all]" >&2
    exit 2
    ;;
esac
