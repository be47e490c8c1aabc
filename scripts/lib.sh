# Shared by the scripts in this folder (sourced, not run).

# install_packages PKG…: installs Debian/Ubuntu packages with apt-get — as
# root, or through sudo when sudo needs no password. Anyone else is told the
# exact command and the script stops there: a password prompt in the middle
# of a long run would hang it (CI) or be missed (a terminal left alone).
install_packages() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      echo "error: missing packages: $*" >&2
      if command -v apt-get >/dev/null 2>&1; then
        echo "Install them (this needs root), then run this again:" >&2
        echo "    sudo apt-get install -y $*" >&2
      else
        echo "Install them with your system's package manager (these are the Debian/Ubuntu names), then run this again." >&2
      fi
      exit 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "error: missing packages: $* (Debian/Ubuntu names); apt-get is not available here, so install them with your system's package manager and run this again." >&2
    exit 1
  fi
  ${sudo[@]+"${sudo[@]}"} apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo[@]+"${sudo[@]}"} apt-get install -y -qq "$@"
}

# cargo_target_dir [DIR]: the target directory cargo uses for the workspace
# in DIR (default: here) — CARGO_TARGET_DIR, a cargo config's target-dir, or
# DIR/target — as cargo itself reports it.
cargo_target_dir() {
  local dir
  dir="$(cd "${1:-.}" && cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  if [ -z "$dir" ]; then
    echo "error: \`cargo metadata\` in ${1:-.} did not name a target directory; run it there to see why" >&2
    exit 1
  fi
  printf '%s\n' "$dir"
}
