//! The live-runtime warning says what the runtime's reconciler would do with a submission as it
//! stands: reconcile it within 15 s only where its lease expired within one pass.

use turnscope_engine::actions::live::next_pass;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, RowFilter, SqliteStore};
use turnscope_testkit::{manifest, unpack_fixture};

#[test]
fn within_15_s_only_for_a_lease_that_expired_within_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let path = unpack_fixture(dir.path(), "tool-batch-mid");
    let store = SqliteStore::open(&path).unwrap();
    let fixture = manifest()["fixtures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["db"] == "tool-batch-mid.db")
        .cloned()
        .unwrap();
    let expired_at = fixture["maxLeaseExpiresAt"].as_i64().unwrap();
    let row = store
        .list_submissions(RowFilter::Expired, expired_at + 1)
        .unwrap()
        .into_iter()
        .next()
        .expect("a stuck submission");
    let (id, expired_at) = (row.submission_id.clone(), row.lease_expires_at);
    let lease = |r: &SubmissionReport| r.row().lease_expires_at;

    let fresh = SubmissionReport::load(&store, &id, Some(200_000), expired_at + 1).unwrap();
    assert!(lease(&fresh) < fresh.now_ms && fresh.plan.rule.is_some());
    let said = next_pass(&fresh);
    assert!(
        said.contains("within 15 s it would reconcile this submission itself: rule"),
        "{said}"
    );

    let now = lease(&fresh) + 2 * 3_600_000;
    let old = SubmissionReport::load(&store, &id, Some(200_000), now).unwrap();
    let said = next_pass(&old);
    assert!(!said.contains("within 15 s"), "{said}");
    assert!(
        said.contains("lease expired 2h00m ago and it is still running: the live runtime has not reconciled it"),
        "{said}"
    );
    assert!(
        said.contains(&format!("would apply rule {}", old.plan.rule.unwrap())),
        "{said}"
    );
}
