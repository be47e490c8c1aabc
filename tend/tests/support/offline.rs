//! The real agent CLIs, offline: each one's first-run questions answered in
//! advance and every model endpoint pointed at a closed local port, as
//! `tools/agentlab/harness.py` sets them up (with its stand-in model server
//! instead). For the opt-in tiers that start the real CLIs.

use std::path::{Path, PathBuf};

use serde_json::json;

/// Where the CLIs are installed: `TEND_AGENT_DIRS` (colon-separated), else
/// `AGENTS_DIR`, else the folders `tools/agentlab/setup.sh` fills (the first
/// four agents, then Pi, Qwen Code and OpenCode, then Kilo Code, Grok CLI,
/// Continue CLI, Kimi CLI, Mistral Vibe and Cline CLI).
pub fn agent_dirs() -> Vec<PathBuf> {
    std::env::var("TEND_AGENT_DIRS")
        .or_else(|_| std::env::var("AGENTS_DIR"))
        .unwrap_or_else(|_| {
            "/opt/agents:/opt/agent2:/opt/agent3:/opt/agent4:/opt/agent7:/opt/agent9:/opt/agent0:\
             /opt/agent8"
                .into()
        })
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// A closed local port: every model endpoint points here.
pub const DEAD: &str = "http://127.0.0.1:9";

/// Claude Code accepts an API key from the environment once the key's last
/// 20 characters are listed as approved in `~/.claude.json`.
pub fn claude_key() -> String {
    format!(
        "sk-ant-api03-{}AAAAAAAA-0123456789abcdefghijAA",
        "tendtesttend".repeat(7)
    )
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Claude Code's first-run questions answered (onboarding, the API key in
/// [`claude_key`], trust of `work`, the auto-mode offer) in `home`.
pub fn configure_claude(home: &Path, work: &Path) {
    let key = claude_key();
    let claude = json!({
        "hasCompletedOnboarding": true, "lastOnboardingVersion": "2.1.332",
        "lastReleaseNotesSeen": "2.1.332", "theme": "dark", "numStartups": 3, "autoUpdates": false,
        "customApiKeyResponses": {"approved": [&key[key.len() - 20..]], "rejected": []},
        "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true,
            "hasCompletedProjectOnboarding": true, "allowedTools": []}},
        "hasSeenAutoDefaultNotice": true, "hasSeenAutoDefaultNudge": true,
        "hasResetAutoModeOptInForDefaultOffer": true, "opusProMigrationComplete": true,
        "officialMarketplaceAutoInstallAttempted": true, "officialMarketplaceAutoInstalled": false,
        "officialMarketplaceAutoInstallNextRetryTime": 4102444800000u64,
        "lastClawdEntranceVersion": "2.1.332", "migrationVersion": 15,
    });
    write(&home.join(".claude.json"), &claude.to_string());
    write(
        &home.join(".claude/settings.json"),
        r#"{"theme": "dark", "permissions": {"defaultMode": "default"}}"#,
    );
}

