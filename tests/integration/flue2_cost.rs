//! Cost and attempts on flue 2.x journals, through the binary, on every 2.1.0 crash fixture. The
//! expected figures are computed here from the stored records with SQL (`json_each` over every
//! batch): the usage of every `assistant_message_completed` record a submission (or a delivery
//! joined into it) wrote, and the attempt ids its records carry in append order. The fixtures'
//! model charges nothing, so each copy's completions are given a cost first (a millionth of a
//! dollar per token, written into the records), which `--sort cost` then orders by.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::Connection;
use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

fn json(db: &Path, args: &[&str]) -> Value {
    crate::support::turnscope_json(db, None, args)
}

/// Give every completion a cost: `cost.total` = totalTokens / 1e6 (and the other cost fields
/// 0), in place, batch by batch.
fn price(db: &Path) {
    let conn = Connection::open(db).unwrap();
    let batches: Vec<(String, i64, String)> = conn
        .prepare("SELECT path, seq, data FROM flue_conversation_stream_batches")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (path, seq, data) in batches {
        let Ok(Value::Array(mut records)) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        for r in &mut records {
            if r["type"] == "assistant_message_completed" {
                if let Some(t) = r["usage"]["totalTokens"].as_f64() {
                    r["usage"]["cost"]["total"] = serde_json::json!(t / 1e6);
                }
            }
        }
        conn.execute(
            "UPDATE flue_conversation_stream_batches SET data = ?1 WHERE path = ?2 AND seq = ?3",
            rusqlite::params![serde_json::to_string(&records).unwrap(), path, seq],
        )
        .unwrap();
    }
}

#[derive(Debug, Default, PartialEq)]
struct Sum {
    assistants: u64,
    input: u64,
    output: u64,
    total_tokens: u64,
    cost: f64,
}

/// Per submission, from the records: its completions' usage (deliveries joined into it added)
/// and its attempt ids in the order they first wrote.
fn expected(db: &Path) -> (BTreeMap<String, Sum>, BTreeMap<String, Vec<String>>) {
    let conn = Connection::open(db).unwrap();
    let mut sums: BTreeMap<String, Sum> = BTreeMap::new();
    let host: BTreeMap<String, String> = conn
        .prepare("SELECT submission_id, joined_into FROM flue_agent_submissions WHERE joined_into IS NOT NULL AND status = 'joined'")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut q = conn
        .prepare(
            "SELECT json_extract(r.value, '$.submissionId'), json_extract(r.value, '$.usage.input'),
                    json_extract(r.value, '$.usage.output'), json_extract(r.value, '$.usage.totalTokens'),
                    json_extract(r.value, '$.usage.cost.total')
             FROM flue_conversation_stream_batches b, json_each(b.data) r
             WHERE json_extract(r.value, '$.type') = 'assistant_message_completed'
               AND json_extract(r.value, '$.submissionId') IS NOT NULL",
        )
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, f64>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (sub, input, output, total, cost) = row.unwrap();
        let sub = host.get(&sub).cloned().unwrap_or(sub);
        let s = sums.entry(sub).or_default();
        s.assistants += 1;
        s.input += input as u64;
        s.output += output as u64;
        s.total_tokens += total as u64;
        s.cost += cost;
    }
    let mut attempts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut q = conn
        .prepare(
            "SELECT json_extract(r.value, '$.submissionId'), json_extract(r.value, '$.attemptId')
             FROM flue_conversation_stream_batches b, json_each(b.data) r
             WHERE json_extract(r.value, '$.attemptId') IS NOT NULL
             ORDER BY b.path, b.seq, CAST(r.key AS INTEGER)",
        )
        .unwrap();
    for row in q
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
    {
        let (sub, att) = row.unwrap();
        let list = attempts.entry(sub).or_default();
        if !list.contains(&att) {
            list.push(att);
        }
    }
    (sums, attempts)
}

