//! The parsers over real output captured from zellij 0.45.1 (`tests/fixtures/`).
//!
//! The session behind them: tab `agents` (terminal_0 `claude`, terminal_1
//! `codex`, the built-in `zellij:link` plugin_0 and tend's plugin plugin_1
//! showing a status) and tab `background` (terminal_2 `bg`, replaying the
//! Gemini demo); the attached client looked at terminal_1.

use tend_zellij_host::panes::{parse_list_clients, parse_list_panes, parse_list_tabs};
use tend_zellij_host::session::parse_list_sessions;
use tend_zellij_host::subscribe::{parse_event, SubscribeEvent};
use tend_zellij_host::PaneId;

const LIST_PANES: &str = include_str!("fixtures/list-panes.json");
const LIST_TABS: &str = include_str!("fixtures/list-tabs.json");
const LIST_CLIENTS: &str = include_str!("fixtures/list-clients.txt");
const LIST_SESSIONS: &str = include_str!("fixtures/list-sessions.txt");
const SUBSCRIBE: &str = include_str!("fixtures/subscribe.jsonl");
const DUMP_GEMINI: &str = include_str!("fixtures/dump-screen-gemini.txt");

#[test]
fn list_panes() {
    let panes = parse_list_panes(LIST_PANES).expect("parses");
    let ids: Vec<String> = panes.iter().map(|p| p.id.to_string()).collect();
    assert_eq!(
        ids,
        [
            "plugin_0",
            "plugin_1",
            "terminal_0",
            "terminal_1",
            "terminal_2"
        ]
    );

    let tend = &panes[1];
    assert!(tend
        .plugin_url
        .as_deref()
        .is_some_and(|u| u.ends_with("tend-zellij.wasm")));
    // The plugin made itself unselectable once its permission was granted.
    assert!(!tend.selectable);
    assert_eq!(tend.geometry.content_rows, 1);

    let claude = &panes[2];
    assert_eq!(claude.id, PaneId::Terminal(0));
    assert_eq!(claude.title, "claude");
    assert_eq!(claude.tab_name, "agents");
    assert_eq!(claude.tab_id, 0);
    assert!(claude
        .command
        .as_deref()
        .is_some_and(|c| c.ends_with("tend play demo:claude")));
    assert_eq!(claude.terminal_command, claude.command);
    assert!(claude.cwd.is_some());
    assert!(claude.geometry.content_rows > 10 && claude.geometry.content_cols > 10);

    let bg = &panes[4];
    assert_eq!(
        (bg.tab_id, bg.tab_position, bg.tab_name.as_str()),
        (1, 1, "background")
    );
    assert!(bg.focused);
    assert!(!bg.exited);
}

#[test]
fn list_tabs() {
    let tabs = parse_list_tabs(LIST_TABS).expect("parses");
    assert_eq!(tabs.len(), 2);
    assert_eq!(tabs[0].name, "agents");
    assert_eq!(tabs[1].tab_id, 1);
    assert!(tabs[0].active);
    assert!(!tabs[1].active);
}

#[test]
fn list_clients() {
    let clients = parse_list_clients(LIST_CLIENTS).expect("parses");
    assert_eq!(clients.len(), 1);
    assert_eq!(clients[0].client_id, 1);
    assert_eq!(clients[0].pane, Some(PaneId::Terminal(1)));
    assert!(clients[0].command.ends_with("tend play demo:codex"));
}

#[test]
fn list_sessions() {
    let sessions = parse_list_sessions(LIST_SESSIONS);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].name, "zx");
    assert!(!sessions[0].exited);
    let exited = parse_list_sessions("old [Created 2m ago] (EXITED - attach to resurrect)\n");
    assert!(exited[0].exited);
}

#[test]
fn subscribe_stream() {
    let events: Vec<SubscribeEvent> = SUBSCRIBE
        .lines()
        .map(|l| parse_event(l).expect("parses").expect("an event"))
        .collect();
    assert_eq!(events.len(), 2);
    let SubscribeEvent::Update(plugin) = &events[0] else {
        panic!("expected an update, got {:?}", events[0]);
    };
    assert_eq!(plugin.pane, PaneId::Plugin(1));
    assert!(plugin.initial);
    assert_eq!(plugin.viewport.len(), 1);
    assert!(
        plugin.viewport[0].contains("2 agents need you"),
        "{:?}",
        plugin.viewport
    );
    let SubscribeEvent::Update(gemini) = &events[1] else {
        panic!("expected an update, got {:?}", events[1]);
    };
    assert_eq!(gemini.pane, PaneId::Terminal(2));
    assert!(gemini.viewport.iter().any(|l| l.contains("Gemini CLI")));
    // --ansi keeps the styling.
    assert!(gemini.viewport.iter().any(|l| l.contains("\u{1b}[")));
}

#[test]
fn dump_screen_text() {
    assert!(DUMP_GEMINI.contains("Gemini CLI"));
    assert!(!DUMP_GEMINI.contains('\u{1b}'), "plain dump has no escapes");
}
