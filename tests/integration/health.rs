//! Session health (`engine::report::health`, `turnscope health`): a journal with one session per
//! finding kind (built with turnscope-testkit), each judged through the store as the CLI reads it,
//! on SQLite and PostgreSQL; the CLI's text, `turnscope.health/1`, its exit codes; and the
//! real runtime's crash fixtures, whose unresolved calls must be exactly those the runtime's own
//! classifier left unresolved (the manifest).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::backends::{kinds, TestDb};
use crate::cli_export::db_arg;
use crate::support::{fixtures_dir, manifest, turnscope_command, unpack_db};
use turnscope_core::recovery::health::Hazard;
use turnscope_engine::report::health::{scan, session_health, SessionHealth};
use turnscope_testkit::{JournalBuilder, SessionBuilder, Submission};

const T: i64 = 1_795_000_000_000;

fn input(sub: &str) -> (Value, Vec<(&'static str, Value)>) {
    (
        turnscope_demo::shapes::dispatch_signal("{}", json!({"dispatchId": sub}), T),
        vec![("dispatch", json!({"dispatchId": sub}))],
    )
}

fn asst(stop: &str, content: Value) -> Value {
    json!({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
           "model": "claude-haiku-4-5", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
           "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": stop, "timestamp": T})
}

fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "toolCall", "id": id, "name": name, "arguments": args})
}

fn result(id: &str, name: &str) -> Value {
    turnscope_demo::shapes::tool_result(id, name, "ok", Some(json!({})), false, T)
}

fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

fn signal(kind: &str) -> Value {
    json!({"role": "signal", "type": kind, "content": "x", "attributes": {"streamKey": "k"}, "timestamp": T})
}

/// Each session: its instance, the kinds it must show, and how it is built. Every session
/// starts with the input of a settled submission `sub-<instance>`.
type Shape = (
    &'static str,
    &'static [&'static str],
    fn(&mut SessionBuilder),
);

fn shapes() -> Vec<Shape> {
    vec![
        ("healthy", &[], |s| {
            s.message(
                "a1",
                asst("toolUse", json!([call("c1", "get", json!({"q": 1}))])),
            );
            s.message("r1", result("c1", "get"));
            s.message("a2", asst("stop", text("done")));
        }),
        ("leaf-batch", &["unresolved_calls"], |s| {
            s.message("a1", asst("stop", text("earlier")));
            s.message(
                "a2",
                asst(
                    "toolUse",
                    json!([
                        call("c1", "charge_card", json!({"amountCents": 8900})),
                        call("c2", "send_email", json!({"to": "x@example.com"}))
                    ]),
                ),
            );
            s.message("r1", result("c1", "charge_card"));
        }),
        ("later-turns", &["unresolved_calls"], |s| {
            s.message(
                "a1",
                asst("toolUse", json!([call("c1", "get", json!({"id": 7}))])),
            );
            let (m, x) = input("sub-later-turns-2");
            s.message_with("in2", m, x);
            s.message("a2", asst("stop", text("answered without it")));
        }),
        ("failure-signal", &["unresolved_calls"], |s| {
            s.message(
                "a1",
                asst("toolUse", json!([call("c1", "get", json!({"id": 8}))])),
            );
            s.message("si", signal("submission_interrupted"));
        }),
        ("one-turn-after", &["unresolved_calls"], |s| {
            s.message(
                "a1",
                asst("toolUse", json!([call("c1", "get", json!({"id": 9}))])),
            );
            s.message("a2", asst("stop", text("answered without it")));
        }),
        ("mismatched", &["mismatched_batch"], |s| {
            s.message(
                "a1",
                asst(
                    "toolUse",
                    json!([call("c1", "get", json!({})), call("c2", "put", json!({}))]),
                ),
            );
            s.message("r2", result("c2", "put"));
            s.message("r1", result("c1", "get"));
            s.message("a2", asst("stop", text("x")));
        }),
        ("orphaned", &["orphaned_result"], |s| {
            s.message("r0", result("nobody", "get"));
            s.message("a2", asst("stop", text("x")));
        }),
        ("duplicate", &["duplicate_call_id"], |s| {
            s.message("a1", asst("toolUse", json!([call("c1", "get", json!({}))])));
            s.message("r1", result("c1", "get"));
            s.message("a2", asst("toolUse", json!([call("c1", "get", json!({}))])));
            s.message("r2", result("c1", "get"));
            s.message("a3", asst("stop", text("x")));
        }),
        ("in-progress", &["in_progress_assistant"], |s| {
            let mut m = asst("stop", text("half an answer"));
            m.as_object_mut().unwrap().remove("stopReason");
            s.message("a1", m);
        }),
        ("empty", &["empty_assistant"], |s| {
            s.message("a1", asst("stop", json!([])));
        }),
        ("continued", &["dropped_partial"], |s| {
            s.message("p", asst("aborted", text("The report concerns a")));
            s.message("si", signal("stream_interrupted"));
            s.message("sc", signal("stream_continued"));
            s.message("a2", asst("stop", text("The report concerns a refund.")));
        }),
    ]
}

