//! The core's published facts in tmux's terms: each fact is a user option
//! at the scope it is about — `@tend_state` on the pane, `@tend_window_band`
//! on the window, `@tend_session_needs` on the session, `@tend_summary`
//! globally. This is the one place those names are made; the guard's
//! cleanup ([`crate::guard`]) and the sweep of a previous daemon's options
//! take their lists from here.
//!
//! Names never repeat across scopes (except the `@tend_next*` jump targets,
//! where the pane's value is meant to win): a format looks options up pane
//! first, so a window rollup named like a pane option would be shadowed.
//!
//! | scope | options |
//! |---|---|
//! | pane | `@tend_agent`, `@tend_state`, `@tend_reason`, `@tend_band`, `@tend_glyph`, `@tend_since`, `@tend_marks`, `@tend_exit_code`, `@tend_project`, `@tend_resets_at`, `@tend_reset`, `@tend_next`, `@tend_next_session`, `@tend_next_working` |
//! | window | `@tend_window_band`, `@tend_window_glyph` |
//! | session | `@tend_session_band`, `@tend_session_needs` |
//! | global | `@tend_needs`, `@tend_quiet`, `@tend_limited`, `@tend_next_reset`, `@tend_summary`, `@tend_server_band`, `@tend_next`, `@tend_next_working` |

use tend_core::{Fact, FactUpdate, GlobalFact, PaneFact, SessionFact, WindowFact};
use tend_tmux::{OptionUpdate, Scope};

/// A pane fact's option.
pub fn pane_option(f: PaneFact) -> &'static str {
    match f {
        PaneFact::Agent => "@tend_agent",
        PaneFact::State => "@tend_state",
        PaneFact::Reason => "@tend_reason",
        PaneFact::Band => "@tend_band",
        PaneFact::Glyph => "@tend_glyph",
        PaneFact::Since => "@tend_since",
        PaneFact::Marks => "@tend_marks",
        PaneFact::ExitCode => "@tend_exit_code",
        PaneFact::Project => "@tend_project",
        PaneFact::ResetsAt => "@tend_resets_at",
        PaneFact::Reset => "@tend_reset",
        PaneFact::Next => "@tend_next",
        PaneFact::NextSession => "@tend_next_session",
        PaneFact::NextWorking => "@tend_next_working",
    }
}

/// A window fact's option.
pub fn window_option(f: WindowFact) -> &'static str {
    match f {
        WindowFact::Band => "@tend_window_band",
        WindowFact::Glyph => "@tend_window_glyph",
    }
}

/// A session fact's option.
pub fn session_option(f: SessionFact) -> &'static str {
    match f {
        SessionFact::Band => "@tend_session_band",
        SessionFact::Needs => "@tend_session_needs",
    }
}

/// A global fact's option.
pub fn global_option(f: GlobalFact) -> &'static str {
    match f {
        GlobalFact::Needs => "@tend_needs",
        GlobalFact::Quiet => "@tend_quiet",
        GlobalFact::Limited => "@tend_limited",
        GlobalFact::NextReset => "@tend_next_reset",
        GlobalFact::Summary => "@tend_summary",
        GlobalFact::ServerBand => "@tend_server_band",
        GlobalFact::Next => "@tend_next",
        GlobalFact::NextWorking => "@tend_next_working",
    }
}

/// Where a fact's option lives, and its name.
pub fn option(fact: Fact) -> (Scope, &'static str) {
    match fact {
        Fact::Global(f) => (Scope::Global, global_option(f)),
        Fact::Session(s, f) => (Scope::Session(s), session_option(f)),
        Fact::Window(w, f) => (Scope::Window(w), window_option(f)),
        Fact::Pane(p, f) => (Scope::Pane(p), pane_option(f)),
    }
}

/// The core's update as a tmux option update: foreign text escaped for the
/// format that expands it (`#{E:@tend_project}`).
pub fn option_update(u: FactUpdate) -> OptionUpdate {
    let (scope, name) = option(u.fact);
    let value = match u.value {
        Some(v) if u.fact.is_foreign_text() => Some(tend_tmux::escape::format_escape(&v)),
        v => v,
    };
    OptionUpdate {
        scope,
        name: name.to_owned(),
        value,
    }
}

/// Every pane option.
pub fn pane_options() -> impl Iterator<Item = &'static str> {
    PaneFact::ALL.iter().map(|f| pane_option(*f))
}

/// Every window option.
pub fn window_options() -> impl Iterator<Item = &'static str> {
    WindowFact::ALL.iter().map(|f| window_option(*f))
}

/// Every session option.
pub fn session_options() -> impl Iterator<Item = &'static str> {
    SessionFact::ALL.iter().map(|f| session_option(*f))
}

