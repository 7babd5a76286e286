//! The context window a 2.x submission is classified with, as beta.7's: `--context-window` where
//! given, else the well-known model table matched on the conversation's latest model (its
//! `assistant_message_started` record's `modelInfo.model`), else 0. On every 2.1.0 fixture whose
//! stream names a model, the model renamed to one the table knows (200,000 tokens, the window the
//! runtime's own classification of the fixture was asked with) classifies every submission as
//! the flag of the same value does, and `contextWindowUsed` says where the value came from.

use std::path::Path;

use serde_json::Value;

use crate::support::{db_fixture_names, unpack_db};

fn classify(db: &Path, id: &str, flag: Option<&str>) -> Value {
    let mut cmd = crate::support::turnscope_command();
    cmd.env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", "1796506366417")
        .arg("--db")
        .arg(db);
    if let Some(f) = flag {
        cmd.args(["--context-window", f]);
    }
    let o = cmd.args(["classify", id, "--json"]).output().unwrap();
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}

fn ids(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT submission_id FROM flue_agent_submissions ORDER BY sequence")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn the_model_table_gives_the_window_the_flag_would() {
    let dir = tempfile::tempdir().unwrap();
    let mut renamed = 0;
    for name in db_fixture_names("flue-2.1.0") {
        let plain = dir.path().join(format!("{name}-plain"));
        let named = dir.path().join(format!("{name}-named"));
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::create_dir_all(&named).unwrap();
        let a = unpack_db("flue-2.1.0", &name, &plain);
        let b = unpack_db("flue-2.1.0", &name, &named);
        let n = rusqlite::Connection::open(&b)
            .unwrap()
            .execute(
                "UPDATE flue_conversation_stream_batches SET data = replace(data, '\"model\":\"scripted-1\"', '\"model\":\"claude-sonnet-4-5-20250929\"') WHERE data LIKE '%\"modelInfo\"%'",
                [],
            )
            .unwrap();
        for id in ids(&a) {
            let flagged = classify(&a, &id, Some("200000"));
            let unknown = classify(&a, &id, None);
            let table = classify(&b, &id, None);
            let what = format!("{name} {id}");
            // The harness's model is not in the table: 0, from nowhere.
            assert_eq!(unknown["contextWindowUsed"]["source"], "default", "{what}");
            assert_eq!(unknown["contextWindowUsed"]["tokens"], 0, "{what}");
            assert_eq!(flagged["contextWindowUsed"]["source"], "flag", "{what}");
            if n > 0 && table["streamPath"].is_string() && flagged["inputEntryFound"] == true {
                assert_eq!(
                    table["contextWindowUsed"]["source"], "model_table",
                    "{what}"
                );
                assert_eq!(table["contextWindowUsed"]["tokens"], 200_000, "{what}");
                assert_eq!(
                    table["contextWindowUsed"]["model"], "claude-sonnet-4-5-20250929",
                    "{what}"
                );
                for k in ["classification", "decidedBy", "plan"] {
                    assert_eq!(table[k], flagged[k], "{what}: {k}");
                }
                renamed += 1;
            }
            // The flag wins over the table.
            let both = classify(&b, &id, Some("5"));
            assert_eq!(both["contextWindowUsed"]["tokens"], 5, "{what}");
        }
    }
    assert!(
        renamed > 5,
        "only {renamed} submissions had a model to look up"
    );
}
