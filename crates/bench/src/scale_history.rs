//! Settled history of the scale database: model turns, tool rounds and whole submissions built
//! with the hot-path string builders of `scale_text.rs`, on the demo's own `Demo`/`Session`/
//! `Sub`/`Run` state machines and `flow` steps (claim, input, provider start, commit, settle).

use serde_json::{json, Value};

use super::scale_profiles::{self as prof, Profile, Tool};
use super::scale_text::{self as txt, sentence, Corpus, Sizes};
use turnscope_demo::build::{Demo, Run, Session, Sub, MIN, SEC};
use turnscope_demo::flow::{self, error_turn};
use turnscope_demo::shapes::{self, Model, Tokens};

/// Shared, read-only generation context.
pub(crate) struct Ctx<'a> {
    pub corpus: &'a Corpus,
    /// How big tool outputs are.
    pub sizes: Sizes,
    /// Day (ms since epoch / DAY) of `procs[0]`: coordinator `procs[i]` ran on day `first_day + i`.
    pub first_day: i64,
    pub days: usize,
}

impl Ctx<'_> {
    /// Index into `Demo::procs` of the coordinator process that ran at `t`.
    pub(crate) fn owner_at(&self, t: i64) -> usize {
        (t.div_euclid(turnscope_demo::build::DAY) - self.first_day).clamp(0, self.days as i64 - 1)
            as usize
    }
}

/// A tool call of a fast tool round.
pub(crate) struct Call {
    pub id: String,
    pub tool: Tool,
    pub args: Value,
    pub block: String,
}

/// Context above this many tokens is compacted between turns.
const COMPACT_AT: i64 = 150_000;

/// Token numbers for the next response (as `flow::tokens`, with the prompt capped below the
/// window: the runtime compacts before a prompt would overflow).
fn tokens(d: &mut Demo, s: &Session, model: &Model, out_chars: usize) -> Tokens {
    let prompt = s.ctx.min(180_000) + d.jitter(0, 400);
    let out = (out_chars as i64 / 4).max(9) + d.jitter(3, 40);
    let cached = if model.provider == "openai" {
        prompt / 2 / 128 * 128
    } else {
        prompt * 3 / 4 / 64 * 64
    };
    Tokens::new(prompt - cached, out, cached, 0)
}

/// Append an assistant message that streamed for `gen` ms (timing as `flow::assistant`).
fn assistant(
    d: &mut Demo,
    s: &mut Session,
    model: &Model,
    content: &str,
    tk: Tokens,
    stop: &str,
    gen: (i64, i64),
) -> String {
    let msg_ts = s.t + d.jitter(1, 5);
    let rid = d.response_id(model);
    s.jump(msg_ts);
    s.tick(d, gen.0, gen.1);
    s.usage.push((*model, tk));
    let m = txt::assistant(model, content, tk, stop, msg_ts, Some(&rid), None);
    txt::push_message(d, s, &m, "")
}

/// A model turn requesting `n` tool calls; journal phase `tool_request_recorded`.
pub(crate) fn request(
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    sub: &Sub,
    run: &mut Option<Run>,
    n: usize,
) -> (String, Vec<Call>) {
    flow::provider(d, s, sub, run);
    let mut content = String::new();
    if p.model.provider == "anthropic" && d.rng.next_u64() % 3 == 0 {
        let sig = d.signature();
        let t = sentence(&mut d.rng, 8, 40);
        txt::thinking_block(&mut content, &t, &sig);
    }
    if d.rng.next_u64() % 2 == 0 {
        if !content.is_empty() {
            content.push(',');
        }
        let lead = sentence(&mut d.rng, 3, 10);
        txt::text_block(&mut content, &lead);
    }
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        let tool = p.tools[(d.rng.next_u64() % p.tools.len() as u64) as usize];
        let args = prof::arguments(&mut d.rng, &tool);
        let id = d.call_id(&p.model);
        let block = txt::tool_call_block(&id, tool.name, &args.to_string());
        if !content.is_empty() {
            content.push(',');
        }
        content.push_str(&block);
        calls.push(Call {
            id,
            tool,
            args,
            block,
        });
    }
    let tk = tokens(d, s, &p.model, content.len());
    let id = assistant(d, s, &p.model, &content, tk, "toolUse", (1_100, 4_800));
    s.tick(d, 1, 3);
    if let Some(r) = run.as_mut() {
        // `updateTurnJournalPhase('tool_request_recorded', …)`, as `Run::tool_request`.
        let blocks: Vec<&str> = calls.iter().map(|c| c.block.as_str()).collect();
        r.phase = "tool_request_recorded";
        r.revision += 1;
        r.updated_at = s.t;
        r.checkpoint_leaf_id = Some(id.clone());
        r.tool_request_json = Some(format!("{{\"toolCalls\":[{}]}}", blocks.join(",")));
    }
    (id, calls)
}