fn got(cost: &Value) -> Sum {
    let t = &cost["total"];
    Sum {
        assistants: t["assistants"].as_u64().unwrap(),
        input: t["input"].as_u64().unwrap(),
        output: t["output"].as_u64().unwrap(),
        total_tokens: t["totalTokens"].as_u64().unwrap(),
        cost: t["cost"].as_f64().unwrap(),
    }
}

fn close(a: &Sum, b: &Sum) -> bool {
    a.assistants == b.assistants
        && a.input == b.input
        && a.output == b.output
        && a.total_tokens == b.total_tokens
        && (a.cost - b.cost).abs() < 1e-12
}

#[test]
fn show_and_list_cost_and_attempts_equal_the_records_on_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let mut priced = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let db = unpack_db("flue-2.1.0", &name, dir.path());
        price(&db);
        let (sums, attempts) = expected(&db);
        let list = json(&db, &["list", "--status", "all", "--json"]);
        for item in list["submissions"].as_array().unwrap() {
            let id = item["id"].as_str().unwrap();
            let want = sums.get(id).map_or_else(Sum::default, |s| Sum { ..*s });
            if item["cost"].is_null() {
                assert_eq!(want, Sum::default(), "{name} {id}: no cost listed");
                continue;
            }
            assert!(
                close(&got(&item["cost"]), &want),
                "{name} {id}: {} vs {want:?}",
                item["cost"]
            );
            let show = json(&db, &["show", id, "--json"]);
            assert_eq!(show["cost"], item["cost"], "{name} {id}");
            let traced: Vec<&str> = show["attempts"]["traced"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["attemptId"].as_str().unwrap())
                .collect();
            let want_attempts: Vec<&str> = attempts
                .get(id)
                .map(|v| v.iter().map(String::as_str).collect())
                .unwrap_or_default();
            assert_eq!(traced, want_attempts, "{name} {id}");
            assert_eq!(
                show["attempts"]["attemptCount"], item["attempts"],
                "{name} {id}"
            );
            if want.cost > 0.0 {
                priced += 1;
            }
        }
        // --sort -cost: by the listed cost, most first; equal costs in sequence order.
        let sorted = json(
            &db,
            &["list", "--status", "all", "--sort", "-cost", "--json"],
        );
        let costs: Vec<(f64, i64)> = sorted["submissions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["cost"]["total"]["cost"].as_f64().unwrap_or(-1.0),
                    i["sequence"].as_i64().unwrap(),
                )
            })
            .collect();
        for w in costs.windows(2) {
            assert!(
                w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1),
                "{name}: {costs:?}"
            );
        }
    }
    assert!(priced >= 10, "{priced}");
}

#[test]
fn incidents_total_the_cost_of_the_stuck_submissions_per_group_and_overall() {
    let dir = tempfile::tempdir().unwrap();
    let db = unpack_db("flue-2.1.0", "tool-batch-1-of-3", dir.path());
    price(&db);
    let (sums, _) = expected(&db);
    let inc = json(&db, &["incidents", "--json"]);
    let mut overall = 0.0;
    let mut tokens = 0;
    for g in inc["groups"].as_array().unwrap() {
        let mut cost = 0.0;
        let mut t = 0;
        for id in g["submissions"].as_array().unwrap() {
            if let Some(s) = sums.get(id.as_str().unwrap()) {
                cost += s.cost;
                t += s.total_tokens;
            }
        }
        assert!(
            (g["cost"]["cost"].as_f64().unwrap() - cost).abs() < 1e-12,
            "{g}"
        );
        assert_eq!(g["cost"]["totalTokens"].as_u64().unwrap(), t);
        overall += cost;
        tokens += t;
    }
    assert!(tokens > 0, "the stuck submission made model calls");
    assert!((inc["cost"]["cost"].as_f64().unwrap() - overall).abs() < 1e-12);
    assert_eq!(inc["cost"]["totalTokens"].as_u64().unwrap(), tokens);
}
