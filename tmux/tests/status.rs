//! Placeholders in the user's status line, tend's own segment, and putting
//! everything back byte for byte.

use crate::common;

use common::TestServer;
use tend_tmux::status::{LENGTH_BONUS, STATUS_SEGMENT};

/// Every global, global window and server option as tmux lists them: what
/// "byte for byte" is checked against.
fn all_options(t: &TestServer) -> String {
    let mut out = t.tmux_ok(&["show-options", "-g"]);
    out += &t.tmux_ok(&["show-options", "-gw"]);
    out += &t.tmux_ok(&["show-options", "-s"]);
    out
}

fn value(t: &TestServer, flag: &str, name: &str) -> String {
    let v = t.tmux_ok(&["show-options", flag, name]);
    v.strip_suffix('\n').unwrap_or(&v).to_string()
}

#[test]
fn default_segment_added_and_removed_exactly() {
    let t = TestServer::start();
    let before = all_options(&t);
    let right = value(&t, "-gv", "status-right");
    let length: u32 = value(&t, "-gv", "status-right-length").parse().unwrap();

    let report = t.server.install_status().unwrap();
    assert!(report.segment && report.filled.is_empty());
    assert_eq!(
        value(&t, "-gv", "status-right"),
        format!("{STATUS_SEGMENT}{right}")
    );
    assert_eq!(
        value(&t, "-gv", "status-right-length"),
        (length + LENGTH_BONUS).to_string()
    );
    // The segment shows the summary once the daemon publishes it.
    t.tmux_ok(&["set", "-g", "@tend_summary", "4 agents need you"]);
    assert!(t
        .display("%0", &value(&t, "-gv", "status-right"))
        .starts_with("#[reverse] 4 agents need you #[noreverse] "));
    t.tmux_ok(&["set", "-gu", "@tend_summary"]);
    assert!(t.server.status_shows_tend(None).unwrap());

    // Again: nothing changes (no second segment, no wider length).
    let installed = all_options(&t);
    t.server.install_status().unwrap();
    assert_eq!(all_options(&t), installed);

    let restored = t.server.restore_status().unwrap();
    assert_eq!(restored, ["status-right", "status-right-length"]);
    assert_eq!(all_options(&t), before);
    assert!(!t.server.status_shows_tend(None).unwrap());
}

#[test]
fn placeholders_filled_in_and_put_back() {
    let t = TestServer::start();
    // Quotes, backslashes, a trailing `;` and non-ASCII: all must survive.
    let left = "[#S] #{tend_summary} \"q\" \\ ;";
    let window = "#I:#{?#{tend_window_glyph}, #{tend_window_glyph},} ✓";
    t.tmux_ok(&["set", "-g", "status-left", left]);
    t.tmux_ok(&["set", "-gw", "window-status-format", window]);
    t.tmux_ok(&[
        "set",
        "-gw",
        "pane-border-format",
        "#{tend_glyph} #{tend_status}",
    ]);
    let before = all_options(&t);

    let report = t.server.install_status().unwrap();
    assert!(
        !report.segment,
        "a placeholder means no segment of tend's own"
    );
    assert_eq!(
        report.filled,
        ["status-left", "window-status-format", "pane-border-format"]
    );
    assert_eq!(
        value(&t, "-gv", "status-left"),
        "[#S] #{@tend_summary} \"q\" \\ ;"
    );
    assert_eq!(
        value(&t, "-gwv", "window-status-format"),
        "#I:#{?#{@tend_window_glyph}, #{@tend_window_glyph},} ✓"
    );
    assert_eq!(
        value(&t, "-gwv", "pane-border-format"),
        format!("#{{@tend_glyph}} {STATUS_SEGMENT}")
    );
    // status-right was not touched.
    assert!(!value(&t, "-gv", "status-right").contains("tend"));
    t.tmux_ok(&["set", "-w", "-t", "@0", "@tend_window_glyph", "●"]);
    t.tmux_ok(&["set", "-g", "@tend_summary", "1 agent needs you"]);
    assert_eq!(
        t.display("%0", &value(&t, "-gwv", "window-status-format")),
        "0: ● ✓"
    );

    t.server.restore_status().unwrap();
    t.tmux_ok(&["set", "-gu", "@tend_summary"]);
    t.tmux_ok(&["set", "-w", "-u", "-t", "@0", "@tend_window_glyph"]);
    assert_eq!(all_options(&t), before);
}

#[test]
fn a_resourced_config_becomes_the_new_original() {
    let t = TestServer::start();
    t.server.install_status().unwrap();
    // The user re-sources ~/.tmux.conf with a placeholder while tend runs.
    t.tmux_ok(&["set", "-g", "status-right", "#{tend_needs} %H:%M"]);
    let report = t.server.install_status().unwrap();
    assert!(!report.segment);
    assert_eq!(value(&t, "-gv", "status-right"), "#{@tend_needs} %H:%M");
    // No segment any more: the length widened for it is narrowed back.
    assert_eq!(value(&t, "-gv", "status-right-length"), "40");
    t.server.restore_status().unwrap();
    assert_eq!(value(&t, "-gv", "status-right"), "#{tend_needs} %H:%M");
    assert_eq!(
        t.tmux_ok(&["show-options", "-s"]).matches("@tend_").count(),
        0
    );
}

#[test]
fn status_off_adds_nothing_and_a_user_change_is_kept() {
    let t = TestServer::start();
    t.tmux_ok(&["set", "-g", "@tend-status", "off"]);
    let before = all_options(&t);
    let report = t.server.install_status().unwrap();
    assert!(!report.segment);
    assert_eq!(all_options(&t), before);
    assert!(!t.server.status_shows_tend(None).unwrap());

    // Turned on again: the segment comes; the user then sets their own
    // status-right while tend runs, and stop leaves theirs alone.
    t.tmux_ok(&["set", "-gu", "@tend-status"]);
    assert!(t.server.install_status().unwrap().segment);
    t.tmux_ok(&["set", "-g", "status-right", "mine"]);
    t.server.restore_status().unwrap();
    assert_eq!(value(&t, "-gv", "status-right"), "mine");
    assert_eq!(
        t.tmux_ok(&["show-options", "-s"]).matches("@tend_").count(),
        0
    );
}

#[test]
fn a_segment_whose_saved_original_was_lost_is_still_taken_out() {
    let t = TestServer::start();
    // What a killed daemon can leave when tend's options are cleared after
    // it: the segment in status-right, no saved original.
    t.tmux_ok(&[
        "set",
        "-g",
        "status-right",
        &format!("{STATUS_SEGMENT}%H:%M"),
    ]);
    let wide = (40 + LENGTH_BONUS).to_string();
    t.tmux_ok(&["set", "-g", "status-right-length", &wide]);
    let report = t.server.install_status().unwrap();
    assert!(report.segment);
    assert_eq!(
        value(&t, "-gv", "status-right"),
        format!("{STATUS_SEGMENT}%H:%M"),
        "a second segment was added"
    );
    assert_eq!(value(&t, "-gv", "status-right-length"), wide);
    t.server.restore_status().unwrap();
    assert_eq!(value(&t, "-gv", "status-right"), "%H:%M");
    assert_eq!(value(&t, "-gv", "status-right-length"), "40");
}
