//! Texts the runtime writes into the session history when it recovers a submission (spec §5.3,
//! §6.1): the advisory's details, the stream signals and the synthetic tool result. The planned
//! writes and the demo databases both use them, so what turnscope writes is what the runtime
//! would have written. (The error texts stored on the row are `plan::messages`.)

/// `details` of the `submission_interrupted` advisory after input application.
pub const AFTER_INPUT_DETAILS: &str = "Recovery settles interrupted work as failed when it cannot prove that resuming or replaying is safe: a repeated model or tool call could duplicate external effects.";

/// `details` of the advisory when the input-application marker is missing.
pub const BEFORE_INPUT_DETAILS: &str = "The attempt was interrupted after the submission input was written to the session but before the input-application marker was recorded. Recovery cannot prove the input was never applied, so it does not replay it.";

/// The text of a synthetic `interrupted` tool result (`JSON.stringify({type, message})`).
pub const INTERRUPTED_TEXT: &str = r#"{"type":"interrupted","message":"Tool execution was interrupted before completion. The outcome is unknown."}"#;

/// The `stream_interrupted` signal's content.
pub const STREAM_INTERRUPTED_TEXT: &str =
    "The previous assistant response was interrupted before completion.";

/// The `stream_continued` signal's content.
pub const STREAM_CONTINUED_TEXT: &str = "Continue the previous assistant response from exactly where it left off. Do not repeat content already provided.";
