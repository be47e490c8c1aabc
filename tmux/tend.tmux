#!/bin/sh
# tend: TPM plugin entry. Also loadable without TPM:
#
#   run-shell /path/to/tend/tmux/tend.tmux
#
# Starts the tend daemon for this tmux server (one per server; starting it
# again reports the running one). The daemon binds its keys and removes them
# on `tend stop`. Default keys, each unbound in a default tmux:
#
#   prefix N   jump to the next agent waiting on you      @tend-key-next
#   prefix T   next agent waiting in this session         @tend-key-next-session
#   prefix W   next working agent                         @tend-key-working
#   prefix A   agent picker                               @tend-key-picker
#
# Change one with `set -g @tend-key-next M-n`, disable one with
# `set -g @tend-key-next none`, move all to another key table with
# `set -g @tend-key-table NAME`. Point at a binary with `set -g @tend-bin PATH`.
# A key the user already bound is left alone (`tend doctor` lists it).

plugin_dir=$(cd "$(dirname "$0")" && pwd)

# The server that runs this script: from $TMUX ("path,pid,session"; the path
# may contain commas), else ask tmux.
socket=
if [ -n "${TMUX:-}" ]; then
	socket=${TMUX%,*}
	socket=${socket%,*}
fi
if [ -z "$socket" ]; then
	socket=$(tmux display-message -p '#{socket_path}' 2>/dev/null)
fi

tm() {
	if [ -n "$socket" ]; then tmux -S "$socket" "$@"; else tmux "$@"; fi
}

find_tend() {
	custom=$(tm show-option -gqv @tend-bin 2>/dev/null)
	# scripts/install.sh installs into cargo's bin directory, which tmux's
	# PATH often lacks.
	for candidate in "$custom" "$plugin_dir/bin/tend" "$plugin_dir/../bin/tend" \
		"${CARGO_TARGET_DIR:-$plugin_dir/../target}/release/tend" \
		"${CARGO_HOME:-$HOME/.cargo}/bin/tend"; do
		if [ -n "$candidate" ] && [ -x "$candidate" ]; then
			printf '%s\n' "$candidate"
			return 0
		fi
	done
	command -v tend 2>/dev/null
}

tend=$(find_tend)
if [ -z "$tend" ]; then
	tm display-message "tend: the tend program was not found. Install it (see the README) or set -g @tend-bin to its path."
	exit 0
fi

if ! TEND_TMUX_SOCKET="$socket" "$tend" start >/dev/null 2>&1; then
	tm display-message "tend: 'tend start' failed. Run 'tend doctor' in a shell to see why."
fi
exit 0
