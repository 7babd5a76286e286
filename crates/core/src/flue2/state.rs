//! What a fold leaves: conversations of committed entries, their in-progress messages and
//! uncommitted tool outcomes, as flue 2.1.0's reducer holds them (`createReducedInstanceState`
//! and the conversation it creates, `dist/dispatch-Dohpn4Ea.mjs:263–347`).

use super::records::{BlockKind, ContentBlock, Parent};

/// A record the runtime's reducer refuses: the instance cannot be loaded past it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record {record_id:?} ({record_type}): {reason}")]
pub struct FoldError {
    pub record_id: String,
    pub record_type: String,
    /// The runtime's own reason text.
    pub reason: String,
}

/// A block of an in-progress assistant message.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub block_id: String,
    pub block_index: i64,
    pub kind: BlockKind,
    pub deltas: Vec<String>,
    pub completed: bool,
    /// The call, for a tool-call block.
    pub tool_call: Option<ToolCallRef>,
}

/// An assistant message still streaming (a "ghost" once its process died).
#[derive(Debug, Clone, PartialEq)]
pub struct InProgressMessage {
    pub message_id: String,
    pub parent_id: Parent,
    pub submission_id: Option<String>,
    pub turn_id: Option<String>,
    /// In the order they started.
    pub blocks: Vec<Block>,
    pub(super) applied_record_ids: Vec<String>,
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRef {
    pub id: String,
    pub name: String,
    /// The `seq` of the stream batch whose `assistant_tool_call` record this call is
    /// ([`super::InstanceState::begin_batch`]); `None` for a call folded from records alone. What
    /// the fold does not keep of the call (its arguments) is read back from that one batch.
    pub batch_seq: Option<i64>,
}

/// A committed entry of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: String,
    pub parent_id: Parent,
    pub submission_id: Option<String>,
    pub body: EntryBody,
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq)]
pub enum EntryBody {
    User {
        content: Vec<ContentBlock>,
    },
    Signal {
        signal_type: String,
    },
    Assistant {
        stop_reason: String,
        error_message: Option<String>,
        /// The text blocks' text, in block order.
        text: String,
        /// In block order.
        tool_calls: Vec<ToolCallRef>,
        /// `usage` as the completion record held it: `None` when absent (`undefined`). The
        /// classifier's overflow check reads `usage.input`, `usage.cacheRead`, `usage.output`.
        usage: Option<super::records::JsonText>,
    },
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        is_error: bool,
        terminate: bool,
    },
    Compaction {
        first_kept_entry_id: String,
    },
}

impl Entry {
    /// The runtime's `isToolBatchAssistant` of the reducer: a `toolUse`, `length` or `stop`
    /// assistant with at least one tool call.
    pub fn is_tool_batch_assistant(&self) -> bool {
        matches!(&self.body, EntryBody::Assistant { stop_reason, tool_calls, .. }
            if matches!(stop_reason.as_str(), "toolUse" | "length" | "stop") && !tool_calls.is_empty())
    }
}

/// A recorded tool outcome not yet committed (no tool-result entry yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UncommittedOutcome {
    pub record_id: String,
    pub assistant_message_id: String,
    pub tool_call_id: String,
    pub is_error: bool,
}

/// One conversation of an instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub conversation_id: String,
    /// `root`, `task` or `action`.
    pub kind: String,
    pub harness: String,
    pub session: String,
    pub parent_conversation_id: Option<String>,
    /// Shared, not owned: a plan's resume simulation clones the conversation to write the
    /// runtime's repairs into it, and a whale's 100,000 entries are then counted, not copied.
    /// Changed only by [`Conversation::commit`], as `active_leaf_id`: it keeps `kept_path` true.
    pub entries: foldhash::HashMap<std::sync::Arc<str>, std::sync::Arc<Entry>>,
    pub active_leaf_id: Option<String>,
    /// In the order they started.
    pub in_progress: Vec<InProgressMessage>,
    /// In the order they were recorded.
    pub uncommitted_outcomes: Vec<UncommittedOutcome>,
    pub(super) last_assistant_by_submission: foldhash::HashMap<String, String>,
    /// The model of the latest assistant message started (`modelInfo.model` of its
    /// `assistant_message_started`): what the context window is looked up by, as beta.7's last
    /// assistant's `model` is.
    pub model: Option<String>,
    /// [`Conversation::active_path`] once walked, until the next [`Conversation::commit`].
    pub(super) kept_path: KeptPath,
}

