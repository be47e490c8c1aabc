//! Links to remotes: one `ssh -T DEST tend events --feed` per remote,
//! started again with a doubling wait (capped by `[remote_link]
//! reconnect_max`) whenever it ends. The remote's snapshots replace what
//! the pane table knows of that host; while the link is down its panes
//! stay listed as `unreachable` and make no demand.
//!
//! Nothing here listens on the network or keeps a credential: ssh does the
//! reaching and the authenticating, with the user's own configuration.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::mpsc::Sender;

use super::core::{Core, Event};
use crate::remote::{LinkConfig, RemoteConfig};
use tend_protocol::reply;
use tend_protocol::{BusEvent, PaneView, StatusChanged};

/// How much of ssh's stderr is kept per link, for `tend doctor`.
pub const STDERR_KEEP: usize = 4096;

/// Longest line the feed may send (a snapshot of many panes).
const MAX_FEED_LINE: u64 = 16 << 20;

/// What a link reports.
#[derive(Debug)]
pub enum LinkEvent {
    /// ssh was started.
    Connecting,
    /// The remote's agent panes, whole, checked by
    /// [`crate::remote::feed`] (ids as the remote knows them, `%3`).
    Snapshot(crate::remote::feed::Snapshot),
    /// The link ended: what ssh said, or how it exited.
    Down {
        /// The error.
        error: String,
    },
}

/// Where a link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// ssh runs; no snapshot yet.
    Connecting,
    /// Snapshots arrive.
    Up,
    /// ssh ended; waiting to try again.
    Down,
}

impl LinkState {
    /// The word in `tend remote list --json` and `doctor`.
    pub fn word(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Up => "up",
            LinkState::Down => "unreachable",
        }
    }
}

/// One remote's link, as the pane table keeps it.
#[derive(Debug)]
pub struct Link {
    /// Its configuration.
    pub cfg: RemoteConfig,
    /// Counts restarts of the task, so a stopped task's late events are
    /// ignored.
    pub generation: u64,
    task: tokio::task::JoinHandle<()>,
    /// Where it stands.
    pub state: LinkState,
    /// Whether a snapshot ever arrived since the link was last up (its panes
    /// are known).
    pub ever_up: bool,
    /// The last error.
    pub error: Option<String>,
    /// Unix time of the last state change.
    pub since: f64,
    /// The remote tmux server's socket.
    pub tmux_socket: Option<String>,
    /// The remote's host name.
    pub hostname: Option<String>,
    /// The last snapshot's panes (remote ids).
    pub panes: Vec<PaneView>,
    /// The tail of ssh's stderr.
    pub stderr: Arc<Mutex<String>>,
    /// How many times ssh was started.
    pub attempts: u64,
    /// Panes the last snapshot listed that were left out (ids that are
    /// not ids, or too many): see [`crate::remote::feed`].
    pub dropped: usize,
}

impl Drop for Link {
    fn drop(&mut self) {
        // The task owns the ssh child (kill_on_drop): aborting it ends ssh.
        self.task.abort();
    }
}

/// Starts the link task for one remote.
pub fn start(
    name: &str,
    cfg: &RemoteConfig,
    link: &LinkConfig,
    generation: u64,
    tx: Sender<Event>,
    unix_now: f64,
) -> Link {
    let stderr = Arc::new(Mutex::new(String::new()));
    let task = tokio::spawn(run(
        name.to_owned(),
        cfg.clone(),
        link.clone(),
        generation,
        tx,
        stderr.clone(),
    ));
    Link {
        cfg: cfg.clone(),
        generation,
        task,
        state: LinkState::Connecting,
        ever_up: false,
        error: None,
        since: unix_now,
        tmux_socket: None,
        hostname: None,
        panes: Vec::new(),
        stderr,
        attempts: 0,
        dropped: 0,
    }
}

fn push_tail(buf: &Mutex<String>, text: &str) {
    let Ok(mut b) = buf.lock() else { return };
    b.push_str(text);
    if b.len() > STDERR_KEEP {
        let mut cut = b.len() - STDERR_KEEP;
        while !b.is_char_boundary(cut) {
            cut += 1;
        }
        b.drain(..cut);
    }
}

