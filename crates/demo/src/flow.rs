//! Processing steps as the runtime performs them (spec §3.2, §4.6): claim, input, model turns,
//! tool batches, settlement. Each step advances the session clock by a realistic amount and
//! keeps the session, the submission row and the turn journal consistent with one another.

use serde_json::{json, Value};

use super::build::{Demo, Run, Session, Sub, HOUR, MIN, SEC};
use super::shapes::{self, Model, Tokens};

/// A scenario's JSON value as a successful tool result (`Ok` with the builder's error type).
pub fn ok(v: Value) -> Result<Value, &'static str> {
    Ok(v)
}

/// `durability` of an agent: (maxAttempts, timeoutMs). The runtime defaults.
pub const DEFAULT_DURABILITY: (i64, i64) = (10, HOUR);

/// Coordinator processes (Node coordinator UUIDs), by role.
pub const PAST_A: usize = 0;
pub const PAST_B: usize = 1;
pub const CRASH_30S: usize = 2;
pub const CRASH_4M: usize = 3;
pub const CRASH_2H: usize = 4;
pub const LIVE: usize = 5;

/// The moment the lease of a process that crashed should have expired.
pub fn lease_target(d: &Demo, proc_index: usize) -> i64 {
    match proc_index {
        CRASH_30S => d.now - 30 * SEC,
        CRASH_4M => d.now - 4 * MIN,
        CRASH_2H => d.now - 2 * HOUR,
        _ => d.now + 30 * MIN,
    }
}

/// When a stuck attempt that needs about `budget` ms must start so that the process `p`
/// crashes about 25 s before its lease target.
pub fn stuck_start(d: &Demo, p: usize, budget: i64) -> i64 {
    lease_target(d, p) - 25 * SEC - budget
}

/// A tool call as it appears in the assistant content and in the journal.
#[derive(Debug, Clone)]
pub struct Call {
    pub block: Value,
    pub id: String,
    pub name: String,
}

/// Token numbers for the next response, from the session's context size.
pub fn tokens(d: &mut Demo, s: &Session, model: &Model, out_chars: usize) -> Tokens {
    let prompt = s.ctx + d.jitter(0, 400);
    let out = (out_chars as i64 / 4).max(9) + d.jitter(3, 40);
    let cached = if model.provider == "openai" {
        prompt / 2 / 128 * 128
    } else {
        prompt * 3 / 4 / 64 * 64
    };
    Tokens::new(prompt - cached, out, cached, 0)
}

/// Claim `sub` (by coordinator `owner`), persist its input entry, mark the input applied.
/// Returns the input entry id.
pub fn start(
    d: &mut Demo,
    s: &mut Session,
    sub: &mut Sub,
    owner: usize,
    durability: (i64, i64),
) -> String {
    s.tick(d, 3, 40);
    let o = d.procs[owner].clone();
    sub.claim(d, s.t, &o);
    s.tick(d, 8, 90);
    let id = sub.input_entry(d, s);
    s.tick(d, 1, 5);
    sub.apply_input(s.t, durability);
    s.usage.clear();
    id
}

/// `beginTurnJournal` (first turn or a new turn) followed by `providerStarted`.
pub fn provider(d: &mut Demo, s: &mut Session, sub: &Sub, run: &mut Option<Run>) {
    s.tick(d, 2, 6);
    match run {
        None => *run = Some(Run::begin(d, sub, s.t, s.leaf.as_deref())),
        Some(r) => r.next_turn(d, s.t, s.leaf.as_deref()),
    }
    s.tick(d, 1, 4);
    run.as_mut().expect("journal").provider_started(s.t);
}

/// Append an assistant message that streamed for `gen` ms (`started`: the provider accepted
/// the request, so the message carries a `responseId`).
#[allow(clippy::too_many_arguments)]
pub fn assistant(
    d: &mut Demo,
    s: &mut Session,
    model: &Model,
    content: Vec<Value>,
    tk: Tokens,
    stop: &str,
    error: Option<&str>,
    gen: (i64, i64),
) -> String {
    let msg_ts = s.t + d.jitter(1, 5);
    let rid = if error.is_none() || stop == "aborted" {
        Some(d.response_id(model))
    } else {
        None
    };
    s.jump(msg_ts);
    s.tick(d, gen.0, gen.1);
    s.usage.push((*model, tk));
    let m = shapes::assistant(
        model,
        content,
        shapes::usage(model, tk),
        stop,
        msg_ts,
        rid.as_deref(),
        error,
    );
    s.append(d, m, vec![])
}

