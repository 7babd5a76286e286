//! The store contract, once, over every backend: what SQLite reads from a journal, PostgreSQL
//! reads identically from an exact copy of it (lists, filters, prefixes, bundles, sessions,
//! phases, fingerprints, audit trail).

use turnscope_core::journal::status::SubmissionStatus;
use turnscope_engine::report::{Previews, SubmissionReport};
use turnscope_store::{JournalStore, RowFilter, RowPage, SqliteStore, StoreError};

use crate::backends::{kinds, TestDb};

/// The demo's clock.
const DEMO_NOW: i64 = 1_796_018_889_175;

#[test]
fn every_read_matches_sqlite_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let reference = SqliteStore::open(&db.sqlite).unwrap();
        let store = db.open();
        assert_eq!(store.schema().schema_version, "3", "{kind:?}");
        for filter in RowFilter::all() {
            let got = store.list_submissions(filter, DEMO_NOW).unwrap();
            assert_eq!(
                got,
                reference.list_submissions(filter, DEMO_NOW).unwrap(),
                "{kind:?} {filter:?}"
            );
            // Row by row as they are read: the same rows in the same order.
            let mut visited = Vec::new();
            let last = store
                .for_each_submission(filter, DEMO_NOW, RowPage::WHOLE, &mut |r| visited.push(r))
                .unwrap();
            assert_eq!(visited, got, "{kind:?} {filter:?}");
            // The last row read: the last listed, or a later one PostgreSQL's SQL took and Rust
            // refined away (`failed`).
            assert!(
                got.last().is_none_or(|r| last >= Some(r.sequence)),
                "{kind:?} {filter:?}: {last:?}"
            );
            // In pages, each after the last row of the one before: the same rows again, and
            // a page after the last row reads none.
            for size in [1, 3, 7] {
                let (mut paged, mut after, mut pages) = (Vec::new(), None, 0);
                while let Some(last) = store
                    .for_each_submission(
                        filter,
                        DEMO_NOW,
                        RowPage {
                            after,
                            rows: Some(size),
                        },
                        &mut |r| paged.push(r),
                    )
                    .unwrap()
                {
                    assert!(after.is_none_or(|a| last > a), "{kind:?} {filter:?}");
                    after = Some(last);
                    pages += 1;
                }
                assert_eq!(paged, got, "{kind:?} {filter:?} pages of {size}");
                // A row PostgreSQL's SQL takes and Rust then refines away (`failed`) fills its
                // page too: at least one page per `size` rows listed.
                assert!(
                    pages >= got.len().div_ceil(size),
                    "{kind:?} {filter:?} {size}"
                );
            }
        }
        let expired = store
            .list_submissions(RowFilter::Expired, DEMO_NOW)
            .unwrap();
        assert!(expired.len() >= 10, "{kind:?}: the demo has stuck rows");
        assert!(expired
            .iter()
            .all(|r| r.status == SubmissionStatus::Running && r.lease_expired(DEMO_NOW)));
        assert_eq!(
            store.status_counts().unwrap(),
            reference.status_counts().unwrap()
        );
        // Full ids, unique prefixes, ambiguity and misses.
        let all = store.list_submissions(RowFilter::All, 0).unwrap();
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

