//! `tend completions SHELL` and `tend man`: shell completions and manual
//! pages, generated from the same clap definition as the parser, so they
//! never drift from the commands.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;

/// Arguments of `tend completions`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  tend completions bash > ~/.local/share/bash-completion/completions/tend
  tend completions zsh  > ~/.zfunc/_tend      # with fpath+=(~/.zfunc) before compinit
  tend completions fish > ~/.config/fish/completions/tend.fish

scripts/install.sh installs all three where the shells look for them.")]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish (also elvish, powershell).
    pub shell: clap_complete::Shell,
}

/// Arguments of `tend man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write tend.1 and a page per command (tend-approve.1, …) into this
    /// directory instead of printing tend.1.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// `tend completions SHELL` for the command tree `cmd` (tend's, from its
/// parser's definition).
pub fn completions(
    cmd: clap::Command,
    args: &CompletionsArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut cmd = without_hidden(cmd);
    // Into memory first: clap_complete panics on a failed write (a closed
    // pipe), and an error here must be a message.
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "tend", &mut buf);
    out.write_all(&buf)
        .map_err(|e| CliError::new(ErrorKind::Io, format!("cannot write the completions: {e}")))
}

/// The command tree without its hidden commands (tap, poke, key, play,
/// daemon: what tmux runs, not the user). clap_complete's bash script would
/// otherwise offer them.
fn without_hidden(cmd: clap::Command) -> clap::Command {
    let visible: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut out = clap::Command::new("tend").version(env!("CARGO_PKG_VERSION"));
    if let Some(a) = cmd.get_about() {
        out = out.about(a.clone());
    }
    out.args(cmd.get_arguments().cloned())
        .subcommands(visible)
        .subcommand_required(true)
}

fn render(cmd: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd).render(out)
}

/// `tend man [--dir DIR]` for the command tree `cmd`.
pub fn man(cmd: clap::Command, args: &ManArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let io = |what: String| {
        move |e: std::io::Error| CliError::new(ErrorKind::Io, format!("{what}: {e}"))
    };
    let Some(dir) = &args.dir else {
        return render(cmd, out).map_err(io("cannot write the manual page".into()));
    };
    std::fs::create_dir_all(dir).map_err(io(format!("cannot create {}", dir.display())))?;
    let mut pages = vec![("tend.1".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("tend-{}", sub.get_name());
        // Titled `tend-approve`, as git's pages are; the synopsis says
        // `tend approve`, as it is typed.
        let page = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("tend {}", sub.get_name()));
        pages.push((format!("{name}.1"), page));
    }
    for (file, page) in pages {
        let path = dir.join(&file);
        let mut buf = Vec::new();
        render(page, &mut buf).map_err(io(format!("cannot render {file}")))?;
        std::fs::write(&path, buf).map_err(io(format!("cannot write {}", path.display())))?;
        writeln!(out, "{}", path.display()).map_err(io("cannot write output".into()))?;
    }
    Ok(())
}
