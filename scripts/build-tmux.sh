#!/usr/bin/env bash
# Builds one tmux release into a cache folder, for testing tend against the
# versions users run; prints the tmux binary's path on the last line.
#
#   scripts/build-tmux.sh 3.5a          # -> ~/.cache/tend/tmux/3.5a/bin/tmux
#   PATH="$(dirname "$(scripts/build-tmux.sh 3.5a | tail -1)"):$PATH" cargo test …
#
#   TEND_TMUX_CACHE=DIR       where builds go (default ${XDG_CACHE_HOME:-~/.cache}/tend/tmux)
#   TEND_TMUX_SOURCES=DIR     a folder of tmux-VERSION.tar.gz archives (default:
#                             ../shared/tmux beside this checkout, or beside the
#                             repository it is a git worktree of, when present)
#
# The source archive comes from TEND_TMUX_SOURCES when it holds the version,
# else from tmux's release page (a release tarball, configure included). A
# `git archive` export (no configure) is prepared with autogen.sh first.
# A version already built is not built again. Needs a C compiler and
# libevent, ncurses, bison, pkg-config, autoconf and automake; the Debian
# packages are installed when missing (scripts/lib.sh says how, and what
# happens without root).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

version="${1:-}"
case "$version" in
  [0-9]*.[0-9]*) ;;
  *)
    echo "usage: scripts/build-tmux.sh VERSION   (such as 3.2a, 3.4, 3.5a, 3.6a, 3.7c)" >&2
    exit 2
    ;;
esac

cache="${TEND_TMUX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tend/tmux}"
prefix="$cache/$version"
bin="$prefix/bin/tmux"
if [ -x "$bin" ] && "$bin" -V 2>/dev/null | grep -qx "tmux $version"; then
  printf '%s\n' "$bin"
  exit 0
fi

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v make >/dev/null 2>&1 || need+=(make)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v bison >/dev/null 2>&1 || need+=(bison)
command -v autoconf >/dev/null 2>&1 || need+=(autoconf)
command -v automake >/dev/null 2>&1 || need+=(automake)
pkg-config --exists libevent 2>/dev/null || need+=(libevent-dev)
pkg-config --exists ncurses 2>/dev/null || need+=(libncurses-dev)
if ((${#need[@]})); then
  echo "== installing ${need[*]} (to build tmux $version)" >&2
  install_packages "${need[@]}"
fi

# The archives: TEND_TMUX_SOURCES, else ../shared/tmux beside this checkout,
# or beside the repository it is a worktree of (git worktree add puts a
# checkout anywhere, /tmp included).
sources="${TEND_TMUX_SOURCES:-}"
if [ -z "$sources" ]; then
  sources="../shared/tmux"
  common="$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)"
  if [ ! -f "$sources/tmux-$version.tar.gz" ] && [ -n "$common" ] &&
    [ -f "$(dirname "$common")/../shared/tmux/tmux-$version.tar.gz" ]; then
    sources="$(dirname "$common")/../shared/tmux"
  fi
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
archive="$work/tmux-$version.tar.gz"
if [ -f "$sources/tmux-$version.tar.gz" ]; then
  cp "$sources/tmux-$version.tar.gz" "$archive"
else
  url="https://github.com/tmux/tmux/releases/download/$version/tmux-$version.tar.gz"
  echo "== downloading $url" >&2
  if ! curl -fsSL -o "$archive" "$url"; then
    echo "error: no tmux-$version.tar.gz in $sources, and $url could not be downloaded; put the archive in TEND_TMUX_SOURCES and run this again" >&2
    exit 1
  fi
fi
tar -xzf "$archive" -C "$work"
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'tmux*' | head -n 1)"
if [ -z "$src" ]; then
  echo "error: $archive holds no tmux-* folder" >&2
  exit 1
fi
echo "== building tmux $version into $prefix" >&2
(
  cd "$src"
  [ -x configure ] || sh autogen.sh >"$work/autogen.log" 2>&1 || {
    cat "$work/autogen.log" >&2
    exit 1
  }
  ./configure --prefix="$prefix" >"$work/configure.log" 2>&1 || {
    tail -n 30 "$work/configure.log" >&2
    exit 1
  }
  make -j"$(nproc 2>/dev/null || echo 2)" >"$work/make.log" 2>&1 || {
    tail -n 30 "$work/make.log" >&2
    exit 1
  }
  make install >"$work/install.log" 2>&1 || {
    tail -n 30 "$work/install.log" >&2
    exit 1
  }
)
if ! "$bin" -V | grep -qx "tmux $version"; then
  echo "error: the build of tmux $version says it is $("$bin" -V)" >&2
  exit 1
fi
printf '%s\n' "$bin"