/// The lazy paths (the list scan walking back from the leaf, the compact whole-session read, one
/// entry's stored text fetched by id) and the TUI list's server-side queries, on every backend:
/// the same answers as SQLite's, and the scan's verdicts equal to a whole read's.
#[test]
fn lazy_reads_and_list_queries_match_sqlite_on_the_demo() {
    use turnscope_store::{fetch_full, fetch_previews, ListQueries, PathWalker};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let reference = SqliteStore::open(&db.sqlite).unwrap();
        let store = db.open();
        let all = store.list_submissions(RowFilter::All, 0).unwrap();
        let mut walker = PathWalker::new(false);
        let mut ref_walker = PathWalker::new(false);
        let mut previews_read = 0;
        for row in &all {
            let id = &row.submission_id;
            let whole = SubmissionReport::load(&reference, id, None, DEMO_NOW).unwrap();
            let scan =
                SubmissionReport::scan(store.reader(), id, &mut walker, None, DEMO_NOW).unwrap();
            let ref_scan =
                SubmissionReport::scan(&reference, id, &mut ref_walker, None, DEMO_NOW).unwrap();
            assert_eq!(scan.to_json(), ref_scan.to_json(), "{kind:?} scan {id}");
            assert_eq!(
                scan.verdict(),
                whole.verdict(),
                "{kind:?} scan verdict {id}"
            );
            assert_eq!(
                format!("{:?}", scan.plan),
                format!("{:?}", whole.plan),
                "{kind:?} scan plan {id}"
            );
            let compact =
                SubmissionReport::load_compact(store.reader(), id, None, DEMO_NOW, Previews::Drop)
                    .unwrap();
            assert_eq!(compact.to_json(), whole.to_json(), "{kind:?} compact {id}");
            // Every compact entry's stored text, fetched by id, is the stored bytes.
            let rows = store.session_rows().expect("row access");
            if let Some(s) = compact.bundle.session.as_ref() {
                for e in s.entries.iter().filter(|e| e.compact) {
                    let full = fetch_full(rows, &s.id, &e.id).unwrap().expect("entry");
                    let want = fetch_full(&reference, &s.id, &e.id)
                        .unwrap()
                        .expect("entry");
                    assert_eq!(full.raw, want.raw, "{kind:?} {} {}", s.id, e.id);
                    assert!(!full.raw.is_empty());
                }
                // Their previews, read in one go, are what a read keeping them holds; an id
                // that is not there, or a row that moved, has none.
                let kept =
                    SubmissionReport::load_compact(&reference, id, None, DEMO_NOW, Previews::Keep)
                        .unwrap();
                let kept = kept.bundle.session.as_ref().expect("the same session");
                let mut wanted: Vec<(String, i64)> = s
                    .entries
                    .iter()
                    .filter(|e| e.compact && e.message().is_some())
                    .map(|e| (e.id.to_string(), e.position))
                    .collect();
                wanted.push(("no-such-entry".into(), 0));
                if let Some((id, position)) = wanted.first().cloned() {
                    wanted.push((id, position + 1_000));
                }
                let got = fetch_previews(rows, &s.id, &wanted).unwrap();
                assert_eq!(got.len(), wanted.len(), "{kind:?}");
                for ((id, position, text), (want_id, want_position)) in got.iter().zip(&wanted) {
                    assert_eq!((id, position), (want_id, want_position));
                    let want = kept
                        .entries
                        .iter()
                        .find(|k| k.id == *id && k.position == *position)
                        .and_then(|k| k.message())
                        .map(|m| m.text());
                    assert_eq!(text.as_deref(), want.as_deref(), "{kind:?} preview {id}");
                    previews_read += usize::from(text.as_deref().is_some_and(|t| !t.is_empty()));
                }
            }
        }
        assert!(
            previews_read > 20,
            "{kind:?}: {previews_read} previews with text"
        );
        // The list queries: each filter's SQL selects exactly the rows its Rust predicate accepts.
        for rows in RowFilter::all() {
            let got = store.submissions_where(rows, DEMO_NOW, None).unwrap();
            assert_eq!(
                got,
                reference.submissions_where(rows, DEMO_NOW, None).unwrap(),
                "{kind:?} {rows:?}"
            );
            let by_rust: Vec<_> = all
                .iter()
                .filter(|r| rows.matches(r, DEMO_NOW))
                .cloned()
                .collect();
            assert_eq!(got, by_rust, "{kind:?} {rows:?}: SQL and predicate agree");
            assert_eq!(
                store.count_where(rows, DEMO_NOW).unwrap(),
                got.len(),
                "{kind:?} {rows:?}"
            );
            let newest = store.submissions_where(rows, DEMO_NOW, Some(3)).unwrap();
            assert_eq!(
                newest.as_slice(),
                &got[got.len().saturating_sub(3)..],
                "{kind:?} {rows:?}"
            );
        }
        assert!(
            store.count_where(RowFilter::Failed, DEMO_NOW).unwrap() > 0,
            "the demo has failures"
        );
        let ids: Vec<&str> = all.iter().map(|r| r.submission_id.as_str()).collect();
        assert_eq!(
            store.phases_of(&ids).unwrap(),
            reference.phases_of(&ids).unwrap()
        );
        let key = &all[0].session_key;
        assert_eq!(
            store.session_submissions(key).unwrap(),
            reference.session_submissions(key).unwrap()
        );
        assert_eq!(
            store
                .submission_by_id(&all[0].submission_id)
                .unwrap()
                .as_ref(),
            Some(&all[0])
        );
        assert!(store.submission_by_id("no-such-id").unwrap().is_none());
    }
}

