//! Agents of the scale database: model, durability, tools, and what their inputs, tool calls,
//! tool outputs and answers look like.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::scale_text::{output_size, sentence, Corpus, Flavor, Sizes};
use turnscope_demo::build::{DAY, HOUR, MIN};
use turnscope_demo::flow::DEFAULT_DURABILITY;
use turnscope_demo::ids::Rng;
use turnscope_demo::shapes::{Model, GPT5_MINI, HAIKU, SONNET};

/// What a tool returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Shell output (plain text), `details: {command, exitCode}`.
    Bash,
    /// A file's text, `details: {}`.
    File,
    /// `grep -n` style matches, `details: {}`.
    Grep,
    /// A web page as markdown, `details: {}`.
    Fetch,
    /// A JSON list of hits; custom tool (`details: {customTool, output}`).
    Search,
    /// A small JSON object; custom tool (`details: {customTool, output}`).
    Api,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Tool {
    pub name: &'static str,
    pub kind: Kind,
}

const fn t(name: &'static str, kind: Kind) -> Tool {
    Tool { name, kind }
}

/// One kind of agent.
#[derive(Debug)]
pub(crate) struct Profile {
    pub agent: &'static str,
    pub prefix: &'static str,
    pub model: Model,
    /// Percentage of submissions that are direct prompts.
    pub direct_pct: u64,
    pub durability: (i64, i64),
    pub tools: &'static [Tool],
}

pub(crate) const PROFILES: [Profile; 6] = [
    Profile {
        agent: "support",
        prefix: "support",
        model: HAIKU,
        direct_pct: 40,
        durability: DEFAULT_DURABILITY,
        tools: &[
            t("lookup_order", Kind::Api),
            t("lookup_customer", Kind::Api),
            t("search_kb", Kind::Search),
            t("send_email", Kind::Api),
            t("issue_refund", Kind::Api),
        ],
    },
    Profile {
        agent: "devops",
        prefix: "ci-runner",
        model: SONNET,
        direct_pct: 15,
        durability: DEFAULT_DURABILITY,
        tools: &[
            t("bash", Kind::Bash),
            t("read_file", Kind::File),
            t("grep", Kind::Grep),
            t("get_ci_report", Kind::Api),
        ],
    },
    Profile {
        agent: "researcher",
        prefix: "research",
        model: SONNET,
        direct_pct: 30,
        durability: (10, 6 * HOUR),
        tools: &[
            t("web_search", Kind::Search),
            t("fetch_url", Kind::Fetch),
            t("read_file", Kind::File),
        ],
    },
    Profile {
        agent: "billing",
        prefix: "billing",
        model: HAIKU,
        direct_pct: 0,
        durability: (3, 15 * MIN),
        tools: &[
            t("lookup_invoice", Kind::Api),
            t("charge_card", Kind::Api),
            t("refund_charge", Kind::Api),
            t("send_email", Kind::Api),
        ],
    },
    Profile {
        agent: "coder",
        prefix: "repo",
        model: GPT5_MINI,
        direct_pct: 50,
        durability: (10, 24 * HOUR),
        tools: &[
            t("read_file", Kind::File),
            t("grep", Kind::Grep),
            t("bash", Kind::Bash),
            t("write_file", Kind::Api),
        ],
    },
    Profile {
        agent: "moderator",
        prefix: "guild",
        model: HAIKU,
        direct_pct: 0,
        durability: DEFAULT_DURABILITY,
        tools: &[
            t("fetch_message", Kind::Api),
            t("warn_user", Kind::Api),
            t("ban_user", Kind::Api),
        ],
    },
];

/// The whale's agent: an on-call assistant that runs shell commands and reads files for weeks.
pub(crate) const WHALE: Profile = Profile {
    agent: "oncall",
    prefix: "oncall-platform",
    model: SONNET,
    direct_pct: 20,
    durability: (10, 6 * HOUR),
    tools: &[
        t("bash", Kind::Bash),
        t("read_file", Kind::File),
        t("grep", Kind::Grep),
        t("fetch_url", Kind::Fetch),
        t("get_ci_report", Kind::Api),
    ],
};

