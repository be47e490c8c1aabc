#!/usr/bin/env bash
# Installs tend's shell completions and manual pages where the shells and
# man look for them, for this user (no root needed):
#
#   bash  ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/tend
#         (bash-completion loads it the first time you complete `tend`)
#   zsh   the first directory of zsh's $fpath under $HOME, else ~/.zfunc/_tend
#         (then add `fpath+=(~/.zfunc)` before `compinit` in ~/.zshrc)
#   fish  ${XDG_CONFIG_HOME:-~/.config}/fish/completions/tend.fish
#   man   ROOT/share/man/man1/tend*.1: man finds it beside ROOT/bin on $PATH
#
#   scripts/install-shell-files.sh TEND ROOT
#
# Everything comes from the binary (`tend completions`, `tend man`).
set -euo pipefail
tend=$1
root=$2
data=${XDG_DATA_HOME:-$HOME/.local/share}
config=${XDG_CONFIG_HOME:-$HOME/.config}

bash_dir="$data/bash-completion/completions"
mkdir -p "$bash_dir"
"$tend" completions bash >"$bash_dir/tend"
echo "bash completions: $bash_dir/tend"

zsh_dir=
if command -v zsh >/dev/null 2>&1; then
  # shellcheck disable=SC2016
  zsh_dir=$(zsh -fc 'for d in $fpath; do [[ $d == $HOME/* && -w $d ]] && { print -r -- $d; break }; done' 2>/dev/null || true)
fi
zsh_hint=
if [ -z "$zsh_dir" ]; then
  zsh_dir="$HOME/.zfunc"
  zsh_hint=" (add 'fpath+=(~/.zfunc)' before 'compinit' in ~/.zshrc)"
fi
mkdir -p "$zsh_dir"
"$tend" completions zsh >"$zsh_dir/_tend"
echo "zsh completions: $zsh_dir/_tend$zsh_hint"

fish_dir="$config/fish/completions"
mkdir -p "$fish_dir"
"$tend" completions fish >"$fish_dir/tend.fish"
echo "fish completions: $fish_dir/tend.fish"

man_dir="$root/share/man/man1"
"$tend" man --dir "$man_dir" >/dev/null
echo "manual pages: $man_dir (man tend, man tend-approve, …)"
