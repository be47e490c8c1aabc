//! The links to remotes, run: one `ssh -T DEST tend events --feed` per
//! remote, started again with a doubling wait (capped by `[remote_link]
//! reconnect_max`) whenever it ends. What a link says goes to the pane
//! table as [`Input::Remote`]; what the table keeps of it is
//! `tend_core::links`.
//!
//! Nothing here listens on the network or keeps a credential: ssh does the
//! reaching and the authenticating, with the user's own configuration.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::mpsc::Sender;

use super::event::Event;
use crate::remote::{LinkConfig, RemoteConfig};
use tend_core::links::{LinkEvent, StderrTail};
use tend_core::Input;

/// What a feed line's buffer keeps between lines: a larger one (a big
/// snapshot) is handed back to the allocator after its line.
const KEPT_LINE_CAPACITY: usize = 64 << 10;

/// Starts the task of one remote's link; aborting it ends ssh.
pub fn start(
    name: &str,
    remote: &RemoteConfig,
    link: &LinkConfig,
    generation: u64,
    stderr: StderrTail,
    tx: Sender<Event>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(
        name.to_owned(),
        remote.clone(),
        link.clone(),
        generation,
        tx,
        stderr,
    ))
}

async fn run(
    name: String,
    cfg: RemoteConfig,
    link: LinkConfig,
    generation: u64,
    tx: Sender<Event>,
    stderr: StderrTail,
) {
    let argv = crate::remote::feed_argv(&cfg, &link);
    let by_hand = format!("ssh {} {} events --feed", cfg.dest, cfg.tend());
    let mut backoff = link.first_backoff();
    loop {
        let send = |ev: LinkEvent| {
            let tx = tx.clone();
            let name = name.clone();
            async move {
                tx.send(Event::Core(Input::Remote {
                    name,
                    generation,
                    ev,
                }))
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
    stderr: &StderrTail,
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
            tail.push(&format!("{l}\n"));
        }
    });
    let mut got = false;
    let mut bad: Option<String> = None;
    if let Some(out) = out {
        let mut r = BufReader::new(out.take(u64::MAX));
        let mut line = String::new();
        loop {
            line.clear();
            if line.capacity() > KEPT_LINE_CAPACITY {
                line.shrink_to(KEPT_LINE_CAPACITY);
            }
            let max = tend_core::feed::MAX_LINE;
            let mut limited = (&mut r).take(max as u64 + 1);
            match tokio::time::timeout(silence, limited.read_line(&mut line)).await {
                Ok(Ok(0) | Err(_)) => break,
                Ok(Ok(_)) => {}
                Err(_) => {
                    bad = Some(silent_feed(silence, got, by_hand));
                    break;
                }
            }
            if line.len() > max {
                bad = Some(format!(
                    "the remote sent a line of more than {} MiB, which is not tend's feed \
                     (a snapshot of a thousand agents is about 1 MiB); connecting again",
                    max >> 20,
                ));
                break;
            }
            let snap = match tend_core::feed::parse_line(&line) {
                Ok(tend_core::feed::Line::Snapshot(snap)) => snap,
                Ok(tend_core::feed::Line::Other) => continue,
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
    let last = stderr.last_line();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Runs `once` on `script` (sh) with a short silence limit; returns
    /// its error, whether a snapshot came, and how many were sent on.
    async fn run_once(script: &str) -> (String, bool, usize) {
        let argv: Vec<String> = vec!["sh".into(), "-c".into(), script.into()];
        let stderr = StderrTail::default();
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
    async fn a_line_longer_than_any_snapshot_ends_the_link() {
        // A snapshot then one line of 5 MiB (a hostile remote once sent 7.2
        // MB every 2 s, which cost 14 % of a core and 59 MB kept).
        let (error, got, sent) = run_once(
            r#"echo '{"event":"feed.snapshot","panes":[]}'
               head -c 5242880 /dev/zero | tr '\0' 'x'; echo"#,
        )
        .await;
        assert!(got);
        assert_eq!(sent, 1);
        assert_eq!(
            error,
            "the remote sent a line of more than 4 MiB, which is not tend's feed (a snapshot of \
             a thousand agents is about 1 MiB); connecting again"
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
}
