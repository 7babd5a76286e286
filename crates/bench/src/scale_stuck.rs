//! The head of a session that is not settled: an expired-lease running submission in one of the
//! demo's stuck shapes (every classification kind and resume mode, spec §4.1), a live one, or a
//! `terminalizing` direct prompt. Built with the demo's `flow` steps plus the fast rounds of
//! `scale_history.rs`.

use serde_json::json;

use super::scale_history::{self as hist, Ctx};
use super::scale_profiles::{self as prof, Profile};
use super::scale_text::{self as txt, sentence, Flavor};
use turnscope_demo::build::{Demo, Run, Session, Sub, MIN, SEC};
use turnscope_demo::flow;
use turnscope_demo::shapes::{self, Tokens};

/// The stuck shapes, in the order the first sessions get them (so a small database has each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    AbsentBeforeInput,
    AbsentAfterApplied,
    AdvancedShell,
    AdvancedFollowUp,
    Completed,
    CompletedDirect,
    CompletedOverflow,
    ToolUseUnresolved,
    ToolUseUnresolvedTimeout,
    TerminalError,
    InputOnlyBeforeProvider,
    InputOnlyNoJournal,
    InputNotMarked,
    RetryBudget,
    Overflow,
    TransientRetry,
    StreamContinuation,
    AbortedPartial,
    ToolResults,
    ToolResultsPartial,
    GracefulPartialBatch,
}

/// (variant, weight) once every variant has appeared.
pub(crate) const VARIANTS: [(Variant, u64); 21] = [
    (Variant::AbsentBeforeInput, 5),
    (Variant::AbsentAfterApplied, 3),
    (Variant::AdvancedShell, 3),
    (Variant::AdvancedFollowUp, 2),
    (Variant::Completed, 8),
    (Variant::CompletedDirect, 4),
    (Variant::CompletedOverflow, 2),
    (Variant::ToolUseUnresolved, 15),
    (Variant::ToolUseUnresolvedTimeout, 3),
    (Variant::TerminalError, 4),
    (Variant::InputOnlyBeforeProvider, 8),
    (Variant::InputOnlyNoJournal, 4),
    (Variant::InputNotMarked, 2),
    (Variant::RetryBudget, 1),
    (Variant::Overflow, 2),
    (Variant::TransientRetry, 6),
    (Variant::StreamContinuation, 3),
    (Variant::AbortedPartial, 5),
    (Variant::ToolResults, 8),
    (Variant::ToolResultsPartial, 12),
    (Variant::GracefulPartialBatch, 2),
];

/// The `k`-th stuck session's shape: each variant once, then by weight.
pub(crate) fn variant(k: usize, pick: u64) -> Variant {
    if k < VARIANTS.len() {
        return VARIANTS[k].0;
    }
    let total: u64 = VARIANTS.iter().map(|v| v.1).sum();
    let mut x = pick % total;
    for (v, w) in VARIANTS {
        if x < w {
            return v;
        }
        x -= w;
    }
    Variant::ToolUseUnresolved
}

/// How long before its crash a variant's attempt starts.
fn budget(v: Variant) -> i64 {
    match v {
        Variant::RetryBudget => 35 * MIN,
        Variant::StreamContinuation => 10 * MIN,
        _ => 4 * MIN,
    }
}

/// The process owning `sub` died at `crash_at` (or right after the session clock, if later):
/// the lease its last heartbeat set expires 20–30 s after that.
fn crash(d: &mut Demo, s: &Session, sub: &mut Sub, crash_at: i64) {
    let crashed = crash_at.max(s.t + d.jitter(40, 1_500));
    sub.crash(crashed, crashed + d.jitter(20 * SEC, 30 * SEC));
    // Only if the history ran late (never by construction): stay expired.
    sub.lease_expires_at = sub.lease_expires_at.min(d.now - SEC);
}

