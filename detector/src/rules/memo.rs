//! What one pane's evaluations remember from one to the next ([`Memo`]).

use std::sync::Arc;

use crate::manifest::{Manifest, Matcher, Region};

use super::Source;

/// What one pane's evaluations remember from one to the next: each
/// region's text as last read and each rule's verdict, so that a rule
/// whose regions read the same as when it last ran is not matched again
/// ([`evaluate_with`](super::evaluate_with)).
///
/// A rule's verdict is a function of the text of the regions it reads
/// (its own and those its `In` matchers look at), of the number of rows
/// in each (`LineRegex` over no rows never matches; over one blank row it
/// may) and of whether the alternate screen is on, for a given manifest.
/// The memo keeps those inputs, and a verdict is reused only while all of
/// them are unchanged: an evaluation gives exactly what one without the
/// memo gives ([`evaluate`](super::evaluate)); `detector/tests/rules_memo.rs`
/// checks it on every recording of the corpus.
///
/// Why: a working agent's screen changes a few rows at a time (a spinner,
/// the lines it streams), and most of a manifest's rules look at regions
/// those rows are not in (the prompt box, the title, the footer): the
/// working turns the live bench replays evaluate in 11–44 % less time
/// (`docs/PERFORMANCE.md`, issue #48). The price is a copy of the text of
/// each region the rules read (the whole screen's, for a manifest with a
/// rule over it, is up to 30 KiB at 200×50).
#[derive(Debug, Default)]
pub struct Memo {
    /// The manifest the verdicts are for: another one starts afresh.
    manifest: Option<Arc<Manifest>>,
    /// Whether the alternate screen was on (rules may apply only on or
    /// off it).
    alternate: bool,
    /// Counts evaluations; a verdict and a region's last change carry the
    /// count of the evaluation that made them.
    stamp: u64,
    regions: Vec<RegionMemo>,
    /// Per rule, in the manifest's order: the regions it reads.
    reads: Vec<Vec<Region>>,
    /// Per rule: its last verdict and the evaluation that made it.
    verdicts: Vec<Option<(bool, u64)>>,
}

#[derive(Debug)]
struct RegionMemo {
    region: Region,
    /// The region's rows and their text joined, as last read.
    rows: usize,
    joined: String,
    /// The evaluation that last found its text different.
    changed: u64,
    /// The evaluation that last read it.
    read: u64,
}

/// Every region `matcher` looks at besides the one it is applied to.
fn other_regions(matcher: &Matcher, out: &mut Vec<Region>) {
    match matcher {
        Matcher::Contains(_) | Matcher::Regex(_) | Matcher::LineRegex(_) => {}
        Matcher::All(ms) | Matcher::Any(ms) => ms.iter().for_each(|m| other_regions(m, out)),
        Matcher::Not(m) => other_regions(m, out),
        Matcher::In(region, m) => {
            if !out.contains(region) {
                out.push(*region);
            }
            other_regions(m, out);
        }
    }
}

impl Memo {
    /// Starts a new evaluation of `manifest` on a screen whose alternate
    /// screen is `alternate`, forgetting everything when either differs
    /// from the last one.
    pub(super) fn begin(&mut self, manifest: &Arc<Manifest>, alternate: bool) {
        let same = self
            .manifest
            .as_ref()
            .is_some_and(|m| Arc::ptr_eq(m, manifest));
        if !same || alternate != self.alternate {
            self.reads = manifest
                .rules
                .iter()
                .map(|r| {
                    let mut reads = vec![r.region];
                    other_regions(&r.matcher, &mut reads);
                    reads
                })
                .collect();
            self.verdicts = vec![None; manifest.rules.len()];
            self.regions.clear();
            self.manifest = Some(manifest.clone());
            self.alternate = alternate;
        }
        self.stamp += 1;
    }

    /// Rule `i`'s verdict when none of its regions changed since it was
    /// made; `None` when it must be matched again. Every region the rule
    /// reads is read (and remembered) by this evaluation either way, so
    /// that a verdict made now is stamped with the texts it saw.
    pub(super) fn verdict(&mut self, src: &Source<'_>, i: usize) -> Option<bool> {
        let reads = std::mem::take(&mut self.reads[i]);
        let mut since = 0;
        for region in &reads {
            since = since.max(self.read_region(src, *region));
        }
        self.reads[i] = reads;
        match self.verdicts[i] {
            Some((verdict, made)) if since <= made => Some(verdict),
            _ => None,
        }
    }

    /// Records rule `i`'s verdict, made by this evaluation.
    pub(super) fn keep(&mut self, i: usize, verdict: bool) {
        self.verdicts[i] = Some((verdict, self.stamp));
    }

    /// Reads `region` for this evaluation and returns the evaluation that
    /// last changed its text.
    fn read_region(&mut self, src: &Source<'_>, region: Region) -> u64 {
        let stamp = self.stamp;
        let k = match self.regions.iter().position(|m| m.region == region) {
            Some(k) => k,
            None => {
                self.regions.push(RegionMemo {
                    region,
                    rows: 0,
                    joined: String::new(),
                    changed: stamp,
                    read: 0,
                });
                self.regions.len() - 1
            }
        };
        let memo = &mut self.regions[k];
        if memo.read != stamp {
            memo.read = stamp;
            let text = src.text(region);
            if memo.rows != text.rows.len() || memo.joined != text.joined {
                memo.rows = text.rows.len();
                memo.joined.clone_from(&text.joined);
                memo.changed = stamp;
            }
        }
        memo.changed
    }
}
