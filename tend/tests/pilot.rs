//! `tend pilot`, the fleet view, at a real tmux client: `prefix A` opens
//! it in a popup; its rows come in band order with the project and the
//! clock; the band filters narrow and restore the list; and its keys reach
//! the daemon and the agent (snooze, park with a note, approve, deny, jump,
//! a prompt, explain, capture).

use crate::support;

use std::path::Path;

use support::{corpus, tend_bin, typed, wait_until, Env, Terminal};

fn get(env: &Env, pane: &str) -> serde_json::Value {
    serde_json::from_str(&env.tend_ok(&["get", pane, "--json"])).expect("get --json")
}

/// A window in `dir` replaying Claude's approval recording, held at its
/// dialog; every byte typed into it is logged to `log`.
fn agent_in(env: &Env, dir: &Path, log: &Path) -> String {
    let cmd = format!(
        "env TEND_AGENT=claude '{}' play '{}' --wait-input-at 15 --input-log '{}' --hold 600",
        tend_bin(),
        corpus("claude/approval/pane.cast").display(),
        log.display()
    );
    env.tmux_out(&[
        "new-window",
        "-d",
        "-P",
        "-F",
        "#{pane_id}",
        "-c",
        &dir.display().to_string(),
        "-t",
        "=main:",
        &cmd,
    ])
}

/// The lines of the client's screen that hold `what`, top to bottom.
fn line_of(screen: &str, what: &str) -> Option<usize> {
    screen.lines().position(|l| l.contains(what))
}

