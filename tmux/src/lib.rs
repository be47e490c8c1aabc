//! tend-tmux: everything that speaks to tmux.
