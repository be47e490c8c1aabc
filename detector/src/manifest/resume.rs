//! How an agent's conversations are found again after a restart: the
//! manifest's `[resume]` table (`tend restore`).
//!
//! ```toml
//! [resume]
//! command = ["claude", "--resume", "{id}"]   # {id}: the conversation's id
//! id = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
//! home = ["$CLAUDE_CONFIG_DIR", "~/.claude"] # the agent's folder: the first set
//! cite = "live: claude --resume ID continues it, same session id"
//!
//! [resume.live]                              # which conversation a running agent holds
//! session_file = true                        # Claude Code's (crate::session_file)
//! argv_after = ["--resume", "-r"]            # or its command line names it
//! newest = false                             # or: the newest in the store for its folder
//! pid = "/pid"                               # … that names its process (where it does)
//! cite = "…"
//!
//! [resume.store]                             # where conversations are kept
//! files = "projects/*/{id}.jsonl"            # under home; `*` any one name
//! folder = "/cwd"                            # JSON pointer (first line that has it);
//!                                            # or folder_file = "../.project_root",
//!                                            # or folder_md5_in = ".." (Kimi CLI)
//! cite = "…"
//! ```
//!
//! A store that is a SQLite database (OpenCode, Kilo Code) names the
//! database and its table of conversations instead of `files` and `folder`:
//!
//! ```toml
//! [resume.store]
//! database = "opencode.db"                   # under home
//! cite = "…"
//!
//! [resume.store.table]
//! name = "session"
//! id = "id"                                  # the columns: the conversation's id,
//! folder = "directory"                       # its folder,
//! written_ms = "time_updated"                # when it was last written (Unix ms),
//! child_of = "parent_id"                     # and, set on a sub-conversation, its parent
//! ```
//!
//! Everything here is data and pure helpers: the daemon reads the files.

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

/// The resume knowledge of one agent.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The command's words; one holds `{id}`.
    pub command: Vec<String>,
    /// What an id looks like (whole-word match): anything else read from a
    /// file or a command line is refused, so no hostile text ever reaches
    /// a shell as an id.
    pub id: Regex,
    /// The agent's own folder: the first of these that is set.
    pub home: Vec<HomeDir>,
    /// Which conversation a running agent holds.
    pub live: LiveWays,
    /// Where conversations are kept, and the folder each belongs to.
    pub store: Store,
    /// The live check or source that shows the command resumes.
    pub cite: String,
}

/// The agent's own folder: the first of `homes` that is set, a variable
/// read with `var` (the agent's environment), `~` as the agent's own
/// `HOME`, else `fallback_home` (the daemon user's); with the variable it
/// came from. Relative paths in an environment name nothing and are
/// passed over. Where both its session files and its conversations are
/// looked for.
pub fn agent_home(
    homes: &[HomeDir],
    mut var: impl FnMut(&str) -> Option<String>,
    fallback_home: Option<&str>,
) -> Option<(String, Option<String>)> {
    fn absolute(p: String) -> Option<String> {
        p.starts_with('/').then_some(p)
    }
    let user_home = var("HOME")
        .and_then(absolute)
        .or_else(|| fallback_home.map(str::to_owned).and_then(absolute));
    homes.iter().find_map(|h| match h {
        HomeDir::Env(name) => var(name)
            .and_then(absolute)
            .map(|v| (v.trim_end_matches('/').to_owned(), Some(name.clone()))),
        HomeDir::UnderHome(rest) => user_home
            .as_ref()
            .map(|h| (format!("{}/{rest}", h.trim_end_matches('/')), None)),
    })
}

/// One candidate for the agent's folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeDir {
    /// `$VAR`: the variable, read in the agent's environment.
    Env(String),
    /// `~/path`: under the user's home.
    UnderHome(String),
}