/// A failed provider call (no response started): empty content, zero usage.
pub fn error_turn(
    d: &mut Demo,
    s: &mut Session,
    sub: &Sub,
    run: &mut Option<Run>,
    model: &Model,
    err: &str,
) -> String {
    provider(d, s, sub, run);
    assistant(
        d,
        s,
        model,
        vec![],
        Tokens::default(),
        "error",
        Some(err),
        (180, 900),
    )
}

/// A model turn answering with text (`stop`), committed in the journal.
pub fn text_turn(
    d: &mut Demo,
    s: &mut Session,
    sub: &Sub,
    run: &mut Option<Run>,
    model: &Model,
    text: &str,
) -> String {
    provider(d, s, sub, run);
    let tk = tokens(d, s, model, text.len());
    let gen = (900 + text.len() as i64 * 8, 2_000 + text.len() as i64 * 14);
    let id = assistant(d, s, model, vec![shapes::text(text)], tk, "stop", None, gen);
    s.tick(d, 1, 5);
    run.as_mut().expect("journal").commit(s.t, &id);
    id
}

/// A model turn requesting `calls` (`toolUse`); journal phase `tool_request_recorded`.
#[allow(clippy::too_many_arguments)]
pub fn tool_request(
    d: &mut Demo,
    s: &mut Session,
    sub: &Sub,
    run: &mut Option<Run>,
    model: &Model,
    think: Option<&str>,
    lead: Option<&str>,
    calls: &[(&str, Value)],
) -> (String, Vec<Call>) {
    provider(d, s, sub, run);
    let mut content = Vec::new();
    if let (Some(t), true) = (think, model.provider == "anthropic") {
        let sig = d.signature();
        content.push(shapes::thinking(t, &sig));
    }
    if let Some(l) = lead {
        content.push(shapes::text(l));
    }
    let mut out = Vec::new();
    for (name, args) in calls {
        let id = d.call_id(model);
        let block = shapes::tool_call(&id, name, args.clone());
        content.push(block.clone());
        out.push(Call {
            block,
            id,
            name: name.to_string(),
        });
    }
    let chars = content.iter().map(|c| c.to_string().len()).sum::<usize>();
    let tk = tokens(d, s, model, chars);
    let id = assistant(d, s, model, content, tk, "toolUse", None, (1_100, 4_800));
    s.tick(d, 1, 3);
    let blocks: Vec<Value> = out.iter().map(|c| c.block.clone()).collect();
    run.as_mut()
        .expect("journal")
        .tool_request(s.t, &id, &blocks);
    (id, out)
}

/// Run `calls` in parallel and save their results together (`Err` = the tool threw).
/// With a journal, ends with "checkpointReady" (`before_provider`, checkpoint = last result).
pub fn tool_results(
    d: &mut Demo,
    s: &mut Session,
    run: Option<&mut Run>,
    calls: &[Call],
    outputs: Vec<Result<Value, &str>>,
) -> String {
    let base = s.t;
    let ends: Vec<i64> = calls.iter().map(|_| base + d.jitter(120, 2_600)).collect();
    let saved = ends.iter().max().copied().unwrap_or(base) + d.jitter(3, 15);
    s.jump(saved);
    let mut last = String::new();
    for ((call, out), ts) in calls.iter().zip(outputs).zip(ends) {
        let m = match out {
            Ok(v) => {
                let details = json!({"customTool": call.name, "output": v});
                shapes::tool_result(
                    &call.id,
                    &call.name,
                    &v.to_string(),
                    Some(details),
                    false,
                    ts,
                )
            }
            Err(e) => shapes::tool_result(&call.id, &call.name, e, Some(json!({})), true, ts),
        };
        last = s.append(d, m, vec![]);
    }
    if let Some(r) = run {
        s.tick(d, 1, 3);
        r.checkpoint_ready(s.t, &last);
    }
    last
}

