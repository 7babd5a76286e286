//! Stuck submissions whose classification is not a `resume` (spec §4.1): absent, advanced past
//! input, completed (with and without overflow), tool use unresolved, terminal error, and a
//! committed journal on a session that moved on. Every one has an expired lease.

use serde_json::json;

use super::build::{Demo, Session, Sub, DAY, HOUR, SEC};
use super::flow::*;
use super::shapes::{self, HAIKU, SONNET};

pub(crate) fn build(d: &mut Demo) {
    absent_before_input(d);
    absent_after_input_applied(d);
    advanced_past_input(d);
    super::scenarios_billing::tool_use_unresolved(d);
    terminal_error(d);
    committed_then_follow_up(d);
}

/// `guild-42` (moderator): the process claimed the report and died before the input reached the
/// session. Runtime: input entry absent → `absent`; `input_applied_at` NULL → rule 7, requeue.
/// A second report is queued behind it in the same session.
fn absent_before_input(d: &mut Demo) {
    let mut s = Session::new("guild-42", "moderator", d.now - 9 * DAY);
    let past = [
        (
            200,
            "r-9871",
            "msg 1199043",
            "Spam link to a crypto giveaway. Message deleted; user warned (1st strike).",
        ),
        (
            75,
            "r-9904",
            "msg 1201577",
            "Heated but within the rules. No action; reporter thanked.",
        ),
        (
            26,
            "r-9950",
            "msg 1203311",
            "Doxxing attempt (home address). Message deleted; user banned for 7 days.",
        ),
    ];
    for (h, report, msg, verdict) in past {
        let at = d.now - h * HOUR;
        past_dispatch(
            d,
            &mut s,
            PAST_A,
            at,
            json!({"reportId": report, "type": "flagged", "channel": "#general"}),
            |d, s, sub, run| {
                let args = json!({"channelId": "883201447", "messageId": msg});
                let out = json!({"author": "user_5521", "text": "[message text redacted in demo]", "reactions": 3});
                tool_round(
                    d,
                    s,
                    sub,
                    run,
                    &HAIKU,
                    None,
                    &[("fetch_message", args, ok(out))],
                );
                text_turn(d, s, sub, run, &HAIKU, verdict);
            },
        );
    }
    s.jump(stuck_start(d, CRASH_30S, 3 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"reportId": "r-9987", "type": "flagged", "channel": "#trading"}),
        s.t,
    );
    s.tick(d, 3, 40);
    let owner = d.procs[CRASH_30S].clone();
    sub.claim(d, s.t, &owner);
    crash(d, &mut s, &mut sub, CRASH_30S);
    let queued = json!({"reportId": "r-9988", "type": "flagged", "channel": "#trading"});
    let q = Sub::dispatch(d, &s, queued, sub.accepted_at + 1_730);
    d.subs.push(q);
    finish(d, s, sub, None);
}

/// `support-7` (support, direct): `input_applied_at` is set but no entry of the session carries
/// the prompt. Runtime: `absent`; input applied and no journal → rule 9 (failed via the direct
/// terminal outbox). The history also holds an earlier direct prompt that failed the same way
/// (settled, `error` NULL, `outcome:"failed"` event, advisory signal) and one that completed.
fn absent_after_input_applied(d: &mut Demo) {
    let mut s = Session::new("support-7", "support", d.now - 3 * DAY);
    past_direct(d, &mut s, PAST_A, d.now - 70 * HOUR, "Where is order 88120? It was due Monday.", &HAIKU,
        "Order 88120 left our Leeds warehouse on Tuesday; DPD shows delivery tomorrow before 12:00.");
    // An earlier direct prompt interrupted mid provider call, failed by rule 9.
    s.jump(d.now - 30 * HOUR);
    let mut f = Sub::direct(d, &s, "Please cancel order 88301 before it ships.", s.t);
    start(d, &mut s, &mut f, PAST_A, DEFAULT_DURABILITY);
    let mut run = None;
    provider(d, &mut s, &f, &mut run);
    s.jump(s.t + 95 * SEC); // restarted, reconciled
    let reason = "interrupted_after_input_application";
    let attrs = json!({"submissionId": f.id, "kind": "direct", "reason": reason});
    let sig = shapes::signal(
        "submission_interrupted",
        shapes::AFTER_INPUT_APPLICATION,
        attrs.clone(),
        s.t,
    );
    s.append(d, sig, vec![("submissionTerminal", attrs)]);
    s.tick(d, 3, 12);
    let idx = d.jitter(5, 9);
    let ev = shapes::settled_event(
        &f.id,
        &s.instance,
        &s.agent,
        ("failed", shapes::interrupted_error()),
        idx,
        s.t,
    );
    f.settle_direct(d, &ev, s.t);
    f.lease_expires_at = f.started_at.unwrap_or(0) + 30 * SEC;
    d.subs.push(f);
    d.journals.extend(run);
    past_direct(d, &mut s, PAST_B, d.now - 29 * HOUR, "Did my cancellation of 88301 go through?", &HAIKU,
        "I can't confirm it: the earlier request was interrupted. Order 88301 is still open; I've flagged it for a human agent.");

    s.jump(stuck_start(d, CRASH_4M, 3 * SEC));
    let mut sub = Sub::direct(
        d,
        &s,
        "Can you refund order 88412? The parcel arrived damaged.",
        s.t,
    );
    s.tick(d, 3, 40);
    let owner = d.procs[CRASH_4M].clone();
    sub.claim(d, s.t, &owner);
    s.tick(d, 20, 90);
    sub.apply_input(s.t, DEFAULT_DURABILITY);
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, None);
}