/// The runtime profile's whale agent: the same on-call assistant, configured for one very long
/// submission: a retry budget and a timeout that thousands of repairs over days do not exhaust.
pub(crate) const RUNTIME_WHALE: Profile = Profile {
    durability: (1_000_000, 365 * DAY),
    ..WHALE
};

fn pick<'a>(r: &mut Rng, xs: &[&'a str]) -> &'a str {
    xs[(r.next_u64() % xs.len() as u64) as usize]
}

const DIRS: &[&str] = &["src", "lib", "api", "web", "infra", "scripts", "pkg"];
const FILES: &[&str] = &[
    "server", "billing", "queue", "handlers", "config", "session", "store", "router", "cache",
];
const EXTS: &[&str] = &["rs", "ts", "py", "go", "yaml", "sql"];
const COMMANDS: &[&str] = &[
    "kubectl logs deploy/api --since=15m",
    "journalctl -u worker --since '1 hour ago'",
    "git log --oneline -50",
    "cargo test --workspace 2>&1 | tail -200",
    "npm run build",
    "psql -c 'EXPLAIN ANALYZE SELECT * FROM orders WHERE status = $1'",
    "docker compose ps",
    "tail -n 400 /var/log/nginx/error.log",
];
const WORDS: &[&str] = &[
    "refund",
    "latency",
    "timeout",
    "invoice",
    "deploy",
    "rollback",
    "checkout",
    "quota",
    "webhook",
    "migration",
    "session",
    "cache",
    "replica",
    "billing",
    "coupon",
];

fn path(r: &mut Rng) -> String {
    format!(
        "{}/{}/{}.{}",
        pick(r, DIRS),
        pick(r, FILES),
        pick(r, FILES),
        pick(r, EXTS)
    )
}

/// Arguments of a call to `tool` (compact JSON built from a `Value`, so key order is as written).
pub(crate) fn arguments(r: &mut Rng, tool: &Tool) -> Value {
    match (tool.kind, tool.name) {
        (Kind::Bash, _) => json!({"command": pick(r, COMMANDS)}),
        (Kind::File, _) => json!({"path": path(r)}),
        (Kind::Grep, _) => json!({"pattern": pick(r, WORDS), "path": pick(r, DIRS)}),
        (Kind::Fetch, _) => {
            json!({"url": format!("https://docs.example.com/{}/{}", pick(r, WORDS), r.hex(6))})
        }
        (Kind::Search, _) => {
            json!({"query": format!("{} {} {}", pick(r, WORDS), pick(r, WORDS), pick(r, WORDS)), "limit": 10})
        }
        (Kind::Api, "charge_card" | "refund_charge" | "issue_refund") => {
            json!({"customerId": format!("cus_{}", r.base62(6)), "amountCents": r.range(500, 250_000), "currency": "EUR", "idempotencyKey": format!("INV-{}", r.range(10_000, 99_999))})
        }
        (Kind::Api, "send_email") => {
            json!({"to": format!("{}@example.com", pick(r, WORDS)), "template": pick(r, &["receipt", "reminder", "apology", "update"]), "ref": format!("T-{}", r.range(10_000, 99_999))})
        }
        (Kind::Api, "write_file") => json!({"path": path(r), "bytes": r.range(100, 40_000)}),
        (Kind::Api, _) => {
            json!({"id": format!("{}-{}", pick(r, &["A", "T", "INV", "M"]), r.range(1_000, 999_999))})
        }
    }
}

/// A tool's output: the text of the result and its `details` (compact JSON).
pub(crate) struct Output<'c> {
    pub text: Cow<'c, str>,
    pub details: String,
}