/// `tool_request` + `tool_results`: one complete tool round.
pub fn tool_round(
    d: &mut Demo,
    s: &mut Session,
    sub: &Sub,
    run: &mut Option<Run>,
    model: &Model,
    lead: Option<&str>,
    calls: &[(&str, Value, Result<Value, &str>)],
) -> String {
    let req: Vec<(&str, Value)> = calls.iter().map(|(n, a, _)| (*n, a.clone())).collect();
    let (_, made) = tool_request(d, s, sub, run, model, None, lead, &req);
    let outs = calls.iter().map(|(_, _, o)| o.clone()).collect();
    tool_results(d, s, run.as_mut(), &made, outs)
}

/// Settle a dispatch as completed shortly after its final turn.
pub fn complete(d: &mut Demo, s: &mut Session, sub: &mut Sub) {
    s.tick(d, 4, 30);
    sub.complete(s.t);
}

/// Settle a direct prompt as completed through the terminal outbox (§1.4, §5.2 rule 1).
pub fn complete_direct(d: &mut Demo, s: &mut Session, sub: &mut Sub, text: &str, model: &Model) {
    s.tick(d, 4, 30);
    let result = json!({
        "text": text, "usage": shapes::usage_sum(&s.usage),
        "model": {"provider": model.provider, "id": model.id}
    });
    let idx = d.jitter(9, 60);
    let ev = shapes::settled_event(
        &sub.id,
        &s.instance,
        &s.agent,
        ("completed", result),
        idx,
        s.t,
    );
    sub.settle_direct(d, &ev, s.t);
}

/// One earlier, completed dispatch: admitted at `at`, processed by `body`, settled.
pub fn past_dispatch(
    d: &mut Demo,
    s: &mut Session,
    owner: usize,
    at: i64,
    input: Value,
    body: impl FnOnce(&mut Demo, &mut Session, &Sub, &mut Option<Run>),
) -> Sub {
    s.jump(at);
    let mut sub = Sub::dispatch(d, s, input, s.t);
    start(d, s, &mut sub, owner, DEFAULT_DURABILITY);
    let mut run = None;
    body(d, s, &sub, &mut run);
    complete(d, s, &mut sub);
    d.journals.extend(run);
    d.subs.push(sub.clone());
    sub
}

/// One earlier, completed direct prompt answered with a single text turn.
pub fn past_direct(
    d: &mut Demo,
    s: &mut Session,
    owner: usize,
    at: i64,
    prompt: &str,
    model: &Model,
    answer: &str,
) {
    s.jump(at);
    let mut sub = Sub::direct(d, s, prompt, s.t);
    start(d, s, &mut sub, owner, DEFAULT_DURABILITY);
    let mut run = None;
    text_turn(d, s, &sub, &mut run, model, answer);
    complete_direct(d, s, &mut sub, answer, model);
    d.journals.extend(run);
    d.subs.push(sub);
}

/// The process running `sub` died right after the session clock: set the expired lease.
pub fn crash(d: &mut Demo, s: &mut Session, sub: &mut Sub, owner: usize) {
    let crashed = s.t + d.jitter(40, 1_500);
    sub.crash(crashed, lease_target(d, owner));
}

/// Push a stuck submission, its journal (if any) and its session.
pub fn finish(d: &mut Demo, s: Session, sub: Sub, run: Option<Run>) {
    d.subs.push(sub);
    d.journals.extend(run);
    d.push_session(s);
}

/// A compaction entry summarizing the path so far, keeping the last `keep` entries.
pub fn compact(d: &mut Demo, s: &mut Session, summary: &str, keep: usize) -> String {
    s.tick(d, 2_000, 6_000);
    let first_kept = s.entries[s.entries.len().saturating_sub(keep)].0.clone();
    let before = s.ctx;
    let tk = Tokens::new(before * 9 / 10, summary.len() as i64 / 4 + 20, 0, 0);
    let id = d.entry_id();
    let usage = shapes::usage(&shapes::HAIKU, tk);
    let e = shapes::compaction_entry(
        &id,
        s.leaf.as_deref(),
        s.t,
        summary,
        &first_kept,
        before,
        usage,
    );
    let id = s.push(d, id, e);
    s.ctx = 2_400 + summary.len() as i64 / 4 + 600 * keep as i64;
    id
}