/// Run `calls` in parallel and save their results together; with a journal, "checkpointReady".
/// Returns the last result id and (when `keep`) the result messages.
pub(crate) fn results(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    run: Option<&mut Run>,
    calls: &[Call],
    keep: bool,
) -> (String, Vec<String>) {
    let base = s.t;
    let ends: Vec<i64> = calls.iter().map(|_| base + d.jitter(120, 2_600)).collect();
    let saved = ends.iter().max().copied().unwrap_or(base) + d.jitter(3, 15);
    s.jump(saved);
    let mut last = String::new();
    let mut kept = Vec::new();
    for (c, ts) in calls.iter().zip(ends) {
        let m = if d.rng.next_u64() % 40 == 0 {
            let err = format!("{} failed: {}", c.tool.name, sentence(&mut d.rng, 3, 9));
            txt::tool_result(&c.id, c.tool.name, &err, Some("{}"), true, ts)
        } else {
            let out = prof::output(x.corpus, &mut d.rng, &c.tool, &c.args, x.sizes);
            txt::tool_result(&c.id, c.tool.name, &out.text, Some(&out.details), false, ts)
        };
        last = txt::push_message(d, s, &m, "");
        if keep {
            kept.push(m);
        }
    }
    if let Some(r) = run {
        s.tick(d, 1, 3);
        r.checkpoint_ready(s.t, &last);
    }
    (last, kept)
}

/// The final answer (`stop`), committed in the journal; returns (entry id, text).
pub(crate) fn answer(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    sub: &Sub,
    run: &mut Option<Run>,
) -> (String, String) {
    flow::provider(d, s, sub, run);
    let text = prof::answer(x.corpus, &mut d.rng);
    let mut content = String::with_capacity(text.len() + 32);
    txt::text_block(&mut content, &text);
    let tk = tokens(d, s, &p.model, text.len());
    let n = text.len() as i64;
    let id = assistant(
        d,
        s,
        &p.model,
        &content,
        tk,
        "stop",
        (900 + n * 8, 2_000 + n * 14),
    );
    s.tick(d, 1, 5);
    run.as_mut().expect("journal").commit(s.t, &id);
    (id, text)
}

/// Compact the history when the context is large (keeps the last two entries, which are always
/// on the active path here). `force` compacts regardless (the whale's schedule).
pub(crate) fn maybe_compact(d: &mut Demo, s: &mut Session, force: bool) -> bool {
    if !force && s.ctx <= COMPACT_AT {
        return false;
    }
    let summary = format!(
        "Summary of the session so far: {} {} {}",
        sentence(&mut d.rng, 8, 20),
        sentence(&mut d.rng, 8, 20),
        sentence(&mut d.rng, 8, 20)
    );
    flow::compact(d, s, &summary, 2);
    true
}

/// A repaired tool round (spec §6.1): `n` calls, the first `recorded` results saved, the process
/// died; on restart the leaf moved back to the assistant, the recorded results were re-appended
/// verbatim and the rest got synthetic `interrupted` results; journal back to `before_provider`,
/// attempt replaced. Leaves `recorded` entries on an abandoned branch. The restart comes
/// `restart` ms (a range) after the crash.
#[allow(clippy::too_many_arguments)]
pub(crate) fn repaired_round(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    sub: &mut Sub,
    run: &mut Option<Run>,
    n: usize,
    recorded: usize,
    restart: (i64, i64),
) {
    debug_assert!(recorded < n);
    let (asst, calls) = request(d, s, p, sub, run, n);
    let (_, kept) = results(x, d, s, None, &calls[..recorded], true);
    let crashed = s.t + d.jitter(40, 1_500);
    s.jump(crashed + d.jitter(restart.0, restart.1));
    let repair_ts = s.t;
    s.set_leaf(&asst);
    for m in &kept {
        txt::push_message(d, s, m, "");
    }
    for c in &calls[recorded..] {
        s.tick(d, 0, 1);
        let m = txt::tool_result(
            &c.id,
            c.tool.name,
            shapes::INTERRUPTED_TEXT,
            None,
            true,
            repair_ts,
        );
        txt::push_message(d, s, &m, "");
    }
    s.tick(d, 2, 8);
    let leaf = s.leaf.clone().expect("leaf");
    let r = run.as_mut().expect("journal");
    r.checkpoint_ready(s.t, &leaf);
    s.tick(d, 2, 8);
    let owner = d.uuid();
    let attempt = sub.replace(d, s.t, &owner);
    r.replace_attempt(s.t, &attempt);
    s.tick(d, 30, 300);
}

