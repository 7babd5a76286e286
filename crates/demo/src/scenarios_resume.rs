//! Stuck submissions the classifier reports as `resume` without a pending tool batch (spec §4.1
//! modes `input_only`, `overflow`, `transient_retry`, `stream_continuation`, `aborted_partial`).
//! Every one has an expired lease.

use serde_json::json;

use super::build::{Demo, Run, Session, Sub, DAY, HOUR, MIN, SEC};
use super::flow::*;
use super::shapes::{self, Tokens, GPT5_MINI, HAIKU, SONNET};

pub(crate) fn build(d: &mut Demo) {
    input_only_before_provider(d);
    input_only_no_journal(d);
    overflow_before_provider(d);
    transient_retry(d);
    stream_continuation(d);
    aborted_partial_with_chunks(d);
}

/// `newsroom-2` (editor, gpt-5-mini): journal begun (`before_provider`, checkpoint = input), the
/// process died before the provider call. Runtime: `resume`/`input_only` (uncertain), provider
/// unreached → rule 5, replace.
fn input_only_before_provider(d: &mut Demo) {
    let mut s = Session::new("newsroom-2", "editor", d.now - 3 * DAY);
    for (h, story) in [(60, "st-4471"), (28, "st-4490")] {
        past_dispatch(
            d,
            &mut s,
            PAST_B,
            d.now - h * HOUR,
            json!({"storyId": story, "task": "headline_options"}),
            |d, s, sub, run| {
                text_turn(d, s, sub, run, &GPT5_MINI, "1. Council approves night-bus pilot\n2. Night buses return to the east side in May\n3. \"Finally\": riders welcome night-bus trial");
            },
        );
    }
    s.jump(stuck_start(d, CRASH_30S, 2 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"storyId": "st-4512", "task": "headline_options", "maxChars": 70}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    s.tick(d, 2, 6);
    let run = Run::begin(d, &sub, s.t, s.leaf.as_deref());
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, Some(run));
}

/// `dana-phone` (assistant, direct): input saved and marked applied, no journal row yet.
/// Runtime: `resume`/`input_only` (uncertain) with no journal → rule 5, replace.
fn input_only_no_journal(d: &mut Demo) {
    let mut s = Session::new("dana-phone", "assistant", d.now - 10 * DAY);
    past_direct(d, &mut s, PAST_A, d.now - 200 * HOUR, "Book a table for 4 at Maaemo on Friday?", &HAIKU,
        "Maaemo is fully booked on Friday. I added you to their waitlist and found a 19:30 table at Kontrast instead; want it?");
    past_direct(
        d,
        &mut s,
        PAST_B,
        d.now - 22 * HOUR,
        "Yes, take Kontrast.",
        &HAIKU,
        "Done: Kontrast, Friday 19:30, 4 people. Confirmation #KX-2231.",
    );
    s.jump(stuck_start(d, CRASH_4M, 2 * SEC));
    let mut sub = Sub::direct(d, &s, "What's on my calendar tomorrow?", s.t);
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, None);
}

/// `legal-review` (reviewer): a 180-page contract overflowed the context ("prompt is too
/// long"), the history was compacted and the next turn's journal begun (`before_provider`,
/// checkpoint = the compaction entry) when the process died. Runtime: `resume`/`overflow`
/// (uncertain), provider unreached → rule 5, replace.
fn overflow_before_provider(d: &mut Demo) {
    let mut s = Session::new("legal-review", "reviewer", d.now - DAY);
    s.jump(stuck_start(d, CRASH_4M, 20 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"contractId": "MSA-2291", "task": "risk_review", "counterparty": "Nordhavn Shipping"}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    let mut run = None;
    let doc = json!({"path": "contracts/MSA-2291.pdf", "pages": 180, "chars": 702_311, "text": "MASTER SERVICES AGREEMENT ... (702,311 characters)"});
    tool_round(
        d,
        &mut s,
        &sub,
        &mut run,
        &SONNET,
        Some("Reading the full agreement."),
        &[(
            "read_file",
            json!({"path": "contracts/MSA-2291.pdf"}),
            ok(doc),
        )],
    );
    s.ctx += 205_000;
    error_turn(
        d,
        &mut s,
        &sub,
        &mut run,
        &SONNET,
        "prompt is too long: 213000 tokens > 200000 maximum",
    );
    compact(d, &mut s, "Reviewing MSA-2291 with Nordhavn Shipping (180 pages). The full text exceeded the context window; continue clause by clause starting with liability (s. 14) and termination (s. 21).", 1);
    s.tick(d, 2, 6);
    let leaf = s.leaf.clone();
    run.as_mut()
        .expect("journal")
        .next_turn(d, s.t, leaf.as_deref());
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, run);
}

