//! What the status line's publish costs the core: every fact of 200 agent
//! panes computed ([`compute`]: rollups, counts, the jump targets from
//! each pane) and diffed against the last publish ([`diff`]), with the
//! table changing between rounds as a working fleet's does.
//!
//! ```text
//! cargo bench -p tend-core --bench publish
//! ```
//!
//! Figures: `docs/PERFORMANCE.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use tend_attention::Band;
use tend_core::publish::{compute, diff, PaneRow, RemoteFacts};
use tend_protocol::{PaneId, SessionId, WindowId};
use tend_vocab::{Reason, State};

/// 200 agent panes, ten to a window, forty to a session; every seventh
/// (shifted by `round`) waits on an approval, the others work.
fn table(round: usize) -> Vec<PaneRow> {
    (0..200u32)
        .map(|n| {
            let working = (n as usize + round) % 7 != 0;
            PaneRow {
                pane: PaneId(n),
                window: WindowId(n / 10),
                session: SessionId(n / 40),
                session_name: format!("s{}", n / 40),
                agent: Some("claude".into()),
                state: Some(if working {
                    State::Working
                } else {
                    State::Waiting
                }),
                reason: (!working).then_some(Reason::Approval),
                band: Some(if working {
                    Band::Working
                } else {
                    Band::Waiting
                }),
                since: Some(1_796_180_000.0 + f64::from(n)),
                marks: Some(String::new()),
                exit_code: None,
                project: Some("tend · main".into()),
                resets_at: None,
                reset: None,
            }
        })
        .collect()
}

fn publish(c: &mut Criterion) {
    let remote = RemoteFacts::default();
    let tables: Vec<Vec<PaneRow>> = (0..7).map(table).collect();
    let mut prev = compute(&tables[0], &remote, &mut Vec::new());
    let mut round = 0;
    c.bench_function("publish/compute_and_diff_200_panes", |b| {
        b.iter(|| {
            round += 1;
            let new = compute(&tables[round % 7], &remote, &mut Vec::new());
            let changed = diff(&prev, &new).len();
            prev = new;
            black_box(changed)
        })
    });
}

criterion_group!(benches, publish);
criterion_main!(benches);
