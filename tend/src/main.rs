//! The `tend` binary.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use tend::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        // A relay, and the leader of its pty's session: they own the
        // terminal, and their exit status is the command's.
        Command::Run(a) => return cli::run::main(a),
        Command::RunSession(a) => return cli::run::session(a),
        _ => {}
    }
    let json = cli::wants_json(&cli);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let s = &cli.server;
    let result = match &cli.command {
        Command::Start(a) => cli::lifecycle::start(s, a, &mut out),
        Command::Stop(a) => cli::lifecycle::stop(s, a, &mut out),
        Command::Daemon => cli::lifecycle::daemon(s),
        Command::Status(a) => cli::query::status(s, a, &mut out),
        Command::List(a) => cli::query::list(s, a, &mut out),
        Command::Next(a) => cli::query::next(s, a, &mut out),
        Command::Jump(a) => cli::query::jump(s, a, &mut out),
        Command::Explain(a) => cli::explain::run(s, a, &mut out),
        Command::Pilot(a) => cli::pilot::run(s, a),
        Command::Get(a) => cli::agents::get(s, a, &mut out),
        Command::Events(a) => cli::agents::events(s, a, &mut out),
        Command::Wait(a) => cli::agents::wait(s, a, &mut out),
        Command::Prompt(a) => cli::agents::prompt(s, a, &mut out),
        Command::Limits(a) => cli::limits::limits(s, a, &mut out),
        Command::Resume(a) => cli::limits::resume(s, a, &mut out),
        Command::SendKeys(a) => cli::agents::send_keys(s, a, &mut out),
        Command::Approve(a) => cli::agents::answer(s, a, "approve", &mut out),
        Command::Deny(a) => cli::agents::answer(s, a, "deny", &mut out),
        Command::Read(a) => cli::agents::read(s, a, &mut out),
        Command::Report(a) => cli::agents::report(s, a, &mut out),
        Command::Release(a) => cli::agents::release(s, a, &mut out),
        Command::ReportMetadata(a) => cli::agents::report_metadata(s, a, &mut out),
        Command::StopRequest(a) => cli::agents::stop_request(s, a, &mut out),
        Command::Inbox(a) => cli::agents::inbox(s, a, &mut out),
        Command::Ack(a) => cli::agents::ack(s, a, &mut out),
        Command::Park(a) => cli::agents::park(s, a, &mut out),
        Command::Unpark(a) => cli::agents::unpark(s, a, &mut out),
        Command::Snooze(a) => cli::agents::snooze(s, a, &mut out),
        Command::Unsnooze(a) => cli::agents::unsnooze(s, a, &mut out),
        Command::Restore(a) => cli::restore::run(s, a, &mut out),
        Command::Replay(a) => cli::replay::run(a, &mut out),
        Command::Run(_) | Command::RunSession(_) => Ok(()),
        Command::ShellInit(a) => cli::run::init(a, &mut out),
        Command::Capture(a) => cli::capture::run(s, a, &mut out),
        Command::Doctor(a) => cli::doctor::run(s, a, &mut out),
        Command::Config(a) => cli::doctor::config(a, &mut out),
        Command::Hooks(a) => cli::hooks::run(a, &mut out),
        Command::Remote(a) => cli::remote::run(s, a, &mut out),
        Command::Demo(a) => cli::demo::demo(s, a, &mut out),
        Command::Completions(a) => cli::docs::completions(Cli::command(), a, &mut out),
        Command::Man(a) => cli::docs::man(Cli::command(), a, &mut out),
        Command::Play(a) => cli::demo::play(a),
        Command::Tap(a) => cli::internal::tap(a),
        Command::Poke(a) => cli::internal::poke(a),
        Command::Key(a) => cli::internal::key(s, a),
        Command::Guard(a) => cli::internal::guard(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if json {
                println!("{}", e.to_json());
            }
            tend_config::say!("{e}");
            ExitCode::FAILURE
        }
    }
}
