#!/usr/bin/env bash
# Installs what the tests need, then runs every default test tier.
#
#   scripts/test.sh            # everything in the default tier
#   TEND_TEST_REAL_AGENTS=1    # also run the tier that needs real agent CLIs
#   TEND_TEST_SOAK=1           # also run long soak / fault tests
#
# Safe to run again: installs happen only when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n== %s\n' "$*"; }

need_apt=()
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if ((${#need_apt[@]})); then
  say "installing ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install Rust (https://rustup.rs) and run this again." >&2
  exit 1
fi

say "format"
cargo fmt --all -- --check

say "lint"
cargo clippy --workspace --all-targets --quiet -- -D warnings

say "tests"
cargo test --workspace --quiet 2>&1 
