#!/usr/bin/env sh
# TPM entry point: TPM runs *.tmux at the repository root.
exec "$(dirname "$0")/tmux/tend.tmux" "$@"
