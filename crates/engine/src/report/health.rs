//! Session health across the journal: each session read compactly, one at a time, its active
//! path judged by `core::recovery::health`, and each finding completed with what the compact
//! read left out (a call's arguments, whether an assistant is really empty) and with the status
//! of the submission that left it. The CLI's `health` and the TUI's sessions column use it.
//!
//! A session is read, judged and dropped before the next one is read: a whole journal is never
//! held (the largest thing in memory is the largest session's compact entries).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use turnscope_core::journal::compact::Previews;
use turnscope_core::journal::history::History;
use turnscope_core::journal::status::SubmissionStatus;
use turnscope_core::journal::submission_rows::instance_id_of;
use turnscope_core::recovery::health::{is_empty_assistant, session_findings, Finding, Hazard};
use turnscope_store::{fetch_full, load_compact, JournalStore, SessionRows, StoreError};

/// The submission a finding belongs to, as the journal holds it now.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    pub id: String,
    /// `queued`, `running`, `terminalizing`, `settled`, `failed` (settled with a failure), or
    /// `missing` (no such row).
    pub status: String,
}

/// Whether an unresolved batch can still be completed where it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RepairNote {
    /// The batch is the last thing on the active path and no submission is working on it.
    pub in_place: bool,
    pub why: String,
}

/// One finding with its submission, its effect on the next turn and, for unresolved calls,
/// whether it can be repaired.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFinding {
    #[serde(flatten)]
    pub hazard: Hazard,
    pub submission: Option<Owner>,
    pub effect: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairNote>,
}

/// One session's health.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHealth {
    pub session: String,
    pub instance: Option<String>,
    /// Entries read (the whole session, abandoned branches included).
    pub entries: usize,
    /// Entries on the active path.
    pub active_path: usize,
    pub findings: Vec<SessionFinding>,
}

impl SessionHealth {
    pub fn healthy(&self) -> bool {
        self.findings.is_empty()
    }

    /// The findings per kind, in [`Hazard::KINDS`] order, the kinds found only.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        count_kinds(self.findings.iter().map(|f| f.hazard.kind()))
    }

    /// A short marker for a list: `ok`, or the count and the worst kind (`3: unresolved_calls`).
    pub fn marker(&self) -> String {
        match self.counts().first() {
            None => "ok".into(),
            Some((kind, _)) => format!("{}: {kind}", self.findings.len()),
        }
    }
}

/// Counts of `kinds` in [`Hazard::KINDS`] order, the kinds present only.
pub fn count_kinds<'a>(kinds: impl Iterator<Item = &'a str>) -> Vec<(&'static str, usize)> {
    let mut n = [0usize; Hazard::KINDS.len()];
    for k in kinds {
        if let Some(i) = Hazard::KINDS.iter().position(|x| *x == k) {
            n[i] += 1;
        }
    }
    Hazard::KINDS
        .iter()
        .zip(n)
        .filter(|(_, c)| *c > 0)
        .map(|(k, c)| (*k, c))
        .collect()
}

