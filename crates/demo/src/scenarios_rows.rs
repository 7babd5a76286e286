//! The rest of the demo: an absent submission with no session at all, a session repaired the
//! way the runtime repairs (§6.1), a live submission, queued rows, a `terminalizing` direct
//! prompt and dispatch receipts of a deleted session.

use serde_json::json;

use super::build::{Demo, Session, Sub, DAY, HOUR, MIN, SEC};
use super::flow::*;
use super::shapes::{self, HAIKU};

pub(crate) fn build(d: &mut Demo) {
    absent_no_session(d);
    repaired_session(d);
    live_submission(d);
    queued_new_instance(d);
    terminalizing_direct(d);
    deleted_session_receipts(d);
}

/// `onboarding-17` (onboarding): claimed, then the process died before the session was even
/// created (no `flue_sessions` row). Runtime: `absent`, `input_applied_at` NULL → rule 7, requeue.
fn absent_no_session(d: &mut Demo) {
    let mut s = Session::new(
        "onboarding-17",
        "onboarding",
        stuck_start(d, CRASH_4M, 2 * SEC),
    );
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"userId": "u_40911", "plan": "team", "step": "welcome_sequence"}),
        s.t,
    );
    s.tick(d, 3, 40);
    let owner = d.procs[CRASH_4M].clone();
    sub.claim(d, s.t, &owner);
    crash(d, &mut s, &mut sub, CRASH_4M);
    d.subs.push(sub);
}

/// `shop-eu` (orders), settled completed after a repair. Attempt 1 asked for `charge_card`,
/// `reserve_stock` and `send_email`; only `charge_card` saved its result before the crash. On
/// restart the runtime took rule 6: leaf moved back to the assistant, the recorded result
/// re-appended verbatim under a new id, synthetic `interrupted` results for the other two,
/// journal back to `before_provider`, attempt replaced; attempt 2 answered and committed.
/// The original `charge_card` result stays in the table on the abandoned branch.
fn repaired_session(d: &mut Demo) {
    let mut s = Session::new("shop-eu", "orders", d.now - 5 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_A,
        d.now - 100 * HOUR,
        json!({"orderId": "A-1031", "action": "fulfil"}),
        |d, s, sub, run| {
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                None,
                &[
                    (
                        "charge_card",
                        json!({"orderId": "A-1031", "amountCents": 4_990, "currency": "EUR"}),
                        ok(json!({"chargeId": "ch_3P1031", "status": "succeeded"})),
                    ),
                    (
                        "reserve_stock",
                        json!({"orderId": "A-1031", "sku": "MUG-BLK", "qty": 2}),
                        ok(json!({"reservationId": "rsv_1031"})),
                    ),
                    (
                        "send_email",
                        json!({"to": "lena@example.com", "template": "order_confirmed", "orderId": "A-1031"}),
                        ok(json!({"queued": true})),
                    ),
                ],
            );
            text_turn(
                d,
                s,
                sub,
                run,
                &HAIKU,
                "Order A-1031 fulfilled: €49.90 charged, 2 × MUG-BLK reserved, confirmation sent.",
            );
        },
    );
    s.jump(d.now - 5 * HOUR);
    let mut sub = Sub::dispatch(d, &s, json!({"orderId": "A-1042", "action": "fulfil"}), s.t);
    start(d, &mut s, &mut sub, PAST_B, DEFAULT_DURABILITY);
    let mut run = None;
    let (asst, calls) = tool_request(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        Some("Charging, reserving stock and confirming."),
        &[
            (
                "charge_card",
                json!({"orderId": "A-1042", "amountCents": 12_900, "currency": "EUR"}),
            ),
            (
                "reserve_stock",
                json!({"orderId": "A-1042", "sku": "LAMP-OAK", "qty": 1}),
            ),
            (
                "send_email",
                json!({"to": "jonas@example.com", "template": "order_confirmed", "orderId": "A-1042"}),
            ),
        ],
    );
    let charged = json!({"chargeId": "ch_3P1042", "status": "succeeded", "amountCents": 12_900});
    let recorded = tool_results(d, &mut s, None, &calls[..1], vec![ok(charged)]);
    // Restart 3 minutes later: rule 6.
    s.jump(s.t + 3 * MIN);
    let repair_ts = s.t;
    s.set_leaf(&asst);
    let copy = s.entry(&recorded)["message"].clone();
    s.append(d, copy, vec![]);
    for c in &calls[1..] {
        s.tick(d, 0, 1);
        let m = shapes::tool_result(
            &c.id,
            &c.name,
            shapes::INTERRUPTED_TEXT,
            None,
            true,
            repair_ts,
        );
        s.append(d, m, vec![]);
    }
    s.tick(d, 2, 8);
    let leaf = s.leaf.clone().expect("leaf");
    run.as_mut().expect("journal").checkpoint_ready(s.t, &leaf);
    s.tick(d, 2, 8);
    let owner = d.uuid();
    let attempt = sub.replace(d, s.t, &owner);
    run.as_mut()
        .expect("journal")
        .replace_attempt(s.t, &attempt);
    s.tick(d, 30, 300);
    text_turn(d, &mut s, &sub, &mut run, &HAIKU, "Order A-1042: €129.00 was charged (ch_3P1042). Reserving LAMP-OAK and sending the confirmation were interrupted and their outcome is unknown; please check stock and resend the confirmation manually.");
    complete(d, &mut s, &mut sub);
    finish(d, s, sub, run);
}

