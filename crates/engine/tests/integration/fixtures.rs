//! Databases written by the real runtime, crashed at chosen points (tests/fixtures/flue-beta7,
//! README there). For every submission, turnscope's classification, coarse inspection, trailing
//! partial batch and journal phase must equal what the runtime itself recorded in the manifest
//! (context window 200000).

use serde_json::{json, Value};
use turnscope_core::journal::entry::Role;
use turnscope_core::recovery::reconciler::{PlannedWrite, RuleResult};
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, SqliteStore};

use turnscope_testkit::{manifest, unpack_fixture};

fn db_name(manifest_db: &str) -> &str {
    match manifest_db {
        "large.db" => "large-tail",
        other => other.trim_end_matches(".db"),
    }
}

#[test]
fn every_fixture_submission_matches_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest();
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in m["fixtures"].as_array().unwrap() {
        let name = db_name(fixture["db"].as_str().unwrap());
        let path = unpack_fixture(dir.path(), name);
        let store = SqliteStore::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The manifest was written when every lease had just expired.
        let now = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
        for expected in fixture["submissions"].as_array().unwrap() {
            let id = expected["submissionId"].as_str().unwrap();
            let r = SubmissionReport::load(&store, id, Some(200_000), now).unwrap();
            let c = r.classification();
            let got_batch = c.trailing_partial_batch.as_ref().map_or(Value::Null, |b| {
                json!(b
                    .tool_calls
                    .iter()
                    .map(|t| t.id.clone())
                    .collect::<Vec<_>>())
            });
            let want_batch = expected["trailingPartialToolBatch"].clone();
            // The manifest adds the last assistant's stopReason next to the runtime's result.
            let mut want_class = expected["classification"].clone();
            let want_stop = want_class
                .as_object_mut()
                .unwrap()
                .remove("assistantStopReason");
            let got_stop = r
                .following()
                .unwrap_or_default()
                .iter()
                .rev()
                .find_map(|e| e.message_with_role(&Role::Assistant))
                .and_then(|m| m.stop_reason().map(|s| Value::from(s.to_string())));
            let got_phase = r
                .bundle
                .journal
                .as_ref()
                .map_or("none".to_string(), |j| j.phase.to_string());
            let checks = [
                ("classification", c.state.to_runtime_json(), want_class),
                // (present in the manifest except for terminal errors, whose reason says it all)
                (
                    "assistant stopReason",
                    want_stop.as_ref().and(got_stop).unwrap_or(Value::Null),
                    want_stop.unwrap_or(Value::Null),
                ),
                (
                    "inspection",
                    Value::from(c.state.inspection().as_str()),
                    expected["inspection"].clone(),
                ),
                ("trailing batch", got_batch, want_batch),
                (
                    "journal phase",
                    Value::from(got_phase),
                    expected["journalPhase"].clone(),
                ),
                (
                    "status",
                    Value::from(r.row().status.to_string()),
                    expected["status"].clone(),
                ),
            ];
            for (what, got, want) in checks {
                if got != want {
                    failures.push(format!(
                        "{name} #{}: {what}: turnscope {got}, runtime {want}",
                        expected["sequence"]
                    ));
                }
            }
            checked += 1;
        }
        assert!(store.schema().schema_version == "3", "{name}");
    }
    assert!(checked >= 20, "only {checked} submissions checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The planner against what the real runtime *did* when restarted on each fixture
/// (`resume-reports/`): a planned completion settles without a new attempt, a replacement or requeue
/// runs a new attempt, a planned failure fails with exactly the error text the runtime stored.
#[test]
fn plans_match_what_the_runtime_did_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    let m = manifest();
    let reports = turnscope_testkit::fixtures_dir().join("flue-beta7/resume-reports");
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in m["fixtures"].as_array().unwrap() {
        let name = db_name(fixture["db"].as_str().unwrap());
        let Ok(text) = std::fs::read_to_string(reports.join(format!("{name}.json"))) else {
            continue; // large.db has no resume report
        };
        let report: Value = serde_json::from_str(&text).unwrap();
        let path = unpack_fixture(dir.path(), name);
        let store = SqliteStore::open(&path).unwrap();
        let now = fixture["maxLeaseExpiresAt"].as_i64().unwrap() + 1;
        for did in report["submissions"].as_array().unwrap() {
            if did["statusBefore"] != "running" {
                continue;
            }
            let id = did["submissionId"].as_str().unwrap();
            let r = SubmissionReport::load(&store, id, Some(200_000), now).unwrap();
            let plan = &r.plan;
            let more_attempts =
                did["attemptCountAfter"].as_i64() > did["attemptCountBefore"].as_i64();
            let ok = match plan.result {
                Some(RuleResult::Completed) => did["outcome"] == "completed" && !more_attempts,
                Some(RuleResult::Replacement | RuleResult::Requeued) => more_attempts,
                Some(RuleResult::Failed) => {
                    let planned_error = plan.writes.iter().find_map(|w| match w {
                        PlannedWrite::FailSubmission { error } => Some(error.clone()),
                        _ => None,
                    });
                    did["outcome"] == "failed"
                        && !more_attempts
                        && (r.row().is_direct()
                            || planned_error.as_deref() == did["error"].as_str())
                }
                _ => false,
            };
            if !ok {
                failures.push(format!(
                    "{name} {id}: planned rule {:?} ({:?}: {}), runtime did {} with attempts {} -> {} error {}",
                    plan.rule, plan.result, plan.reason, did["outcome"], did["attemptCountBefore"], did["attemptCountAfter"], did["error"]
                ));
            }
            checked += 1;
        }
    }
    assert!(checked >= 17, "only {checked} submissions checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
