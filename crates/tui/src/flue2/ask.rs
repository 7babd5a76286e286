//! What a 2.x write key asks for (`X` abort, `Q` requeue, `E` extend, `F` fail), what the help
//! says of each, and the action it makes on the submission as the worker reads it: shared by the
//! one-submission flow (`write.rs`) and the bulk one (`bulk.rs`).

use turnscope_core::flue2::{Flue2Action, Flue2Step};
use turnscope_engine::flue2::Inspected;

/// What the operator asked for; the worker makes it a `Flue2Action` on the row it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    Abort,
    Requeue,
    /// beta.7's `E`: 3 more attempts where the budget is what ends it (step 4), else a deadline
    /// an hour from now.
    Extend,
    Fail(String),
}

impl Ask {
    pub fn name(&self) -> &'static str {
        match self {
            Ask::Abort => "abort",
            Ask::Requeue => "requeue",
            Ask::Extend => "extend",
            Ask::Fail(_) => "fail",
        }
    }

    /// The action on the submission as read (extend's depends on the step that would end it).
    pub fn action_on(&self, i: &Inspected<'_>) -> Flue2Action {
        match self {
            Ask::Abort => Flue2Action::Abort,
            Ask::Requeue => Flue2Action::Requeue,
            Ask::Extend => Flue2Action::Extend {
                deadline_ms: (i.plan.step != Flue2Step::Budget).then_some(3_600_000),
                attempts: (i.plan.step == Flue2Step::Budget).then_some(3),
            },
            Ask::Fail(reason) => Flue2Action::Fail {
                reason: reason.clone(),
            },
        }
    }
}

/// The write keys and what the help says of each.
pub const KEYS: [(char, &str); 4] = [
    (
        'X',
        "abort: the runtime-native intent; its next pass settles it aborted (previewed)",
    ),
    (
        'Q',
        "requeue: back to the queue, only where the runtime's step 7 would (previewed)",
    ),
    (
        'E',
        "extend: 3 more attempts where the budget ends it, else deadline now + 1h (previewed)",
    ),
    (
        'F',
        "fail: a reserved failed settlement the runtime's pass finishes; asks why (previewed)",
    ),
];

/// The ask a write key makes (`F` asks for its reason first).
pub fn ask_of(c: char) -> Option<Ask> {
    Some(match c {
        'X' => Ask::Abort,
        'Q' => Ask::Requeue,
        'E' => Ask::Extend,
        'F' => Ask::Fail(String::new()),
        _ => return None,
    })
}
