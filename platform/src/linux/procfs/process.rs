//! What one process runs — its image, argv, `TEND_AGENT` and the script an
//! interpreter runs — read once per process image and cached, so a steady
//! pane costs one `stat` per process.

use tend_detector::identity::{ProcessInfo, ENV_HINT};

use super::kept::Identity;
use super::stat::Stat;
use super::{ProcFs, SampleStats, CACHE_MAX, CMDLINE_MAX, ENVIRON_MAX};

impl ProcFs {
    /// What `pid` runs, from the cache when it is the same process image.
    pub(super) fn identity(&mut self, pid: u32, st: &Stat, stats: &mut SampleStats) -> Identity {
        if self.use_cache {
            if let Some(e) = self.cache.get_mut(&pid) {
                // Same start time: the same process; same comm and image:
                // no exec since (an exec renames comm to the new program,
                // but a shim keeps the name of the program it execs, and
                // only the image's addresses tell the two apart). An image
                // the kernel does not show (zeros) is taken as unchanged:
                // a zombie's files say nothing any more.
                let unknown = |i: &[u64; 3]| *i == [0; 3];
                let same_image = e.image == st.image || unknown(&e.image) || unknown(&st.image);
                if e.start == st.start && e.comm == st.comm && same_image {
                    e.used = self.generation;
                    stats.cache_hits += 1;
                    return e.clone();
                }
            }
        }
        let exe = self.read_link(&self.path(pid, "exe")).unwrap_or_default();
        let argv = self.read_cmdline(pid);
        let env_agent = self.read_env_hint(pid);
        let mut id = Identity {
            start: st.start,
            comm: st.comm.clone(),
            image: st.image,
            exe,
            argv,
            env_agent,
            script_target: None,
            used: self.generation,
        };
        id.script_target = self.resolve_script(pid, &id, &st.comm);
        // A process without argv was likely read inside its exec (the kernel
        // answers an empty cmdline for a moment): not kept, so the next
        // sample reads it again. Whether the image is known does not matter:
        // where the kernel hides it (zeros), a kept empty argv would be
        // taken as unchanged forever. Zombies and kernel threads, the
        // others without argv, are rare in a pane's tree.
        if self.use_cache && !id.argv.is_empty() {
            if self.cache.len() >= CACHE_MAX {
                self.sweep();
            }
            self.cache.insert(pid, id.clone());
        }
        id
    }

    fn read_cmdline(&mut self, pid: u32) -> Vec<String> {
        let path = self.path(pid, "cmdline");
        if self.read_into_buf(&path, CMDLINE_MAX).is_err() {
            return Vec::new();
        }
        let buf = self.buf.strip_suffix(b"\0").unwrap_or(&self.buf);
        if buf.is_empty() {
            return Vec::new();
        }
        buf.split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    /// `TEND_AGENT` from the process environment (readable for the user's
    /// own processes only; others simply have no hint).
    fn read_env_hint(&mut self, pid: u32) -> Option<String> {
        let path = self.path(pid, "environ");
        self.read_into_buf(&path, ENVIRON_MAX).ok()?;
        let prefix = format!("{ENV_HINT}=");
        self.buf
            .split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
            .map(|v| String::from_utf8_lossy(v).trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// `name` from `pid`'s environment (readable for the user's own
    /// processes only).
    pub fn env_var(&mut self, pid: u32, name: &str) -> Option<String> {
        let path = self.path(pid, "environ");
        self.read_into_buf(&path, ENVIRON_MAX).ok()?;
        let prefix = format!("{name}=");
        self.buf
            .split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// Resolves the unwrapped script's symlinks (see
    /// [`crate::script_target`]), the working directory read from
    /// `/proc/<pid>/cwd`.
    fn resolve_script(&mut self, pid: u32, id: &Identity, comm: &str) -> Option<String> {
        let probe = ProcessInfo {
            pid,
            exe: id.exe.clone(),
            comm: comm.to_owned(),
            argv: id.argv.clone(),
            ..ProcessInfo::default()
        };
        let cwd = self.path(pid, "cwd");
        let mut reads = 0;
        let target = crate::script_target(&probe, &mut reads, || self.read_link(&cwd));
        self.files_read += reads;
        target
    }
}
