//! The store contract, once, over every backend: what SQLite reads from a journal, PostgreSQL
//! reads identically from an exact copy of it (lists, filters, prefixes, bundles, sessions,
//! phases, fingerprints, audit trail).

use turnscope::report::SubmissionReport;
use turnscope::store::{JournalStore, ListFilter, SqliteStore, StoreError};

use crate::backends::{kinds, TestDb};

/// The demo's clock.
const DEMO_NOW: i64 = 1_796_018_889_175;

#[test]
fn every_read_matches_sqlite_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope::demo::write_demo(&path, DEMO_NOW).unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let reference = SqliteStore::open(&db.sqlite).unwrap();
        let store = db.open();
        assert_eq!(store.schema().schema_version, "3", "{kind:?}");
        for filter in [
            ListFilter::All,
            ListFilter::Expired { now_ms: DEMO_NOW },
            ListFilter::Status("settled".into()),
            ListFilter::Status("queued".into()),
        ] {
            let got = store.list_submissions(&filter).unwrap();
            assert_eq!(
                got,
                reference.list_submissions(&filter).unwrap(),
                "{kind:?} {filter:?}"
            );
        }
        let expired = store
            .list_submissions(&ListFilter::Expired { now_ms: DEMO_NOW })
            .unwrap();
        assert!(expired.len() >= 10, "{kind:?}: the demo has stuck rows");
        assert!(expired
            .iter()
            .all(|r| r.status == "running" && r.lease_expired(DEMO_NOW)));
        assert_eq!(
            store.status_counts().unwrap(),
            reference.status_counts().unwrap()
        );
        // Full ids, unique prefixes, ambiguity and misses.
        let all = store.list_submissions(&ListFilter::All).unwrap();
        for row in &all {
            let id = &row.submission_id;
            assert_eq!(&store.find_submission(id).unwrap(), row);
            let prefix = (4..=id.len())
                .map(|n| &id[..n])
                .find(|p| {
                    all.iter()
                        .filter(|r| r.submission_id.starts_with(p))
                        .count()
                        == 1
                })
                .unwrap();
            assert_eq!(&store.find_submission(prefix).unwrap().submission_id, id);
        }
        assert!(matches!(
            store.find_submission("no-such-id%"),
            Err(StoreError::SubmissionNotFound { .. })
        ));
        assert!(matches!(
            store.find_submission(""),
            Err(StoreError::SubmissionNotFound { .. })
        ));
        // Every bundle: the same report, classification and plan.
        for row in &all {
            let got = SubmissionReport::load(store.reader(), &row.submission_id, None, DEMO_NOW)
                .unwrap()
                .to_json();
            let want = SubmissionReport::load(&reference, &row.submission_id, None, DEMO_NOW)
                .unwrap()
                .to_json();
            assert_eq!(got, want, "{kind:?} {}", row.submission_id);
        }
        // Sessions, phases, fingerprints.
        let sessions = store.list_sessions().unwrap();
        assert_eq!(sessions, reference.list_sessions().unwrap(), "{kind:?}");
        for s in &sessions {
            let got = store.load_session(&s.id).unwrap().unwrap();
            let want = reference.load_session(&s.id).unwrap().unwrap();
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{kind:?} {}", s.id);
        }
        assert!(store
            .load_session("agent-session:nobody")
            .unwrap()
            .is_none());
        assert_eq!(
            store.journal_phases().unwrap(),
            reference.journal_phases().unwrap()
        );
        let row = &expired[0];
        let fp = store
            .bundle_fingerprint(&row.submission_id, &row.session_key)
            .unwrap();
        assert_eq!(
            fp,
            store
                .bundle_fingerprint(&row.submission_id, &row.session_key)
                .unwrap()
        );
        db.exec(&format!(
            "UPDATE flue_agent_turn_journals SET revision = revision + 1 WHERE submission_id = '{}'",
            row.submission_id
        ));
        assert_ne!(
            fp,
            store
                .bundle_fingerprint(&row.submission_id, &row.session_key)
                .unwrap(),
            "{kind:?}: a journal change shows in the fingerprint"
        );
        assert!(store.audit_records().unwrap().is_empty());
    }
}