/// 0–2 complete tool rounds before the interesting part.
fn lead_rounds(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    sub: &Sub,
    run: &mut Option<Run>,
) {
    for _ in 0..d.jitter(0, 2) {
        let n = hist::calls_per_round(d);
        let (_, calls) = hist::request(d, s, p, sub, run, n);
        hist::results(x, d, s, run.as_mut(), &calls, false);
    }
}

/// Claim by the crashed process and persist the input (flow::start), compacting first if due.
fn start(d: &mut Demo, s: &mut Session, sub: &mut Sub, owner: usize, p: &Profile) {
    flow::start(d, s, sub, owner, p.durability);
    hist::maybe_compact(d, s, false);
}

/// Build the stuck submission of shape `v` whose process `owner` crashed at `crash_at`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stuck(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    v: Variant,
    crash_at: i64,
    owner: usize,
) {
    let begin = (crash_at - budget(v)).max(s.t + MIN);
    s.jump(begin);
    let direct = matches!(
        v,
        Variant::AbsentAfterApplied | Variant::CompletedDirect | Variant::InputOnlyNoJournal
    );
    let mut sub = if direct {
        let m = prof::prompt(&mut d.rng);
        Sub::direct(d, s, &m, s.t)
    } else {
        hist::admit(d, s, p, true)
    };
    let mut run: Option<Run> = None;
    let o = d.procs[owner].clone();
    let model = p.model;
    match v {
        Variant::AbsentBeforeInput => {
            s.tick(d, 3, 40);
            sub.claim(d, s.t, &o);
        }
        Variant::AbsentAfterApplied => {
            s.tick(d, 3, 40);
            sub.claim(d, s.t, &o);
            s.tick(d, 20, 90);
            sub.apply_input(s.t, p.durability);
        }
        Variant::AdvancedShell => {
            start(d, s, &mut sub, owner, p);
            s.tick(d, 300, 900);
            let call_id = d.uuid();
            let cmd = "git log -5 --oneline";
            let ts = s.t;
            let user = format!("Run this shell command:\n\n```bash\n{cmd}\n```");
            s.append(d, shapes::user_string(&user, ts), vec![]);
            let call = shapes::tool_call(&call_id, "bash", json!({"command": cmd}));
            s.append(d, shapes::shell_assistant(call, ts), vec![]);
            let out = x.corpus.text(&mut d.rng, Flavor::Log, 300);
            let details = json!({"command": cmd, "exitCode": 0});
            let tr = shapes::tool_result(&call_id, "bash", &out, Some(details), false, ts);
            s.append(d, tr, vec![]);
            flow::provider(d, s, &sub, &mut run);
        }
        Variant::AdvancedFollowUp => {
            start(d, s, &mut sub, owner, p);
            hist::answer(x, d, s, p, &sub, &mut run);
            s.tick(d, 40, 200);
            let t = s.t;
            let follow = format!("Now {}", sentence(&mut d.rng, 4, 12).to_lowercase());
            s.append(d, shapes::user_text(&follow, t), vec![]);
        }
        Variant::Completed | Variant::CompletedDirect => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            hist::answer(x, d, s, p, &sub, &mut run);
        }
        Variant::CompletedOverflow => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            flow::provider(d, s, &sub, &mut run);
            let text = prof::answer(x.corpus, &mut d.rng);
            let tk = Tokens::new(23_112, 1_874, 188_416, 0);
            let id = flow::assistant(
                d,
                s,
                &model,
                vec![shapes::text(&text)],
                tk,
                "stop",
                None,
                (30_000, 38_000),
            );
            s.tick(d, 1, 5);
            run.as_mut().expect("journal").commit(s.t, &id);
        }
        Variant::ToolUseUnresolved | Variant::ToolUseUnresolvedTimeout => {
            let durability = if v == Variant::ToolUseUnresolvedTimeout {
                (10, 15 * MIN)
            } else {
                p.durability
            };
            flow::start(d, s, &mut sub, owner, durability);
            // No earlier round: any tool result after the input would make it
            // `tool_results_partial` (spec §4.1 step 9).
            let n = d.jitter(1, 3) as usize;
            hist::request(d, s, p, &sub, &mut run, n);
        }
        Variant::TerminalError => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            flow::error_turn(d, s, &sub, &mut run, &model, "invalid x-api-key");
        }
        Variant::InputOnlyBeforeProvider => {
            start(d, s, &mut sub, owner, p);
            s.tick(d, 2, 6);
            run = Some(Run::begin(d, &sub, s.t, s.leaf.as_deref()));
        }
        Variant::InputOnlyNoJournal => start(d, s, &mut sub, owner, p),
        Variant::InputNotMarked => {
            s.tick(d, 3, 40);
            sub.claim(d, s.t, &o);
            s.tick(d, 8, 90);
            sub.input_entry(d, s);
        }
        Variant::RetryBudget => retry_budget(d, s, &mut sub, &mut run, p, crash_at, owner),
        Variant::Overflow => {
            start(d, s, &mut sub, owner, p);
            let (_, calls) = hist::request(d, s, p, &sub, &mut run, 1);
            hist::results(x, d, s, run.as_mut(), &calls, false);
            let err = "prompt is too long: 213000 tokens > 200000 maximum";
            flow::error_turn(d, s, &sub, &mut run, &model, err);
            let summary = format!("The context overflowed. {}", sentence(&mut d.rng, 10, 30));
            flow::compact(d, s, &summary, 1);
            s.tick(d, 2, 6);
            let leaf = s.leaf.clone();
            run.as_mut()
                .expect("journal")
                .next_turn(d, s.t, leaf.as_deref());
        }
        Variant::TransientRetry => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            flow::error_turn(d, s, &sub, &mut run, &model, "429 Too Many Requests");
            s.tick(d, 1_600, 2_000);
            flow::error_turn(d, s, &sub, &mut run, &model, "529 Overloaded");
        }
        Variant::StreamContinuation => {
            stream_continuation(x, d, s, &mut sub, &mut run, p, crash_at, owner)
        }
        Variant::AbortedPartial => aborted_partial(x, d, s, &mut sub, &mut run, p, owner),
        Variant::ToolResults => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            let n = d.jitter(1, 3) as usize;
            let (_, calls) = hist::request(d, s, p, &sub, &mut run, n);
            hist::results(x, d, s, run.as_mut(), &calls, false);
        }
        Variant::ToolResultsPartial => {
            start(d, s, &mut sub, owner, p);
            lead_rounds(x, d, s, p, &sub, &mut run);
            let n = d.jitter(2, 4) as usize;
            let (_, calls) = hist::request(d, s, p, &sub, &mut run, n);
            let recorded = d.jitter(1, n as i64 - 1) as usize;
            hist::results(x, d, s, None, &calls[..recorded], false);
        }
        Variant::GracefulPartialBatch => {
            start(d, s, &mut sub, owner, p);
            let (_, calls) = hist::request(d, s, p, &sub, &mut run, 3);
            s.tick(d, 200, 900);
            let ts = s.t;
            let c = &calls[0];
            let m = txt::tool_result(
                &c.id,
                c.tool.name,
                "Operation aborted",
                Some("{}"),
                true,
                ts,
            );
            let last = txt::push_message(d, s, &m, "");
            s.tick(d, 1, 3);
            run.as_mut().expect("journal").checkpoint_ready(s.t, &last);
            flow::provider(d, s, &sub, &mut run);
            let tk = Tokens::new(s.ctx.min(180_000), 0, 0, 0);
            flow::assistant(
                d,
                s,
                &model,
                vec![],
                tk,
                "aborted",
                Some("Request was aborted."),
                (20, 120),
            );
        }
    }
    crash(d, s, &mut sub, crash_at);
    d.journals.extend(run);
    d.subs.push(sub);
}