/// The ways, tried in order, to tell the conversation a running agent
/// holds.
#[derive(Debug, Clone, Default)]
pub struct LiveWays {
    /// The agent keeps Claude Code's session file while it runs
    /// (`<home>/sessions/<pid>.json`, read by [`crate::session_file`]).
    pub session_file: bool,
    /// Options or words after which its command line names the id.
    pub argv_after: Vec<String>,
    /// The newest conversation in the store for the agent's folder,
    /// written since the agent started (taken only where one pane runs
    /// the agent in that folder: two could not be told apart).
    pub newest: bool,
    /// With `newest`: a JSON pointer in the conversation's file to the
    /// process id of the agent that writes it; only a conversation naming
    /// this agent's is its own, and two panes in one folder are told apart.
    pub pid: Option<String>,
    /// What shows these hold.
    pub cite: String,
}

/// Where an agent keeps its conversations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    /// A path pattern under home: `/`-separated names, `*` any run of
    /// characters within one name, `{id}` the id (at most once in a name;
    /// in several names it is the same id: `sessions/{id}/{id}.json`).
    pub files: String,
    /// JSON pointer to the id inside a file, where the name does not hold
    /// it.
    pub id: Option<String>,
    /// Where the folder a conversation belongs to is written.
    pub folder: FolderField,
    /// What shows it.
    pub cite: String,
    /// Where `files` is a SQLite database: its table of conversations.
    pub table: Option<Table>,
}

/// A store's table of conversations, one row each (the folder's column
/// is [`FolderField::Column`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The table's name.
    pub name: String,
    /// The column of the conversation's id.
    pub id: String,
    /// The column of when it was last written, Unix milliseconds.
    pub written_ms: String,
    /// A column set only on a sub-conversation (a task the agent started
    /// for itself), never one the user resumes.
    pub child_of: Option<String>,
}

/// Where a stored conversation names its folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderField {
    /// A JSON pointer inside the file (a JSON file, or the first line of a
    /// JSON-lines file that has it).
    Json(String),
    /// A file beside it (a path relative to the conversation's folder)
    /// whose text is the folder.
    File(String),
    /// A folder on its path (relative to the conversation's folder) whose
    /// name is the MD5 of the folder, in hex (Kimi CLI): the folder cannot
    /// be read back, only checked.
    Md5Name(String),
    /// A column of the store's table.
    Column(String),
}

/// Longest id taken from anywhere (ids in the wild are UUIDs and hex).
pub const MAX_ID: usize = 128;

impl Resume {
    /// Whether `s` is an id of this agent.
    pub fn is_id(&self, s: &str) -> bool {
        s.len() <= MAX_ID && self.id.is_match(s)
    }

    /// The command that resumes conversation `id`: `program` (the path
    /// the agent was started by, when it names the same program) in place
    /// of the first word, and `env VAR=home` before it when the agent's
    /// folder came from a variable the new shell may not have.
    pub fn command_for(
        &self,
        id: &str,
        program: Option<&str>,
        env: Option<(&str, &str)>,
    ) -> Vec<String> {
        let mut words = Vec::with_capacity(self.command.len() + 2);
        if let Some((var, value)) = env {
            words.push("env".to_owned());
            words.push(format!("{var}={value}"));
        }
        for (i, w) in self.command.iter().enumerate() {
            match (i, program) {
                (0, Some(p)) => words.push(p.to_owned()),
                _ => words.push(w.replace("{id}", id)),
            }
        }
        words
    }

    /// The program word of the command (`claude`).
    pub fn program(&self) -> &str {
        self.command.first().map_or("", String::as_str)
    }

    /// The id a command line names after one of [`LiveWays::argv_after`]
    /// (`codex resume ID`, `claude --resume=ID`), if it is one.
    pub fn id_from_argv(&self, argv: &[String]) -> Option<String> {
        for (i, word) in argv.iter().enumerate() {
            for opt in &self.live.argv_after {
                let value = if word == opt {
                    argv.get(i + 1).map(String::as_str)
                } else {
                    word.strip_prefix(opt.as_str())
                        .and_then(|rest| rest.strip_prefix('='))
                };
                if let Some(v) = value.filter(|v| self.is_id(v)) {
                    return Some(v.to_owned());
                }
            }
        }
        None
    }
}

impl Store {
    /// The pattern's names, `{id}` put in for `id` (or left as a wildcard
    /// that captures it, for `None`).
    pub fn names(&self) -> Vec<&str> {
        self.files.split('/').collect()
    }

