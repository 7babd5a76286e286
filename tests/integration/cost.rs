//! The cost since the input and the attempt timeline, end to end: `show --json` and `show` against
//! a sum of the stored usage computed here straight from the entry rows (a separate walk of the
//! tree), `list`'s COST column, its JSON, its total line and `--sort cost` against `show`, and the
//! attempts against the ids the rows and the signals hold. Every backend.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use rusqlite::Connection;
use serde_json::{json, Value};
use turnscope_testkit::{JournalBuilder, SessionBuilder};

use crate::backends::{kinds, TestDb};
use crate::cli_export::db_arg;
use crate::support::turnscope_command;

const NOW: i64 = 1_796_018_889_175;

fn run(db: &str, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json_of(db: &str, args: &[&str]) -> Value {
    serde_json::from_str(&ok(&run(db, args))).unwrap()
}

/// Sums of the stored usage, as the documents carry them.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Sum {
    assistants: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
}

impl Sum {
    fn add(&mut self, usage: &Value) {
        self.assistants += 1;
        let n = |k: &str| usage[k].as_u64().unwrap_or(0);
        self.input += n("input");
        self.output += n("output");
        self.cache_read += n("cacheRead");
        self.cache_write += n("cacheWrite");
        self.cost += usage["cost"]["total"].as_f64().unwrap_or(0.0);
    }

    fn of(doc: &Value) -> Sum {
        let n = |k: &str| doc[k].as_u64().unwrap();
        Sum {
            assistants: n("assistants"),
            input: n("input"),
            output: n("output"),
            cache_read: n("cacheRead"),
            cache_write: n("cacheWrite"),
            cost: doc["cost"].as_f64().unwrap(),
        }
    }

    fn plus(self, o: Sum) -> Sum {
        Sum {
            assistants: self.assistants + o.assistants,
            input: self.input + o.input,
            output: self.output + o.output,
            cache_read: self.cache_read + o.cache_read,
            cache_write: self.cache_write + o.cache_write,
            cost: self.cost + o.cost,
        }
    }

    /// Equal tokens, and costs equal to the last bits (summed in another order).
    fn assert_eq(self, want: Sum, what: &str) {
        let tokens = |s: Sum| (s.assistants, s.input, s.output, s.cache_read, s.cache_write);
        assert_eq!(tokens(self), tokens(want), "{what}");
        assert!(
            (self.cost - want.cost).abs() < 1e-12,
            "{what}: {self:?} {want:?}"
        );
    }
}

/// `(active, abandoned, aborted on the path, aborted off it)` of a submission, from the rows:
/// the entries of its session by `parentId`, the active path from `leafId`, the input by its
/// `dispatch.dispatchId` / `directSubmissionId`.
fn oracle(db: &Path, submission_id: &str) -> Option<(Sum, Sum, Sum, Sum)> {
    let c = Connection::open(db).unwrap();
    let key: String = c
        .query_row(
            "SELECT session_key FROM flue_agent_submissions WHERE submission_id = ?1",
            [submission_id],
            |r| r.get(0),
        )
        .unwrap();
    let data: String = c
        .query_row(
            "SELECT data FROM flue_sessions WHERE id = ?1",
            [&key],
            |r| r.get(0),
        )
        .ok()?;
    let leaf = serde_json::from_str::<Value>(&data).unwrap()["leafId"]
        .as_str()
        .map(str::to_string);
    let mut q = c
        .prepare("SELECT data FROM flue_session_entries WHERE session_id = ?1 ORDER BY position")
        .unwrap();
    let entries: Vec<Value> = q
        .query_map([&key], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|d| serde_json::from_str(&d.unwrap()).unwrap())
        .collect();
    let by_id: HashMap<&str, &Value> = entries
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e))
        .collect();
    let mut path = HashSet::new();
    let mut cur = leaf.as_deref();
    while let Some(id) = cur {
        if !path.insert(id.to_string()) {
            break;
        }
        cur = by_id.get(id).and_then(|e| e["parentId"].as_str());
    }
    let input = entries.iter().find(|e| {
        path.contains(e["id"].as_str().unwrap())
            && (e["dispatch"]["dispatchId"] == submission_id
                || e["directSubmissionId"] == submission_id)
    })?;
    // Descendants of the input: an entry whose ancestors reach it.
    let in_subtree = |e: &Value| {
        let mut cur = e["parentId"].as_str();
        let mut seen = HashSet::new();
        while let Some(id) = cur {
            if id == input["id"] {
                return true;
            }
            if !seen.insert(id) {
                return false;
            }
            cur = by_id.get(id).and_then(|p| p["parentId"].as_str());
        }
        false
    };
    let (mut active, mut abandoned, mut aborted_path, mut aborted_off) = Default::default();
    for e in &entries {
        let m = &e["message"];
        if m["role"] != "assistant" || !in_subtree(e) {
            continue;
        }
        let on_path = path.contains(e["id"].as_str().unwrap());
        let part: &mut Sum = match (m["stopReason"] == "aborted", on_path) {
            (true, true) => &mut aborted_path,
            (true, false) => &mut aborted_off,
            (false, true) => &mut active,
            (false, false) => &mut abandoned,
        };
        part.add(&m["usage"]);
    }
    Some((active, abandoned, aborted_path, aborted_off))
}