/// Each CLI's first-run questions answered in advance and its model
/// provider pointed at the dead port, as `tools/agentlab/harness.py` does
/// (with its stand-in model server's port).
pub fn configure(home: &Path, work: &Path, dirs: &[PathBuf]) {
    configure_claude(home, work);
    write(
        &home.join(".codex/config.toml"),
        &format!(
            r#"model = "gpt-5.1-codex"
model_provider = "dead"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.dead]
name = "dead"
base_url = "{DEAD}/v1"
env_key = "DEAD_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects."{}"]
trust_level = "trusted"

[analytics]
enabled = false

[feedback]
enabled = false
"#,
            work.display()
        ),
    );
    write(
        &home.join(".gemini/settings.json"),
        &json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false,
                        "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
            "ui": {"theme": "Default"},
        })
        .to_string(),
    );
    write(
        &home.join(".aider.conf.yml"),
        "model: openai/gpt-4o\ncheck-update: false\nshow-release-notes: false\n\
         analytics-disable: true\ngitignore: false\nauto-commits: false\nshow-model-warnings: false\n",
    );
    // aider fetches litellm's model price table at start: the copy bundled
    // with litellm, as its cache, keeps it off the network.
    for d in dirs {
        let Ok(libs) = std::fs::read_dir(d.join("venv/lib")) else {
            continue;
        };
        for lib in libs.flatten() {
            let table = lib
                .path()
                .join("site-packages/litellm/model_prices_and_context_window_backup.json");
            if table.exists() {
                let cache = home.join(".aider/caches/model_prices_and_context_window.json");
                std::fs::create_dir_all(cache.parent().expect("parent")).expect("mkdir");
                std::fs::copy(&table, &cache).expect("copy litellm's price table");
            }
        }
    }
    let provider = |name: &str| {
        json!({
            "autoupdate": false, "share": "disabled",
            "model": "dead/fake-model", "small_model": "dead/fake-model",
            "provider": {"dead": {
                "npm": "@ai-sdk/openai-compatible", "name": "dead",
                "options": {"baseURL": format!("{DEAD}/v1"), "apiKey": format!("sk-{name}-dummy")},
                "models": {"fake-model": {"name": "Fake Model", "tool_call": true,
                                          "limit": {"context": 128000, "output": 4096}}}}},
            "enabled_providers": ["dead"],
            "permission": {"bash": "ask", "edit": "ask", "webfetch": "ask"},
            "lsp": false, "formatter": false, "snapshot": false,
        })
    };
    write(
        &home.join(".config/opencode/opencode.json"),
        &provider("opencode").to_string(),
    );
    let mut kilo = provider("kilo");
    kilo["disabled_providers"] = json!(["kilo"]);
    write(&home.join(".config/kilo/kilo.json"), &kilo.to_string());
    write(
        &home.join(".qwen/settings.json"),
        &json!({
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false},
            "model": {"name": "fake-model"},
            "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
            "modelProviders": {"openai": [{"id": "fake-model", "name": "fake-model",
                "baseUrl": format!("{DEAD}/v1"), "envKey": "OPENAI_API_KEY"}]},
            "ui": {"theme": "Default"},
        })
        .to_string(),
    );
    write(
        &home.join(".pi/agent/models.json"),
        &json!({"providers": {"fakellm": {
            "baseUrl": format!("{DEAD}/v1"), "api": "openai-completions", "apiKey": "sk-pi-dummy",
            "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": false, "input": ["text"],
                        "contextWindow": 128000, "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}})
        .to_string(),
    );
    write(
        &home.join(".pi/agent/settings.json"),
        r#"{"defaultProvider": "fakellm", "defaultModel": "fake-model", "quietStartup": false, "collapseChangelog": true}"#,
    );
    write(
        &home.join(".grok/user-settings.json"),
        &json!({"apiKey": "sk-grok-dummy", "baseURL": format!("{DEAD}/v1"),
                "defaultModel": "fake-model", "models": ["fake-model"], "settingsVersion": 2})
        .to_string(),
    );
    // Continue CLI: a local config (no hub sign-in) and its self-update off.
    write(
        &home.join(".continue/config.yaml"),
        &format!(
            "name: tend-test\nversion: 1.0.0\nschema: v1\nmodels:\n  - name: fake\n    \
             provider: openai\n    model: fake-model\n    apiBase: {DEAD}/v1\n    \
             apiKey: sk-continue-dummy\n    roles: [chat, edit, apply]\n"
        ),
    );
    write(
        &home.join(".continue/index/globalContext.json"),
        r#"{"autoUpdateCli": false}"#,
    );
    // Without it `cn` first asks for an Anthropic API key.
    write(
        &home.join(".continue/.onboarding_complete"),
        "2026-12-05T00:00:00Z",
    );
    // Kimi CLI: one OpenAI-compatible provider, telemetry off.
    write(
        &home.join(".kimi/config.toml"),
        &format!(
            "default_model = \"fake\"\ntelemetry = false\n\n[providers.fake]\n\
             type = \"openai_legacy\"\nbase_url = \"{DEAD}/v1\"\napi_key = \"sk-kimi-dummy\"\n\n\
             [models.fake]\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_context_size = 128000\n"
        ),
    );
    // Mistral Vibe: one generic OpenAI-style provider, its key from the
    // environment.
    write(
        &home.join(".vibe/config.toml"),
        &format!(
            "active_model = \"fake\"\nenable_update_checks = false\nenable_telemetry = false\nenable_auto_update = false\n\n[[providers]]\nname = \"fake\"\napi_base = \"{DEAD}/v1\"\n\
             api_key_env_var = \"FAKE_VIBE_KEY\"\n\n[[models]]\nname = \"fake-model\"\n\
             provider = \"fake\"\nalias = \"fake\"\n"
        ),
    );
    // Cline CLI: one `openai-compatible` provider (what `cline auth -p
    // openai-compatible` writes), auto-update and tool auto-approval off,
    // its ClinePass notice already shown.
    let cline = home.join(".cline/data/settings");
    write(
        &cline.join("providers.json"),
        &format!(
            r#"{{"version": 1, "lastUsedProvider": "openai-compatible", "modes": {{}}, "providers": {{"openai-compatible": {{"settings": {{"provider": "openai-compatible", "apiKey": "sk-cline-dummy", "model": "fake-model", "baseUrl": "{DEAD}/v1"}}, "updatedAt": "2026-12-05T10:00:00.000Z", "tokenSource": "manual"}}}}}}"#
        ),
    );
    write(
        &cline.join("global-settings.json"),
        r#"{"autoUpdateEnabled": false, "telemetryOptOut": true, "toolAutoApprove": false}"#,
    );
    write(
        &cline.join("cli-notices.json"),
        r#"{"shown": {"cline-cli-cline-pass-intro": true}}"#,
    );
}

/// The environment of the pane's shell: every CLI's keys, endpoints and
/// switches (telemetry, update checks off). Codex reads `$HOME/.codex`.
pub fn agent_env() -> Vec<(&'static str, String)> {
    let v1 = format!("{DEAD}/v1");
    vec![
        ("ANTHROPIC_BASE_URL", DEAD.to_owned()),
        ("ANTHROPIC_API_KEY", claude_key()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        (
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL",
            "1".into(),
        ),
        ("CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION", "false".into()),
        ("DEAD_API_KEY", "sk-codex-dummy".into()),
        ("GEMINI_API_KEY", "tend-test-dummy".into()),
        ("GOOGLE_GEMINI_BASE_URL", DEAD.to_owned()),
        ("OPENAI_API_BASE", v1.clone()),
        ("OPENAI_BASE_URL", v1.clone()),
        ("OPENAI_API_KEY", "sk-tend-test-dummy".into()),
        ("OPENAI_MODEL", "fake-model".into()),
        ("LITELLM_LOCAL_MODEL_COST_MAP", "True".into()),
        ("AIDER_ANALYTICS_DISABLE", "true".into()),
        ("AIDER_CHECK_UPDATE", "false".into()),
        ("HF_HUB_OFFLINE", "1".into()),
        ("TOKENIZERS_PARALLELISM", "false".into()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ("OPENCODE_DISABLE_SHARE", "1".into()),
        ("KILO_DISABLE_AUTOUPDATE", "1".into()),
        ("KILO_DISABLE_MODELS_FETCH", "1".into()),
        ("KILO_DISABLE_LSP_DOWNLOAD", "1".into()),
        ("KILO_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ("KILO_DISABLE_SHARE", "1".into()),
        ("KILO_DISABLE_CODEBASE_INDEXING", "1".into()),
        ("KILO_DISABLE_SESSION_INGEST", "1".into()),
        ("KILO_DISABLE_PRESENCE", "1".into()),
        ("KILO_DISABLE_EXTERNAL_SKILLS", "1".into()),
        ("KILO_DISABLE_CLAUDE_CODE", "1".into()),
        ("KILO_TELEMETRY_LEVEL", "off".into()),
        ("QWEN_CODE_DISABLE_PRECONNECT", "1".into()),
        ("PI_OFFLINE", "1".into()),
        ("PI_SKIP_VERSION_CHECK", "1".into()),
        ("GROK_API_KEY", "sk-grok-dummy".into()),
        ("GROK_BASE_URL", v1),
        ("GROK_MODEL", "fake-model".into()),
        ("CONTINUE_CLI_ENABLE_TELEMETRY", "0".into()),
        ("CONTINUE_METRICS_ENABLED", "0".into()),
        // Continue CLI updates itself (npm install -g) unless this is set.
        ("CONTINUE_CLI_AUTO_UPDATED", "1".into()),
        ("KIMI_CLI_NO_AUTO_UPDATE", "1".into()),
        ("FAKE_VIBE_KEY", "sk-vibe-dummy".into()),
        ("CLINE_NO_AUTO_UPDATE", "1".into()),
        ("CLINE_DISABLE_CLINE_PASS_NOTICE", "1".into()),
        ("DO_NOT_TRACK", "1".into()),
        ("NO_UPDATE_NOTIFIER", "1".into()),
    ]
}

/// The opt-in tier's gate: true under `TEND_TEST_REAL_AGENTS=1`; otherwise
/// says that `module`'s real-agent tests were skipped.
pub fn real_agents(module: &str) -> bool {
    let on = std::env::var("TEND_TEST_REAL_AGENTS").as_deref() == Ok("1");
    if !on {
        println!("{module}: real agents skipped (set TEND_TEST_REAL_AGENTS=1)");
    }
    on
}

/// The folder whose `node_modules/.bin/claude` is Claude Code (`$AGENTS_DIR`,
/// default `/opt/agents`); `None`, said through [`super::skip`], when it is
/// not installed there.
pub fn claude_installed(test: &str) -> Option<PathBuf> {
    let agents =
        PathBuf::from(std::env::var("AGENTS_DIR").unwrap_or_else(|_| "/opt/agents".into()));
    let claude = agents.join("node_modules/.bin/claude");
    if !claude.exists() {
        super::skip(
            test,
            &format!("{} is not installed (AGENTS_DIR)", claude.display()),
        );
        return None;
    }
    Some(agents)
}

/// A process killed when the test ends, pass or fail.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The real Claude Code, offline, in a test's folder: its first run
/// answered ([`configure_claude`]), a `work` folder holding `build/`, and
/// the stand-in model server (`support/anthropic.py`) that asks to run
/// `rm -rf ./build`, logging every request. The server is killed on drop.
pub struct OfflineClaude {
    /// The project folder Claude Code runs in.
    pub work: PathBuf,
    home: PathBuf,
    agents: PathBuf,
    port: String,
    model_log: PathBuf,
    _model: Killed,
}

impl OfflineClaude {
    /// Sets it up under `root` for the Claude Code in `agents` (see
    /// [`claude_installed`]).
    pub fn start(root: &Path, agents: &Path) -> OfflineClaude {
        OfflineClaude::start_with(root, agents, 12)
    }

    /// [`OfflineClaude::start`], the background command running
    /// `background_secs` seconds.
    pub fn start_with(root: &Path, agents: &Path, background_secs: u32) -> OfflineClaude {
        let home = root.join("home");
        let work = root.join("work");
        std::fs::create_dir_all(work.join("build")).expect("mkdir build");
        std::fs::write(work.join("build/app.o"), "object\n").expect("write build/app.o");
        configure_claude(&home, &work);
        let port_file = root.join("model.port");
        let model_log = root.join("model.jsonl");
        let model = Killed(
            std::process::Command::new("python3")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/anthropic.py"))
                .arg(&port_file)
                .arg(&model_log)
                .env("STANDIN_BACKGROUND_SECS", background_secs.to_string())
                .spawn()
                .expect("python3 for the stand-in model server"),
        );
        assert!(
            super::wait_until(10, || port_file.exists()),
            "no model server"
        );
        let port = std::fs::read_to_string(&port_file).expect("the model server's port");
        OfflineClaude {
            work,
            home,
            agents: agents.to_owned(),
            port: port.trim().to_owned(),
            model_log,
            _model: model,
        }
    }

    /// The pane command that starts Claude Code against the stand-in,
    /// behind `wrapper` (`tend run --`, or nothing).
    pub fn command(&self, wrapper: &str) -> String {
        format!(
            "cd '{}' && exec env HOME='{}' PATH='{}:/usr/local/bin:/usr/bin:/bin' TERM=tmux-256color \
             ANTHROPIC_BASE_URL=http://127.0.0.1:{} ANTHROPIC_API_KEY={} DISABLE_TELEMETRY=1 \
             CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \
             CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL=1 CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false \
             {wrapper} claude",
            self.work.display(),
            self.home.display(),
            self.agents.join("node_modules/.bin").display(),
            self.port,
            claude_key(),
        )
    }

    /// What the model server has been asked so far.
    pub fn model_log(&self) -> String {
        std::fs::read_to_string(&self.model_log).unwrap_or_default()
    }
}