/// A crash loop before the provider call: every restart replaced the attempt until the budget
/// (10) was used up; the last owner is the crashed process.
fn retry_budget(
    d: &mut Demo,
    s: &mut Session,
    sub: &mut Sub,
    run: &mut Option<Run>,
    p: &Profile,
    crash_at: i64,
    owner: usize,
) {
    start(d, s, sub, owner, p);
    s.tick(d, 2, 6);
    let mut r = Run::begin(d, sub, s.t, s.leaf.as_deref());
    for i in 1..10 {
        let restart = if i == 9 {
            (crash_at - 30 * SEC).max(s.t + SEC)
        } else {
            s.t + d.jitter(2 * MIN, 3 * MIN)
        };
        s.jump(restart);
        let o = if i == 9 {
            d.procs[owner].clone()
        } else {
            d.uuid()
        };
        let attempt = sub.replace(d, s.t, &o);
        r.replace_attempt(s.t, &attempt);
        s.tick(d, 60, 400);
        let leaf = s.leaf.clone();
        r.next_turn(d, s.t, leaf.as_deref());
    }
    *run = Some(r);
}

/// The stream-chunk `partial` of an assistant message being streamed.
fn partial(d: &mut Demo, p: &Profile, tk: Tokens, ts: i64) -> serde_json::Value {
    let rid = d.response_id(&p.model);
    json!({"api": p.model.api, "provider": p.model.provider, "model": p.model.id,
        "usage": shapes::usage(&p.model, tk), "timestamp": ts, "responseId": rid})
}

