//! `tend restore` in tmux: the command that resumes an agent's
//! conversation typed at a shell's prompt — in its pane, or in a new window
//! (and session) made for it in its folder. The core decided where and
//! what (`tend_core::resume::plan`); this only speaks to tmux.

use tend_core::resume::plan::Target;
use tend_tmux::escape::{format_escape, shell_join};
use tend_tmux::Server;

/// Types `command` at the prompt `target` names, as one shell line: every
/// word through the shell's quoting layer ([`shell_join`]), the names and
/// the folder tmux expands as formats escaped ([`format_escape`]).
pub(crate) fn type_command(
    server: &Server,
    target: &Target,
    command: &[String],
) -> Result<(), String> {
    let line = shell_join(command);
    let pane = match target {
        Target::Pane { pane, .. } => pane.to_string(),
        Target::NewWindow {
            session,
            session_name,
            window_name,
            folder,
        } => {
            // new-window and new-session expand formats in -n, -s and -c:
            // escaped, a name or folder holding `#(…)` arrives as written.
            let name = format_escape(window_name);
            let dir = format_escape(folder);
            let made = match session {
                Some(s) => server.run([
                    "new-window",
                    "-d",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "-n",
                    name.as_str(),
                    "-c",
                    dir.as_str(),
                    "-t",
                    &format!("{s}:"),
                ]),
                None => server.run([
                    "new-session",
                    "-d",
                    "-P",
                    "-F",
                    "#{pane_id}",
                    "-s",
                    format_escape(session_name).as_str(),
                    "-n",
                    name.as_str(),
                    "-c",
                    dir.as_str(),
                ]),
            };
            made.map_err(|e| format!("cannot open a window for it: {e}"))?
                .trim()
                .to_owned()
        }
    };
    server
        .run_many(&[
            vec!["send-keys", "-t", pane.as_str(), "-l", line.as_str()],
            vec!["send-keys", "-t", pane.as_str(), "Enter"],
        ])
        .map(drop)
        .map_err(|e| format!("cannot type into {pane}: {e}"))
}
