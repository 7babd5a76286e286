//! What a scale database is generated from ([`ScaleOptions`]) and what its two layouts (the
//! `session` profile in `scale.rs`, the `runtime` profile in `scale_runtime.rs`) share: the
//! coordinator processes' crash times, the per-session seeds and the runtime's tool-cycle width.
//! A leaf, so the layouts use it and never each other's files back.

use turnscope_demo::build::{Demo, DAY, HOUR, MIN, SEC};
use turnscope_demo::ids::Rng;

/// The shape of the generated journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScaleProfile {
    /// One whale *session* of thousands of submissions (its stuck submission is short), many
    /// settled submissions of 1–4 calls per round, 2,000 expired leases at factor 1.
    #[default]
    Session,
    /// The shape of the runtime's own journals (issue 12): 20,000 sessions of 5–200 entries,
    /// 148,000 submissions of tool cycles of 3 calls, 401 expired leases, and a whale whose
    /// stuck *submission* has 100,000 entries after its input plus 20,000 abandoned.
    Runtime,
    /// A flue 2.1.0 journal (conversation streams, `scale_flue2.rs`): tool-heavy instances,
    /// 400 expired leases stuck at every classification, a 100,000-record whale, ~2 GB.
    Flue2,
}

impl ScaleProfile {
    pub fn name(self) -> &'static str {
        match self {
            ScaleProfile::Session => "session",
            ScaleProfile::Runtime => "runtime",
            ScaleProfile::Flue2 => "flue2",
        }
    }
}

/// What to generate. `default_scale` is the production-sized database of issue 5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleOptions {
    pub seed: u64,
    /// Rows in `flue_agent_submissions`.
    pub submissions: usize,
    /// Rows in `flue_sessions`.
    pub sessions: usize,
    /// About this many rows in `flue_session_entries`.
    pub entries: usize,
    /// Running submissions whose lease expired (the whale's included).
    pub expired: usize,
    /// Entries on the whale session's active path (profile `session`), or on the active path
    /// after the whale submission's input (profile `runtime`).
    pub whale_active: usize,
    /// Entries on the whale's abandoned repair branches (for `runtime`: branches after the whale
    /// submission's input).
    pub whale_abandoned: usize,
    /// "Now" (ms): leases are expired or live relative to it.
    pub now_ms: i64,
    pub profile: ScaleProfile,
}

/// The default seed.
pub const DEFAULT_SEED: u64 = 0x7363_616c_655f_3031; // "scale_01"

/// Coordinator processes that crashed: how long before `now`, and their relative share of the
/// stuck submissions (all of a process's submissions crashed at the same moment).
pub(crate) const CRASHES: [(i64, u64); 10] = [
    (90 * SEC, 10),
    (4 * MIN, 20),
    (17 * MIN, 15),
    (48 * MIN, 10),
    (2 * HOUR, 15),
    (5 * HOUR, 10),
    (13 * HOUR, 8),
    (26 * HOUR, 5),
    (3 * DAY, 4),
    (6 * DAY, 3),
];
/// Days of coordinator processes before now (one process per day).
pub(crate) const DAYS: usize = 64;
/// Live leases run this far past `now`.
pub(crate) const LIVE_LEASE: i64 = 30 * DAY;

/// Calls in every tool cycle.
pub(crate) const CALLS: usize = 3;

/// Derive a session's seed from the run's seed.
pub(crate) fn session_seed(seed: u64, i: usize) -> u64 {
    Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
}

/// Weighted pick of a crash event (index into `CRASHES`).
pub(crate) fn crash_event(d: &mut Demo) -> usize {
    let total: u64 = CRASHES.iter().map(|c| c.1).sum();
    let mut x = d.rng.next_u64() % total;
    for (i, c) in CRASHES.iter().enumerate() {
        if x < c.1 {
            return i;
        }
        x -= c.1;
    }
    0
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSummary {
    pub submissions: usize,
    pub sessions: usize,
    pub entries: usize,
    /// Running submissions whose lease expired before `now_ms`.
    pub expired: usize,
    pub whale_submission_id: String,
    pub whale_session_key: String,
    /// Size of the database file.
    pub bytes: u64,
}