/// `status-page` (ops): two provider errors in a row ("429 Too Many Requests", then "529
/// Overloaded"); the process died during the retry backoff. Runtime: `resume`/`transient_retry`
/// with 2 consecutive retryable errors (continuable); journal `provider_started`, stream key
/// without chunks → rule 4 recovers nothing → rule 5, replace.
fn transient_retry(d: &mut Demo) {
    let mut s = Session::new("status-page", "ops", d.now - 2 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_B,
        d.now - 31 * HOUR,
        json!({"incident": "INC-771", "task": "draft_update"}),
        |d, s, sub, run| {
            text_turn(d, s, sub, run, &HAIKU, "Update drafted: \"We've identified elevated API latency in eu-west and are rolling back the 14:05 deploy.\"");
        },
    );
    s.jump(stuck_start(d, CRASH_30S, 5 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"incident": "INC-774", "task": "draft_update", "severity": "major"}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    let mut run = None;
    error_turn(d, &mut s, &sub, &mut run, &HAIKU, "429 Too Many Requests");
    s.tick(d, 1_600, 2_000);
    error_turn(d, &mut s, &sub, &mut run, &HAIKU, "529 Overloaded");
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, run);
}

/// `docs-bot` (writer, direct): attempt 1 died mid-stream; on restart rule 4 recovered the
/// partial answer (aborted assistant + `stream_interrupted` + `stream_continued`), consumed the
/// chunks and replaced the attempt. Attempt 2 started the continuation turn and died too.
/// Runtime: `resume`/`stream_continuation` (continuable); journal `provider_started` (attempt
/// 2's stream key, no chunks) → rule 5, replace. `attempt_count` 2.
fn stream_continuation(d: &mut Demo) {
    let mut s = Session::new("docs-bot", "writer", d.now - 6 * HOUR);
    s.jump(stuck_start(d, CRASH_30S, 3 * SEC) - 7 * MIN);
    let mut sub = Sub::direct(
        d,
        &s,
        "Draft the release notes for v2.3 from the merged PRs.",
        s.t,
    );
    start(d, &mut s, &mut sub, PAST_B, DEFAULT_DURABILITY);
    let mut run = None;
    provider(d, &mut s, &sub, &mut run);
    let r = run.as_mut().expect("journal");
    let key1 = r.stream_key.clone().expect("stream key");
    let msg_ts = s.t + d.jitter(1, 4);
    let rid = d.response_id(&SONNET);
    let deltas = [
        "## v2.3\n\n### Features\n- Bulk export of ",
        "reports to CSV (#1182)\n- Dark mode for the ",
        "admin console (#1190)\n",
    ];
    let tk = Tokens::new(1_310, 41, 4_096, 0);
    let partial = json!({"api": SONNET.api, "provider": SONNET.provider, "model": SONNET.id,
        "usage": shapes::usage(&SONNET, tk), "timestamp": msg_ts, "responseId": rid});
    s.jump(msg_ts + 3_000);
    d.chunks
        .push((key1, 0, shapes::chunk_body(&deltas, &partial)));
    // Restart 6 minutes later: rule 4 (recover the stream), then replace.
    s.jump(stuck_start(d, CRASH_30S, 3 * SEC) - 50 * SEC);
    let mut m = partial.clone();
    let o = m.as_object_mut().expect("object");
    o.insert("role".into(), json!("assistant"));
    o.insert("content".into(), json!([shapes::text(&deltas.concat())]));
    o.insert("stopReason".into(), json!("aborted"));
    o.insert(
        "errorMessage".into(),
        json!("Stream interrupted before completion."),
    );
    s.append(d, m, vec![]);
    s.tick(d, 0, 1);
    let attrs = json!({"streamKey": run.as_ref().and_then(|r| r.stream_key.clone())});
    s.append(
        d,
        shapes::signal(
            "stream_interrupted",
            shapes::STREAM_INTERRUPTED_TEXT,
            attrs.clone(),
            s.t,
        ),
        vec![],
    );
    s.append(
        d,
        shapes::signal(
            "stream_continued",
            shapes::STREAM_CONTINUED_TEXT,
            attrs,
            s.t,
        ),
        vec![],
    );
    s.tick(d, 2, 6);
    let r = run.as_mut().expect("journal");
    r.mark_stream_consumed(s.t);
    d.chunks.pop();
    s.tick(d, 2, 6);
    let owner = d.procs[CRASH_30S].clone();
    let attempt = sub.replace(d, s.t, &owner);
    run.as_mut()
        .expect("journal")
        .replace_attempt(s.t, &attempt);
    // Attempt 2: the continuation turn starts, then the process dies again.
    s.tick(d, 40, 400);
    provider(d, &mut s, &sub, &mut run);
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, run);
}