/// What `tool` returned for `args`. Custom JSON tools store their output twice (text and
/// `details.output`); with [`Sizes::Session`] they stay small and text tools carry the large
/// bodies, with [`Sizes::Runtime`] every output's text follows the runtime's size spread.
pub(crate) fn output<'c>(
    c: &'c Corpus,
    r: &mut Rng,
    tool: &Tool,
    args: &Value,
    sizes: Sizes,
) -> Output<'c> {
    let plain = |flavor: Flavor, r: &mut Rng| {
        let n = sizes.draw(r);
        c.text(r, flavor, n)
    };
    match tool.kind {
        Kind::Bash => {
            let exit = if r.next_u64() % 9 == 0 { 1 } else { 0 };
            let details = json!({"command": args["command"], "exitCode": exit}).to_string();
            Output {
                text: plain(Flavor::Log, r),
                details,
            }
        }
        Kind::File | Kind::Grep => Output {
            text: plain(Flavor::Code, r),
            details: "{}".into(),
        },
        Kind::Fetch => Output {
            text: plain(Flavor::Prose, r),
            details: "{}".into(),
        },
        Kind::Search => {
            let budget = match sizes {
                Sizes::Session { .. } => output_size(r, u64::MAX).min(8_000),
                Sizes::Runtime => sizes.draw(r),
            };
            let mut hits = Vec::new();
            let mut used = 0;
            while used < budget {
                let n = r.range(80, 400) as usize;
                let snippet = c.text(r, Flavor::Prose, n);
                used += snippet.len() + 90;
                hits.push(json!({"title": sentence(r, 3, 8), "url": format!("https://kb.example.com/a/{}", r.range(100, 99_999)), "snippet": snippet}));
            }
            custom(
                tool,
                json!({"results": hits, "total": hits.len() + r.range(0, 40) as usize}),
            )
        }
        Kind::Api => {
            let n = match sizes {
                Sizes::Session { .. } => r.range(60, 1_200) as usize,
                // The text is about the notes plus 100 bytes of other fields.
                Sizes::Runtime => sizes.draw(r).saturating_sub(100).max(60),
            };
            let notes = c.text(r, Flavor::Prose, n);
            let v = json!({"ok": true, "id": format!("{}_{}", &tool.name[..3], r.base62(10)), "status": pick(r, &["succeeded", "pending", "queued", "open", "closed"]), "notes": notes});
            custom(tool, v)
        }
    }
}

fn custom(tool: &Tool, v: Value) -> Output<'static> {
    let text = v.to_string();
    let details = format!("{{\"customTool\":\"{}\",\"output\":{text}}}", tool.name);
    Output {
        text: Cow::Owned(text),
        details,
    }
}

/// The input of a dispatch to an agent of this profile.
pub(crate) fn dispatch_input(r: &mut Rng, p: &Profile) -> Value {
    match p.agent {
        "support" => {
            json!({"ticketId": format!("T-{}", r.range(10_000, 99_999)), "customerId": format!("cus_{}", r.base62(6)), "channel": pick(r, &["email", "chat", "phone"]), "subject": sentence(r, 3, 9)})
        }
        "devops" | "oncall" => {
            json!({"repo": format!("acme/{}", pick(r, WORDS)), "ref": format!("refs/pull/{}/head", r.range(100, 9_999)), "task": pick(r, &["triage_failure", "bisect_flaky_test", "summarize_incident"])})
        }
        "researcher" => {
            json!({"topic": sentence(r, 3, 7), "depth": pick(r, &["brief", "survey"]), "maxSources": r.range(5, 40)})
        }
        "billing" => {
            json!({"invoiceId": format!("INV-{}", r.range(10_000, 99_999)), "customerId": format!("cus_{}", r.base62(5)), "amountCents": r.range(500, 250_000), "currency": "EUR", "action": pick(r, &["collect_overdue", "send_reminder", "refund"])})
        }
        "coder" => {
            json!({"repo": format!("acme/{}", pick(r, WORDS)), "issue": r.range(1, 9_999), "task": pick(r, &["fix_bug", "write_tests", "refactor"])})
        }
        _ => {
            json!({"reportId": format!("r-{}", r.range(1_000, 99_999)), "type": "flagged", "channel": format!("#{}", pick(r, WORDS))})
        }
    }
}

/// A direct prompt to an agent of this profile.
pub(crate) fn prompt(r: &mut Rng) -> String {
    format!(
        "{} {}",
        pick(
            r,
            &[
                "Can you check",
                "Please summarize",
                "Why did",
                "Draft a reply about",
                "What changed in"
            ]
        ),
        sentence(r, 4, 16)
    )
}

/// A final answer (markdown prose).
pub(crate) fn answer(c: &Corpus, r: &mut Rng) -> String {
    let len = r.range(80, 1_500) as usize;
    c.text(r, Flavor::Prose, len).trim().to_string()
}