async fn run(
    name: String,
    cfg: RemoteConfig,
    link: LinkConfig,
    generation: u64,
    tx: Sender<Event>,
    stderr: Arc<Mutex<String>>,
) {
    let argv = crate::remote::feed_argv(&cfg, &link);
    let by_hand = format!("ssh {} {} events --feed", cfg.dest, cfg.tend());
    let mut backoff = link.first_backoff();
    loop {
        let send = |ev: LinkEvent| {
            let tx = tx.clone();
            let name = name.clone();
            async move {
                tx.send(Event::Remote {
                    name,
                    generation,
                    ev,
                })
                .await
                .is_ok()
            }
        };
        if !send(LinkEvent::Connecting).await {
            return;
        }
        let (error, got_snapshot) =
            match once(&argv, link.feed_silence, &by_hand, &stderr, &send).await {
                Ok(v) => v,
                Err(e) => (e, false),
            };
        if !send(LinkEvent::Down { error }).await {
            return;
        }
        // A link that worked starts over from the shortest wait.
        if got_snapshot {
            backoff = link.first_backoff();
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(link.reconnect_max);
    }
}

/// One ssh run: returns why it ended and whether a snapshot came. A feed
/// that says nothing for `silence` (no snapshot, no heartbeat) is given
/// up: ssh is stopped and the error names the wait and `by_hand`, the
/// command that shows what the remote does.
async fn once<F, Fut>(
    argv: &[String],
    silence: std::time::Duration,
    by_hand: &str,
    stderr: &Arc<Mutex<String>>,
    send: &F,
) -> Result<(String, bool), String>
where
    F: Fn(LinkEvent) -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot run {}: {e} (set TEND_SSH to the ssh program)",
            argv[0]
        )
    })?;
    let out = child.stdout.take();
    let err = child.stderr.take();
    let tail = stderr.clone();
    let err_task = tokio::spawn(async move {
        let Some(err) = err else { return };
        let mut lines = BufReader::new(err).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            push_tail(&tail, &format!("{l}\n"));
        }
    });
    let mut got = false;
    let mut bad: Option<String> = None;
    if let Some(out) = out {
        let mut r = BufReader::new(out.take(u64::MAX));
        let mut line = String::new();
        loop {
            line.clear();
            let mut limited = (&mut r).take(MAX_FEED_LINE);
            match tokio::time::timeout(silence, limited.read_line(&mut line)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(_)) => {}
                Err(_) => {
                    bad = Some(silent_feed(silence, got, by_hand));
                    break;
                }
            }
            let snap = match crate::remote::feed::parse_line(&line) {
                Ok(crate::remote::feed::Line::Snapshot(snap)) => snap,
                Ok(crate::remote::feed::Line::Other) => continue,
                Err(e) => {
                    bad = Some(e);
                    break;
                }
            };
            got = true;
            let ev = LinkEvent::Snapshot(snap);
            if !send(ev).await {
                break;
            }
        }
    }
    let _ = child.start_kill();
    let status = child.wait().await;
    let _ = err_task.await;
    let last = stderr
        .lock()
        .ok()
        .and_then(|s| {
            s.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let error = match (bad, status) {
        (Some(b), _) => b,
        (None, _) if !last.is_empty() => last,
        (None, Ok(s)) => format!("ssh ended ({s}) without a word"),
        (None, Err(e)) => format!("ssh ended: {e}"),
    };
    Ok((error, got))
}

/// Why a link whose feed said nothing for `silence` was given up.
fn silent_feed(silence: std::time::Duration, got: bool, by_hand: &str) -> String {
    let wait = tend_detector::config::format_duration(silence);
    if got {
        format!(
            "the remote's feed said nothing for {wait} (not even its heartbeat): its tend may be \
             stuck; connecting again (`{by_hand}` shows what it does)"
        )
    } else {
        format!(
            "no snapshot from the remote {wait} after ssh started: its login shell or tend \
             hangs there (a prompt, a slow rc file?); connecting again (`{by_hand}` shows what \
             it does)"
        )
    }
}

/// A remote pane as the rest of tend sees it: its id prefixed with the
/// remote's name, `host` set, and while the link is not up, `unreachable`
/// instead of the last state (old evidence must not make a demand).
pub fn view_of(name: &str, link: &Link, p: &PaneView) -> PaneView {
    let mut v = p.clone();
    v.pane = format!("{name}:{}", p.pane);
    v.host = Some(name.to_owned());
    if link.state != LinkState::Up {
        v.state = Some("unreachable".into());
        v.reason = None;
        v.band = Some("unreachable".into());
        v.quiet = false;
        v.rule = Some("remote/unreachable".into());
        v.since = Some(link.since);
    }
    v
}

impl Core {
    /// Starts, stops and restarts links to match the configuration file.
    pub fn reload_remotes(&mut self) -> Result<usize, String> {
        let cfg = crate::config::load().map_err(|e| e.message)?;
        let Some(tx) = self.link_tx.clone() else {
            return Ok(0);
        };
        let unix = self.epoch().as_secs_f64();
        let changed_link = self.link_cfg != cfg.remote_link;
        self.link_cfg = cfg.remote_link.clone();
        let before: Vec<String> = self.links.keys().cloned().collect();
        for name in before {
            let keep = cfg
                .remotes
                .get(&name)
                .is_some_and(|r| *r == self.links[&name].cfg && !changed_link);
            if !keep {
                let old = self.remote_views_of(&name);
                self.links.remove(&name);
                self.remote_events(&name, old, BTreeMap::new());
            }
        }
        for (name, r) in &cfg.remotes {
            if self.links.contains_key(name) {
                continue;
            }
            self.link_gen += 1;
            let link = start(name, r, &self.link_cfg, self.link_gen, tx.clone(), unix);
            self.links.insert(name.clone(), link);
        }
        self.changed = true;
        Ok(self.links.len())
    }

    /// The views of one remote's panes, by id.
    pub(crate) fn remote_views_of(&self, name: &str) -> BTreeMap<String, PaneView> {
        let Some(link) = self.links.get(name) else {
            return BTreeMap::new();
        };
        link.panes
            .iter()
            .map(|p| {
                let v = view_of(name, link, p);
                (v.pane.clone(), v)
            })
            .collect()
    }

    /// Every remote pane's view.
    pub(crate) fn remote_views(&self) -> Vec<PaneView> {
        self.links
            .keys()
            .flat_map(|n| self.remote_views_of(n).into_values())
            .collect()
    }

    /// Handles what a link reported.
    pub(crate) fn on_remote(&mut self, name: String, generation: u64, ev: LinkEvent) {
        let unix = self.epoch().as_secs_f64();
        let old = self.remote_views_of(&name);
        let Some(link) = self.links.get_mut(&name) else {
            return;
        };
        if link.generation != generation {
            return;
        }
        match ev {
            LinkEvent::Connecting => {
                link.attempts += 1;
                if link.state != LinkState::Down {
                    link.state = LinkState::Connecting;
                }
                return;
            }
            LinkEvent::Snapshot(crate::remote::feed::Snapshot {
                tmux_socket,
                hostname,
                panes,
                dropped,
            }) => {
                if link.state != LinkState::Up {
                    link.since = unix;
                    eprintln!("tend: remote {name} is up");
                }
                if dropped > 0 && link.dropped == 0 {
                    eprintln!(
                        "tend: remote {name} sent {dropped} pane(s) whose ids are not tmux ids; \
                         they are left out (is the remote's tend of another version, or not tend?)"
                    );
                }
                link.dropped = dropped;
                link.state = LinkState::Up;
                link.ever_up = true;
                link.error = None;
                link.tmux_socket = tmux_socket;
                link.hostname = hostname;
                link.panes = panes;
            }
            LinkEvent::Down { error } => {
                if link.state != LinkState::Down {
                    link.since = unix;
                    eprintln!("tend: remote {name} is unreachable: {error}");
                }
                link.state = LinkState::Down;
                link.error = Some(error);
            }
        }
        let new = self.remote_views_of(&name);
        self.remote_events(&name, old, new);
        self.changed = true;
    }

    /// Events for what changed among one remote's panes, as a local pane's
    /// changes would be told (notifications read them too).
    fn remote_events(
        &mut self,
        name: &str,
        old: BTreeMap<String, PaneView>,
        new: BTreeMap<String, PaneView>,
    ) {
        let wall = self.epoch().as_secs_f64();
        for (id, v) in &new {
            let before = old.get(id);
            let key = |p: &PaneView| (p.state.clone(), p.reason.clone(), p.band.clone(), p.quiet);
            if before.map(key) == Some(key(v)) {
                continue;
            }
            let display = v
                .agent
                .as_deref()
                .and_then(|a| self.registry.get(a))
                .map(|m| format!("{} on {name}", m.short_name));
            // `unreachable` is not a band the notifier knows: it reads as
            // no band, which makes no demand.
            let band = |p: Option<&PaneView>| {
                p.and_then(|p| p.band.clone())
                    .filter(|b| b != "unreachable")
            };
            // The pane view carries the message: the event does not.
            let _ = self
                .bus
                .send(BusEvent::StatusChanged(Box::new(StatusChanged {
                    pane: id.clone(),
                    host: Some(name.to_owned()),
                    agent: v.agent.clone(),
                    name: display,
                    session: v.session.clone(),
                    window: v.window.clone(),
                    focused: false,
                    state: v.state.clone(),
                    reason: v.reason.clone(),
                    band: band(Some(v)),
                    prev_band: band(before),
                    quiet: v.quiet,
                    prev_state: before.and_then(|b| b.state.clone()),
                    prev_reason: before.and_then(|b| b.reason.clone()),
                    rule: v.rule.clone(),
                    authority: v.authority.clone(),
                    message: None,
                    state_change_seq: v.state_change_seq,
                    run: v.run,
                    at: wall,
                })));
        }
        for (id, v) in &old {
            if !new.contains_key(id) {
                let _ = self.bus.send(BusEvent::Closed {
                    pane: id.clone(),
                    host: Some(name.to_owned()),
                    agent: v.agent.clone(),
                });
            }
        }
    }

    /// `remotes`: each link's state, for `tend remote list` and `doctor`.
    pub(crate) fn remote_links(&self) -> Vec<reply::Link> {
        self.links
            .iter()
            .map(|(name, l)| reply::Link {
                name: name.clone(),
                dest: l.cfg.dest.clone(),
                state: l.state.word().to_owned(),
                error: l.error.clone(),
                since: l.since,
                attempts: l.attempts,
                agents: l.panes.len(),
                hostname: l.hostname.clone(),
                tmux_socket: l.tmux_socket.clone(),
                stderr: l.stderr.lock().map(|s| s.clone()).unwrap_or_default(),
                dropped: l.dropped,
            })
            .collect()
    }

    /// The job that shows a remote pane in a local window.
    pub(crate) fn remote_attach(&self, id: &str, client: Option<String>) -> Result<(), String> {
        let Some((host, pane)) = crate::remote::split_id(id) else {
            return Err(format!("`{id}` is not a remote pane id like build-box:%3"));
        };
        let Some(link) = self.links.get(host) else {
            return Err(format!("no remote named {host} (see `tend remote list`)"));
        };
        let Some(p) = link.panes.iter().find(|p| p.pane == pane) else {
            return Err(format!("no pane {id} (see `tend list`)"));
        };
        let argv =
            crate::remote::attach_argv(&link.cfg, link.tmux_socket.as_deref(), &p.window, pane);
        self.job(super::worker::Job::RemoteAttach {
            client,
            window: crate::remote::window_name(host, &p.session),
            argv,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unreachable_panes_stay_listed_and_make_no_demand() {
        let mut link = Link {
            cfg: RemoteConfig {
                dest: "box".into(),
                tend_command: None,
                ssh_options: vec![],
            },
            generation: 1,
            task: tokio::spawn(async {}),
            state: LinkState::Up,
            ever_up: true,
            error: None,
            since: 100.0,
            tmux_socket: None,
            hostname: None,
            panes: vec![],
            stderr: Arc::new(Mutex::new(String::new())),
            attempts: 1,
            dropped: 0,
        };
        let p = PaneView {
            pane: "%3".into(),
            session: "work".into(),
            window: "@1".into(),
            agent: Some("claude".into()),
            state: Some("waiting".into()),
            reason: Some("approval".into()),
            band: Some("waiting".into()),
            since: Some(50.0),
            ..PaneView::default()
        };
        let up = view_of("box", &link, &p);
        assert_eq!(up.pane, "box:%3");
        assert_eq!(up.host.as_deref(), Some("box"));
        assert_eq!(up.state.as_deref(), Some("waiting"));
        assert_eq!(up.band.as_deref(), Some("waiting"));
        link.state = LinkState::Down;
        let down = view_of("box", &link, &p);
        assert_eq!(down.pane, "box:%3");
        assert_eq!(down.agent.as_deref(), Some("claude"));
        assert_eq!(down.state.as_deref(), Some("unreachable"));
        assert_eq!(down.band.as_deref(), Some("unreachable"));
        assert_eq!(down.reason, None);
        assert_eq!(down.since, Some(100.0));
        // Reconnecting after a failure is still unreachable.
        link.state = LinkState::Connecting;
        assert_eq!(
            view_of("box", &link, &p).state.as_deref(),
            Some("unreachable")
        );
    }

    /// Runs `once` on `script` (sh) with a short silence limit; returns
    /// its error, whether a snapshot came, and how many were sent on.
    async fn run_once(script: &str) -> (String, bool, usize) {
        let argv: Vec<String> = vec!["sh".into(), "-c".into(), script.into()];
        let stderr = Arc::new(Mutex::new(String::new()));
        let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = sent.clone();
        let send = move |ev: LinkEvent| {
            if matches!(ev, LinkEvent::Snapshot { .. }) {
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            async { true }
        };
        let silence = std::time::Duration::from_millis(300);
        let (error, got) = once(&argv, silence, "ssh box tend events --feed", &stderr, &send)
            .await
            .expect("sh runs");
        (error, got, sent.load(std::sync::atomic::Ordering::Relaxed))
    }

    #[tokio::test]
    async fn a_remote_that_never_answers_is_given_up_with_a_reason() {
        // A login shell stuck before tend starts (seen: a stale lock made
        // `pyenv rehash` in .bashrc wait a minute on every login).
        let (error, got, sent) = run_once("exec sleep 30").await;
        assert!(!got);
        assert_eq!(sent, 0);
        assert_eq!(
            error,
            "no snapshot from the remote 300ms after ssh started: its login shell or tend hangs \
             there (a prompt, a slow rc file?); connecting again (`ssh box tend events --feed` \
             shows what it does)"
        );
    }

    #[tokio::test]
    async fn a_feed_that_falls_silent_after_its_snapshot_is_given_up() {
        let (error, got, sent) = run_once(
            r#"echo '{"event":"feed.snapshot","hostname":"box","panes":[]}'; exec sleep 30"#,
        )
        .await;
        assert!(got);
        assert_eq!(sent, 1);
        assert!(
            error.starts_with("the remote's feed said nothing for 300ms (not even its heartbeat)"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn heartbeats_keep_a_quiet_feed_alive_until_it_ends() {
        // Lines closer together than the limit: the feed runs to its end,
        // and the error is what ended it.
        let (error, got, sent) = run_once(
            r#"echo '{"event":"feed.snapshot","panes":[]}'
               for i in 1 2 3 4 5; do sleep 0.1; echo '{"event":"feed.heartbeat"}'; done
               echo 'tend: the daemon stopped' >&2"#,
        )
        .await;
        assert!(got);
        assert_eq!(sent, 1);
        assert_eq!(error, "tend: the daemon stopped");
    }

    #[test]
    fn stderr_tail_is_bounded() {
        let buf = Mutex::new(String::new());
        for i in 0..1000 {
            push_tail(&buf, &format!("line {i} é\n"));
        }
        let b = buf.lock().map(|b| b.clone()).unwrap_or_default();
        assert!(b.len() <= STDERR_KEEP);
        assert!(b.ends_with("line 999 é\n"));
    }
}