/// Deltas of a streamed answer (prose pieces).
fn deltas(x: &Ctx, d: &mut Demo, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let len = d.jitter(20, 60) as usize;
            x.corpus.text(&mut d.rng, Flavor::Prose, len).into_owned()
        })
        .collect()
}

/// Attempt 1 died mid-stream; on restart rule 4 recovered the partial (aborted assistant +
/// `stream_interrupted` + `stream_continued`), consumed the chunks and replaced the attempt;
/// attempt 2 started the continuation turn and died too (as the demo's `docs-bot`).
#[allow(clippy::too_many_arguments)]
fn stream_continuation(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    sub: &mut Sub,
    run: &mut Option<Run>,
    p: &Profile,
    crash_at: i64,
    owner: usize,
) {
    let first_owner = x.owner_at(s.t);
    start(d, s, sub, first_owner, p);
    flow::provider(d, s, sub, run);
    let msg_ts = s.t + d.jitter(1, 4);
    let parts = deltas(x, d, 3);
    let tk = Tokens::new(1_310, 41, 4_096, 0);
    let partial = partial(d, p, tk, msg_ts);
    s.jump(msg_ts + 3_000);
    s.jump((crash_at - 50 * SEC).max(s.t + MIN));
    let mut m = partial;
    let o = m.as_object_mut().expect("object");
    o.insert("role".into(), json!("assistant"));
    o.insert("content".into(), json!([shapes::text(&parts.concat())]));
    o.insert("stopReason".into(), json!("aborted"));
    o.insert(
        "errorMessage".into(),
        json!("Stream interrupted before completion."),
    );
    s.append(d, m, vec![]);
    s.tick(d, 0, 1);
    let attrs = json!({"streamKey": run.as_ref().and_then(|r| r.stream_key.clone())});
    let si = shapes::signal(
        "stream_interrupted",
        shapes::STREAM_INTERRUPTED_TEXT,
        attrs.clone(),
        s.t,
    );
    s.append(d, si, vec![]);
    let sc = shapes::signal(
        "stream_continued",
        shapes::STREAM_CONTINUED_TEXT,
        attrs,
        s.t,
    );
    s.append(d, sc, vec![]);
    s.tick(d, 2, 6);
    run.as_mut().expect("journal").mark_stream_consumed(s.t);
    s.tick(d, 2, 6);
    let o = d.procs[owner].clone();
    let attempt = sub.replace(d, s.t, &o);
    run.as_mut()
        .expect("journal")
        .replace_attempt(s.t, &attempt);
    s.tick(d, 40, 400);
    flow::provider(d, s, sub, run);
}

