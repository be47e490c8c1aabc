//! `tend restore` against real tmux servers: an agent's conversation is
//! remembered while it runs, the server is killed, a new server comes up
//! with the same session and window, and the restore types the agent's
//! resume command at that pane's prompt — once. The agent is a stand-in
//! for Claude Code (`support/standin_claude.py`) that keeps Claude Code's
//! files in Claude Code's places, so that the real manifest's `[resume]`
//! table, the session-file reader and the store check are what run; the
//! real CLIs are in `restore_live.rs` (opt-in).

use std::path::Path;

use serde_json::Value;

use crate::support::restore_lab::Lab;
use crate::support::wait_until;

/// A lab whose panes have the stand-in as `claude` on their PATH, logging
/// each start to `standin.log`.
fn lab(tag: &str) -> Lab {
    let lab = Lab::new(tag);
    let stand_in = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/standin_claude.py"),
    )
    .expect("the stand-in");
    lab.env.executable("claude", &stand_in);
    let bin = lab.env.path().join("bin");
    let log = lab.env.path().join("standin.log");
    lab.with_path(bin)
        .with_var("STANDIN_LOG", &log.display().to_string())
}

/// The stand-in's log: one JSON object per start.
fn starts(lab: &Lab) -> Vec<Value> {
    std::fs::read_to_string(lab.env.path().join("standin.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "start")
        .collect()
}

/// Starts the stand-in in `target`, takes a turn, and waits until tend
/// saved its conversation; returns the conversation's id.
fn agent_takes_a_turn(lab: &Lab, target: &str, folder: &Path) -> String {
    let before = starts(lab).len();
    lab.env.type_line(target, "claude");
    assert!(
        wait_until(15, || starts(lab).len() > before),
        "the stand-in did not start: {}",
        lab.screen(target)
    );
    let id = starts(lab)[before]["id"].as_str().expect("id").to_owned();
    lab.env.type_line(target, "Write a haiku about tmux.");
    assert!(
        wait_until(20, || lab
            .saved()
            .iter()
            .any(|c| c["id"] == id.as_str() && c["end"]["kind"] == "running")),
        "tend did not save the conversation: {:?}",
        lab.saved()
    );
    assert_eq!(lab.saved_id("claude", folder, 1).len(), id.len());
    id
}

#[test]
fn a_conversation_comes_back_in_its_pane_after_the_server_is_killed() {
    let lab = lab("restore-back");
    let work = lab.folder("work");
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let id = agent_takes_a_turn(&lab, "work:agent", &work);
    lab.kill_server();
    // The agent ended with the server: still a conversation to restore.
    let saved = lab.saved();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(saved[0]["end"]["kind"], "running");
    assert_eq!(saved[0]["folder"], work.display().to_string());
    assert_eq!(saved[0]["place"]["session"], "work");

    lab.server(&work);
    let program = lab.env.path().join("bin/claude");
    let listed = lab.restore(&[]);
    assert!(
        listed.contains(&format!(
            "can start in work:0.0: {} --resume {id}",
            program.display()
        )),
        "{listed}"
    );
    let dry = lab.restore(&["--all", "--dry-run"]);
    assert!(dry.contains("would start in work:0.0"), "{dry}");
    assert_eq!(starts(&lab).len(), 1, "a list or a dry run starts nothing");

    let done = lab.restore(&["--all"]);
    assert!(done.contains("started in work:0.0"), "{done}");
    assert!(
        wait_until(15, || starts(&lab).len() == 2),
        "not resumed: {}",
        lab.screen("work:agent")
    );
    let again = &starts(&lab)[1];
    assert_eq!(again["id"], id.as_str());
    assert_eq!(again["resumed"], true);
    assert_eq!(again["cwd"], work.display().to_string());
    // The agent's new session file names the same conversation and folder.
    let sessions = lab.home.join(".claude/sessions");
    let file = sessions.join(format!("{}.json", again["pid"]));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("session file")).expect("json");
    assert_eq!(v["sessionId"], id.as_str());
    assert_eq!(v["cwd"], work.display().to_string());

    // Never twice: the second restore does nothing.
    let second = lab.restore(&["--all"]);
    assert_eq!(second.trim(), "nothing to restore (1 was restored before)");
    // Nor after the daemon starts again.
    lab.env.tend_ok(&["stop"]);
    let third = lab.restore(&["--all"]);
    assert!(third.starts_with("nothing to restore"), "{third}");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(starts(&lab).len(), 2);
}

#[test]
fn never_into_a_pane_where_something_runs_nor_a_conversation_that_is_gone() {
    let lab = lab("restore-skip");
    let work = lab.folder("work");
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    lab.window(1, "second", &work);
    let first = agent_takes_a_turn(&lab, "work:agent", &work);
    let second = agent_takes_a_turn(&lab, "work:second", &work);
    lab.kill_server();

    lab.server(&work);
    lab.window(1, "second", &work);
    // Something runs in the first pane.
    lab.env.type_line("work:agent", "sleep 300");
    // The second conversation is gone from the agent's store.
    let projects = lab.home.join(".claude/projects");
    for dir in std::fs::read_dir(&projects).expect("projects").flatten() {
        let _ = std::fs::remove_file(dir.path().join(format!("{second}.jsonl")));
    }
    assert!(
        wait_until(10, || lab.command("work:agent") == "sleep"),
        "sleep did not start"
    );
    let out = lab.restore(&["--all"]);
    assert!(
        out.contains(&format!(
            "work:0.0  Claude Code  {}  {first}\n    skipped: sleep runs in work:0.0",
            work.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("skipped: the conversation is not in Claude Code's store (removed, or no turn was taken)"),
        "{out}"
    );
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(starts(&lab).len(), 2, "nothing started");
    // Skipped is not resumed: once the pane is free, it can be.
    lab.env.tmux(&["send-keys", "-t", "work:agent", "C-c"]);
    assert!(wait_until(10, || lab.command("work:agent") == "bash"));
    let out = lab.restore(&["work:0.0"]);
    assert!(out.contains("started in work:0.0"), "{out}");
    assert!(wait_until(15, || starts(&lab).len() == 3));
    assert_eq!(starts(&lab)[2]["id"], first.as_str());
}

#[test]
fn a_pane_gone_or_in_another_folder_gets_a_new_window_in_the_conversation_s_folder() {
    let lab = lab("restore-window");
    // A folder whose name tmux would run as a command if it expanded it,
    // and a shell would split: it reaches tmux and the shell as data.
    let hostile = lab.folder("w #(touch pwned) $(touch pwned2) 'q'");
    let other = lab.folder("other");
    lab.server(&hostile);
    lab.env.tend_ok(&["start"]);
    let id = agent_takes_a_turn(&lab, "work:agent", &hostile);
    lab.kill_server();

    // Its place holds a shell in another folder.
    lab.server(&other);
    let out = lab.restore(&["--all"]);
    assert!(out.contains("started in a new window in work"), "{out}");
    assert!(wait_until(15, || starts(&lab).len() == 2), "{out}");
    let again = &starts(&lab)[1];
    assert_eq!(again["id"], id.as_str());
    assert_eq!(again["cwd"], hostile.display().to_string());
    assert!(!lab.env.path().join("pwned").exists());
    assert!(!hostile.join("pwned").exists());
    assert!(!hostile.join("pwned2").exists());
    assert!(!other.join("pwned2").exists());
    // The pane at the place was left alone.
    assert!(!lab.screen("work:agent").contains("--resume"));
}

#[test]
fn an_agent_the_user_quit_is_not_restored() {
    let lab = lab("restore-quit");
    let work = lab.folder("work");
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    agent_takes_a_turn(&lab, "work:agent", &work);
    lab.env.type_line("work:agent", "/exit");
    assert!(
        wait_until(20, || lab
            .saved()
            .iter()
            .all(|c| c["end"]["kind"] == "exited")),
        "{:?}",
        lab.saved()
    );
    lab.kill_server();
    lab.server(&work);
    let out = lab.restore(&["--all"]);
    assert_eq!(out.trim(), "nothing to restore");
}

#[test]
fn the_fleet_view_offers_the_restore() {
    let lab = lab("restore-pilot");
    let work = lab.folder("work");
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let id = agent_takes_a_turn(&lab, "work:agent", &work);
    lab.kill_server();
    lab.server(&work);
    lab.env.tend_ok(&["start"]);
    let d = lab.env.path();
    let view = lab.env.tmux_out(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        "work:5",
        &format!(
            "env -u TMUX XDG_RUNTIME_DIR='{}' XDG_STATE_HOME='{}' '{}' -L {} pilot",
            d.join("run").display(),
            d.join("state").display(),
            crate::support::tend_bin(),
            lab.env.name
        ),
    ]);
    assert!(
        wait_until(20, || lab.screen(&view).contains(
            "1 agent ran when the last server ended: R to restore it"
        )),
        "no offer: {}",
        lab.screen(&view)
    );
    lab.env.tmux(&["send-keys", "-t", &view, "R"]);
    assert!(
        wait_until(10, || lab.screen(&view).contains(&format!(
            "work:0.0  Claude Code  {}  {id}",
            work.display()
        ))),
        "no list: {}",
        lab.screen(&view)
    );
    assert_eq!(starts(&lab).len(), 1, "the list starts nothing");
    lab.env.tmux(&["send-keys", "-t", &view, "Enter"]);
    assert!(
        wait_until(15, || starts(&lab).len() == 2),
        "not resumed: {}",
        lab.screen(&view)
    );
    assert_eq!(starts(&lab)[1]["id"], id.as_str());
    assert!(
        wait_until(10, || lab
            .screen(&view)
            .contains("restored: Claude Code in work:0.0")),
        "{}",
        lab.screen(&view)
    );
    // Nothing is left: R says so.
    lab.env.tmux(&["send-keys", "-t", &view, "R"]);
    assert!(
        wait_until(10, || lab.screen(&view).contains("nothing to restore")),
        "{}",
        lab.screen(&view)
    );
}
