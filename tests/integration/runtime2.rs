//! The flue 2.1.0 fixtures stay true to the runtime: the real `@flue/runtime` 2.1.0 (installed by
//! `tests/runtime2/setup.sh`) regenerates a crash database and classifies it as the committed
//! JSON says, and classifies and folds every committed database exactly as its JSON says. A freshly killed
//! database (with its write-ahead log beside it) is refused by turnscope in one line, unwritten.
//! turnscope's fold and classifier answer as the runtime's reducer and classifier on record logs
//! made from the fixtures' (mutants, prefixes).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::runtime_kit::{runtime2, Runtime};
use crate::support::{db_fixture_names, fixtures_dir, unpack_db};

fn fixture_dir() -> PathBuf {
    fixtures_dir().join("flue-2.1.0")
}

/// The runtime's classification of fixture `name`, as committed (`NAME.classification.json`).
pub(crate) fn committed(name: &str) -> Value {
    committed_json(name, "classification")
}

fn committed_json(name: &str, what: &str) -> Value {
    let path = fixture_dir().join(format!("{name}.{what}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn classify(rt: &Runtime, db: &Path) -> Value {
    rt.drive("classify.mjs", &[db.as_os_str()])
}

/// Without what changes from run to run: submission ids, and the input entry ids made from them.
fn without_ids(mut report: Value) -> Value {
    for sub in report["submissions"].as_array_mut().unwrap() {
        let sub = sub.as_object_mut().unwrap();
        sub.remove("submissionId");
        sub.remove("inputEntryId");
    }
    report
}

/// `crash.mjs --scenario NAME` against a fresh database in `dir`: the runtime must die by the
/// scenario's SIGKILL. The database is left as the kill left it (with its -wal and -shm).
fn crash(rt: &Runtime, scenario: &str, dir: &Path) -> PathBuf {
    let db = dir.join(format!("{scenario}.db"));
    let out = Command::new(&rt.node)
        .arg("--no-warnings")
        .arg(rt.drivers.join("crash.mjs"))
        .args([
            OsStr::new("--scenario"),
            OsStr::new(scenario),
            OsStr::new("--db"),
            db.as_os_str(),
        ])
        .current_dir(&rt.drivers)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "{scenario}: not killed at its crash point ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    db
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn a_regenerated_fixture_classifies_as_the_committed_json() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    // All three outcomes recorded, the commit not: no timing window (the kill follows the third
    // outcome's append), the runtime's answer tool_use_unresolved with all 3 calls.
    let name = "tool-batch-all-outcomes";
    let db = crash(rt, name, dir.path());
    let fresh = classify(rt, &db);
    assert_eq!(without_ids(fresh.clone()), without_ids(committed(name)));
    assert_eq!(fresh["meta"]["format_version"], "1");

    // turnscope on the database exactly as the kill left it, -wal included: `classify` reads it
    // as the runtime does; a command that does not read 2.x says so in one line, exit 1; nothing
    // is written either way.
    let wal = dir.path().join(format!("{name}.db-wal"));
    assert!(
        wal.is_file(),
        "the killed runtime leaves its write-ahead log"
    );
    let before = (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap());
    let run = |args: &[&str]| {
        crate::support::turnscope_command()
            .env_remove("TURNSCOPE_DB")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap()
    };
    let subs = fresh["submissions"].as_array().unwrap();
    assert!(!subs.is_empty());
    for s in subs {
        let id = s["submissionId"].as_str().unwrap();
        let o = run(&["classify", id, "--json", "--context-window", "200000"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = run(&["list", "--status", "all"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // health reads it too (exit 0, or 8 with findings); a command that does not is refused.
    let o = run(&["health", "--all"]);
    assert!(
        matches!(o.status.code(), Some(0 | 8)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["--write", "step", "x", "--dry-run"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error: this journal was written by flue 2.x (flue_meta.format_version = 1)"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
    assert_eq!(
        (std::fs::read(&db).unwrap(), std::fs::read(&wal).unwrap()),
        before,
        "nothing written"
    );
}

#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn every_committed_fixture_classifies_and_folds_as_its_json() {
    let rt = runtime2("runtime2");
    let dir = tempfile::tempdir().unwrap();
    let names = db_fixture_names("flue-2.1.0");
    assert!(names.len() >= 15, "{names:?}");
    let mut differ = Vec::new();
    for name in &names {
        let db = unpack_db("flue-2.1.0", name, dir.path());
        if classify(rt, &db) != committed(name) {
            differ.push(format!("{name} (classification)"));
        }
        if rt.drive("fold.mjs", &[db.as_os_str()]) != committed_json(name, "fold") {
            differ.push(format!("{name} (fold)"));
        }
    }
    assert!(
        differ.is_empty(),
        "the runtime classifies or folds these differently from their committed JSON: {differ:?} \
         (regenerate with tests/runtime2/make-fixtures.sh)"
    );
}

/// One mutation of a record log: what it did, for the failure message.
fn mutate(records: &mut Vec<Value>, rng: &mut crate::support::Rng) -> String {
    let n = records.len() as u64;
    let i = rng.below(n) as usize;
    let kind = |r: &Value| r["type"].as_str().unwrap_or_default().to_string();
    // A record of one of `types`, if any.
    let pick = |records: &Vec<Value>, rng: &mut crate::support::Rng, types: &[&str]| {
        let found: Vec<usize> = (0..records.len())
            .filter(|j| types.contains(&records[*j]["type"].as_str().unwrap_or_default()))
            .collect();
        (!found.is_empty()).then(|| found[rng.below(found.len() as u64) as usize])
    };
    match rng.below(12) {
        0 => {
            let r = records.remove(i);
            format!("removed #{i} ({})", kind(&r))
        }
        1 if i + 1 < records.len() => {
            records.swap(i, i + 1);
            format!("swapped #{i} and #{}", i + 1)
        }
        2 => {
            let r = records[i].clone();
            records.insert(i + 1, r);
            format!("repeated #{i} ({}) unchanged", kind(&records[i]))
        }
        3 => {
            let mut r = records[i].clone();
            r["timestamp"] = Value::from("2000-01-01T00:00:00.000Z");
            records.insert(i + 1, r);
            format!(
                "repeated #{i} ({}) with another timestamp",
                kind(&records[i])
            )
        }
        4 => match pick(
            records,
            rng,
            &[
                "user_message",
                "signal",
                "assistant_message_started",
                "tool_results_committed",
            ],
        ) {
            Some(j) => {
                let other = records[rng.below(n) as usize]["messageId"].clone();
                records[j]["parentId"] = if other.is_string() {
                    other
                } else {
                    Value::Null
                };
                format!(
                    "#{j} ({}) parentId → {}",
                    kind(&records[j]),
                    records[j]["parentId"]
                )
            }
            None => "nothing".into(),
        },
        5 => match pick(
            records,
            rng,
            &["assistant_text_delta", "assistant_text_completed"],
        ) {
            Some(j) => {
                let key = if kind(&records[j]) == "assistant_text_delta" {
                    "sequence"
                } else {
                    "deltaCount"
                };
                records[j][key] = Value::from(records[j][key].as_i64().unwrap_or(0) + 1);
                format!("#{j} {key} + 1")
            }
            None => "nothing".into(),
        },
        6 => match pick(
            records,
            rng,
            &["assistant_text_started", "assistant_tool_call"],
        ) {
            Some(j) => {
                records[j]["blockIndex"] = Value::from(if rng.chance(0.5) { -1 } else { 0 });
                format!("#{j} blockIndex → {}", records[j]["blockIndex"])
            }
            None => "nothing".into(),
        },
        7 => {
            records[i]["v"] = Value::from(2);
            format!("#{i} v → 2")
        }
        8 => match pick(records, rng, &["tool_outcome"]) {
            Some(j) => {
                records[j]["toolName"] = Value::from("other_tool");
                format!("#{j} toolName → other_tool")
            }
            None => "nothing".into(),
        },
        9 => match pick(records, rng, &["tool_results_committed"]) {
            Some(j) => {
                if let Some(ids) = records[j]["outcomeIds"].as_array_mut() {
                    ids.reverse();
                }
                format!("#{j} outcomeIds reversed")
            }
            None => "nothing".into(),
        },
        10 => {
            let r = records.remove(i);
            let k = kind(&r);
            records.push(r);
            format!("moved #{i} ({k}) to the end")
        }
        _ => match pick(
            records,
            rng,
            &[
                "user_message",
                "submission_settled",
                "assistant_message_started",
            ],
        ) {
            Some(j) if kind(&records[j]) == "user_message" => {
                let id = records[j]["messageId"]
                    .as_str()
                    .unwrap()
                    .replace("entry_", "e_");
                records[j]["messageId"] = Value::from(id);
                format!("#{j} messageId without its entry_ prefix")
            }
            Some(j) => {
                records[j].as_object_mut().unwrap().remove("submissionId");
                format!("#{j} ({}) without submissionId", kind(&records[j]))
            }
            None => "nothing".into(),
        },
    }
}

/// turnscope's fold of `records` in the brief shape fold-records.mjs prints.
fn our_brief(records: &[Value]) -> Value {
    use turnscope_core::flue2::{InstanceState, Record};
    let parsed: Result<Vec<Record>, _> = records.iter().cloned().map(Record::from_value).collect();
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => return serde_json::json!({ "parse": e.to_string() }),
    };
    let state = match InstanceState::fold(&parsed) {
        Ok(s) => s,
        Err(e) => {
            return serde_json::json!({ "invariant": { "recordId": e.record_id, "recordType": e.record_type, "reason": e.reason } })
        }
    };
    let mut conversations = Vec::new();
    for c in &state.conversations {
        let path = match c.active_path() {
            Ok(p) => p.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
            Err(e) => {
                return serde_json::json!({ "invariant": { "recordId": e.record_id, "recordType": e.record_type, "reason": e.reason } })
            }
        };
        conversations.push(serde_json::json!({
            "conversationId": c.conversation_id,
            "activeLeafId": c.active_leaf_id,
            "entries": c.entries.len(),
            "activePath": path,
            "inProgress": c.in_progress.iter().map(|m| m.message_id.clone()).collect::<Vec<_>>(),
            "uncommitted": c.uncommitted_outcomes.iter().map(|o| o.record_id.clone()).collect::<Vec<_>>(),
        }));
    }
    serde_json::json!({ "ok": conversations })
}

/// turnscope's fold against the runtime's reducer on the fixtures' record logs mutated at
/// random (records removed, swapped, repeated, moved; parents, sequences, block indexes,
/// versions, tool names, outcome order, ids and owners changed): the same state where the
/// runtime folds a log, the same refusal (record, type, reason text) where it refuses one.
#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_fold_refuses_and_accepts_what_the_runtimes_reducer_does() {
    let rt = runtime2("runtime2");
    let mut rng = crate::support::Rng(0x2_1_0);
    let mut cases = Vec::new();
    for (fixture, path, records) in crate::flue2_fold::fixture_streams() {
        cases.push((format!("{fixture} {path} unchanged"), records.clone()));
        for _ in 0..40 {
            let mut mutant = records.clone();
            let mut what = Vec::new();
            for _ in 0..=rng.below(2) {
                if !mutant.is_empty() {
                    what.push(mutate(&mut mutant, &mut rng));
                }
            }
            cases.push((format!("{fixture} {path}: {}", what.join("; ")), mutant));
        }
        // A repeat compared as `JSON.stringify` text: key order counts, a number's form does not.
        if !records.is_empty() {
            let i = records.len() / 2;
            let mut reordered = records.clone();
            let flipped: serde_json::Map<String, Value> = records[i]
                .as_object()
                .unwrap()
                .iter()
                .rev()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            reordered.insert(i + 1, Value::Object(flipped));
            cases.push((
                format!("{fixture} {path}: #{i} repeated, keys reversed"),
                reordered,
            ));
            let mut refloated = records.clone();
            let mut r = records[i].clone();
            r["v"] = Value::from(1.0_f64);
            refloated.insert(i + 1, r);
            cases.push((
                format!("{fixture} {path}: #{i} repeated, v written 1.0"),
                refloated,
            ));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("logs.jsonl");
    let lines: Vec<String> = cases
        .iter()
        .map(|(_, r)| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = Command::new(&rt.node)
        .args(["--no-warnings", "--import"])
        .arg(rt.drivers.join("register-hooks.mjs"))
        .arg(rt.drivers.join("fold-records.mjs"))
        .arg(&file)
        .current_dir(&rt.drivers)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len());
    let (mut refused, mut other, mut differ) = (0, 0, Vec::new());
    let mut reasons = std::collections::BTreeSet::new();
    for ((what, records), runtime) in cases.iter().zip(&answers) {
        if runtime.get("other").is_some() {
            other += 1; // a TypeError inside the runtime: nothing to compare with
            continue;
        }
        if let Some(reason) = runtime.pointer("/invariant/reason").and_then(Value::as_str) {
            refused += 1;
            // The reason without the ids in it.
            reasons.insert(reason.split('"').step_by(2).collect::<Vec<_>>().join("…"));
        }
        let ours = our_brief(records);
        if &ours != runtime {
            differ.push(format!("{what}\n  runtime: {runtime}\n  turnscope: {ours}"));
        }
    }
    eprintln!(
        "{} logs: {refused} refused by the runtime for {} reasons, {other} not comparable, {} differ",
        cases.len(),
        reasons.len(),
        differ.len()
    );
    for r in &reasons {
        eprintln!("  {r}");
    }
    assert!(
        refused > 100,
        "the mutations should break invariants: {refused}"
    );
    assert!(
        cases.len() - refused - other > 100,
        "and keep some logs foldable"
    );
    assert!(reasons.len() >= 10, "{reasons:?}");
    assert!(
        differ.is_empty(),
        "{} of {} differ; first:\n{}",
        differ.len(),
        cases.len(),
        differ
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A change to what the classifier reads: a completion's stop reason, error text or usage, or a
/// tool outcome's terminate flag. The runtime's reducer may refuse the result; then turnscope's
/// fold must too.
fn mutate_for_classifier(records: &mut [Value], rng: &mut crate::support::Rng) -> String {
    const STOPS: [&str; 5] = ["stop", "length", "toolUse", "error", "aborted"];
    const ERRORS: [&str; 14] = [
        "Connection error.",
        "connection reset by peer",
        "529 overloaded_error: Overloaded",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "Throttling error: Too many tokens, please wait before trying again.",
        "429 rate limit reached",
        "invalid_request_error: messages.0.content: unsupported content block type",
        "Provider finish_reason: error",
        "provider finish_reason: error-detail",
        "stream cut (retryable_interruption)",
        "413 (request_too_large) rate limit",
        "prompt has 1,234 tokens, but the configured context size is 1,000 tokens",
        "Range of input length should be [1, 30720]",
        "",
    ];
    let of = |types: &[&str]| -> Vec<usize> {
        (0..records.len())
            .filter(|i| types.contains(&records[*i]["type"].as_str().unwrap_or_default()))
            .collect()
    };
    let completions = of(&["assistant_message_completed"]);
    let outcomes = of(&["tool_outcome"]);
    let pick =
        |from: &[usize], rng: &mut crate::support::Rng| from[rng.below(from.len() as u64) as usize];
    match rng.below(6) {
        0 | 1 if !completions.is_empty() => {
            let i = pick(&completions, rng);
            let stop = STOPS[rng.below(5) as usize];
            records[i]["stopReason"] = stop.into();
            format!("#{i} stopReason {stop}")
        }
        2 if !completions.is_empty() => {
            let i = pick(&completions, rng);
            let n = rng.below(ERRORS.len() as u64 + 1) as usize;
            let o = records[i].as_object_mut().unwrap();
            if n == ERRORS.len() {
                o.remove("error");
                format!("#{i} no error")
            } else {
                o.insert("error".into(), ERRORS[n].into());
                format!("#{i} error {:?}", ERRORS[n])
            }
        }
        3 if !completions.is_empty() => {
            let i = pick(&completions, rng);
            let usage = match rng.below(5) {
                0 => {
                    serde_json::json!({"input": 200_001, "output": 7, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 200_008})
                }
                1 => {
                    serde_json::json!({"input": 150_000, "output": 0, "cacheRead": 48_500, "cacheWrite": 0, "totalTokens": 198_500})
                }
                2 => {
                    serde_json::json!({"input": 150_000, "output": null, "cacheRead": 49_000, "cacheWrite": 0, "totalTokens": 199_000})
                }
                3 => Value::Null,
                _ => {
                    records[i].as_object_mut().unwrap().remove("usage");
                    return format!("#{i} no usage");
                }
            };
            records[i]["usage"] = usage.clone();
            format!("#{i} usage {usage}")
        }
        4 if !outcomes.is_empty() => {
            let i = pick(&outcomes, rng);
            records[i]["terminate"] = true.into();
            format!("#{i} terminates")
        }
        _ => {
            for i in &outcomes {
                records[*i]["terminate"] = true.into();
            }
            "every outcome terminates".into()
        }
    }
}

/// turnscope's answers in the driver's shape (`classify-records.mjs`): per release, the variant
/// it has.
fn our_classification(
    records: &[Value],
    input: &str,
    harness: &str,
    session: &str,
    cw: u64,
) -> Value {
    use turnscope_core::flue2::{
        classify_conversation_submission, ClassifyError, Flue2Variant, InstanceState, Record,
    };
    let parsed: Result<Vec<Record>, _> = records.iter().cloned().map(Record::from_value).collect();
    let Ok(parsed) = parsed else {
        return serde_json::json!({ "fold": "unparsed" });
    };
    let state = match InstanceState::fold(&parsed) {
        Ok(s) => s,
        Err(_) => return serde_json::json!({ "fold": "refused" }),
    };
    let conversation = state.conversation_for_scope(harness, session);
    let mut out = serde_json::Map::new();
    for (release, variant) in [
        ("2.0.0", Flue2Variant::V2_0_0),
        ("2.0.5", Flue2Variant::V2_0_5),
        ("2.1.0", Flue2Variant::V2_0_8),
    ] {
        assert_eq!(Flue2Variant::for_release(release), Some(variant));
        let answer = match classify_conversation_submission(conversation, input, cw, variant) {
            Ok(c) => serde_json::json!({
                "classification": c.to_runtime_json(),
                "trailingPartialToolBatch": c.trailing_partial_batch.map(|b| b.tool_calls.into_iter().map(|c| c.id).collect::<Vec<_>>()),
            }),
            Err(ClassifyError::Type(m)) => {
                serde_json::json!({ "throws": format!("TypeError: {m}") })
            }
            Err(ClassifyError::Fold(e)) => serde_json::json!({ "throws": e.reason }),
        };
        out.insert(release.into(), answer);
    }
    Value::Object(out)
}

/// turnscope's classifier in its three variants against the runtime's own
/// `classifyConversationSubmission` and `findTrailingPartialToolBatch` of 2.0.0, 2.0.5 and 2.1.0
/// on every prefix of every fixture's record log (every state the log passed through, each input
/// of it asked about, and one that is not there) and on mutants of the logs with other stop
/// reasons, error texts, usage and terminate flags: the same answer, the same throw, or both
/// folds (turnscope's and 2.1.0's reducer) refusing.
#[cfg_attr(
    turnscope_no_runtime2,
    ignore = "needs the real flue 2.1.0 runtime: npm is not on PATH or TURNSCOPE_RUNTIME_SKIP is set (tests/runtime2/README.md)"
)]
#[test]
fn the_classifier_answers_as_the_runtimes_on_every_prefix_and_mutant() {
    let rt = runtime2("runtime2");
    let mut rng = crate::support::Rng(0x210c);
    // (what, records, input, harness, session, context window)
    let mut cases: Vec<(String, Vec<Value>, String, String, String, u64)> = Vec::new();
    for (fixture, path, records) in crate::flue2_fold::fixture_streams() {
        let scope = |records: &[Value]| {
            records
                .iter()
                .find(|r| r["type"] == "conversation_created" && r["kind"] == "root")
                .map(|r| {
                    (
                        r["harness"].as_str().unwrap_or("default").to_string(),
                        r["session"].as_str().unwrap_or("default").to_string(),
                    )
                })
                .unwrap_or_else(|| ("default".into(), "default".into()))
        };
        let mut inputs: Vec<String> = records
            .iter()
            .filter_map(|r| r["messageId"].as_str())
            .filter(|id| id.starts_with("entry_dispatch_") || id.starts_with("entry_direct_"))
            .map(String::from)
            .collect();
        inputs.dedup();
        inputs.push("entry_dispatch_bm90LWhlcmU".into());
        for cut in 1..=records.len() {
            for (k, input) in inputs.iter().enumerate() {
                let cw = if (cut + k) % 2 == 0 { 0 } else { 200_000 };
                let (h, s) = scope(&records[..cut]);
                cases.push((
                    format!("{fixture} {path}: the first {cut} records, {input}, window {cw}"),
                    records[..cut].to_vec(),
                    input.clone(),
                    h,
                    s,
                    cw,
                ));
            }
        }
        // The last completion a `stop` without usage: the runtime's classifier throws under a
        // window.
        if let Some(i) = records
            .iter()
            .rposition(|r| r["type"] == "assistant_message_completed")
        {
            let mut mutant = records.clone();
            mutant[i]["stopReason"] = "stop".into();
            mutant[i].as_object_mut().unwrap().remove("usage");
            let (h, s) = scope(&mutant);
            cases.push((
                format!("{fixture} {path}: #{i} a stop without usage"),
                mutant,
                inputs[0].clone(),
                h,
                s,
                200_000,
            ));
        }
        // The last completion a connection error: retryable from 2.0.5 only.
        if let Some(i) = records
            .iter()
            .rposition(|r| r["type"] == "assistant_message_completed")
        {
            let mut mutant = records.clone();
            mutant[i]["stopReason"] = "error".into();
            mutant[i]["error"] = "Connection error.".into();
            let (h, s) = scope(&mutant);
            cases.push((
                format!("{fixture} {path}: #{i} a connection error"),
                mutant,
                inputs[0].clone(),
                h,
                s,
                0,
            ));
        }
        for _ in 0..100 {
            let mut mutant = records.clone();
            let what: Vec<String> = (0..=rng.below(3))
                .map(|_| mutate_for_classifier(&mut mutant, &mut rng))
                .collect();
            let cut = mutant.len() - rng.below(mutant.len().min(4) as u64) as usize;
            let input = inputs[rng.below(inputs.len() as u64) as usize].clone();
            let cw = if rng.chance(0.5) { 0 } else { 200_000 };
            let (h, s) = scope(&mutant[..cut]);
            cases.push((
                format!(
                    "{fixture} {path}: {}, the first {cut} records, {input}, window {cw}",
                    what.join("; ")
                ),
                mutant[..cut].to_vec(),
                input,
                h,
                s,
                cw,
            ));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.jsonl");
    let lines: Vec<String> = cases
        .iter()
        .map(|(_, records, input, h, s, cw)| {
            serde_json::json!({ "records": records, "inputEntryId": input, "harness": h, "session": s, "contextWindow": cw }).to_string()
        })
        .collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = Command::new(&rt.node)
        .args(["--no-warnings", "--import"])
        .arg(rt.drivers.join("register-hooks.mjs"))
        .arg(rt.drivers.join("classify-records.mjs"))
        .arg(&file)
        .current_dir(&rt.drivers)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len());
    let mut differ = Vec::new();
    let (mut refused, mut threw) = (0, 0);
    let mut older_differ = [0usize; 2];
    let mut labels = std::collections::BTreeMap::<String, usize>::new();
    for ((what, records, input, h, s, cw), runtime) in cases.iter().zip(&answers) {
        let ours = our_classification(records, input, h, s, *cw);
        let same = match (runtime.get("fold"), ours.get("fold")) {
            (Some(_), Some(_)) => {
                refused += 1;
                true
            }
            (None, None) => {
                threw += usize::from(runtime["2.1.0"].get("throws").is_some());
                for (i, older) in ["2.0.0", "2.0.5"].into_iter().enumerate() {
                    older_differ[i] += usize::from(runtime[older] != runtime["2.1.0"]);
                }
                if let Some(c) = runtime["2.1.0"].get("classification") {
                    let label = match (
                        c["kind"].as_str(),
                        c["mode"].as_str(),
                        c.get("terminalToolBatch"),
                    ) {
                        (Some(k), Some(m), _) => format!("{k}/{m}"),
                        (Some(k), None, Some(_)) => format!("{k}/terminalToolBatch"),
                        (Some(k), None, None) => k.to_string(),
                        _ => "?".into(),
                    };
                    *labels.entry(label).or_default() += 1;
                }
                &ours == runtime
            }
            _ => false,
        };
        if !same {
            differ.push(format!("{what}\n  runtime: {runtime}\n  turnscope: {ours}"));
        }
    }
    eprintln!(
        "{} cases: {refused} refused by both folds, {threw} throws; 2.1.0's answers: {labels:?}; 2.0.0 and 2.0.5 answer otherwise on {older_differ:?}",
        cases.len()
    );
    assert!(
        differ.is_empty(),
        "{} of {} differ; first:\n{}",
        differ.len(),
        cases.len(),
        differ
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The cases reach the classifier's answers, its throw, and the fold's refusals.
    assert!(threw > 0 && refused > 0, "{threw} {refused}");
    // And tell the variants apart.
    assert!(
        older_differ[0] > older_differ[1] && older_differ[1] > 0,
        "{older_differ:?}"
    );
    for label in [
        "absent",
        "completed",
        "completed/terminalToolBatch",
        "terminal_error",
        "tool_use_unresolved",
        "resume/input_only",
        "resume/tool_results",
        "resume/tool_results_partial",
        "resume/transient_retry",
        "resume/overflow",
        "resume/aborted_partial",
    ] {
        assert!(
            labels.contains_key(label),
            "no case the runtime classified {label}: {labels:?}"
        );
    }
}