/// The active path of a conversation, walked once and kept: a whale's walk is 100,000 lookups
/// of an entry by id (about 10 ms), and one `show` asks for it four times (the verdict, the
/// plan's resume, the cost, the document). A commit at the leaf extends it, as the runtime's
/// repairs do in a plan's simulation; any other commit drops it. Not part of what a
/// conversation is: conversations are equal, and print, whether it is kept or not.
#[derive(Default)]
pub struct KeptPath(
    std::sync::OnceLock<Result<std::sync::Arc<Vec<std::sync::Arc<Entry>>>, FoldError>>,
);

impl Clone for KeptPath {
    fn clone(&self) -> KeptPath {
        // The path is shared (an `Arc`), not copied: a plan's simulation clones a whale.
        KeptPath(self.0.clone())
    }
}

impl PartialEq for KeptPath {
    fn eq(&self, _: &KeptPath) -> bool {
        true
    }
}

impl std::fmt::Debug for KeptPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptPath")
    }
}

impl Conversation {
    /// The committed entry `id`.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.get(id).map(|e| &**e)
    }

    pub fn has_entry(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// Every committed entry, in no order.
    pub fn all_entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values().map(|e| &**e)
    }

    /// The runtime's `getActiveConversationPath`: the parent chain from the active leaf, oldest
    /// first.
    pub fn active_path(&self) -> Result<Vec<&Entry>, FoldError> {
        let kept = self.kept_path.0.get_or_init(|| {
            // A chain longer than the entries has a cycle: only then is the walk done again
            // with the set of ids seen, which names the entry the runtime's error names.
            // Without the set, a whale's walk takes half the time.
            let path = self
                .walk_active_path(None)
                .or_else(|()| self.walk_active_path(Some(foldhash::HashSet::default())))
                .unwrap_or_else(|()| unreachable!("a walk with the set of seen ids ends"))?;
            Ok(std::sync::Arc::new(path.into_iter().cloned().collect()))
        });
        match kept {
            Ok(path) => Ok(path.iter().map(|e| &**e).collect()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The chain from the active leaf, oldest first, each entry as shared (the kept path holds
    /// them without looking them up again). With `seen`, each id is checked against
    /// those seen (a cycle is the runtime's error, naming its first repeated entry); without,
    /// `Err(())` once the chain is longer than the entries.
    fn walk_active_path<'a>(
        &'a self,
        mut seen: Option<foldhash::HashSet<&'a str>>,
    ) -> Result<Result<Vec<&'a std::sync::Arc<Entry>>, FoldError>, ()> {
        let mut path = Vec::new();
        let mut current = self
            .active_leaf_id
            .as_deref()
            .and_then(|id| self.entries.get(id));
        while let Some(entry) = current {
            let repeated = match &mut seen {
                None if path.len() == self.entries.len() => return Err(()),
                None => false,
                Some(seen) => !seen.insert(entry.id.as_str()),
            };
            if repeated {
                return Ok(Err(FoldError {
                    record_id: entry.id.clone(),
                    record_type: "message".into(),
                    reason: format!("Conversation graph contains a cycle at \"{}\".", entry.id),
                }));
            }
            path.push(entry);
            current = match &entry.parent_id {
                Parent::Id(p) => self.entries.get(p.as_str()),
                _ => None,
            };
        }
        path.reverse();
        Ok(Ok(path))
    }

    pub(super) fn has_uncommitted_tool_batch_at_leaf(&self) -> bool {
        self.active_leaf_id
            .as_deref()
            .and_then(|id| self.entry(id))
            .is_some_and(Entry::is_tool_batch_assistant)
    }

    pub(super) fn has_entry_or_in_progress(&self, id: &str) -> bool {
        self.entries.contains_key(id) || self.in_progress.iter().any(|m| m.message_id == id)
    }

    pub(super) fn commit(&mut self, entry: Entry) {
        // The kept path stays true only for a new entry whose parent is the leaf: it is then
        // the path's new end. A repeated id (an entry replaced) may move anything.
        let kept = self.kept_path.0.take().and_then(Result::ok).filter(|_| {
            !self.entries.contains_key(entry.id.as_str())
                && entry.parent_id.is(self.active_leaf_id.as_deref())
        });
        self.active_leaf_id = Some(entry.id.clone());
        let entry = std::sync::Arc::new(entry);
        if let Some(mut path) = kept {
            std::sync::Arc::make_mut(&mut path).push(std::sync::Arc::clone(&entry));
            let _ = self.kept_path.0.set(Ok(path));
        }
        self.entries
            .insert(std::sync::Arc::from(entry.id.as_str()), entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation(links: &[(&str, Option<&str>)], leaf: &str) -> Conversation {
        let entries = links
            .iter()
            .map(|(id, parent)| {
                let entry = Entry {
                    id: id.to_string(),
                    parent_id: parent.map_or(Parent::Null, |p| Parent::Id(p.to_string())),
                    submission_id: None,
                    body: EntryBody::Signal {
                        signal_type: "x".into(),
                    },
                };
                (std::sync::Arc::from(*id), std::sync::Arc::new(entry))
            })
            .collect();
        Conversation {
            conversation_id: "c".into(),
            kind: "root".into(),
            harness: "h".into(),
            session: "s".into(),
            parent_conversation_id: None,
            entries,
            active_leaf_id: Some(leaf.into()),
            in_progress: Vec::new(),
            uncommitted_outcomes: Vec::new(),
            last_assistant_by_submission: Default::default(),
            model: None,
            kept_path: Default::default(),
        }
    }

    fn ids(c: &Conversation) -> Result<Vec<&str>, FoldError> {
        Ok(c.active_path()?.iter().map(|e| e.id.as_str()).collect())
    }

    /// The walk without the set of seen ids gives what the checked walk gives: the chain, oldest
    /// first, ending where a parent is absent; and on a cycle, the checked walk's error.
    #[test]
    fn the_active_path_is_the_checked_walks() {
        let c = conversation(
            &[
                ("a", None),
                ("b", Some("a")),
                ("c", Some("b")),
                ("x", Some("a")),
            ],
            "c",
        );
        assert_eq!(ids(&c).unwrap(), ["a", "b", "c"]);
        let missing = conversation(&[("b", Some("gone")), ("c", Some("b"))], "c");
        assert_eq!(ids(&missing).unwrap(), ["b", "c"]);
        // A cycle behind the leaf, and one the leaf is on, with entries off the path.
        for c in [
            conversation(&[("a", Some("b")), ("b", Some("a")), ("c", Some("b"))], "c"),
            conversation(
                &[
                    ("a", Some("c")),
                    ("b", Some("a")),
                    ("c", Some("b")),
                    ("d", None),
                ],
                "c",
            ),
            conversation(&[("a", Some("a"))], "a"),
        ] {
            let checked = c
                .walk_active_path(Some(Default::default()))
                .unwrap()
                .map(|p| p.len());
            let err = ids(&c).unwrap_err();
            assert_eq!(Err(err.clone()), checked, "{c:?}");
            assert!(err.reason.contains("cycle"), "{err:?}");
        }
    }

    fn signal(id: &str, parent: Option<&str>) -> Entry {
        Entry {
            id: id.to_string(),
            parent_id: parent.map_or(Parent::Null, |p| Parent::Id(p.to_string())),
            submission_id: None,
            body: EntryBody::Signal {
                signal_type: "x".into(),
            },
        }
    }

    /// The path walked afresh (nothing kept).
    fn walked(c: &Conversation) -> Result<Vec<String>, FoldError> {
        let mut fresh = c.clone();
        fresh.kept_path = KeptPath::default();
        Ok(fresh.active_path()?.iter().map(|e| e.id.clone()).collect())
    }

    /// The kept path is the walked one after every commit: at the leaf (extended), on another
    /// branch, of a repeated id (an entry replaced, into a cycle and out of it); and a clone's
    /// commits leave the original's as it was.
    #[test]
    fn the_kept_active_path_is_the_walked_one_after_every_commit() {
        let mut c = conversation(&[("a", None), ("b", Some("a"))], "b");
        let kept = |c: &Conversation| -> Result<Vec<String>, FoldError> {
            Ok(c.active_path()?.iter().map(|e| e.id.clone()).collect())
        };
        assert_eq!(kept(&c).unwrap(), ["a", "b"]);
        let commits = [
            ("c", Some("b")),
            ("d", Some("c")),
            ("e", Some("b")),
            ("f", Some("e")),
            ("b", Some("f")),
            ("g", Some("b")),
            ("b", Some("a")),
            ("h", Some("g")),
            ("i", None),
        ];
        for (id, parent) in commits {
            let before = c.clone();
            c.commit(signal(id, parent));
            assert_eq!(kept(&c), walked(&c), "after {id} <- {parent:?}");
            // Asked again, from what was kept.
            assert_eq!(kept(&c), walked(&c), "again after {id}");
            assert_eq!(kept(&before), walked(&before), "the clone before {id}");
        }
        assert!(kept(&c).unwrap().ends_with(&["i".to_string()]));
        // At the leaf, the kept path is extended: the clone's new entry, not the original's.
        let original = kept(&c).unwrap();
        let mut simulated = c.clone();
        simulated.commit(signal("j", Some("i")));
        assert_eq!(
            kept(&simulated).unwrap(),
            [&original[..], &["j".to_string()]].concat()
        );
        assert_eq!(kept(&c).unwrap(), original);
    }
}
