//! A bulk action grouped for review, for the CLI and the TUI alike: how many will write and what
//! the runtime's next pass then does (the computed prediction), how many have nothing to write,
//! how many are refused and why (with what to do instead), and which writes cannot be undone.
//! The front ends only decide how to draw the groups and whether to list their members.

use super::{ActionPlan, Prediction, Refusal};
use turnscope_core::journal::submission_rows::short_id;

/// The three parts of a bulk preview, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// The plan writes rows.
    Write,
    /// The plan has nothing to write (never called refused).
    Nothing,
    /// Refused: at the preview, at the write, changed since the preview, or the write failed.
    Refused,
}

impl Section {
    /// The section's title in previews and summaries (`will write: 5`).
    pub fn title(self) -> &'static str {
        match self {
            Section::Write => "will write",
            Section::Nothing => "nothing to write",
            Section::Refused => "refused",
        }
    }
}

/// What puts a submission into a group: its section, the group's heading, and what to do
/// instead (or the way out of a next pass that fails it anyway).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupKey {
    pub section: Section,
    pub heading: String,
    pub instead: Option<String>,
}

impl GroupKey {
    /// The group of a planned submission: by its prediction, nothing to write, or its refusal.
    pub fn of_plan(plan: &Result<ActionPlan, Refusal>) -> GroupKey {
        match plan {
            Err(r) => GroupKey::refused(r),
            Ok(p) if p.is_noop() => GroupKey {
                section: Section::Nothing,
                heading: "nothing to write".into(),
                instead: None,
            },
            Ok(p) => GroupKey {
                section: Section::Write,
                heading: prediction_heading(&p.prediction),
                instead: way_out(&p.prediction),
            },
        }
    }

    pub fn refused(r: &Refusal) -> GroupKey {
        GroupKey {
            section: Section::Refused,
            heading: r.reason.clone(),
            instead: Some(r.instead.clone()),
        }
    }

    /// The fence found the submission changed between the preview and its write.
    pub fn changed() -> GroupKey {
        GroupKey {
            section: Section::Refused,
            heading: "changed since the preview (nothing written)".into(),
            instead: Some("run `turnscope show <submission>` to see its current state".into()),
        }
    }

    /// The write failed (the database, not the submission's state).
    pub fn failed(error: &str) -> GroupKey {
        GroupKey {
            section: Section::Refused,
            heading: format!("the write failed: {error}"),
            instead: None,
        }
    }
}

/// Submissions that share a key: `members` index the caller's items, in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub section: Section,
    pub heading: String,
    /// What to do instead, when every member shares it (else each member's own is shown).
    pub instead: Option<String>,
    pub members: Vec<usize>,
}

/// Group `keys` (one per item): by section, then the largest group first; equal sizes keep the
/// order of the items.
pub fn group(keys: &[GroupKey]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| g.section == key.section && g.heading == key.heading)
        {
            Some(g) => {
                if g.instead != key.instead {
                    g.instead = None;
                }
                g.members.push(i);
            }
            None => groups.push(Group {
                section: key.section,
                heading: key.heading.clone(),
                instead: key.instead.clone(),
                members: vec![i],
            }),
        }
    }
    groups.sort_by_key(|g| (g.section, std::cmp::Reverse(g.members.len())));
    groups
}

/// What the runtime's next pass then does, for a group's heading.
pub fn prediction_heading(p: &Prediction) -> String {
    let then = match p.rule {
        Some(rule) => format!(
            "then the runtime's next pass applies rule {rule} → {}",
            p.outcome
        ),
        None => format!("then {}", p.verdict),
    };
    if p.fails_anyway {
        format!("{then} (it fails them anyway)")
    } else {
        then
    }
}

/// The way out of a next pass that fails the submissions anyway (the group shares it).
pub fn way_out(p: &Prediction) -> Option<String> {
    p.fails_anyway.then(|| match p.rule {
        Some(2) => "give them more attempts first: extend --attempts N".to_string(),
        Some(3) => "move their deadline first: extend --deadline 1h".to_string(),
        _ => "no turnscope write avoids it; fail --reason TEXT settles them with your reason on record".to_string(),
    })
}

/// Counts of a bulk preview by section: (will write, nothing to write, refused).
pub fn counts<'a>(
    plans: impl IntoIterator<Item = &'a Result<ActionPlan, Refusal>>,
) -> (usize, usize, usize) {
    let mut c = (0, 0, 0);
    for p in plans {
        match p {
            Ok(p) if p.is_noop() => c.1 += 1,
            Ok(_) => c.0 += 1,
            Err(_) => c.2 += 1,
        }
    }
    c
}