/// A session of `instance` whose data the runtime loads (valid conversation and affinity ids).
fn session(instance: &str) -> SessionBuilder {
    SessionBuilder::for_instance(instance, T).ids(
        "conv_01KT0000000000000000000000",
        "aff_01KT0000000000000000000000",
    )
}

fn key_of(instance: &str) -> String {
    format!("agent-session:{}", json!([instance, "default", "default"]))
}

/// The journal of [`shapes`], plus one session whose leaf names no entry.
fn journal(path: &Path) {
    let mut j = JournalBuilder::new();
    for (instance, _, build) in shapes() {
        let mut s = session(instance);
        let sub = format!("sub-{instance}");
        let (m, x) = input(&sub);
        s.message_with("in", m, x);
        build(&mut s);
        j.submission(
            Submission::dispatch(&sub, s.key(), "agent", instance, &json!({}), T)
                .claimed("att", "w", T + 1, T + 30_000)
                .input_applied(T + 1)
                .settled(T + 5, None),
        );
        if instance == "later-turns" {
            let sub2 = "sub-later-turns-2";
            j.submission(
                Submission::dispatch(sub2, s.key(), "agent", instance, &json!({}), T + 10)
                    .claimed("att2", "w", T + 11, T + 30_000)
                    .input_applied(T + 11)
                    .settled(T + 15, None),
            );
        }
        j.session(s);
    }
    j.write(path).unwrap();
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut broken = session("broken");
    broken.message("b1", asst("stop", text("x")));
    JournalBuilder::new()
        .session(broken)
        .append_to(path)
        .unwrap();
    conn.execute(
        "UPDATE flue_sessions SET data = json_set(data, '$.leafId', 'gone') WHERE id = ?1",
        [key_of("broken")],
    )
    .unwrap();
}

fn kinds_of(h: &SessionHealth) -> Vec<&'static str> {
    h.findings.iter().map(|f| f.hazard.kind()).collect()
}