fn usage(input: u64, output: u64, cache_read: u64, cost: f64) -> Value {
    json!({"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": 7,
        "totalTokens": input + output + cache_read + 7,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}})
}

/// The demo with two abandoned branches on a running submission whose path has an assistant: a
/// finished assistant under its input and an aborted partial under that. Returns its id.
fn demo_with_branches(dir: &Path) -> (PathBuf, String) {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, NOW).unwrap();
    let p = path.display().to_string();
    let listed = json_of(&p, &["list", "--json"]);
    let pick = listed["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["costSinceInput"]["assistants"].as_u64().unwrap_or(0) > 0
                && s["verdict"].as_str().unwrap().starts_with("resume/")
        })
        .expect("a running demo submission with an assistant after its input");
    let id = pick["submission"]["submissionId"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = json_of(&p, &["show", &id, "--json"]);
    let input = shown["inputEntryId"].as_str().unwrap();
    let key = pick["submission"]["sessionKey"].as_str().unwrap();
    let conn = Connection::open(&path).unwrap();
    let mut s = SessionBuilder::continuing(&conn, key).unwrap();
    let asst = |stop: &str, u: Value| {
        json!({"role": "assistant", "content": [{"type": "text", "text": "old"}],
            "model": "claude-haiku-4-5", "usage": u, "stopReason": stop, "timestamp": 1})
    };
    s.branch(
        input,
        "ab000001",
        asst("stop", usage(1_000, 200, 3_000, 0.0123)),
    );
    s.branch(
        "ab000001",
        "ab000002",
        asst("aborted", usage(400, 9, 0, 0.00091)),
    );
    drop(conn);
    JournalBuilder::new().session(s).append_to(&path).unwrap();
    (path, id)
}