/// The writes of a batch that cannot be undone, said before it is applied: the submissions
/// whose write appends a direct prompt's terminal event to its event stream (its subscribers
/// may read it at once). Undo refuses such a record and every batch that holds one, so the
/// warning names them and what stays undoable. `None` when every write can be undone.
pub fn cannot_undo<'a>(
    plans: impl IntoIterator<Item = &'a Result<ActionPlan, Refusal>>,
) -> Option<String> {
    let writes: Vec<&ActionPlan> = plans
        .into_iter()
        .filter_map(|p| p.as_ref().ok())
        .filter(|p| !p.is_noop())
        .collect();
    let published: Vec<String> = writes
        .iter()
        .filter(|p| p.published_stream().is_some())
        .map(|p| short_id(&p.submission_id))
        .collect();
    if published.is_empty() {
        return None;
    }
    let names = published.join(", ");
    Some(if published.len() == writes.len() {
        format!(
            "cannot be undone: {} append{} a direct prompt's terminal event to its event stream, where subscribers may read it at once ({names})",
            if writes.len() == 1 {
                "the write".to_string()
            } else {
                format!("all {} writes", writes.len())
            },
            if writes.len() == 1 { "s" } else { "" },
        )
    } else {
        format!(
            "cannot be undone as a batch: {} of {} writes append a direct prompt's terminal event to its event stream, where subscribers may read it at once ({names}); undo refuses those and the batch, each other write can be undone by its audit id",
            published.len(),
            writes.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{ActionKind, NextOutcome};
    use turnscope_core::journal::records::EventStore;
    use turnscope_core::recovery::changes::{Fence, RowChange};
    use turnscope_core::recovery::reconciler::RuleResult;

    fn plan(id: &str, changes: Vec<RowChange>, rule: u8, result: RuleResult) -> ActionPlan {
        ActionPlan {
            action: ActionKind::Reconcile,
            submission_id: id.into(),
            attempt_id: None,
            fence: Fence {
                submission_id: id.into(),
                status: "running".into(),
                attempt_id: None,
                lease_expires_at: 1,
                require_expired_lease: true,
                journal: None,
                session: None,
            },
            changes,
            summary: "s".into(),
            side_effects: Vec::new(),
            side_effects_acknowledged: false,
            prediction: Prediction {
                outcome: NextOutcome::Result(result),
                rule: Some(rule),
                verdict: "v".into(),
                reason: "r".into(),
                next_writes: vec![],
                fails_anyway: result == RuleResult::Failed,
                way_out: None,
            },
            reason: None,
        }
    }

    fn write() -> RowChange {
        RowChange::DeleteStreamChunks {
            stream_key: "k".into(),
            segments: 1,
        }
    }

    fn event() -> RowChange {
        RowChange::AppendEvent {
            path: "agents/a/b".into(),
            key: "k".into(),
            seq: 1,
            data: "{}".into(),
            store: EventStore::KeysTable,
        }
    }

    #[test]
    fn nothing_to_write_is_its_own_section_and_groups_share_their_instead() {
        let refusal = |instead: &str| Refusal {
            reason: "the lease is live".into(),
            instead: instead.into(),
        };
        let plans = [
            Ok(plan(
                "aaaaaaaa-1",
                vec![write()],
                5,
                RuleResult::Replacement,
            )),
            Ok(plan("bbbbbbbb-1", vec![], 5, RuleResult::Replacement)),
            Err(refusal("wait")),
            Ok(plan(
                "cccccccc-1",
                vec![write()],
                5,
                RuleResult::Replacement,
            )),
            Err(refusal("wait, then look")),
            Ok(plan("dddddddd-1", vec![write()], 9, RuleResult::Failed)),
        ];
        let keys: Vec<GroupKey> = plans.iter().map(GroupKey::of_plan).collect();
        let groups = group(&keys);
        let view: Vec<(Section, &str, Option<&str>, &[usize])> = groups
            .iter()
            .map(|g| {
                (
                    g.section,
                    g.heading.as_str(),
                    g.instead.as_deref(),
                    g.members.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            view,
            [
                (
                    Section::Write,
                    "then the runtime's next pass applies rule 5 → replacement",
                    None,
                    &[0, 3][..]
                ),
                (
                    Section::Write,
                    "then the runtime's next pass applies rule 9 → failed (it fails them anyway)",
                    Some("no turnscope write avoids it; fail --reason TEXT settles them with your reason on record"),
                    &[5][..]
                ),
                (Section::Nothing, "nothing to write", None, &[1][..]),
                // Two different insteads: none for the group, each member shows its own.
                (Section::Refused, "the lease is live", None, &[2, 4][..]),
            ]
        );
        assert_eq!(counts(&plans), (3, 1, 2));
        assert_eq!(Section::Nothing.title(), "nothing to write");
    }

    #[test]
    fn a_batch_that_publishes_says_which_writes_cannot_be_undone() {
        let plain = Ok(plan("aaaaaaaa-1", vec![write()], 1, RuleResult::Completed));
        let direct = Ok(plan("bbbbbbbb-1", vec![event()], 1, RuleResult::Completed));
        let noop = Ok(plan("cccccccc-1", vec![], 5, RuleResult::Replacement));
        assert_eq!(cannot_undo([&plain, &noop]), None);
        assert_eq!(
            cannot_undo([&plain, &direct, &noop]).unwrap(),
            "cannot be undone as a batch: 1 of 2 writes append a direct prompt's terminal event to its event stream, where subscribers may read it at once (bbbbbbbb); undo refuses those and the batch, each other write can be undone by its audit id"
        );
        assert_eq!(
            cannot_undo([&direct]).unwrap(),
            "cannot be undone: the write appends a direct prompt's terminal event to its event stream, where subscribers may read it at once (bbbbbbbb)"
        );
    }
}
