//! The zellij glue of tend's plugin (built for `wasm32-wasip1`).
//!
//! Everything here runs on zellij's plugin thread, so it does no blocking
//! host call in a hot path: a pipe message is parsed and stored, `render`
//! only prints, and a jump is one fire-and-forget `focus_terminal_pane`.
//! The plugin never asks zellij for state (no pane manifest, no commands);
//! the daemon pushes everything it needs.
//!
//! Permissions requested at load (see README.md):
//! * `ChangeApplicationState` — to focus the next waiting pane.
//!
//! Receiving pipe messages, rendering and timers need no permission.

#[cfg(target_family = "wasm")]
use std::collections::BTreeMap;

#[cfg(target_family = "wasm")]
use tend_zellij::{classify, Message, Model};
#[cfg(target_family = "wasm")]
use zellij_tile::prelude::*;

/// The plugin's state.
#[cfg(target_family = "wasm")]
#[derive(Default)]
struct TendPlugin {
    model: Model,
    /// Whether zellij granted the permissions (until then a jump would be
    /// refused, and the pane must stay selectable to answer the prompt).
    granted: bool,
}

#[cfg(target_family = "wasm")]
register_plugin!(TendPlugin);

#[cfg(target_family = "wasm")]
impl ZellijPlugin for TendPlugin {
    fn load(&mut self, _configuration: BTreeMap<String, String>) {
        subscribe(&[EventType::PermissionRequestResult, EventType::Timer]);
        request_permission(&[PermissionType::ChangeApplicationState]);
    }

    fn update(&mut self, event: Event) -> bool {
        match event {
            Event::PermissionRequestResult(PermissionStatus::Granted) => {
                self.granted = true;
                // A status bar is not a place to type into.
                set_selectable(false);
                true
            }
            Event::PermissionRequestResult(PermissionStatus::Denied) => {
                self.granted = false;
                eprintln!(
                    "tend: permission to change application state was denied, so the \
                     next-waiting key cannot focus panes; the status line still works. \
                     Reload the plugin to be asked again."
                );
                set_selectable(false);
                true
            }
            Event::Timer(_) => self.model.on_timer(),
            _ => false,
        }
    }

    fn pipe(&mut self, pipe_message: PipeMessage) -> bool {
        // `zellij pipe` whose standard input is not a terminal follows its
        // payload with a message without payload ("end of input"): no
        // request. Key bindings send no payload and do mean it.
        if matches!(pipe_message.source, PipeSource::Cli(_)) && pipe_message.payload.is_none() {
            return false;
        }
        match classify(&pipe_message.name, pipe_message.payload.as_deref()) {
            Ok(Message::Status(status)) => {
                if let Some(ttl) = self.model.set_status(status) {
                    set_timeout(ttl);
                }
                true
            }
            Ok(Message::Clear) => {
                self.model.clear();
                true
            }
            Ok(Message::Next) => {
                if !self.granted {
                    eprintln!(
                        "tend: cannot focus the next waiting pane: the plugin has not been \
                         granted ChangeApplicationState (answer the permission prompt in \
                         its pane, or see zellij-plugin/README.md)"
                    );
                } else if let Some(pane) = self.model.next_target() {
                    focus_terminal_pane(pane, false, false);
                }
                false
            }
            Ok(Message::Ignore) => false,
            Err(why) => {
                eprintln!("{why}");
                false
            }
        }
    }

    fn render(&mut self, _rows: usize, cols: usize) {
        print!("{}", self.model.line(cols));
    }
}

/// On the host this binary does nothing but say what it is.
#[cfg(not(target_family = "wasm"))]
fn main() {
    eprintln!(
        "tend-zellij is a zellij plugin. Build it with \
         `cargo build --release --target wasm32-wasip1` in zellij-plugin/ \
         and load wasm32-wasip1/release/tend-zellij.wasm from cargo's target \
         directory (zellij-plugin/target, or $CARGO_TARGET_DIR) in zellij."
    );
    std::process::exit(2);
}