/// `standup-bot` (assistant): a healthy submission streaming right now. Its lease runs until
/// 30 minutes after `now`, so it stays live while someone explores the demo. Journal
/// `provider_started` with one stream-chunk segment. Runtime: not expired, left alone.
fn live_submission(d: &mut Demo) {
    let mut s = Session::new("standup-bot", "assistant", d.now - 3 * DAY);
    past_dispatch(
        d,
        &mut s,
        PAST_B,
        d.now - 24 * HOUR,
        json!({"team": "platform", "task": "daily_standup_summary"}),
        |d, s, sub, run| {
            let out = json!({"updates": 6, "blocked": ["PLAT-311"]});
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                None,
                &[(
                    "list_updates",
                    json!({"team": "platform", "since": "yesterday"}),
                    ok(out),
                )],
            );
            text_turn(
                d,
                s,
                sub,
                run,
                &HAIKU,
                "6 updates; PLAT-311 (Kafka upgrade) is blocked on the security review.",
            );
        },
    );
    s.jump(d.now - 40 * SEC);
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"team": "platform", "task": "daily_standup_summary"}),
        s.t,
    );
    start(d, &mut s, &mut sub, LIVE, DEFAULT_DURABILITY);
    let mut run = None;
    let out = json!({"updates": 5, "blocked": []});
    tool_round(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        &[(
            "list_updates",
            json!({"team": "platform", "since": "yesterday"}),
            ok(out),
        )],
    );
    provider(d, &mut s, &sub, &mut run);
    let key = run
        .as_ref()
        .and_then(|r| r.stream_key.clone())
        .expect("stream key");
    let rid = d.response_id(&HAIKU);
    let partial = json!({"api": HAIKU.api, "provider": HAIKU.provider, "model": HAIKU.id,
        "usage": shapes::usage(&HAIKU, shapes::Tokens::new(1_022, 18, 3_200, 0)), "timestamp": s.t + 3, "responseId": rid});
    d.chunks.push((
        key,
        0,
        shapes::chunk_body(
            &[
                "Platform standup: 5 updates, ",
                "nothing blocked. Highlights: ",
            ],
            &partial,
        ),
    ));
    sub.renew(d.now + 30 * MIN - 30 * SEC);
    finish(d, s, sub, run);
}

/// `newsletter-9` (publisher): admitted 4 seconds ago, not yet claimed (no session yet).
fn queued_new_instance(d: &mut Demo) {
    let s = Session::new("newsletter-9", "publisher", d.now - 4 * SEC);
    let sub = Sub::dispatch(
        d,
        &s,
        json!({"issue": 42, "task": "compile_issue", "sections": ["product", "hiring", "events"]}),
        s.t,
    );
    d.subs.push(sub);
}

/// `bob-desktop` (assistant, direct): the answer was committed and the `submission_settled`
/// event reserved (status `terminalizing`, no offset yet), then the process died. Runtime: the
/// next reconciliation pass appends the event, records the offset and finalizes (§5.1).
fn terminalizing_direct(d: &mut Demo) {
    let mut s = Session::new("bob-desktop", "assistant", d.now - 2 * DAY);
    past_direct(
        d,
        &mut s,
        PAST_B,
        d.now - 26 * HOUR,
        "Convert 250 USD to NOK.",
        &HAIKU,
        "250 USD ≈ 2,690 NOK at today's rate (10.76).",
    );
    s.jump(stuck_start(d, CRASH_30S, 5 * SEC));
    let mut sub = Sub::direct(
        d,
        &s,
        "Give me a two-line summary of yesterday's incident review.",
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    let mut run = None;
    let text = "INC-771: a bad deploy raised eu-west API latency for 38 minutes.\nAction items: canary stage for the API gateway, alert on p99 > 800 ms.";
    text_turn(d, &mut s, &sub, &mut run, &HAIKU, text);
    s.tick(d, 4, 20);
    let result = json!({"text": text, "usage": shapes::usage_sum(&s.usage), "model": {"provider": HAIKU.provider, "id": HAIKU.id}});
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
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, run);
}

/// `trial-user-3`: a deleted session whose settled dispatches live on only as receipts.
fn deleted_session_receipts(d: &mut Demo) {
    for days in [11, 9] {
        let id = d.uuid();
        let at = d.now - days * DAY - d.jitter(0, HOUR);
        d.receipts.push((id, at));
    }
}
