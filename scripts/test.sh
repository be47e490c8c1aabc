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
. scripts/lib.sh

say() { printf '\n== %s\n' "$*"; }

need_apt=()
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
# identity tests run small node scripts shaped like npm-installed agents.
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
# Remotes: a real OpenSSH server on localhost (tend/tests/remote.rs).
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
# Notification tests: a private D-Bus session, a real notification daemon,
# and a virtual X display for it (tend/tests/notify.rs).
command -v dbus-daemon >/dev/null 2>&1 || need_apt+=(dbus)
command -v dbus-send >/dev/null 2>&1 || need_apt+=(dbus-bin)
command -v dunst >/dev/null 2>&1 || need_apt+=(dunst)
command -v Xvfb >/dev/null 2>&1 || need_apt+=(xvfb)
if ((${#need_apt[@]})); then
  say "installing ${need_apt[*]}"
  install_packages "${need_apt[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install Rust (https://rustup.rs) and run this again." >&2
  exit 1
fi

# zellij 0.45 and the wasm target, only when missing (building zellij takes
# ~25 min on two cores; its build directory is cached), and the plugin.
say "zellij"
scripts/install-zellij.sh

say "format"
cargo fmt --all -- --check
(cd zellij-plugin && cargo fmt -- --check)

say "lint"
cargo clippy --workspace --all-targets --quiet -- -D warnings
(cd zellij-plugin && cargo clippy --all-targets --quiet -- -D warnings)
if rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip1; then
  (cd zellij-plugin && cargo clippy --target wasm32-wasip1 --quiet -- -D warnings)
fi

say "docs"
# Every crate's API docs build without a broken link (what CONTRIBUTING
# points newcomers to read).
RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet

say "tests"
# The zellij plugin's own logic (host target).
(cd zellij-plugin && cargo test --quiet)
# Every test binary runs to its end, so one failure shows all the others.
cargo test --workspace --quiet --no-fail-fast
# tend's fork of vt100 (vendor/vt100: not a workspace member, so that
# upstream's own lint set stays its own), built in the workspace's target
# directory (wherever cargo keeps it) to share its dependencies.
ws_target="$(cargo_target_dir)"
CARGO_TARGET_DIR="$ws_target" cargo test --manifest-path vendor/vt100/Cargo.toml --quiet