/// Every global option.
pub fn global_options() -> impl Iterator<Item = &'static str> {
    GlobalFact::ALL.iter().map(|f| global_option(*f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::{compute, PaneRow, RemoteFacts};
    use tend_attention::Band;
    use tend_protocol::{PaneId, SessionId, WindowId};

    /// The names users and their status formats read: unchanged from the
    /// options tend has always published.
    #[test]
    fn facts_keep_their_option_names() {
        let names: Vec<&str> = pane_options().collect();
        assert_eq!(
            names,
            [
                "@tend_agent",
                "@tend_state",
                "@tend_reason",
                "@tend_band",
                "@tend_glyph",
                "@tend_since",
                "@tend_marks",
                "@tend_exit_code",
                "@tend_project",
                "@tend_resets_at",
                "@tend_reset",
                "@tend_next",
                "@tend_next_session",
                "@tend_next_working",
            ]
        );
        assert_eq!(
            window_options().collect::<Vec<_>>(),
            ["@tend_window_band", "@tend_window_glyph"]
        );
        assert_eq!(
            session_options().collect::<Vec<_>>(),
            ["@tend_session_band", "@tend_session_needs"]
        );
        assert_eq!(
            global_options().collect::<Vec<_>>(),
            [
                "@tend_needs",
                "@tend_quiet",
                "@tend_limited",
                "@tend_next_reset",
                "@tend_summary",
                "@tend_server_band",
                "@tend_next",
                "@tend_next_working",
            ]
        );
    }

    #[test]
    fn an_update_lands_at_its_scope_and_foreign_text_is_escaped() {
        let u = option_update(FactUpdate::set(
            Fact::Window(WindowId(4), WindowFact::Band),
            "waiting",
        ));
        assert_eq!(
            u,
            OptionUpdate::set(Scope::Window(WindowId(4)), "@tend_window_band", "waiting")
        );
        let u = option_update(FactUpdate::set(
            Fact::Pane(PaneId(2), PaneFact::Project),
            "#(rm -rf ~) · main",
        ));
        assert_eq!(u.scope, Scope::Pane(PaneId(2)));
        assert_eq!(u.name, "@tend_project");
        assert_eq!(
            u.value.as_deref(),
            Some(tend_tmux::escape::format_escape("#(rm -rf ~) · main").as_str())
        );
        assert_ne!(u.value.as_deref(), Some("#(rm -rf ~) · main"));
        // A tend word is sent as it is; a withdrawn fact unsets its option.
        let u = option_update(FactUpdate::set(
            Fact::Pane(PaneId(2), PaneFact::Marks),
            "#x",
        ));
        assert_eq!(u.value.as_deref(), Some("#x"));
        let u = option_update(FactUpdate::unset(Fact::Session(
            SessionId(1),
            SessionFact::Needs,
        )));
        assert_eq!(
            u,
            OptionUpdate::unset(Scope::Session(SessionId(1)), "@tend_session_needs")
        );
    }

    /// What a full table publishes lands on the options the status
    /// formats in the README read.
    #[test]
    fn a_table_publishes_the_documented_options() {
        let row = PaneRow {
            pane: PaneId(1),
            window: WindowId(2),
            session: SessionId(3),
            session_name: "work".into(),
            agent: Some("claude".into()),
            state: Some(tend_vocab::State::Waiting),
            reason: Some(tend_vocab::Reason::Approval),
            band: Some(Band::Waiting),
            since: Some(10.0),
            marks: None,
            exit_code: None,
            project: Some("tend · main".into()),
            resets_at: None,
            reset: None,
        };
        let set = compute(&[row], &RemoteFacts::default(), &mut Vec::new());
        let opt = |scope: Scope, name: &str| {
            set.iter()
                .map(|(f, v)| (option(*f), v))
                .find(|((s, n), _)| *s == scope && *n == name)
                .map(|(_, v)| v.clone())
        };
        let p = Scope::Pane(PaneId(1));
        assert_eq!(opt(p, "@tend_state").as_deref(), Some("waiting"));
        assert_eq!(opt(p, "@tend_reason").as_deref(), Some("approval"));
        assert_eq!(opt(p, "@tend_glyph").as_deref(), Some("●"));
        assert_eq!(opt(p, "@tend_project").as_deref(), Some("tend · main"));
        assert_eq!(opt(p, "@tend_next").as_deref(), Some(""));
        let w = Scope::Window(WindowId(2));
        assert_eq!(opt(w, "@tend_window_band").as_deref(), Some("waiting"));
        let s = Scope::Session(SessionId(3));
        assert_eq!(opt(s, "@tend_session_needs").as_deref(), Some("1"));
        assert_eq!(opt(Scope::Global, "@tend_next").as_deref(), Some("%1"));
        assert_eq!(
            opt(Scope::Global, "@tend_summary").as_deref(),
            Some("1 agent needs you")
        );
    }
}