/// Graceful shutdown mid-stream: the aborted partial answer was checkpointed and two
/// stream-chunk segments are stored (as the demo's `podcast-notes`).
fn aborted_partial(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    sub: &mut Sub,
    run: &mut Option<Run>,
    p: &Profile,
    owner: usize,
) {
    start(d, s, sub, owner, p);
    flow::provider(d, s, sub, run);
    let key = run
        .as_ref()
        .and_then(|r| r.stream_key.clone())
        .expect("stream key");
    let msg_ts = s.t + d.jitter(1, 4);
    let rid = d.response_id(&p.model);
    let segs = [deltas(x, d, 3), deltas(x, d, 2)];
    let mut out = 0;
    for (i, seg) in segs.iter().enumerate() {
        out += 24 + 9 * i as i64;
        let part = json!({"api": p.model.api, "provider": p.model.provider, "model": p.model.id,
            "usage": shapes::usage(&p.model, Tokens::new(2_204, out, 8_192, 0)), "timestamp": msg_ts, "responseId": rid});
        let refs: Vec<&str> = seg.iter().map(String::as_str).collect();
        d.chunks
            .push((key.clone(), i as i64, shapes::chunk_body(&refs, &part)));
    }
    let text: String = segs.concat().concat();
    let tk = Tokens::new(2_204, out, 8_192, 0);
    s.jump(msg_ts);
    s.tick(d, 6_100, 6_900);
    let m = shapes::assistant(
        &p.model,
        vec![shapes::text(&text)],
        shapes::usage(&p.model, tk),
        "aborted",
        msg_ts,
        Some(&rid),
        Some("Request was aborted."),
    );
    s.append(d, m, vec![]);
}

/// A healthy submission streaming right now, owned by the live process: one tool round, then
/// a provider call with one stream-chunk segment; the lease runs until `lease`.
pub(crate) fn live(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    now: i64,
    owner: usize,
    lease: i64,
) {
    s.jump((now - 40 * SEC - d.jitter(0, 10 * MIN)).max(s.t + MIN));
    let mut sub = hist::admit(d, s, p, true);
    start(d, s, &mut sub, owner, p);
    let mut run = None;
    let (_, calls) = hist::request(d, s, p, &sub, &mut run, 1);
    hist::results(x, d, s, run.as_mut(), &calls, false);
    flow::provider(d, s, &sub, &mut run);
    let key = run
        .as_ref()
        .and_then(|r| r.stream_key.clone())
        .expect("stream key");
    let part = partial(d, p, Tokens::new(1_022, 18, 3_200, 0), s.t + 3);
    let seg = deltas(x, d, 2);
    let refs: Vec<&str> = seg.iter().map(String::as_str).collect();
    d.chunks.push((key, 0, shapes::chunk_body(&refs, &part)));
    sub.renew(lease - 30 * SEC);
    d.journals.extend(run);
    d.subs.push(sub);
}

/// A direct prompt whose answer was committed and whose `submission_settled` event was reserved
/// (status `terminalizing`, no offset yet) when the process died.
pub(crate) fn terminalizing(
    x: &Ctx,
    d: &mut Demo,
    s: &mut Session,
    p: &Profile,
    at: i64,
    owner: usize,
) {
    s.jump(at.max(s.t + MIN));
    let m = prof::prompt(&mut d.rng);
    let mut sub = Sub::direct(d, s, &m, s.t);
    start(d, s, &mut sub, owner, p);
    let mut run = None;
    let (_, text) = hist::answer(x, d, s, p, &sub, &mut run);
    s.tick(d, 4, 20);
    let result = json!({"text": text, "usage": shapes::usage_sum(&s.usage), "model": {"provider": p.model.provider, "id": p.model.id}});
    let idx = d.jitter(9, 30);
    let ev = shapes::settled_event(
        &sub.id,
        &s.instance,
        &s.agent,
        ("completed", result),
        idx,
        s.t,
    );
    sub.reserve(&ev, s.t);
    let crashed = s.t + d.jitter(40, 1_500);
    sub.crash(crashed, crashed + 25 * SEC);
    d.journals.extend(run);
    d.subs.push(sub);
}