/// `ci-runner-5` (devops): after the input, the handler ran `session.shell()`, whose user message
/// counts as a later user message; then the model call started and the process died.
/// Runtime: `advanced_past_input` (uncertain); journal `provider_started` without chunks, so
/// rule 4 recovers nothing and rule 5 does not apply → rule 9.
fn advanced_past_input(d: &mut Demo) {
    let mut s = Session::new("ci-runner-5", "devops", d.now - 2 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_B,
        d.now - 40 * HOUR,
        json!({"repo": "acme/web", "ref": "refs/pull/812/head", "task": "triage_failure"}),
        |d, s, sub, run| {
            let out = json!({"failed": ["checkout.spec.ts > applies coupon"], "passed": 412, "durationSec": 318});
            tool_round(
                d,
                s,
                sub,
                run,
                &SONNET,
                Some("Fetching the failing job's report."),
                &[("get_ci_report", json!({"runId": 99812}), ok(out))],
            );
            text_turn(d, s, sub, run, &SONNET, "One failure: `checkout.spec.ts > applies coupon` times out waiting for the pricing mock. Looks flaky (passed on retry in run 99790).");
        },
    );
    s.jump(stuck_start(d, CRASH_4M, 6 * SEC));
    let input = json!({"repo": "acme/web", "ref": "refs/heads/main", "task": "bisect_flaky_test", "test": "checkout.spec.ts"});
    let mut sub = Sub::dispatch(d, &s, input, s.t);
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    s.tick(d, 300, 900);
    let call_id = d.uuid();
    let cmd = "git log -5 --oneline -- src/checkout";
    let args = json!({"command": cmd});
    let ts = s.t;
    s.append(
        d,
        shapes::user_string(
            &format!("Run this shell command:\n\n```bash\n{cmd}\n```"),
            ts,
        ),
        vec![],
    );
    s.append(
        d,
        shapes::shell_assistant(shapes::tool_call(&call_id, "bash", args), ts),
        vec![],
    );
    let out = "4f1c2e9 checkout: debounce coupon input\n9a07b13 pricing: cache currency table\n1d2e3f4 checkout: new stepper";
    let details = json!({"command": cmd, "exitCode": 0});
    s.append(
        d,
        shapes::tool_result(&call_id, "bash", out, Some(details), false, ts),
        vec![],
    );
    let mut run = None;
    provider(d, &mut s, &sub, &mut run);
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, run);
}

/// `translator-eu` (translator): the provider rejected the API key. The agent has a 24 h
/// durability timeout, so the 2 h old lease is not past it. Runtime: `terminal_error`
/// ("invalid x-api-key"); journal `provider_started` without chunks → rule 9.
fn terminal_error(d: &mut Demo) {
    let durability = (10, 24 * HOUR);
    let mut s = Session::new("translator-eu", "translator", d.now - 5 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_A,
        d.now - 100 * HOUR,
        json!({"docId": "faq-nb-214", "from": "en", "to": "nb"}),
        |d, s, sub, run| {
            text_turn(d, s, sub, run, &HAIKU, "Ferdig: 14 spørsmål oversatt til bokmål. Begrepet «billing cycle» er gjengitt som «faktureringsperiode».");
        },
    );
    s.jump(stuck_start(d, CRASH_2H, 3 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"docId": "faq-de-215", "from": "en", "to": "de"}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_2H, durability);
    let mut run = None;
    error_turn(d, &mut s, &sub, &mut run, &HAIKU, "invalid x-api-key");
    crash(d, &mut s, &mut sub, CRASH_2H);
    finish(d, s, sub, run);
}

/// `sales-assist` (assistant): the first prompt of the handler completed and its turn was
/// committed; the handler then called `session.prompt()` again, whose user message was saved
/// just before the crash. Agent timeout 6 h. Runtime: `advanced_past_input` (uncertain) with a
/// `committed` journal on a session that is not completed → rule 9.
fn committed_then_follow_up(d: &mut Demo) {
    let durability = (10, 6 * HOUR);
    let mut s = Session::new("sales-assist", "assistant", d.now - 8 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_A,
        d.now - 170 * HOUR,
        json!({"leadId": "L-5310", "action": "qualify"}),
        |d, s, sub, run| {
            let out = json!({"company": "Fjord Freight", "employees": 240, "stage": "MQL"});
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                None,
                &[("crm_lookup", json!({"leadId": "L-5310"}), ok(out))],
            );
            text_turn(d, s, sub, run, &HAIKU, "Fjord Freight (240 staff) fits the mid-market profile; moved to SQL and assigned to Ingrid.");
        },
    );
    s.jump(stuck_start(d, CRASH_2H, 12 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"leadId": "L-5377", "action": "draft_reply", "language": "de"}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_2H, durability);
    let mut run = None;
    text_turn(d, &mut s, &sub, &mut run, &HAIKU, "Draft: \"Hi Jonas, thanks for your interest in our fleet-tracking plan. I've attached pricing for 50 vehicles and suggest a 20-minute call on Thursday.\"");
    s.tick(d, 40, 200);
    let t = s.t;
    s.append(
        d,
        shapes::user_text(
            "Now translate the draft into German, formal register (Sie).",
            t,
        ),
        vec![],
    );
    crash(d, &mut s, &mut sub, CRASH_2H);
    finish(d, s, sub, run);
}
