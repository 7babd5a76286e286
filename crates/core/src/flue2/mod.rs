//! flue 2.x's conversation streams, read as the runtime reads them: no I/O here (the store reads
//! the rows), only the record log's rows parsed into typed records ([`records`]) and folded into
//! conversations exactly as the runtime's reducer folds them ([`fold`]).
//!
//! A stream (`flue_conversation_streams`, one per agent instance, path `agents/<agent>/<id>`)
//! holds batches (`flue_conversation_stream_batches.data`, a JSON array of records, in `seq`
//! order). The runtime folds them with `applyConversationRecord` (flue 2.1.0's
//! `dist/dispatch-Dohpn4Ea.mjs:322–625`): committed entries form one linear chain per
//! conversation (appends must extend the leaf), an assistant message streams as an in-progress
//! ("ghost") message until its completion, and tool outcomes stay recorded-but-uncommitted until a
//! `tool_results_committed` turns them into tool-result entries. What the runtime does and what
//! was checked: docs/flue2.md. [`classify`] ports the runtime's submission classifier over a
//! folded conversation, in its three 2.x variants. turnscope's fold is compared with the runtime's own
//! (`tests/runtime2/fold.mjs`) on every 2.1.0 fixture.

pub mod actions;
pub mod classify;
pub mod cost;
mod digest;
pub mod fold;
pub mod health;
mod kept;
pub mod next_request;
pub mod observed;
pub mod plan_facts;
pub mod reconciler;
pub mod records;
pub mod records_text;
pub mod resume;
pub mod rows;
pub mod state;
pub mod submission_parse;
pub mod writes;

pub use actions::{
    plan_action, ActionInput, Flue2Action, Flue2ActionPlan, Flue2ColumnChange, Flue2Fence,
    Flue2Refusal,
};
pub use classify::{
    classify_conversation_submission, submission_entry_id, ClassifyError, Flue2Classification,
    Flue2Variant, SessionKey,
};
pub use fold::{InstanceState, ReadRefusal};
pub use next_request::{
    flue2_next_input, flue2_next_request, Flue2NextRequest, FLUE2_MODEL_LIBRARY,
};
pub use plan_facts::PlanFacts;
pub use reconciler::{
    plan_flue2, AttemptChange, CallRef, Flue2Plan, Flue2RowAfter, Flue2Step, Flue2Write,
    InspectFailure, ReconcileInput,
};
pub use records::{
    parse_batch, BlockKind, Body, ContentBlock, Envelope, JsonText, Parent, Record, RecordError,
};
pub use records_text::{read_batch, read_batch_undigested, ReadRecord};
pub use resume::{Flue2Resume, ResumeAction, ResumeEnd};
pub use rows::{joined_by_host, Flue2SubmissionRow, FLUE2_STATUSES};
pub use state::{
    Block, Conversation, Entry, EntryBody, FoldError, InProgressMessage, ToolCallRef,
    UncommittedOutcome,
};