/// Why a session could not be judged at all.
#[derive(Debug, thiserror::Error)]
pub enum HealthError {
    #[error("this backend cannot read sessions row by row")]
    NoRows,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The health of session `key` (`None` when there is no such session), read through `store`.
pub fn session_health(
    store: &dyn JournalStore,
    key: &str,
) -> Result<Option<SessionHealth>, HealthError> {
    let rows = store.session_rows().ok_or(HealthError::NoRows)?;
    // No submission id: no entry is read whole up front.
    let Some(rec) = load_compact(rows, key, "dispatch", "", Previews::Keep)? else {
        return Ok(None);
    };
    let entries = rec.entries.len();
    let history = History::new(rec.entries, rec.leaf_id);
    let mut failed: Option<StoreError> = None;
    let mut empty = |e: &turnscope_core::journal::entry::Entry| match fetch_full(rows, key, &e.id) {
        Ok(full) => full
            .and_then(|f| f.message().map(is_empty_assistant))
            .unwrap_or(false),
        Err(err) => {
            failed.get_or_insert(err);
            false
        }
    };
    let found = session_findings(&history, &rec.data_problems, &rec.not_utf8, &mut empty);
    if let Some(e) = failed {
        return Err(e.into());
    }
    let mut owners: HashMap<String, Owner> = HashMap::new();
    let mut findings = Vec::with_capacity(found.len());
    for f in found {
        findings.push(complete(store, rows, key, f, &mut owners)?);
    }
    Ok(Some(SessionHealth {
        session: key.to_string(),
        instance: instance_id_of(key),
        entries,
        active_path: history.active_indexes().len(),
        findings,
    }))
}

/// A finding with the arguments of its calls, its submission's status, its effect and its
/// repair note.
fn complete(
    store: &dyn JournalStore,
    rows: &dyn SessionRows,
    key: &str,
    f: Finding,
    owners: &mut HashMap<String, Owner>,
) -> Result<SessionFinding, StoreError> {
    let Finding {
        mut hazard,
        submission,
    } = f;
    if let Hazard::UnresolvedCalls {
        assistant, calls, ..
    }
    | Hazard::MismatchedBatch {
        assistant, calls, ..
    } = &mut hazard
    {
        if calls.iter().any(|c| c.arguments.is_none()) {
            if let Some(full) = fetch_full(rows, key, &assistant.entry)? {
                let whole = full.message().map(|m| m.tool_calls()).unwrap_or_default();
                for (c, w) in calls.iter_mut().zip(whole) {
                    c.arguments = Some(w.arguments);
                }
            }
        }
    }
    let owner = match submission {
        Some(id) => Some(match owners.get(&id) {
            Some(o) => o.clone(),
            None => {
                let o = owner_of(store, &id)?;
                owners.insert(id, o.clone());
                o
            }
        }),
        None => None,
    };
    let mut effect = hazard.effect();
    let repair = match &hazard {
        Hazard::UnresolvedCalls {
            at_leaf,
            later_entries,
            later_turns,
            followed_by,
            trailing,
            ..
        } => Some(repair_note(
            *at_leaf,
            *trailing,
            Later {
                entries: *later_entries,
                turns: *later_turns,
                followed_by,
            },
            owner.as_ref(),
            &mut effect,
        )),
        _ => None,
    };
    Ok(SessionFinding {
        hazard,
        submission: owner,
        effect,
        repair,
    })
}

fn owner_of(store: &dyn JournalStore, id: &str) -> Result<Owner, StoreError> {
    let status = match store.find_submission(id) {
        Ok(row) if row.submission_id == id => {
            if row.is_failed() {
                "failed".to_string()
            } else {
                row.status.as_str().to_string()
            }
        }
        Ok(_) | Err(StoreError::SubmissionNotFound { .. } | StoreError::Ambiguous { .. }) => {
            "missing".to_string()
        }
        Err(e) => return Err(e),
    };
    Ok(Owner {
        id: id.to_string(),
        status,
    })
}

/// Health's judgment of an unresolved batch that settled submission `id` left on `history`'s
/// active path but not at its leaf, for `repair`'s refusal: the batch's assistant entry and why
/// it cannot be repaired in place. `None` when health finds no such batch of `id`.
pub fn settled_batch_not_at_leaf(
    history: &History,
    id: &str,
    status: &str,
) -> Option<(String, RepairNote)> {
    let findings = session_findings(history, &[], &[], &mut |e| {
        e.message().is_some_and(is_empty_assistant)
    });
    let owner = Owner {
        id: id.to_string(),
        status: status.to_string(),
    };
    findings.into_iter().find_map(|f| match f.hazard {
        Hazard::UnresolvedCalls {
            assistant,
            at_leaf: false,
            later_entries,
            later_turns,
            followed_by,
            trailing,
            ..
        } if f.submission.as_deref() == Some(id) => {
            let note = repair_note(
                false,
                trailing,
                Later {
                    entries: later_entries,
                    turns: later_turns,
                    followed_by: &followed_by,
                },
                Some(&owner),
                &mut String::new(),
            );
            Some((assistant.entry, note))
        }
        _ => None,
    })
}

/// What follows an unresolved batch on the active path.
struct Later<'a> {
    entries: usize,
    /// Model turns among them.
    turns: usize,
    /// Each entry's label when no model turn is among them.
    followed_by: &'a [String],
}

/// `1 later entry follows`, `2 later entries follow`.
fn later_entries_follow(n: usize) -> String {
    if n == 1 {
        "1 later entry follows".into()
    } else {
        format!("{n} later entries follow")
    }
}

