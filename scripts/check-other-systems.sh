#!/usr/bin/env bash
# Type-checks tend (library, binary, tests and benches) for macOS and
# FreeBSD from Linux, where only the portable platform backend is built
# (docs/decisions/0009-platform-backends.md). Nothing is linked: this says
# that it compiles, not that it runs.
#
#   scripts/check-other-systems.sh                        # both
#   scripts/check-other-systems.sh x86_64-apple-darwin    # one
#
# notify-rust's macOS backend (mac-notification-sys) compiles an
# Objective-C file in its build script, which needs Apple's SDK. `cargo
# check` links nothing, so a stand-in compiler writes an empty object for
# it (its compiler-family probe goes to the host's cc).
set -euo pipefail
cd "$(dirname "$0")/.."

targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(x86_64-apple-darwin x86_64-unknown-freebsd)
fi

stand_in="$(mktemp -d)"
trap 'rm -rf "$stand_in"' EXIT
cat >"$stand_in/cc" <<'CC'
#!/bin/sh
for a in "$@"; do
  [ "$a" = "-E" ] && exec cc "$@"
  [ "$a" = "-?" ] && exit 1
done
out=""
while [ $# -gt 0 ]; do
  [ "$1" = "-o" ] && out="$2" && shift
  shift
done
[ -n "$out" ] && : >"$out"
exit 0
CC
chmod +x "$stand_in/cc"

for t in "${targets[@]}"; do
  rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  printf '\n== %s\n' "$t"
  cc_var="CC_${t//-/_}"
  ar_var="AR_${t//-/_}"
  env "$cc_var=$stand_in/cc" "$ar_var=ar" \
    cargo check --target "$t" -p tend -p tend-daemon -p tend-platform -p tend-core --all-targets --quiet
done
