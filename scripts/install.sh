#!/usr/bin/env bash
# Builds and installs tend, and — when run inside tmux — starts it for this
# tmux server and loads its key bindings.
#
#   scripts/install.sh              # install to cargo's bin dir ($CARGO_HOME/bin, ~/.cargo/bin)
#   PREFIX=/usr/local scripts/install.sh
#
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install Rust (https://rustup.rs) and run this again." >&2
  exit 1
fi
if ! command -v tmux >/dev/null 2>&1; then
  echo "tmux not found; installing it with apt-get" >&2
  install_packages tmux
fi

root=${PREFIX:-${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}}
echo "== building and installing tend into $root/bin"
cargo install --quiet --locked --force --path tend --root "$root"
tend="$root/bin/tend"
"$tend" --version
echo "== shell completions and manual pages"
scripts/install-shell-files.sh "$tend" "$root"

plugin="$(pwd)/tmux/tend.tmux"
if [ -n "${TMUX:-}" ]; then
  echo "== starting tend for this tmux server"
  tmux set -g @tend-bin "$tend"
  tmux run-shell "$plugin"
  "$tend" status || true
  cat <<MSG

tend is running. To start it with every tmux server, add this to ~/.tmux.conf:

    run-shell '$plugin'

(or with TPM: set -g @plugin '<this repository>'). See README.md for the
status-line snippets and keys (prefix N: next agent waiting on you).
MSG
else
  cat <<MSG

Installed $tend. Inside tmux, run:   $tend start
To start it with every tmux server, add to ~/.tmux.conf:   run-shell '$plugin'
MSG
fi