/// Whether an unresolved batch can be completed in place, and what the model saw where not.
fn repair_note(
    at_leaf: bool,
    trailing: bool,
    later: Later<'_>,
    owner: Option<&Owner>,
    effect: &mut String,
) -> RepairNote {
    let working = owner.filter(|o| {
        matches!(
            SubmissionStatus::parse(&o.status),
            SubmissionStatus::Queued | SubmissionStatus::Running | SubmissionStatus::Terminalizing
        )
    });
    let entries = |n: usize| format!("{n} later entr{}", if n == 1 { "y" } else { "ies" });
    if let (Some(o), true) = (working, trailing) {
        return RepairNote {
            in_place: false,
            why: format!(
                "its submission {} is {}: the runtime's own recovery (reconcile rule 6, or the resume's repair \
                 of a trailing partial batch) completes it; `turnscope show {}` says which",
                o.id, o.status, o.id
            ),
        };
    }
    if at_leaf {
        let how = match owner {
            Some(o) if o.status == "settled" || o.status == "failed" => format!(
                "; `turnscope --write repair {}` writes them (previewed, fenced, audited, undoable)",
                o.id
            ),
            _ => String::new(),
        };
        return RepairNote {
            in_place: true,
            why: format!(
                "the batch ends the active path and no submission is working on it: the runtime's \
                 interrupted results (first write wins) can complete it in place{how}"
            ),
        };
    }
    if later.turns == 0 && !later.followed_by.is_empty() {
        // Only the runtime's own entries (its failure signal, an aborted assistant): no turn was
        // built since, the next one is the first to leave the batch out.
        let what = later.followed_by.join(", then ");
        effect.push_str(&format!(
            "; followed on the active path by {what}: the runtime's next turn will leave the whole batch out"
        ));
        return RepairNote {
            in_place: false,
            why: format!(
                "the runtime's entries follow the batch on the active path ({what}): results appended now \
                 would branch away from them, so it cannot be repaired in place; the runtime's next turn \
                 will leave the whole batch out"
            ),
        };
    }
    effect.push_str(&format!(
        "; {} on the active path: the turns since were built from the history without this batch",
        entries(later.entries)
    ));
    RepairNote {
        in_place: false,
        why: format!(
            "{} the batch on the active path: results appended now would branch away from them, \
             so it cannot be repaired in place",
            later_entries_follow(later.entries)
        ),
    }
}

/// The whole-journal scan's running totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthTotals {
    pub sessions: usize,
    pub entries: usize,
    pub sessions_with_findings: usize,
    pub findings: usize,
    /// Of `findings`, those on a 2.x stream's batches (text that is not UTF-8), not on one of
    /// its conversations: counted in `findings` and `by_kind`, not in `sessions` (0 on beta.7).
    pub batch_findings: usize,
    /// Findings per kind, in `Hazard::KINDS` order (every kind, zero included).
    #[serde(serialize_with = "kinds_map")]
    pub by_kind: [usize; Hazard::KINDS.len()],
}

fn kinds_map<S: serde::Serializer>(
    v: &[usize; Hazard::KINDS.len()],
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, n) in Hazard::KINDS.iter().zip(v) {
        m.serialize_entry(k, n)?;
    }
    m.end()
}

impl HealthTotals {
    pub fn add(&mut self, h: &SessionHealth) {
        self.sessions += 1;
        self.entries += h.entries;
        if !h.healthy() {
            self.sessions_with_findings += 1;
            self.count_findings(h);
        }
    }

    /// A 2.x stream's own findings (its batches'): findings, but no session (conversation).
    pub fn add_batch_findings(&mut self, h: &SessionHealth) {
        self.batch_findings += h.findings.len();
        self.count_findings(h);
    }

    fn count_findings(&mut self, h: &SessionHealth) {
        self.findings += h.findings.len();
        for f in &h.findings {
            if let Some(i) = Hazard::KINDS.iter().position(|k| *k == f.hazard.kind()) {
                self.by_kind[i] += 1;
            }
        }
    }
}

/// Scan `keys` in order, one session at a time inside one read snapshot, handing each session's
/// health to `visit` (which returns `false` to stop). Sessions that vanished are skipped.
pub fn scan(
    store: &dyn JournalStore,
    keys: &mut dyn Iterator<Item = String>,
    visit: &mut dyn FnMut(SessionHealth) -> bool,
) -> Result<(), HealthError> {
    let mut result: Result<(), HealthError> = Ok(());
    let mut run = || -> Result<(), StoreError> {
        for key in &mut *keys {
            match session_health(store, &key) {
                Ok(Some(h)) => {
                    if !visit(h) {
                        break;
                    }
                }
                Ok(None) => {}
                Err(HealthError::Store(e)) => return Err(e),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        Ok(())
    };
    store.in_snapshot(&mut run)?;
    result
}

/// A finding as one JSON value (the `turnscope.health/1` document's shape).
pub fn finding_json(f: &SessionFinding) -> Value {
    serde_json::to_value(f).expect("a finding serialises")
}
