//! `turnscope diff A B` on flue 2.x: two states of one submission (an export taken before an
//! action and the live journal after the runtime's pass, two exports, or two journals' rows),
//! each read as `show --json` reads it at the same clock, and what differs, as beta.7's diff
//! compares its two reports: the row's columns, the classification, the reconciler's next step,
//! the committed conversation after the input (entries by id), the in-progress messages, the
//! recorded-but-uncommitted outcomes, the step memos and the stream's batch count. Nothing is
//! computed here that `show` does not compute; this only compares two of its documents.

use serde_json::{json, Map, Value};
use turnscope_store::{Flue2SqliteReader, StoreError};

use crate::flue2::{Flue2Options, Streams};
use crate::flue2_memos::step_memos;
use crate::flue2_show::{show_json, ShowView};

/// The schema of `diff --json` on 2.x.
pub const FLUE2_DIFF_SCHEMA: &str = "turnscope.flue2.diff/1";

/// `show --json`'s document of submission `id` (an id or unique prefix) in `reader` at `now`.
pub fn show_doc(
    reader: &Flue2SqliteReader,
    opts: &Flue2Options,
    id: &str,
    now: i64,
) -> Result<Value, StoreError> {
    let mut streams = Streams::default();
    let (row, joined, memos) = reader.in_snapshot(|reader| {
        let row = reader.find_submission(id)?;
        let joined = reader.joined_into(&row.submission_id)?;
        streams.load(reader, [&row])?;
        let memos = match row.session() {
            Some(k) => step_memos(reader, &k.stream_path())?,
            None => Vec::new(),
        };
        Ok((row, joined, memos))
    })?;
    let i = streams.inspect(&row, opts, joined, now);
    let folded = i.stream_path.as_deref().and_then(|p| streams.get(p));
    let batches = folded.map_or(0, |f| f.batches);
    let not_utf8 = folded.map_or(&[][..], |f| &f.not_utf8[..]);
    Ok(show_json(
        opts,
        reader.format_version(),
        &ShowView {
            inspected: &i,
            batches,
            not_utf8,
            memos: &memos,
        },
        now,
    ))
}

/// One difference: where (`submission.status`, `label`, `plan`, `following`, …) and the two
/// values (`null` where a side has none: an entry added or removed).
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub field: String,
    pub a: Value,
    pub b: Value,
}

/// The top-level fields compared whole (the row's columns are compared one by one, the
/// conversation entry by entry).
const WHOLE: [&str; 10] = [
    "label",
    "classification",
    "plan",
    "inputEntryFound",
    "joinedDeliveries",
    "activeLeafId",
    "inProgress",
    "uncommittedToolOutcomes",
    "trailingBatch",
    "stepMemos",
];

/// What differs between two `show --json` documents of one submission, in the order a reader
/// wants it: the row, the verdict and plan, the conversation, the stream.
pub fn differences(a: &Value, b: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    let empty = Map::new();
    let (ra, rb) = (
        a["submission"].as_object().unwrap_or(&empty),
        b["submission"].as_object().unwrap_or(&empty),
    );
    for (k, va) in ra {
        let vb = rb.get(k).unwrap_or(&Value::Null);
        if va != vb {
            out.push(Difference {
                field: format!("submission.{k}"),
                a: va.clone(),
                b: vb.clone(),
            });
        }
    }
    for k in WHOLE {
        if a[k] != b[k] {
            out.push(Difference {
                field: k.to_string(),
                a: a[k].clone(),
                b: b[k].clone(),
            });
        }
    }
    // The conversation after the input, by entry id: each entry added, removed or changed.
    let entries =
        |d: &Value| -> Vec<Value> { d["following"].as_array().cloned().unwrap_or_default() };
    let (ea, eb) = (entries(a), entries(b));
    let id = |e: &Value| e["id"].as_str().unwrap_or("").to_string();
    for e in &ea {
        match eb.iter().find(|x| id(x) == id(e)) {
            None => out.push(Difference {
                field: format!("following.{}", id(e)),
                a: e.clone(),
                b: Value::Null,
            }),
            Some(x) if x != e => out.push(Difference {
                field: format!("following.{}", id(e)),
                a: e.clone(),
                b: x.clone(),
            }),
            Some(_) => {}
        }
    }
    for e in eb.iter().filter(|x| !ea.iter().any(|e| id(e) == id(x))) {
        out.push(Difference {
            field: format!("following.{}", id(e)),
            a: Value::Null,
            b: e.clone(),
        });
    }
    if a["streamBatches"] != b["streamBatches"] {
        out.push(Difference {
            field: "streamBatches".into(),
            a: a["streamBatches"].clone(),
            b: b["streamBatches"].clone(),
        });
    }
    out
}

/// The `turnscope.flue2.diff/1` document.
pub fn diff_json(
    opts: &Flue2Options,
    format_version: &str,
    (source_a, a): (&str, &Value),
    (source_b, b): (&str, &Value),
    diffs: &[Difference],
) -> Value {
    let mut doc = opts.header(FLUE2_DIFF_SCHEMA, format_version);
    doc.insert("submissionId".into(), a["submission"]["id"].clone());
    doc.insert("equal".into(), json!(diffs.is_empty()));
    let side = |source: &str, d: &Value| {
        json!({
            "source": source,
            "label": d["label"],
            "next": d["plan"]["column"],
            "status": d["submission"]["status"],
            "streamBatches": d["streamBatches"],
        })
    };
    doc.insert("a".into(), side(source_a, a));
    doc.insert("b".into(), side(source_b, b));
    doc.insert(
        "differences".into(),
        Value::Array(
            diffs
                .iter()
                .map(|d| json!({"field": d.field, "a": d.a, "b": d.b}))
                .collect(),
        ),
    );
    Value::Object(doc)
}