#[test]
fn the_fleet_view_lists_by_band_filters_and_acts() {
    let env = Env::new("pilot");
    // A repository on a branch, and a linked worktree.
    let repo = env.path().join("shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature-x\n").unwrap();
    let log_a = env.path().join("a.log");
    let log_b = env.path().join("b.log");
    env.tend_ok(&["start"]);
    let a = agent_in(&env, &repo, &log_a);
    let b = agent_in(&env, env.path(), &log_b);
    for p in [&a, &b] {
        assert!(
            wait_until(60, || env.pane_option(p, "@tend_reason") == "approval"),
            "{p} never waited for approval"
        );
    }
    // The project, in the list and as a pane option.
    assert!(
        wait_until(10, || get(&env, &a)["project"] == "shop · feature-x"),
        "{}",
        get(&env, &a)
    );
    assert_eq!(env.pane_option(&a, "@tend_project"), "shop · feature-x");
    assert!(get(&env, &a)["place"]
        .as_str()
        .is_some_and(|p| p.starts_with("main:")));
    // b parked with a note holding an escape sequence: drawn without it.
    env.tend_ok(&["park", &b, "--note", "after lunch\u{1b}[31m"]);

    let term = Terminal::attach(&env, "main", "pilot");
    // A taller terminal than the default 24 rows: room for the dialog.
    term.tmux(&["resize-window", "-t", "%0", "-x", "160", "-y", "40"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    term.type_keys(&["C-b", "A"]);
    let screen = term.screen_when(20, "no fleet view", |screen| {
        screen.contains("tend pilot") && screen.contains("── parked")
    });
    // Bands in order, each row's words.
    let waiting = line_of(&screen, "── waiting (1)").expect("waiting band");
    let parked = line_of(&screen, "── parked (1)").expect("parked band");
    assert!(waiting < parked, "{screen}");
    let row_a = &screen
        .lines()
        .nth(waiting + 1)
        .unwrap_or_default()
        .to_owned();
    assert!(row_a.contains("approval"), "{row_a}");
    assert!(row_a.contains("claude"), "{row_a}");
    assert!(row_a.contains("shop · feature-x"), "{row_a}");
    assert!(row_a.contains("waiting "), "{row_a}");
    assert!(screen.contains("parked: after lunch[31m"), "{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen}");
    assert!(screen.contains("1 agent needs you"), "{screen}");
    assert!(screen.contains("2 waiting 1"), "{screen}");
    assert!(screen.contains("6 parked 1"), "{screen}");

    // Filters: 6 shows the parked band alone; 6 again shows every band.
    term.type_keys(&["6"]);
    term.screen_when(10, "filter", |screen| {
        screen.contains("── parked") && !screen.contains("── waiting")
    });
    term.type_keys(&["6"]);
    term.screen_when(10, "filter cleared", |screen| {
        screen.contains("── parked") && screen.contains("── waiting")
    });

    // The filter moved the selection to b; g selects the first row, a.
    // Snooze it 15 minutes, then lift it.
    term.type_keys(&["g"]);
    term.screen_when(10, "g selects the first row", |screen| {
        line_of(screen, "── waiting (1)")
            .and_then(|w| screen.lines().nth(w + 1))
            .is_some_and(|r| r.contains("▶"))
    });
    term.type_keys(&["s", "1"]);
    assert!(
        wait_until(10, || get(&env, &a)["snoozed"] == true),
        "snooze never reached the daemon: {}",
        term.screen()
    );
    term.screen_when(10, "the snoozed band never showed", |s| {
        s.contains("── snoozed")
    });
    term.type_keys(&["u"]);
    assert!(
        wait_until(10, || get(&env, &a)["snoozed"] == false),
        "unsnooze: {}",
        term.screen()
    );
    // Park with a note typed in the view, then unpark.
    term.type_keys(&["p"]);
    term.type_keys(&["-l", "back at 3; $(id)"]);
    term.type_keys(&["Enter"]);
    assert!(
        wait_until(10, || get(&env, &a)["note"] == "back at 3; $(id)"),
        "park: {} {}",
        get(&env, &a),
        term.screen()
    );
    term.type_keys(&["p"]);
    assert!(
        wait_until(10, || get(&env, &a)["parked"] == false),
        "unpark: {}",
        term.screen()
    );
    // The dialog's text for the approval, then approve: its key reaches
    // the agent (Claude's "Yes" is 1).
    term.screen_when(10, "no dialog text", |s| {
        s.contains("Do you want to proceed?")
    });
    let before = typed(&log_a);
    term.type_keys(&["a"]);
    let want: Vec<u8> = before.iter().chain(b"1").copied().collect();
    assert!(
        wait_until(10, || typed(&log_a) == want),
        "approve typed {:?}: {}",
        String::from_utf8_lossy(&typed(&log_a)),
        term.screen()
    );
    assert!(typed(&log_b).is_empty(), "b was typed into");

    // Jump: Enter moves the client to the selected pane and closes the view.
    term.type_keys(&["q"]);
    term.screen_when(10, "q did not close", |s| !s.contains("tend pilot"));
    env.tend_ok(&["unpark", &b]);
    term.type_keys(&["C-b", "A"]);
    term.screen_when(20, "reopen", |s| s.contains("tend pilot"));
    // Choose b's row (a may still show its dialog, or have moved on).
    let place_b = get(&env, &b)["place"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let on_b = |s: &str| s.lines().any(|l| l.contains('▶') && l.contains(&place_b));
    for _ in 0..5 {
        if wait_until(3, || on_b(&term.screen())) {
            break;
        }
        term.type_keys(&["j"]);
    }
    assert!(on_b(&term.screen()), "{}", term.screen());
    // d: deny b's dialog; the key the daemon would send (its dry run) is
    // the one that reaches b, and a is not typed into.
    let dry: serde_json::Value =
        serde_json::from_str(&env.tend_ok(&["deny", &b, "--dry-run", "--json"]))
            .expect("deny --dry-run --json");
    let deny_keys: String = dry["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str())
        .collect();
    assert!(!deny_keys.is_empty(), "{dry}");
    let a_before = typed(&log_a);
    term.type_keys(&["d"]);
    assert!(
        wait_until(10, || typed(&log_b) == deny_keys.as_bytes()),
        "deny typed {:?} into b, want {deny_keys:?}: {}",
        String::from_utf8_lossy(&typed(&log_b)),
        term.screen()
    );
    assert_eq!(typed(&log_a), a_before, "a was typed into");
    assert!(on_b(&term.screen()), "{}", term.screen());
    term.type_keys(&["Enter"]);
    let current = || env.tmux_out(&["list-clients", "-F", "#{pane_id}"]);
    assert!(
        wait_until(10, || current() == b),
        "the client is on {} not {b}: {}",
        current(),
        term.screen()
    );
    term.screen_when(10, "Enter did not close the view", |s| {
        !s.contains("tend pilot")
    });
}

/// In a plain pane, without a popup: the same rows, and the menu stays
/// what `prefix A` opens with `@tend-picker-view menu`.
#[test]
fn pilot_runs_in_a_pane_and_the_menu_stays_a_choice() {
    let env = Env::new("pilot-pane");
    let log = env.path().join("a.log");
    env.tend_ok(&["start"]);
    // Claude at its prompt (held at 3.5 s), its dialog later.
    let cmd = format!(
        "env TEND_AGENT=claude '{}' play '{}' --wait-input-at 3.5 --wait-input-at 15 --input-log '{}' --hold 600",
        tend_bin(),
        corpus("claude/approval/pane.cast").display(),
        log.display()
    );
    let a = env.window("main", &cmd);
    assert!(
        wait_until(60, || env.pane_option(&a, "@tend_state") == "idle"),
        "never idle: {}",
        env.pane_option(&a, "@tend_state")
    );
    let cwd = env.path().join("view");
    std::fs::create_dir_all(&cwd).unwrap();
    let view = env.window(
        "main",
        &format!(
            "cd '{}' && env -u TMUX XDG_RUNTIME_DIR='{}' '{}' -L {} pilot",
            cwd.display(),
            env.path().join("run").display(),
            tend_bin(),
            env.name
        ),
    );
    let capture = || env.tmux_out(&["capture-pane", "-p", "-t", &view]);
    let mut screen = String::new();
    assert!(
        wait_until(20, || {
            screen = capture();
            screen.contains("── idle (1)")
        }),
        "no fleet view in the pane: {screen}"
    );
    // t: a prompt typed in the view reaches the agent.
    env.tmux(&["send-keys", "-t", &view, "t"]);
    env.tmux(&["send-keys", "-t", &view, "-l", "write the tests"]);
    assert!(
        wait_until(10, || capture().contains("prompt for %")),
        "{}",
        capture()
    );
    env.tmux(&["send-keys", "-t", &view, "Enter"]);
    assert!(
        wait_until(10, || String::from_utf8_lossy(&typed(&log))
            .contains("write the tests")),
        "the prompt never reached the agent: {:?} {}",
        String::from_utf8_lossy(&typed(&log)),
        capture()
    );
    // e: the explanation, in the view.
    env.tmux(&["send-keys", "-t", &view, "e"]);
    assert!(
        wait_until(10, || capture().contains("explain %")),
        "{}",
        capture()
    );
    env.tmux(&["send-keys", "-t", &view, "x"]);
    // c: a capture of the agent, saved in the view's directory, and what
    // was saved shown in the view.
    env.tmux(&["send-keys", "-t", &view, "c"]);
    assert!(
        wait_until(20, || capture().contains("capture %")),
        "{}",
        capture()
    );
    let saved = || {
        std::fs::read_dir(&cwd)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("tend-capture-claude-"))
            })
    };
    assert!(wait_until(10, || saved().is_some()), "{}", capture());
    let dir = saved().unwrap_or_default();
    assert!(dir.join("pane.cast").is_file(), "{}", capture());
    env.tmux(&["send-keys", "-t", &view, "x"]);
    // `?` lists the keys; any key closes the list.
    env.tmux(&["send-keys", "-t", &view, "?"]);
    assert!(
        wait_until(10, || {
            screen = capture();
            screen.contains("snooze: then 1 15 minutes")
        }),
        "{screen}"
    );
    env.tmux(&["send-keys", "-t", &view, "x"]);
    env.tmux(&["send-keys", "-t", &view, "q"]);
    assert!(
        wait_until(10, || env
            .tmux_out(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .all(|p| p != view)),
        "q did not end the view"
    );

    env.tmux(&["set", "-g", "@tend-picker-view", "menu"]);
    let term = Terminal::attach(&env, "main", "menu");
    term.type_keys(&["C-b", "A"]);
    term.screen_when(10, "no picker menu", |s| s.contains("choose an agent"));
    term.type_keys(&["Escape"]);
}
