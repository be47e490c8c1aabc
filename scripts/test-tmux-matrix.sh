#!/usr/bin/env bash
# tend's tmux-facing tests on every tmux release users run (3.2a to 3.7c),
# each built from source into a cache folder by scripts/build-tmux.sh.
#
#   scripts/test-tmux-matrix.sh                 # the short tier on every version
#   scripts/test-tmux-matrix.sh 3.2a 3.5a       # the short tier on these
#   TEND_TMUX_MATRIX=full scripts/test-tmux-matrix.sh 3.4
#                                               # the whole tmux-facing suite
#
# The short tier: the tmux crate's own tests (the wire protocol or its
# fallback, options, hooks, keys, menus, taps), then start, `tend demo`, the
# status line in a real client, the jump key, the picker, the fleet view in a
# popup (`tend pilot`), hostile input, `tend restore` after a server restart, and
# `tend stop` restoring every option byte for byte. The full tier adds the
# fault, daemon-death, settings and identity tests. Each version's tests run
# with its tmux first on PATH, and the test harness checks that the tmux it
# talks to is that version (TEND_TEST_TMUX_VERSION).
set -euo pipefail
cd "$(dirname "$0")/.."

versions=("$@")
if ((${#versions[@]} == 0)); then
  versions=(3.2a 3.4 3.5a 3.6a 3.7c)
fi
tier="${TEND_TMUX_MATRIX:-short}"

# Modules of tend's one test binary (tend/tests/tests.rs), as filters.
short_tend=(tmux_e2e:: status_line:: hostile:: pilot:: restore::)
full_tend=(tmux_e2e:: status_line:: hostile:: pilot:: restore:: daemon_death::
  faults:: settings:: identity_tmux:: control:: attention::)
case "$tier" in
  short) tend_tests=("${short_tend[@]}") ;;
  full) tend_tests=("${full_tend[@]}") ;;
  *)
    echo "error: TEND_TMUX_MATRIX=$tier: use short or full" >&2
    exit 2
    ;;
esac

# Built once, run per version.
cargo test -p tend-tmux --no-run --quiet
cargo test -p tend --test tests --no-run --quiet

summary=()
failed=0
for v in "${versions[@]}"; do
  bin="$(scripts/build-tmux.sh "$v" | tail -n 1)"
  printf '\n== tmux %s (%s tier): %s\n' "$v" "$tier" "$bin"
  start=$(date +%s)
  ok=1
  # Both sets run whatever the first gives, every test binary to its end.
  PATH="$(dirname "$bin"):$PATH" TEND_TEST_TMUX_VERSION="$v" \
    cargo test -p tend-tmux --quiet --no-fail-fast || ok=0
  PATH="$(dirname "$bin"):$PATH" TEND_TEST_TMUX_VERSION="$v" \
    cargo test -p tend --test tests --quiet --no-fail-fast -- "${tend_tests[@]}" || ok=0
  if ((ok)); then
    summary+=("tmux $v: passed in $(($(date +%s) - start)) s")
  else
    summary+=("tmux $v: FAILED after $(($(date +%s) - start)) s")
    failed=1
  fi
done
printf '\n== tmux matrix (%s tier)\n' "$tier"
printf '%s\n' "${summary[@]}"
exit "$failed"
