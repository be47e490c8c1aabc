#!/usr/bin/env bash
# Installs what tend's zellij tests need, and builds the zellij plugin.
#
#   scripts/install-zellij.sh        # idempotent: only what is missing
#
#   TEND_ZELLIJ_INSTALL=0            # install nothing (the zellij tests then skip)
#   TEND_ZELLIJ_VERSION='^0.45'      # the zellij versions to accept / install
#
# * the Rust target wasm32-wasip1 (rustup), for the plugin;
# * zellij 0.45 with `cargo install zellij --locked` when no zellij 0.45+ is
#   on PATH. Building zellij takes a long time (about 25 minutes on two
#   cores), so its build directory is kept in ~/.cache/tend/zellij-build:
#   an interrupted build resumes, and a later version reuses what it can;
# * the plugin: wasm32-wasip1/release/tend-zellij.wasm in cargo's target
#   directory for zellij-plugin/ (zellij-plugin/target by default,
#   $CARGO_TARGET_DIR when that is set); the last line names it.
#
# cargo's own settings are honoured: CARGO_HOME or CARGO_INSTALL_ROOT (where
# `cargo install` puts zellij), CARGO_TARGET_DIR, RUSTUP_TOOLCHAIN (the
# toolchain that gets the wasm target). Nothing here needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

say() { printf '== %s\n' "$*"; }

if [ "${TEND_ZELLIJ_INSTALL:-1}" = 0 ]; then
  say "TEND_ZELLIJ_INSTALL=0: not installing zellij or building the plugin"
  exit 0
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install Rust (https://rustup.rs) and run this again." >&2
  exit 1
fi
cargo_bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
export PATH="$cargo_bin:$PATH"

want="${TEND_ZELLIJ_VERSION:-^0.45}"

# --- the wasm target -------------------------------------------------------
if command -v rustup >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx wasm32-wasip1; then
    say "adding the Rust target wasm32-wasip1"
    rustup target add wasm32-wasip1
  fi
else
  echo "warning: rustup not found; make sure the wasm32-wasip1 target is installed" >&2
fi

# --- zellij ----------------------------------------------------------------
zellij_ok() {
  command -v zellij >/dev/null 2>&1 || return 1
  local v
  v="$(zellij --version 2>/dev/null | awk '{print $2}')"
  # 0.45 or newer (any 1.x too).
  case "$v" in
    0.4[5-9]* | 0.[5-9][0-9]* | [1-9]*) return 0 ;;
    *) return 1 ;;
  esac
}

if zellij_ok; then
  say "zellij $(zellij --version | awk '{print $2}') is installed"
else
  for tool in cc make perl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "error: building zellij needs '$tool'; install it (e.g. apt-get install build-essential perl) and run this again." >&2
      exit 1
    fi
  done
  build_dir="${XDG_CACHE_HOME:-$HOME/.cache}/tend/zellij-build"
  mkdir -p "$build_dir"
  say "building zellij $want with cargo install (long: ~25 min on 2 cores; build cache in $build_dir)"
  start=$(date +%s)
  CARGO_TARGET_DIR="$build_dir" cargo install zellij --locked --version "$want"
  say "zellij built in $(( $(date +%s) - start )) s"
  if ! zellij_ok; then
    echo "error: zellij was installed but \`zellij --version\` does not report 0.45+; is $cargo_bin on PATH?" >&2
    exit 1
  fi
fi

# --- the plugin ------------------------------------------------------------
say "building the zellij plugin (wasm32-wasip1)"
(cd zellij-plugin && cargo build --release --target wasm32-wasip1 --quiet)
# Where cargo put it: CARGO_TARGET_DIR, a target-dir in a cargo config, or
# zellij-plugin/target; cargo itself says which.
target_dir="$(cargo_target_dir zellij-plugin)"
wasm="$target_dir/wasm32-wasip1/release/tend-zellij.wasm"
if [ ! -f "$wasm" ]; then
  echo "error: the plugin build finished but $wasm is missing; run \`cargo build --release --target wasm32-wasip1\` in zellij-plugin/ to see why" >&2
  exit 1
fi
say "plugin: $wasm ($(wc -c <"$wasm") bytes)"
