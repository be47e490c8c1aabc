//! The session files the daemon follows for all panes: a pane's follows
//! the file its agent's process keeps after each sample
//! (`session.rs`), what the daemon reads is handed to its pane, and the
//! whole set goes to the daemon when it changes ([`Effect::FollowFiles`]).

use std::collections::BTreeMap;

use tend_protocol::PaneId;

use crate::session::{self, FileRead, FollowFile};
use crate::{trace, Core, Effect};

impl Core {
    /// After a sample of pane `id`: follows the file its agent's process
    /// keeps, or stops following one (the screen decides again).
    pub(crate) fn retarget_session(&mut self, id: PaneId) {
        let Some(p) = self.panes.get_mut(&id) else {
            return;
        };
        let manifest = p.watch.agent().and_then(|a| self.registry.get(a));
        let format = manifest.and_then(|m| m.session_files);
        // The agent's home is its manifest's `[resume] home`: where its
        // conversations are looked up, too.
        let homes = manifest
            .and_then(|m| m.resume.as_ref())
            .map_or(&[][..], |r| r.home.as_slice());
        let procs = self.procs.as_mut();
        let home = self.home.as_deref();
        let changed = p.session.retarget(format, p.watch.agent_process(), |pid| {
            session::sessions_dir(procs, pid, homes, home)
        });
        if changed {
            trace!(
                self,
                "session pane={id} follow={:?}",
                self.panes[&id].session.target.as_ref().map(|t| &t.path)
            );
            self.touched.insert(id);
        }
    }

    /// The daemon read a followed file.
    pub(crate) fn on_session_file(&mut self, pane: PaneId, path: String, read: FileRead) {
        let now = self.now();
        let Some(p) = self.panes.get_mut(&pane) else {
            return;
        };
        if p.session.take(now, &path, read) {
            trace!(
                self,
                "session pane={pane} {}",
                self.panes[&pane].session.last.as_deref().unwrap_or("")
            );
            self.touched.insert(pane);
        }
    }

    /// Tells the daemon the files to follow when they changed (a pane's
    /// agent started or ended, a pane closed).
    pub(crate) fn sync_follows(&mut self) {
        // Called after every round of visits: the set is compared in
        // place, and built only when it changed (building it each round
        // was 1.5 % of the daemon's time with ten busy panes).
        let mut targets = 0;
        let same = self.panes.iter().all(|(id, p)| match &p.session.target {
            Some(t) => {
                targets += 1;
                self.followed.get(id) == Some(&t.path)
            }
            None => true,
        });
        if same && targets == self.followed.len() {
            return;
        }
        let now: BTreeMap<PaneId, String> = self
            .panes
            .iter()
            .filter_map(|(id, p)| Some((*id, p.session.target.as_ref()?.path.clone())))
            .collect();
        if now == self.followed {
            return;
        }
        self.followed = now;
        let files = self
            .followed
            .iter()
            .map(|(pane, path)| FollowFile {
                pane: *pane,
                path: path.clone(),
            })
            .collect();
        self.effects.push_back(Effect::FollowFiles(files));
    }
}