/// The sessions view's per-status counts use the one definition of "failed"
/// (`SubmissionRow::is_failed`): a direct prompt failed by its terminal event (its `error` NULL)
/// counts as failed, not settled, on every backend.
#[test]
fn session_status_counts_agree_with_the_rows_on_every_backend() {
    use std::collections::BTreeMap;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let store = db.open();
        let all = store.list_submissions(RowFilter::All, 0).unwrap();
        assert!(
            all.iter().any(|r| r.error.is_none() && r.is_failed()),
            "{kind:?}: the demo has a direct prompt failed by its terminal event"
        );
        let mut want: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
        for r in &all {
            let status = if r.is_failed() {
                "failed".to_string()
            } else {
                r.status.to_string()
            };
            *want
                .entry(r.session_key.clone())
                .or_default()
                .entry(status)
                .or_default() += 1;
        }
        let sessions = store.list_sessions().unwrap();
        assert!(!sessions.is_empty());
        for s in &sessions {
            let got: BTreeMap<String, i64> = s.submissions_by_status.iter().cloned().collect();
            assert_eq!(
                got,
                want.remove(&s.id).unwrap_or_default(),
                "{kind:?} {}",
                s.id
            );
            let names: Vec<&String> = s.submissions_by_status.iter().map(|(n, _)| n).collect();
            let mut sorted = names.clone();
            sorted.sort();
            assert_eq!(names, sorted, "{kind:?} {}: statuses in name order", s.id);
        }
    }
}

/// `next-request` reads the same on every backend: on every submission and session of the demo,
/// the document equals the one read from the SQLite source, and the demo's stuck submissions
/// have a request to compare (not only empty ones).
#[test]
fn the_next_request_matches_sqlite_on_the_demo() {
    use turnscope_engine::report::next_request::NextRequestReport;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo.db");
    turnscope_demo::write_demo(&path, DEMO_NOW).unwrap();
    for kind in kinds() {
        let db = TestDb::from_sqlite(kind, &path);
        let reference: Box<dyn turnscope_store::Backend> =
            Box::new(SqliteStore::open(&db.sqlite).unwrap());
        let store = db.open();
        let load = |s: &dyn turnscope_store::Backend, q: &str| {
            NextRequestReport::load(s, q, None, DEMO_NOW, None)
                .unwrap_or_else(|e| panic!("{kind:?} {q}: {e:?}"))
                .to_json()
        };
        let mut hazards = 0;
        for row in store.list_submissions(RowFilter::All, 0).unwrap() {
            let got = load(&*store, &row.submission_id);
            assert_eq!(
                got,
                load(&*reference, &row.submission_id),
                "{kind:?} {}",
                row.submission_id
            );
            hazards += got["hazards"].as_array().unwrap().len();
        }
        assert!(hazards > 0, "the demo names no hazard");
        for s in store.list_sessions().unwrap() {
            assert_eq!(
                load(&*store, &s.id),
                load(&*reference, &s.id),
                "{kind:?} {}",
                s.id
            );
        }
    }
}