/// How long after a crash the process restarted and repaired a tool round (ms).
pub(crate) const RESTART: (i64, i64) = (MIN, 6 * MIN);

/// When a settled submission compacts its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compaction {
    /// When the context is large (before the first turn and between rounds).
    ByContext,
    /// Right after this tool round (the whale's schedule); never otherwise.
    AfterRound(usize),
    Never,
}

/// How a settled submission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    /// Dispatch: the provider rejected the request; `failSubmission("dispatch(<id>) failed: …")`.
    TerminalError,
    /// Interrupted after input application and failed by the reconciler (advisory signal).
    Interrupted,
}

/// One tool round of a settled submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Round {
    pub calls: usize,
    /// Results saved before the process died in this round (0: it did not; otherwise the round
    /// was repaired on restart and these results stay on an abandoned branch).
    pub recorded: usize,
}

impl Round {
    pub(crate) fn plain(calls: usize) -> Round {
        Round { calls, recorded: 0 }
    }

    /// Entries this round adds to the active path.
    pub(crate) fn on_path(&self) -> usize {
        1 + self.calls
    }
}

/// Calls in one tool round: 1–4, mostly 1 or 2.
pub(crate) fn calls_per_round(d: &mut Demo) -> usize {
    match d.rng.next_u64() % 20 {
        0..=9 => 1,
        10..=15 => 2,
        16..=18 => 3,
        _ => 4,
    }
}

const TERMINAL_ERRORS: [&str; 3] = [
    "invalid x-api-key",
    "permission_error: Your API key does not have permission to use the specified resource.",
    "Your credit balance is too low to access the API. Please go to Plans & Billing to upgrade or purchase credits.",
];

/// Admit a submission of `p` at the session clock: a direct prompt `direct_pct` of the time.
pub(crate) fn admit(d: &mut Demo, s: &Session, p: &Profile, dispatch_only: bool) -> Sub {
    if !dispatch_only && d.rng.next_u64() % 100 < p.direct_pct {
        let m = prof::prompt(&mut d.rng);
        Sub::direct(d, s, &m, s.t)
    } else {
        let input = prof::dispatch_input(&mut d.rng, p);
        Sub::dispatch(d, s, input, s.t)
    }
}