#[test]
fn every_finding_kind_is_found_with_its_submission_effect_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("health.db");
    journal(&path);
    for kind in kinds() {
        let tdb = TestDb::from_sqlite(kind, &path);
        let store = turnscope_store::open(&tdb.target).unwrap();
        for (instance, expected, _) in shapes() {
            let h = session_health(store.reader(), &key_of(instance))
                .unwrap()
                .unwrap();
            assert_eq!(kinds_of(&h), *expected, "{kind:?} {instance}: {h:#?}");
            for f in &h.findings {
                let owner = f
                    .submission
                    .as_ref()
                    .expect("every finding follows an input");
                assert_eq!(owner.status, "settled", "{instance}");
                assert!(!f.effect.is_empty());
            }
        }
        let h = session_health(store.reader(), &key_of("broken"))
            .unwrap()
            .unwrap();
        assert_eq!(kinds_of(&h), ["unreadable"], "{kind:?}");

        // The batch at the leaf behind a settled submission: tool, arguments, what is missing,
        // and that it can be completed in place.
        let leaf = session_health(store.reader(), &key_of("leaf-batch"))
            .unwrap()
            .unwrap();
        let f = &leaf.findings[0];
        let Hazard::UnresolvedCalls {
            calls,
            missing,
            at_leaf,
            ..
        } = &f.hazard
        else {
            unreachable!()
        };
        assert_eq!(missing, &["c2"]);
        assert_eq!(calls[1].name, "send_email");
        assert_eq!(calls[1].arguments, Some(json!({"to": "x@example.com"})));
        assert_eq!(calls[0].arguments, Some(json!({"amountCents": 8900})));
        assert!(*at_leaf);
        assert_eq!(f.submission.as_ref().unwrap().id, "sub-leaf-batch");
        assert!(f.repair.as_ref().unwrap().in_place, "{f:#?}");
        // With later turns: not in place, and the effect says what the model saw.
        let later = session_health(store.reader(), &key_of("later-turns"))
            .unwrap()
            .unwrap();
        let f = &later.findings[0];
        assert!(!f.repair.as_ref().unwrap().in_place);
        assert!(
            f.effect.contains("2 later entries") && f.effect.contains("without this batch"),
            "{}",
            f.effect
        );
        let why = &f.repair.as_ref().unwrap().why;
        assert!(why.starts_with("2 later entries follow the batch"), "{why}");
        let one = session_health(store.reader(), &key_of("one-turn-after"))
            .unwrap()
            .unwrap();
        let why = &one.findings[0].repair.as_ref().unwrap().why;
        assert!(why.starts_with("1 later entry follows the batch"), "{why}");
        // Only the runtime's failure signal after it: no turn was built since; it is named,
        // and the next turn is the one that leaves the batch out.
        let signal = session_health(store.reader(), &key_of("failure-signal"))
            .unwrap()
            .unwrap();
        let f = &signal.findings[0];
        let note = f.repair.as_ref().unwrap();
        assert!(!note.in_place);
        assert!(
            f.effect.ends_with(
                "; followed on the active path by its failure signal (submission_interrupted): \
                 the runtime's next turn will leave the whole batch out"
            ) && !f.effect.contains("without this batch"),
            "{}",
            f.effect
        );
        assert!(
            note.why.starts_with(
                "the runtime's entries follow the batch on the active path (its failure signal \
                 (submission_interrupted)): results appended now would branch away from them, \
                 so it cannot be repaired in place"
            ) && note
                .why
                .contains("the runtime's next turn will leave the whole batch out"),
            "{}",
            note.why
        );
        // The whole journal, one session at a time.
        let mut seen = Vec::new();
        scan(
            store.reader(),
            &mut shapes().iter().map(|s| key_of(s.0)),
            &mut |h| {
                seen.push(h.session.clone());
                true
            },
        )
        .unwrap();
        assert_eq!(seen.len(), shapes().len());
    }
}