/// `podcast-notes` (summarizer): graceful shutdown mid-stream; the aborted partial answer was
/// checkpointed and two stream-chunk segments are stored. Runtime: `resume`/`aborted_partial`
/// (continuable); journal `provider_started` with recoverable chunks → rule 4 (append only the
/// two stream signals, since the partial is already there), then replace.
fn aborted_partial_with_chunks(d: &mut Demo) {
    let mut s = Session::new("podcast-notes", "summarizer", d.now - DAY);
    s.jump(stuck_start(d, CRASH_30S, 9 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"episodeId": "ep-218", "task": "show_notes", "durationMin": 74}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    let mut run = None;
    provider(d, &mut s, &sub, &mut run);
    let key = run
        .as_ref()
        .and_then(|r| r.stream_key.clone())
        .expect("stream key");
    let msg_ts = s.t + d.jitter(1, 4);
    let rid = d.response_id(&SONNET);
    let seg = [
        vec![
            "# Episode 218: Heat pumps in cold climates\n\n",
            "Guests: Dr. Eli Sandvik (SINTEF) and ",
            "installer Mona Berg.\n\n",
        ],
        vec![
            "## Highlights\n- Why COP drops below -15°C ",
            "and what cascade systems fix\n- Grants: Enova covers up to ",
        ],
    ];
    let mut out = 0;
    for (i, deltas) in seg.iter().enumerate() {
        out += 24 + 9 * i as i64;
        let partial = json!({"api": SONNET.api, "provider": SONNET.provider, "model": SONNET.id,
            "usage": shapes::usage(&SONNET, Tokens::new(2_204, out, 8_192, 0)), "timestamp": msg_ts, "responseId": rid});
        d.chunks
            .push((key.clone(), i as i64, shapes::chunk_body(deltas, &partial)));
    }
    let text: String = seg.concat().concat();
    let tk = Tokens::new(2_204, out, 8_192, 0);
    s.jump(msg_ts);
    s.tick(d, 6_100, 6_900);
    let m = shapes::assistant(
        &SONNET,
        vec![shapes::text(&text)],
        shapes::usage(&SONNET, tk),
        "aborted",
        msg_ts,
        Some(&rid),
        Some("Request was aborted."),
    );
    s.append(d, m, vec![]);
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, run);
}