/// One settled submission admitted at `at` (or right after the previous one), with `rounds`
/// tool rounds. Returns the number of entries it left on abandoned branches.
#[allow(clippy::too_many_arguments)]
pub(crate) fn settled(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    at: i64,
    rounds: &[Round],
    outcome: Outcome,
    compact: Compaction,
) -> usize {
    if at > s.t {
        s.jump(at);
    }
    let mut sub = admit(d, s, p, outcome == Outcome::TerminalError);
    let owner = x.owner_at(s.t);
    flow::start(d, s, &mut sub, owner, p.durability);
    if compact == Compaction::ByContext {
        maybe_compact(d, s, false);
    }
    let mut run = None;
    let mut abandoned = 0;
    for (i, round) in rounds.iter().enumerate() {
        if round.recorded > 0 {
            repaired_round(
                x,
                d,
                s,
                p,
                &mut sub,
                &mut run,
                round.calls,
                round.recorded,
                RESTART,
            );
            abandoned += round.recorded;
        } else {
            let (_, calls) = request(d, s, p, &sub, &mut run, round.calls);
            results(x, d, s, run.as_mut(), &calls, false);
        }
        match compact {
            Compaction::ByContext => {
                maybe_compact(d, s, false);
            }
            Compaction::AfterRound(k) if k == i => {
                maybe_compact(d, s, true);
            }
            _ => {}
        }
    }
    match outcome {
        Outcome::Completed => {
            let (_, text) = answer(x, d, s, p, &sub, &mut run);
            if sub.kind == "direct" {
                flow::complete_direct(d, s, &mut sub, &text, &p.model);
            } else {
                flow::complete(d, s, &mut sub);
            }
        }
        Outcome::TerminalError => {
            let err = TERMINAL_ERRORS[(d.rng.next_u64() % 3) as usize];
            error_turn(d, s, &sub, &mut run, &p.model, err);
            s.tick(d, 5, 40);
            sub.fail(s.t, &format!("dispatch({}) failed: {err}", sub.id));
        }
        Outcome::Interrupted => {
            flow::provider(d, s, &sub, &mut run);
            let crashed = s.t + d.jitter(40, 1_500);
            s.jump(crashed + d.jitter(MIN, 10 * MIN));
            interrupted(d, s, &mut sub);
            sub.lease_expires_at = crashed + d.jitter(20 * SEC, 30 * SEC);
        }
    }
    d.journals.extend(run);
    d.subs.push(sub);
    abandoned
}

/// The reconciler's failure after input application (spec §5.3): advisory signal, then the
/// dispatch fails with the message, or the direct prompt's terminal event says `failed`.
fn interrupted(d: &mut Demo, s: &mut Session, sub: &mut Sub) {
    let reason = "interrupted_after_input_application";
    let attrs = json!({"submissionId": sub.id, "kind": sub.kind, "reason": reason});
    let sig = shapes::signal(
        "submission_interrupted",
        shapes::AFTER_INPUT_APPLICATION,
        attrs.clone(),
        s.t,
    );
    s.append(d, sig, vec![("submissionTerminal", attrs)]);
    s.tick(d, 3, 12);
    if sub.kind == "direct" {
        let idx = d.jitter(5, 60);
        let ev = shapes::settled_event(
            &sub.id,
            &s.instance,
            &s.agent,
            ("failed", shapes::interrupted_error()),
            idx,
            s.t,
        );
        sub.settle_direct(d, &ev, s.t);
    } else {
        sub.fail(s.t, shapes::AFTER_INPUT_APPLICATION);
    }
}

/// Tool rounds for a submission that should add about `target` entries.
pub(crate) fn plan_rounds(d: &mut Demo, target: f64) -> Vec<Round> {
    let mean = ((target - 2.0) / 2.75).max(0.0);
    let n = if mean <= 0.0 {
        0
    } else {
        let u = (d.rng.next_u64() % 1_000) as f64 / 1_000.0;
        (mean * 2.0 * u).round() as usize
    };
    (0..n).map(|_| Round::plain(calls_per_round(d))).collect()
}

/// `n` settled submissions spread over `window`, adding about `budget` entries in total: about
/// 96% completed (1.5% of those after a repaired round), 2% failed by a provider error, 2%
/// failed by the reconciler after an interruption.
pub(crate) fn history(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    n: usize,
    window: (i64, i64),
    budget: usize,
) {
    let start_len = s.entries.len();
    let span = (window.1 - window.0).max(n as i64);
    for i in 0..n {
        let slot = span / n as i64;
        let at = window.0 + slot * i as i64 + d.jitter(0, slot * 3 / 5);
        let used = s.entries.len() - start_len;
        let target = budget.saturating_sub(used) as f64 / (n - i) as f64;
        let mut rounds = plan_rounds(d, target);
        let outcome = match d.rng.next_u64() % 1_000 {
            0..=19 => {
                rounds.truncate(2);
                Outcome::TerminalError
            }
            20..=39 => {
                // With tool rounds the reconciler would have resumed it (rule 5), not failed it.
                rounds.clear();
                Outcome::Interrupted
            }
            40..=54 if !rounds.is_empty() => {
                let calls = d.jitter(2, 4) as usize;
                let recorded = d.jitter(1, calls as i64 - 1) as usize;
                rounds[0] = Round { calls, recorded };
                Outcome::Completed
            }
            _ => Outcome::Completed,
        };
        settled(x, d, s, p, at, &rounds, outcome, Compaction::ByContext);
    }
}