fn health(db: &str, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(db)
        .arg("health")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn cli_health_lists_findings_in_text_and_json_with_its_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("health.db");
    journal(&path);
    for kind in kinds() {
        let tdb = TestDb::from_sqlite(kind, &path);
        let db = db_arg(&tdb.target);
        let o = health(&db, &["--all", "--json"]);
        assert_eq!(
            o.status.code(),
            Some(8),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["schema"], "turnscope.health/1");
        assert_eq!(doc["totals"]["sessions"], shapes().len() + 1);
        // Every kind as often as the shapes hold it (the broken session: unreadable), the
        // healthy session not listed.
        for k in Hazard::KINDS {
            // Text that is not UTF-8 is not a shape the journal builder makes (nor one
            // PostgreSQL holds): `damaged::non_utf8_text_is_read_as_the_runtime_reads_it_and_
            // blocks_writes` counts that kind.
            if k == "not_utf8" {
                assert_eq!(doc["totals"]["byKind"][k], 0, "{doc:#}");
                continue;
            }
            let expected = shapes().iter().filter(|s| s.1.contains(&k)).count()
                + usize::from(k == "unreadable");
            assert!(expected > 0, "{k}: a kind without a shape");
            assert_eq!(
                doc["totals"]["byKind"][k], expected,
                "{kind:?} {k}: {doc:#}"
            );
        }
        let listed: Vec<&str> = doc["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session"].as_str().unwrap())
            .collect();
        assert_eq!(listed.len(), shapes().len());
        assert!(!listed.contains(&key_of("healthy").as_str()));
        let leaf = doc["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["instance"] == "leaf-batch")
            .unwrap();
        let f = &leaf["findings"][0];
        assert_eq!(f["kind"], "unresolved_calls");
        assert_eq!(
            f["submission"],
            json!({"id": "sub-leaf-batch", "status": "settled"})
        );
        assert_eq!(f["calls"][1]["arguments"], json!({"to": "x@example.com"}));
        assert_eq!(f["repair"]["inPlace"], true);

        // Text: named by instance; a healthy session exits 0 and says so.
        let o = health(&db, &["leaf-batch"]);
        assert_eq!(o.status.code(), Some(8));
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(
            out.contains("‼ unresolved_calls at entry a2")
                && out.contains("send_email (c2) {\"to\":\"x@example.com\"}: no result")
                && out.contains("repair: repairable in place"),
            "{out}"
        );
        let o = health(&db, &["healthy"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8(o.stdout).unwrap();
        assert!(
            out.ends_with("healthy: no finding in 1 session (4 entries)\n"),
            "{out}"
        );
        // A submission id names its session.
        let o = health(&db, &["sub-empty", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(doc["sessions"][0]["findings"][0]["kind"], "empty_assistant");
        // Usage and not found.
        assert_eq!(health(&db, &[]).status.code(), Some(2));
        assert_eq!(health(&db, &["--all", "healthy"]).status.code(), Some(2));
        assert_eq!(health(&db, &["no-such-thing-here"]).status.code(), Some(4));
    }
}

/// The unresolved calls the runtime's own classifier left on each crash fixture (the manifest):
/// the calls of the last assistant where it says `tool_use_unresolved`, the calls of its
/// trailing partial batch without a result in `following` where it says `tool_results_partial`.
fn unresolved_in_manifest(fixture: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in fixture["submissions"].as_array().unwrap() {
        let c = &s["classification"];
        let following = s["following"].as_array().cloned().unwrap_or_default();
        let recorded: BTreeSet<&str> = following
            .iter()
            .filter(|e| e["role"] == "toolResult")
            .filter_map(|e| e["toolCallId"].as_str())
            .collect();
        if c["kind"] == "tool_use_unresolved" {
            let last = following
                .iter()
                .rev()
                .find(|e| e["role"] == "assistant")
                .unwrap();
            for id in last["toolCalls"].as_array().unwrap() {
                out.insert(id.as_str().unwrap().to_string());
            }
        } else if c["mode"] == "tool_results_partial" {
            for id in s["trailingPartialToolBatch"].as_array().unwrap() {
                let id = id.as_str().unwrap();
                if !recorded.contains(id) {
                    out.insert(id.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn the_crash_fixtures_unresolved_calls_are_the_runtime_classifiers() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest();
    let fixtures = m["fixtures"].as_array().unwrap();
    let mut with_findings = 0;
    for fx in fixtures {
        // `large.db` is committed as its stuck part, `large-tail` (tests/fixtures/README.md).
        let name = match fx["db"].as_str().unwrap() {
            "large.db" => "large-tail",
            db => db.trim_end_matches(".db"),
        };
        let path = unpack_db("flue-beta7", name, dir.path());
        let o = health(path.to_str().unwrap(), &["--all", "--json"]);
        let doc: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&o.stderr)));
        let mut found = BTreeSet::new();
        for s in doc["sessions"].as_array().unwrap() {
            for f in s["findings"].as_array().unwrap() {
                // The crash fixtures hold nothing but the crash's own batch.
                assert_eq!(f["kind"], "unresolved_calls", "{name}: {f:#}");
                for id in f["missing"].as_array().unwrap() {
                    found.insert(id.as_str().unwrap().to_string());
                }
                // Each is left by a running submission: the runtime's recovery completes it.
                assert_eq!(f["submission"]["status"], "running", "{name}");
                assert_eq!(f["repair"]["inPlace"], false, "{name}");
            }
        }
        let expected = unresolved_in_manifest(fx);
        assert_eq!(found, expected, "{name}");
        let code = if expected.is_empty() { 0 } else { 8 };
        assert_eq!(o.status.code(), Some(code), "{name}");
        with_findings += usize::from(!expected.is_empty());
    }
    // The manifest has crashes inside a tool batch (not a vacuous check).
    assert!(with_findings >= 3, "{with_findings}");
    assert!(fixtures_dir().join("flue-beta7").is_dir());
}

fn turnscope(db: &str, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .args(["--db", db, "--operator", "health-test"])
        .args(args)
        .output()
        .unwrap()
}

/// The unresolved batch a settled submission left at the leaf: `repair` writes the runtime's own
/// rows (the recorded result copied, its `interrupted` result for the call without one), after
/// a preview, with the side effects acknowledged, audited; health then finds nothing, and the
/// undo brings the finding back. A batch with later turns is refused.
#[test]
fn a_settled_submissions_leaf_batch_is_repaired_in_place_and_undone() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        // A journal of its own for each backend: the SQLite run writes to its file.
        let path = dir.path().join(format!("health-{kind:?}.db"));
        journal(&path);
        let tdb = TestDb::from_sqlite(kind, &path);
        let db = db_arg(&tdb.target);
        // The preview names the batch and the call that may have run.
        let o = turnscope(&db, &["--write", "repair", "sub-leaf-batch", "--dry-run"]);
        let preview = String::from_utf8_lossy(&o.stdout);
        assert!(
            preview.contains("the settled submission left at the session's leaf")
                && preview.contains("c2 send_email {\"to\":\"x@example.com\"}")
                && preview.contains("dry run: nothing written"),
            "{kind:?}: {preview}"
        );
        // Without the acknowledgment the calls that may have run refuse it (nothing written).
        let o = turnscope(&db, &["--write", "repair", "sub-leaf-batch", "-y"]);
        assert_eq!(
            o.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(health(&db, &["leaf-batch"]).status.code(), Some(8));
        let o = turnscope(
            &db,
            &[
                "--write",
                "repair",
                "sub-leaf-batch",
                "-y",
                "--ack-side-effects",
                "--json",
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let o = health(&db, &["leaf-batch", "--json"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        // What was written: the path now ends with the copy of c1's result and the runtime's
        // interrupted result for c2, under the assistant.
        let store = turnscope_store::open(&tdb.target).unwrap();
        let rec = store.load_session(&key_of("leaf-batch")).unwrap().unwrap();
        let h = turnscope_core::journal::history::History::new(rec.entries.clone(), rec.leaf_id);
        let path_now = h.active_path();
        let tail: Vec<&str> = path_now
            .iter()
            .rev()
            .take(3)
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(tail[2], "a2", "{kind:?}");
        let last = path_now.last().unwrap().message().unwrap();
        assert_eq!(last.tool_call_id_str(), Some("c2"));
        assert_eq!(last.text(), turnscope_engine::actions::INTERRUPTED_TEXT);
        let copied = path_now[path_now.len() - 2].message().unwrap();
        assert_eq!(copied.tool_call_id_str(), Some("c1"));
        assert!(!copied.is_error());
        // Undone: the finding is back.
        let o = turnscope(&db, &["--write", "undo", "1", "-y"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{kind:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(health(&db, &["leaf-batch"]).status.code(), Some(8));
        // Later entries follow the other batches: refused with health's reason (not the
        // generic refusal of a row that is not running), nothing written.
        for (sub, instance, reason) in [
            (
                "sub-later-turns",
                "later-turns",
                "2 later entries follow the batch on the active path",
            ),
            (
                "sub-failure-signal",
                "failure-signal",
                "the runtime's entries follow the batch on the active path (its failure signal \
                 (submission_interrupted))",
            ),
        ] {
            let o = turnscope(&db, &["--write", "repair", sub, "-y", "--ack-side-effects"]);
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(o.status.code(), Some(3), "{kind:?}: {said}");
            assert!(
                said.contains("its unresolved batch (assistant a1) is not at the session's leaf")
                    && said.contains(reason)
                    && !said.contains("only running submissions"),
                "{kind:?}: {said}"
            );
            assert_eq!(health(&db, &[instance]).status.code(), Some(8));
        }
    }
}
