//! `list`'s filters, sort and outputs on flue 2.x journals, through the binary, on every 2.1.0
//! crash fixture: each row's `disposition` as the row's columns say (computed here with SQL),
//! `--verdict`/`--not-verdict` splitting the rows of `--status all` exactly by label or
//! disposition, `--rule` by the plan's step, `--kind`, `--instance`, `--owner` (a prefix, an
//! ambiguous one refused), `--older-than` from the lease or acceptance time, `--sort` with
//! `--limit`, `-o ids` and `-o wide`; and every value a flag does not take refused in one line.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

fn turnscope(db: &Path, now: i64, args: &[&str]) -> Output {
    crate::support::turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", now.to_string())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("run turnscope")
}

fn doc(db: &Path, now: i64, args: &[&str]) -> Value {
    let o = turnscope(db, now, args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn ids(d: &Value) -> Vec<String> {
    d["submissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// One row's columns as SQL reads them.
struct Row {
    id: String,
    kind: String,
    status: String,
    lease: i64,
    accepted: i64,
    owner: Option<String>,
    error: Option<String>,
    outcome: Option<String>,
    instance: Option<String>,
}

fn rows(db: &Path) -> Vec<Row> {
    let conn = Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT submission_id, kind, status, lease_expires_at, accepted_at, owner_id, error, \
             CASE WHEN json_valid(settlement_record) THEN json_extract(settlement_record, '$.outcome') END, \
             json_extract(substr(session_key, length('agent-session:') + 1), '$[1]') \
             FROM flue_agent_submissions ORDER BY sequence",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok(Row {
            id: r.get(0)?,
            kind: r.get(1)?,
            status: r.get(2)?,
            lease: r.get(3)?,
            accepted: r.get(4)?,
            owner: r.get(5)?,
            error: r.get(6)?,
            outcome: r.get(7).ok().flatten(),
            instance: r.get(8).ok().flatten(),
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Where a row stands by its columns alone (the fixtures' rows all fold and classify, so a
/// running row past its lease is `stuck`, never `damaged`).
fn disposition_from_columns(r: &Row, now: i64) -> &'static str {
    match r.status.as_str() {
        "queued" => "pending",
        "running" if r.lease == 0 => "no-lease",
        "running" if r.lease < now => "stuck",
        "running" => "live",
        "settled" => match (r.outcome.as_deref(), &r.error) {
            (Some("aborted"), _) => "aborted",
            (Some("failed"), _) | (None, Some(_)) => "failed",
            _ => "completed",
        },
        "joined" | "joining" => "joined",
        other => panic!("a status the fixtures do not have: {other}"),
    }
}

/// Clocks before every lease ended, and after.
fn clocks(rows: &[Row]) -> [i64; 2] {
    let leases = rows.iter().map(|r| r.lease).filter(|l| *l > 0);
    let first = leases.clone().min().unwrap_or(1);
    [first - 1, leases.max().unwrap_or(0) + 1_000]
}

#[test]
fn verdict_and_rule_split_every_row_by_label_disposition_and_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        let sql = rows(&db);
        for now in clocks(&sql) {
            let what = format!("{name} at {now}");
            let all = doc(&db, now, &["list", "--status", "all", "--json"]);
            let items = all["submissions"].as_array().unwrap().clone();
            assert_eq!(items.len(), sql.len(), "{what}");
            for (item, row) in items.iter().zip(&sql) {
                assert_eq!(item["id"], row.id.as_str(), "{what}");
                let d = disposition_from_columns(row, now);
                assert_eq!(item["disposition"], d, "{what}: {}", row.id);
                seen.insert(d.to_string());
            }
            let values: BTreeSet<String> = items
                .iter()
                .flat_map(|i| {
                    [
                        i["verdict"]["label"].as_str().unwrap().to_string(),
                        i["disposition"].as_str().unwrap().to_string(),
                    ]
                })
                .chain(["resume".to_string(), "aborted".to_string()])
                .collect();
            for v in &values {
                let want: Vec<String> = items
                    .iter()
                    .filter(|i| {
                        let label = i["verdict"]["label"].as_str().unwrap();
                        label == v
                            || i["disposition"] == v.as_str()
                            || (v == "resume" && label.starts_with("resume/"))
                    })
                    .map(|i| i["id"].as_str().unwrap().to_string())
                    .collect();
                let with = ids(&doc(
                    &db,
                    now,
                    &["list", "--status", "all", "--verdict", v, "--json"],
                ));
                assert_eq!(with, want, "{what}: --verdict {v}");
                let without = ids(&doc(
                    &db,
                    now,
                    &["list", "--status", "all", "--not-verdict", v, "--json"],
                ));
                let bang = ids(&doc(
                    &db,
                    now,
                    &[
                        "list",
                        "--status",
                        "all",
                        "--verdict",
                        &format!("!{v}"),
                        "--json",
                    ],
                ));
                assert_eq!(without, bang, "{what}: !{v}");
                assert_eq!(with.len() + without.len(), items.len(), "{what}: {v}");
                assert!(with.iter().all(|i| !without.contains(i)), "{what}: {v}");
            }
            for step in ["0", "2", "3", "4", "5", "6", "7", "none", "2,5", "!5"] {
                let (negated, body) = match step.strip_prefix('!') {
                    Some(b) => (true, b),
                    None => (false, step),
                };
                let wanted: Vec<Value> = body
                    .split(',')
                    .map(|s| s.parse::<u64>().map_or(Value::Null, Value::from))
                    .collect();
                let want: Vec<String> = items
                    .iter()
                    .filter(|i| wanted.contains(&i["plan"]["step"]) != negated)
                    .map(|i| i["id"].as_str().unwrap().to_string())
                    .collect();
                let got = ids(&doc(
                    &db,
                    now,
                    &["list", "--status", "all", "--rule", step, "--json"],
                ));
                assert_eq!(got, want, "{what}: --rule {step}");
            }
        }
    }
    // The fixtures reach these dispositions at the two clocks.
    for d in ["pending", "live", "stuck", "completed", "failed"] {
        assert!(seen.contains(d), "{d} never met: {seen:?}");
    }
}

#[test]
fn row_filters_sort_and_outputs_follow_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let sql = rows(&db);
    assert_eq!(sql.len(), 3, "settled, running and queued");
    let [_, now] = clocks(&sql);
    let all = |extra: &[&str]| {
        let mut args = vec!["list", "--status", "all", "--json"];
        args.extend_from_slice(extra);
        ids(&doc(&db, now, &args))
    };
    let of = |keep: &dyn Fn(&Row) -> bool| -> Vec<String> {
        sql.iter()
            .filter(|r| keep(r))
            .map(|r| r.id.clone())
            .collect()
    };
    assert_eq!(all(&["--kind", "dispatch"]), of(&|r| r.kind == "dispatch"));
    assert!(all(&["--kind", "direct"]).is_empty());
    let instance = sql[0].instance.clone().unwrap();
    assert_eq!(all(&["--instance", &instance]), of(&|_| true));
    assert!(all(&["--instance", "nobody"]).is_empty());
    // An owner by a unique prefix of its id; a prefix two owners share is refused.
    let owner = sql.iter().find_map(|r| r.owner.clone()).unwrap();
    assert_eq!(
        all(&["--owner", &owner[..owner.len() - 4]]),
        of(&|r| r.owner.as_deref() == Some(owner.as_str()))
    );
    // Running rows by the lease's end, others by acceptance.
    for age_s in [1i64, 3_600, 10_000_000] {
        let since = |r: &Row| {
            if r.status == "running" && r.lease > 0 {
                r.lease
            } else {
                r.accepted
            }
        };
        assert_eq!(
            all(&["--older-than", &format!("{age_s}s")]),
            of(&|r| now - since(r) >= age_s * 1000),
            "--older-than {age_s}s"
        );
    }
    // Sorted by sequence descending, then the first one of that order.
    let mut desc = of(&|_| true);
    desc.reverse();
    assert_eq!(all(&["--sort=-seq"]), desc);
    assert_eq!(all(&["--sort=-seq", "--limit", "1"]), desc[..1]);
    // A row without a lease sorts last either way.
    let by_lease = all(&["--sort", "lease"]);
    assert_eq!(
        by_lease.last(),
        sql.iter().find(|r| r.lease == 0).map(|r| &r.id)
    );
    // -o ids: the ids alone; -o wide: the disposition, owner and error columns.
    let o = turnscope(&db, now, &["list", "--status", "all", "-o", "ids"]);
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(listed, of(&|_| true));
    let o = turnscope(&db, now, &["list", "--status", "all", "-o", "wide"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let header = text.lines().nth(1).unwrap();
    assert!(
        header.contains("STATE") && header.contains("OWNER") && header.contains("ERROR"),
        "{text}"
    );
    assert!(text.contains(&owner), "{text}");
    // An empty result names the filter that left nothing.
    let o = turnscope(
        &db,
        now,
        &["list", "--status", "all", "--verdict", "aborted"],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("3 submissions, none with verdict aborted"),
        "{text}"
    );
}

#[test]
fn values_a_2_x_list_does_not_take_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    let now = 0;
    // A second owner whose id shares the first one's prefix.
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET owner_id = 'owner_01M92S7V4ZZZZ' WHERE status = 'settled'",
            [],
        )
        .unwrap();
    for (args, needle) in [
        (&["list", "--rule", "8"][..], "unknown rule \"8\""),
        (
            &["list", "--verdict", "publishing"],
            "unknown verdict \"publishing\"",
        ),
        (&["list", "--sort", "phase"], "unknown column \"phase\""),
        (&["list", "--status", "failed"], "unknown status \"failed\""),
        (
            &["list", "--watch"],
            "--watch does not read flue 2.x journals",
        ),
        (
            &["list", "--status", "all", "--owner", "owner_"],
            "matches 2 owners",
        ),
    ] {
        let o = turnscope(&db, now, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {err}");
        assert!(
            lines[0].starts_with("error: ") && lines[0].contains(needle),
            "{args:?}: {err}"
        );
        assert!(lines[1].starts_with("hint: "), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
