//! The walk below a pane's shell: the one-read probe of its foreground
//! group, and the full sample, breadth-first and bounded, that follows each
//! process's `children` files (or, on kernels without them, one scan of
//! `/proc` per sample).

use std::collections::HashMap;
use std::io;

use tend_detector::identity::ProcessInfo;

use super::fds::Which;
use super::kept::ChildrenMode;
use super::stat::Stat;
use super::{gone_or_io, PaneSnapshot, Probe, ProcFs, SampleError, SampleStats};

impl ProcFs {
    /// One probe: the shell's `stat` (one read).
    pub fn probe(&mut self, shell_pid: u32) -> Result<Probe, SampleError> {
        let st = self
            .read_stat(shell_pid, true)
            .map_err(|e| gone_or_io(shell_pid, e))?;
        Ok(Probe {
            shell_pgid: st.pgrp,
            tpgid: st.tpgid,
        })
    }

    /// Children of `pid`: every thread's `children` file (a child forked by
    /// a worker thread is listed under that thread only).
    fn children_from_files(&mut self, pid: u32) -> Option<Vec<u32>> {
        let task_dir = self.path(pid, "task");
        self.files_read += 1;
        let keep = self.mode == ChildrenMode::Files;
        let tids = match self.fds.list(pid, &task_dir, keep, &mut self.buf) {
            Ok(t) => t,
            Err(_) => return Some(Vec::new()), // vanished
        };
        let ids: Vec<u32> = tids.iter().filter_map(|t| t.parse().ok()).collect();
        self.fds.retain_threads(pid, &ids);
        let mut out = Vec::new();
        let mut any = false;
        for tid in tids {
            let path = task_dir.join(&tid).join("children");
            self.files_read += 1;
            // A name that is not a number is no thread (fake trees): read,
            // never kept.
            let (which, keep) = match tid.parse::<u32>() {
                Ok(t) => (Which::Children(t), keep),
                Err(_) => (Which::Children(u32::MAX), false),
            };
            match self
                .fds
                .read(pid, which, &path, keep, &mut self.buf, 64 * 1024)
            {
                Ok(()) => {
                    any = true;
                    let text = String::from_utf8_lossy(&self.buf);
                    out.extend(
                        text.split_whitespace()
                            .filter_map(|v| v.parse::<u32>().ok()),
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => any = true, // a thread that just ended
            }
        }
        if !any && self.mode == ChildrenMode::Unknown {
            return None; // no children files on this kernel
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// The fallback: `ppid` → children from every `/proc/*/stat`.
    fn scan_children(&mut self) -> HashMap<u32, Vec<u32>> {
        let mut map: HashMap<u32, Vec<u32>> = HashMap::new();
        self.files_read += 1;
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return map;
        };
        let pids: Vec<u32> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
            .collect();
        for pid in pids {
            // Every process on the system: nothing kept.
            if let Ok(st) = self.read_stat(pid, false) {
                map.entry(st.ppid).or_default().push(pid);
            }
        }
        for v in map.values_mut() {
            v.sort_unstable();
        }
        map
    }

    /// Reads one pane's tree: the shell `shell_pid` at depth 0 and its
    /// descendants within the walk limits, breadth-first.
    pub fn sample(&mut self, shell_pid: u32) -> Result<PaneSnapshot, SampleError> {
        let before = self.files_read;
        let mut stats = SampleStats::default();
        let shell = self
            .read_stat(shell_pid, true)
            .map_err(|e| gone_or_io(shell_pid, e))?;
        let mut scan: Option<HashMap<u32, Vec<u32>>> = None;
        if self.mode == ChildrenMode::Scan {
            scan = Some(self.scan_children());
        }
        let mut procs: Vec<ProcessInfo> = Vec::new();
        let mut queue: Vec<(u32, u32, Stat)> = vec![(shell_pid, 0, shell)];
        let mut truncated = false;
        let mut seen = std::collections::HashSet::new();
        let mut head = 0;
        while head < queue.len() {
            let (pid, depth, st) = queue[head].clone();
            head += 1;
            if !seen.insert(pid) {
                continue;
            }
            let id = self.identity(pid, &st, &mut stats);
            procs.push(ProcessInfo {
                pid,
                ppid: st.ppid,
                pgid: Some(st.pgrp),
                tpgid: st.tpgid,
                state: st.state.to_string(),
                exe: id.exe,
                comm: st.comm.clone(),
                argv: id.argv,
                env_agent: id.env_agent,
                script_target: id.script_target,
                cpu_ticks: st.ticks,
                start_ticks: Some(st.start),
                depth,
            });
            if st.state == 'Z' {
                continue; // a zombie has no children of its own to walk
            }
            let children = match &scan {
                Some(map) => map.get(&pid).cloned().unwrap_or_default(),
                None => match self.children_from_files(pid) {
                    Some(c) => {
                        self.mode = ChildrenMode::Files;
                        c
                    }
                    None => {
                        self.mode = ChildrenMode::Scan;
                        let map = self.scan_children();
                        let c = map.get(&pid).cloned().unwrap_or_default();
                        scan = Some(map);
                        c
                    }
                },
            };
            for child in children {
                if depth + 1 > self.limits.max_depth || queue.len() >= self.limits.max_procs {
                    truncated = true;
                    break;
                }
                // A child that ended between the two reads is skipped; so is
                // one whose parent changed (reparented mid-walk).
                match self.read_stat(child, true) {
                    Ok(cst) if cst.ppid == pid => queue.push((child, depth + 1, cst)),
                    _ => {}
                }
            }
        }
        stats.processes = procs.len();
        stats.files_read = self.files_read - before;
        Ok(PaneSnapshot {
            procs,
            truncated,
            stats,
        })
    }
}