    /// Whether `name` matches pattern name `pat` with `{id}` as `id`
    /// (`None`: any id that `is_id` takes); returns the id the name holds
    /// (empty when the pattern has none).
    pub fn match_name(
        &self,
        pat: &str,
        name: &str,
        id: Option<&str>,
        is_id: &dyn Fn(&str) -> bool,
    ) -> Option<String> {
        let Some((before, after)) = pat.split_once("{id}") else {
            return glob(pat, name).then(String::new);
        };
        if let Some(id) = id {
            return glob(&format!("{before}{id}{after}"), name).then(|| id.to_owned());
        }
        let cuts = |f: &dyn Fn(usize) -> bool| {
            (0..=name.len())
                .filter(|&i| name.is_char_boundary(i) && f(i))
                .collect::<Vec<_>>()
        };
        let starts = cuts(&|i| glob(before, &name[..i]));
        let ends = cuts(&|i| glob(after, &name[i..]));
        starts.iter().find_map(|&s| {
            ends.iter()
                .filter(|&&e| e > s)
                .find(|&&e| is_id(&name[s..e]))
                .map(|&e| name[s..e].to_owned())
        })
    }
}

/// `*` matches any run of characters (within one name), every other
/// character itself.
pub fn glob(pat: &str, name: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The string at JSON pointer `pointer` in `text`: a JSON document, or
/// the first line of JSON lines that has one there.
pub fn json_field(text: &str, pointer: &str) -> Option<String> {
    let at = |v: &Value| {
        v.pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return at(&v);
    }
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| at(&v))
}

/// The whole number at JSON pointer `pointer` in `text` (a JSON document,
/// or the first line of JSON lines that has one there).
pub fn json_number(text: &str, pointer: &str) -> Option<u64> {
    let at = |v: &Value| v.pointer(pointer).and_then(Value::as_u64);
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return at(&v);
    }
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| at(&v))
}

// ---------------------------------------------------------------------------
// The file format
// ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResume {
    command: Vec<String>,
    id: String,
    home: Vec<String>,
    cite: Option<String>,
    live: RawLive,
    store: RawStore,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLive {
    #[serde(default)]
    session_file: bool,
    #[serde(default)]
    argv_after: Vec<String>,
    #[serde(default)]
    newest: bool,
    pid: Option<String>,
    cite: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    files: Option<String>,
    database: Option<String>,
    table: Option<RawTable>,
    id: Option<String>,
    folder: Option<String>,
    folder_file: Option<String>,
    folder_md5_in: Option<String>,
    cite: Option<String>,
}

fn cited(c: &Option<String>, what: &str) -> Result<String, String> {
    match c {
        Some(c) if !c.trim().is_empty() => Ok(c.clone()),
        _ => Err(format!(
            "{what}.cite is required: name the live check or the source that shows it"
        )),
    }
}

fn pointer(p: &str, what: &str) -> Result<String, String> {
    if p.starts_with('/') && p.len() <= 200 {
        Ok(p.to_owned())
    } else {
        Err(format!(
            "{what}: `{p}` is not a JSON pointer (like /sessionId)"
        ))
    }
}