/// `show --json` splits the cost as the rows say (abandoned branches and aborted partials apart),
/// `show` prints the same figures, and `list` (path only) counts all but the abandoned branches.
#[test]
fn cost_since_input_matches_the_stored_usage_in_show_and_list() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let (sqlite, id) = demo_with_branches(dir.path());
        let test_db = TestDb::from_sqlite(kind, &sqlite);
        let db = db_arg(&test_db.target);
        let (active, abandoned, aborted_path, aborted_off) = oracle(&sqlite, &id).unwrap();
        assert_eq!(abandoned.assistants, 1, "{kind:?}");
        assert_eq!(aborted_off.assistants, 1, "{kind:?}");

        let shown = json_of(&db, &["show", &id, "--json"]);
        let c = &shown["costSinceInput"];
        assert_eq!(c["scope"], "subtree", "{kind:?}");
        Sum::of(&c["active"]).assert_eq(active, "active");
        Sum::of(&c["abandoned"]).assert_eq(abandoned, "abandoned");
        Sum::of(&c["aborted"]).assert_eq(aborted_path.plus(aborted_off), "aborted");
        assert_eq!(c["abandonedBranches"], 1, "{kind:?}");
        assert_eq!(c["abandonedEntries"], 2, "{kind:?}");

        // The text says the same figures.
        let text = ok(&run(&db, &["show", &id]));
        let total = active.plus(abandoned).plus(aborted_path).plus(aborted_off);
        let money = |x: f64| {
            if x >= 1.0 {
                format!("${x:.2}")
            } else {
                format!("${x:.4}")
            }
        };
        assert!(
            text.contains(&format!(
                "  total      {}  in {}",
                money(total.cost),
                thousands(total.input)
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("  abandoned  {}", money(abandoned.cost))),
            "{text}"
        );
        assert!(text.contains("on 1 branch\n"), "{text}");

        // The listing reads the path only: everything but the abandoned branch's two entries.
        let listed = json_of(&db, &["list", "--json"]);
        let rows = listed["submissions"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|s| s["submission"]["submissionId"] == id.as_str())
            .unwrap();
        Sum::of(&row["costSinceInput"]).assert_eq(active.plus(aborted_path), "list");

        // Every row's COST cell and the total line are the JSON's figures; --sort=-cost puts the
        // costliest first and the rows without an input last.
        let costs: Vec<Option<f64>> = rows
            .iter()
            .map(|s| s["costSinceInput"]["cost"].as_f64())
            .collect();
        let table = ok(&run(&db, &["list"]));
        let sum: f64 = costs.iter().flatten().sum();
        let n = costs.iter().flatten().count();
        assert!(
            table.contains(&format!(
                "total cost since input: {} over {n} submissions",
                money(sum)
            )),
            "{table}"
        );
        let sorted = json_of(&db, &["list", "--sort=-cost", "--json"]);
        let got: Vec<Option<f64>> = sorted["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["costSinceInput"]["cost"].as_f64())
            .collect();
        let mut want = costs.clone();
        want.sort_by(|a, b| match (a, b) {
            (Some(a), Some(b)) => b.total_cmp(a),
            (a, b) => b.is_some().cmp(&a.is_some()),
        });
        assert_eq!(got, want, "{kind:?}");
        assert!(want[0].unwrap() > 0.0 && want.last().unwrap().is_none());
        let sorted_table = ok(&run(&db, &["list", "--sort=-cost"]));
        let first = sorted_table.lines().nth(1).unwrap();
        assert!(first.contains(&money(want[0].unwrap())), "{sorted_table}");
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The attempt timeline of every running demo submission holds each attempt id the rows and
/// the signals name (signals first, the row's current attempt last, numbered by its count) and
/// counts the rest as untraced.
#[test]
fn attempts_are_the_ids_the_rows_and_signals_hold() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = dir.path().join("demo.db");
        turnscope_demo::write_demo(&sqlite, NOW).unwrap();
        let test_db = TestDb::from_sqlite(kind, &sqlite);
        let db = db_arg(&test_db.target);
        let c = Connection::open(&sqlite).unwrap();
        let mut q = c
            .prepare(
                "SELECT submission_id, attempt_id, attempt_count, owner_id FROM flue_agent_submissions
                 WHERE status = 'running' ORDER BY sequence",
            )
            .unwrap();
        let rows: Vec<(String, Option<String>, i64, Option<String>)> = q
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut with_signals = 0;
        for (id, attempt, count, owner) in rows {
            // Attempt ids in this submission's stream keys: signals, then the turn journal.
            let mut named: Vec<String> = Vec::new();
            let mut s = c
                .prepare(
                    "SELECT json_extract(e.data, '$.message.attributes.streamKey')
                     FROM flue_session_entries e JOIN flue_agent_submissions a
                       ON a.session_key = e.session_id
                     WHERE a.submission_id = ?1
                       AND json_extract(e.data, '$.message.type') IN
                           ('stream_interrupted', 'stream_continued')
                     ORDER BY e.position",
                )
                .unwrap();
            let keys: Vec<Option<String>> = s
                .query_map([&id], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let prefix = format!("{id}:");
            for k in keys.into_iter().flatten() {
                if let Some(rest) = k.strip_prefix(&prefix) {
                    let a = rest.rsplit(':').next().unwrap().to_string();
                    if !named.contains(&a) {
                        named.push(a);
                    }
                }
            }
            if !named.is_empty() {
                with_signals += 1;
            }
            let journal: Option<(String, Option<String>)> = c
                .query_row(
                    "SELECT attempt_id, stream_key FROM flue_agent_turn_journals
                     WHERE submission_id = ?1",
                    [&id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .ok();
            if let Some((holder, key)) = &journal {
                for a in key
                    .as_deref()
                    .and_then(|k| k.strip_prefix(&prefix))
                    .map(|r| r.rsplit(':').next().unwrap().to_string())
                    .into_iter()
                    .chain(Some(holder.clone()))
                {
                    if !a.is_empty() && !named.contains(&a) {
                        named.push(a);
                    }
                }
            }
            if let Some(a) = attempt.as_ref().filter(|a| !a.is_empty()) {
                named.retain(|x| x != a);
                named.push(a.clone());
            }
            let shown = json_of(&db, &["show", &id, "--json"]);
            let t = &shown["attempts"];
            let traced: Vec<&str> = t["traced"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["attemptId"].as_str().unwrap())
                .collect();
            assert_eq!(traced, named, "{kind:?} {id}");
            assert_eq!(t["attemptCount"], count, "{id}");
            assert_eq!(
                t["untraced"].as_i64().unwrap(),
                (count - named.len() as i64).max(0),
                "{id}"
            );
            if let Some(a) = attempt.filter(|a| !a.is_empty()) {
                let last = t["traced"].as_array().unwrap().last().unwrap();
                assert_eq!(last["attemptId"], a.as_str(), "{id}");
                assert_eq!(last["current"], true, "{id}");
                assert_eq!(last["number"], count, "{id}");
                assert_eq!(last["ownerId"].as_str(), owner.as_deref(), "{id}");
                // The text names it on one line of its own.
                let text = ok(&run(&db, &["show", &id]));
                let short: String = a.chars().take(8).collect();
                assert!(
                    text.lines()
                        .any(|l| l.starts_with(&format!("  #{count} {short}…  current"))),
                    "{text}"
                );
            }
        }
        assert!(with_signals > 0, "no demo submission has stream signals");
    }
}

/// Each incident's cost is `list`'s COST summed over the submissions its `list --owner` shows.
#[test]
fn incidents_total_the_cost_of_their_submissions() {
    let dir = tempfile::tempdir().unwrap();
    let (sqlite, _) = demo_with_branches(dir.path());
    let db = sqlite.display().to_string();
    let doc = json_of(&db, &["incidents", "--json"]);
    let groups = doc["groups"].as_array().unwrap();
    let mut checked = 0;
    for g in groups {
        let Some(owner) = g["ownerId"].as_str() else {
            continue;
        };
        let listed = json_of(&db, &["list", "--owner", owner, "--json"]);
        let rows = listed["submissions"].as_array().unwrap();
        assert_eq!(rows.len() as u64, g["count"].as_u64().unwrap(), "{owner}");
        let costs: Vec<Option<f64>> = rows
            .iter()
            .map(|s| s["costSinceInput"]["cost"].as_f64())
            .collect();
        let sum: f64 = costs.iter().flatten().sum();
        let got = g["costSinceInput"].as_f64().unwrap();
        assert!((got - sum).abs() < 1e-12, "{owner}: {got} vs {sum}");
        assert_eq!(
            g["withoutInput"].as_u64().unwrap() as usize,
            costs.iter().filter(|c| c.is_none()).count(),
            "{owner}"
        );
        checked += usize::from(sum > 0.0);
    }
    assert!(checked >= 2, "only {checked} incidents with a cost");
}