/// A relative path under home: no `..`, no leading `/`, no empty name.
fn relative(p: &str, what: &str) -> Result<(), String> {
    if p.is_empty() || p.starts_with('/') || p.split('/').any(|n| n.is_empty() || n == "..") {
        return Err(format!(
            "{what}: `{p}` must be a relative path without `..`"
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    name: String,
    id: String,
    folder: String,
    written_ms: String,
    child_of: Option<String>,
}

/// A column's name: a plain SQL identifier.
fn column(c: &str, what: &str) -> Result<String, String> {
    let plain = !c.is_empty()
        && c.len() <= 64
        && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    if plain {
        Ok(c.to_owned())
    } else {
        Err(format!("{what}: `{c}` is not a column's name"))
    }
}

impl RawStore {
    /// A database's store: its path and table.
    fn database(&self, db: &str, t: &RawTable) -> Result<(String, FolderField, Table), String> {
        relative(db, "resume.store.database")?;
        let alone = self.files.is_none()
            && self.id.is_none()
            && self.folder.is_none()
            && self.folder_file.is_none()
            && self.folder_md5_in.is_none();
        if !alone {
            return Err(
                "resume.store: a `database` names its table's columns, not `files`, `id` or \
                 `folder`"
                    .into(),
            );
        }
        let table = Table {
            name: column(&t.name, "resume.store.table.name")?,
            id: column(&t.id, "resume.store.table.id")?,
            written_ms: column(&t.written_ms, "resume.store.table.written_ms")?,
            child_of: t
                .child_of
                .as_deref()
                .map(|c| column(c, "resume.store.table.child_of"))
                .transpose()?,
        };
        let folder = FolderField::Column(column(&t.folder, "resume.store.table.folder")?);
        Ok((db.to_owned(), folder, table))
    }
}

impl RawStore {
    /// A store of files: the id's pointer inside a file, if any, and
    /// where the folder is written.
    fn files(&self, files: &str) -> Result<(Option<String>, FolderField), String> {
        let s = self;
        relative(files, "resume.store.files")?;
        if files.split('/').any(|n| n.matches("{id}").count() > 1) {
            return Err("resume.store.files: `{id}` goes at most once in a name".into());
        }
        let id_pointer =
            s.id.as_deref()
                .map(|p| pointer(p, "resume.store.id"))
                .transpose()?;
        if !files.contains("{id}") && id_pointer.is_none() {
            return Err("resume.store needs `{id}` in `files` or an `id` pointer".into());
        }
        let beside = |f: &str, what: &str| {
            if f.is_empty() || f.starts_with('/') {
                Err(format!(
                    "resume.store.{what} is a path beside the conversation"
                ))
            } else {
                Ok(f.to_owned())
            }
        };
        let folder = match (&s.folder, &s.folder_file, &s.folder_md5_in) {
            (Some(p), None, None) => FolderField::Json(pointer(p, "resume.store.folder")?),
            (None, Some(f), None) => FolderField::File(beside(f, "folder_file")?),
            (None, None, Some(f)) => FolderField::Md5Name(beside(f, "folder_md5_in")?),
            _ => {
                return Err(
                    "resume.store needs one of `folder` (a JSON pointer), `folder_file` \
                            or `folder_md5_in`"
                        .into(),
                )
            }
        };
        Ok((id_pointer, folder))
    }
}

impl RawResume {
    pub(super) fn compile(&self) -> Result<Resume, String> {
        let cite = cited(&self.cite, "resume")?;
        let id =
            Regex::new(&format!("^(?:{})$", self.id)).map_err(|e| format!("resume.id: {e}"))?;
        match self.command.iter().filter(|w| w.contains("{id}")).count() {
            1 => {}
            _ => return Err("resume.command needs `{id}` in exactly one word".into()),
        }
        if self
            .command
            .first()
            .is_none_or(|p| p.is_empty() || p.contains("{id}"))
        {
            return Err("resume.command starts with the agent's program".into());
        }
        let mut home = Vec::new();
        for h in &self.home {
            if let Some(var) = h.strip_prefix('$') {
                if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(format!("resume.home: `{h}` is not a variable name"));
                }
                home.push(HomeDir::Env(var.to_owned()));
            } else if let Some(rest) = h.strip_prefix("~/") {
                relative(rest, "resume.home")?;
                home.push(HomeDir::UnderHome(rest.to_owned()));
            } else {
                return Err(format!(
                    "resume.home: `{h}` must be `$VARIABLE` or `~/path`"
                ));
            }
        }
        if !home.iter().any(|h| matches!(h, HomeDir::UnderHome(_))) {
            return Err(
                "resume.home needs a `~/path` (where the agent looks when no variable is set)"
                    .into(),
            );
        }
        if !self.live.session_file && self.live.argv_after.is_empty() && !self.live.newest {
            return Err(
                "resume.live needs at least one of session_file, argv_after or newest".into(),
            );
        }
        let live = LiveWays {
            session_file: self.live.session_file,
            argv_after: self.live.argv_after.clone(),
            newest: self.live.newest,
            pid: match &self.live.pid {
                None => None,
                Some(_) if !self.live.newest => {
                    return Err("resume.live.pid goes with `newest = true`".into())
                }
                Some(p) => Some(pointer(p, "resume.live.pid")?),
            },
            cite: cited(&self.live.cite, "resume.live")?,
        };
        let s = &self.store;
        let (files, id_pointer, folder, table) =
            match (&s.files, &s.database, &s.table) {
                (None, Some(db), Some(t)) => {
                    let (files, folder, table) = s.database(db, t)?;
                    (files, None, folder, Some(table))
                }
                (Some(files), None, None) => {
                    let (id, folder) = s.files(files)?;
                    (files.clone(), id, folder, None)
                }
                _ => return Err(
                    "resume.store needs `files`, or a `database` with its `[resume.store.table]`"
                        .into(),
                ),
            };
        Ok(Resume {
            command: self.command.clone(),
            id,
            home,
            live,
            store: Store {
                files,
                id: id_pointer,
                folder,
                cite: cited(&s.cite, "resume.store")?,
                table,
            },
            cite,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
    const ID: &str = "eb34e611-e881-43e1-9a20-021e02493a45";

    fn raw(extra_live: &str, store: &str) -> Result<Resume, String> {
        let text = format!(
            "command = [\"codex\", \"resume\", \"{{id}}\"]\nid = '{UUID}'\nhome = [\"$CODEX_HOME\", \"~/.codex\"]\n\
             cite = \"c\"\n[live]\n{extra_live}\ncite = \"c\"\n[store]\ncite = \"c\"\n{store}\n"
        );
        let raw: RawResume = toml::from_str(&text).map_err(|e| e.to_string())?;
        raw.compile()
    }

    fn codex() -> Resume {
        raw(
            "argv_after = [\"resume\"]\nnewest = true",
            "files = \"sessions/*/*/*/rollout-*-{id}.jsonl\"\nfolder = \"/payload/cwd\"",
        )
        .expect("codex")
    }

    #[test]
    fn the_command_takes_the_id_the_program_and_the_home() {
        let r = codex();
        assert_eq!(r.command_for(ID, None, None), ["codex", "resume", ID]);
        assert_eq!(
            r.command_for(
                ID,
                Some("/opt/bin/codex"),
                Some(("CODEX_HOME", "/h/.codex"))
            ),
            [
                "env",
                "CODEX_HOME=/h/.codex",
                "/opt/bin/codex",
                "resume",
                ID
            ]
        );
    }

    #[test]
    fn only_an_id_is_taken_from_a_command_line() {
        let r = codex();
        let argv = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            r.id_from_argv(&argv(&["codex", "resume", ID])),
            Some(ID.into())
        );
        assert_eq!(
            r.id_from_argv(&argv(&["codex", "resume=".to_owned().as_str()])),
            None
        );
        assert_eq!(
            r.id_from_argv(&argv(&["codex", &format!("resume={ID}")])),
            Some(ID.into())
        );
        assert_eq!(r.id_from_argv(&argv(&["codex", "resume", "--last"])), None);
        assert_eq!(
            r.id_from_argv(&argv(&["codex", "resume", "x; rm -rf ~"])),
            None
        );
        assert_eq!(r.id_from_argv(&argv(&["codex", "resume"])), None);
        assert!(!r.is_id(&format!("{ID}\n")));
        assert!(!r.is_id(&format!("{ID} ")));
    }

    #[test]
    fn file_names_give_their_id() {
        let r = codex();
        let last = *r.store.names().last().expect("a name");
        let name = format!("rollout-2026-12-06T06-14-16-{ID}.jsonl");
        assert_eq!(
            r.store
                .match_name(last, &name, None, &|s| r.is_id(s))
                .as_deref(),
            Some(ID)
        );
        assert_eq!(
            r.store
                .match_name(last, &name, Some(ID), &|s| r.is_id(s))
                .as_deref(),
            Some(ID)
        );
        assert_eq!(
            r.store.match_name(
                last,
                &name,
                Some("01a249fd-2644-7f41-a48c-d21dd5072d95"),
                &|s| r.is_id(s)
            ),
            None
        );
        assert_eq!(
            r.store
                .match_name("*", "2026", None, &|s| r.is_id(s))
                .as_deref(),
            Some("")
        );
        assert_eq!(
            r.store
                .match_name(last, "rollout.jsonl", None, &|s| r.is_id(s)),
            None
        );
    }

    #[test]
    fn globs_match_within_a_name() {
        assert!(glob("session-*.jsonl", "session-2026-x.jsonl"));
        assert!(glob("*", ""));
        assert!(!glob("session-*.jsonl", "session-x.json"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(!glob("a*b*c", "aXXbYY"));
    }

    #[test]
    fn json_fields_come_from_a_document_or_the_first_line_that_has_them() {
        let doc = r#"{"pid": 1, "sessionId": "s", "procStart": "48637"}"#;
        assert_eq!(json_field(doc, "/sessionId").as_deref(), Some("s"));
        assert_eq!(json_number(doc, "/pid"), Some(1));
        assert_eq!(
            json_number(doc, "/procStart"),
            None,
            "a string is no number"
        );
        let lines = "{\"type\":\"mode\"}\nnot json\n{\"cwd\":\"/w\"}\n{\"cwd\":\"/x\"}\n";
        assert_eq!(json_field(lines, "/cwd").as_deref(), Some("/w"));
        assert_eq!(json_field(lines, "/nope"), None);
        assert_eq!(json_field(r#"{"cwd": 3}"#, "/cwd"), None);
    }

    #[test]
    fn a_database_names_its_table_s_columns() {
        let table = "database = \"opencode.db\"\n[store.table]\nname = \"session\"\nid = \"id\"\n\
                     folder = \"directory\"\nwritten_ms = \"time_updated\"\nchild_of = \"parent_id\"";
        let r = raw("argv_after = [\"-s\"]\nnewest = true", table).expect("a database");
        assert_eq!(r.store.files, "opencode.db");
        assert_eq!(r.store.folder, FolderField::Column("directory".into()));
        assert_eq!(
            r.store.table,
            Some(Table {
                name: "session".into(),
                id: "id".into(),
                written_ms: "time_updated".into(),
                child_of: Some("parent_id".into()),
            })
        );
        let e = |store: &str| raw("newest = true", store).expect_err("refused");
        assert_eq!(
            e(&table.replace("\"directory\"", "\"dir; DROP\"")),
            "resume.store.table.folder: `dir; DROP` is not a column's name"
        );
        assert_eq!(
            e(&format!("folder = \"/cwd\"\n{table}")),
            "resume.store: a `database` names its table's columns, not `files`, `id` or `folder`"
        );
        assert_eq!(
            e("database = \"opencode.db\""),
            "resume.store needs `files`, or a `database` with its `[resume.store.table]`"
        );
        assert_eq!(
            e(&table.replace("opencode.db", "../x.db")),
            "resume.store.database: `../x.db` must be a relative path without `..`"
        );
    }

    #[test]
    fn bad_tables_are_named() {
        let e = |live: &str, store: &str| raw(live, store).expect_err("refused");
        assert_eq!(
            e("", "files = \"a/{id}.jsonl\"\nfolder = \"/cwd\""),
            "resume.live needs at least one of session_file, argv_after or newest"
        );
        assert_eq!(
            e(
                "newest = true",
                "files = \"a/{id}-{id}.jsonl\"\nfolder = \"/cwd\""
            ),
            "resume.store.files: `{id}` goes at most once in a name"
        );
        assert_eq!(
            e(
                "newest = true",
                "files = \"../a/{id}.jsonl\"\nfolder = \"/cwd\""
            ),
            "resume.store.files: `../a/{id}.jsonl` must be a relative path without `..`"
        );
        assert_eq!(
            e("newest = true", "files = \"a/x.jsonl\"\nfolder = \"/cwd\""),
            "resume.store needs `{id}` in `files` or an `id` pointer"
        );
        assert_eq!(
            e(
                "newest = true",
                "files = \"a/{id}.jsonl\"\nfolder = \"cwd\""
            ),
            "resume.store.folder: `cwd` is not a JSON pointer (like /sessionId)"
        );
    }
}
