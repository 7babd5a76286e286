//! `billing-bot`: the long, lived-in session (about 80 entries, two compactions, a failed
//! earlier dispatch) whose latest dispatch is stuck in the middle of a tool batch.

use serde_json::{json, Value};

use super::build::{Demo, Run, Session, Sub, DAY, HOUR, MIN, SEC};
use super::flow::*;
use super::shapes::{self, HAIKU};

/// The billing agent's `durability`: 3 attempts, 15 minutes.
const BILLING: (i64, i64) = (3, 15 * MIN);

struct Invoice {
    id: &'static str,
    customer: &'static str,
    cents: i64,
    action: &'static str,
}

const HISTORY: [(i64, Invoice); 11] = [
    (
        320,
        Invoice {
            id: "INV-20931",
            customer: "cus_7Hq2L",
            cents: 12_900,
            action: "collect_overdue",
        },
    ),
    (
        300,
        Invoice {
            id: "INV-20940",
            customer: "cus_2Pn8D",
            cents: 4_900,
            action: "send_reminder",
        },
    ),
    (
        250,
        Invoice {
            id: "INV-20932",
            customer: "cus_7Hq2L",
            cents: 12_900,
            action: "refund",
        },
    ),
    (
        200,
        Invoice {
            id: "INV-21010",
            customer: "cus_9QxT2",
            cents: 89_000,
            action: "collect_overdue",
        },
    ),
    (
        170,
        Invoice {
            id: "INV-21033",
            customer: "cus_4Rt6W",
            cents: 2_500,
            action: "send_reminder",
        },
    ),
    (
        120,
        Invoice {
            id: "INV-21102",
            customer: "cus_1Ab3C",
            cents: 15_000,
            action: "collect_overdue",
        },
    ),
    (
        97,
        Invoice {
            id: "INV-21150",
            customer: "cus_8Kk1Z",
            cents: 7_700,
            action: "collect_overdue",
        },
    ),
    (
        72,
        Invoice {
            id: "INV-21188",
            customer: "cus_2Pn8D",
            cents: 4_900,
            action: "send_reminder",
        },
    ),
    (
        49,
        Invoice {
            id: "INV-21240",
            customer: "cus_5Ll0P",
            cents: 31_200,
            action: "collect_overdue",
        },
    ),
    (
        25,
        Invoice {
            id: "INV-21300",
            customer: "cus_4Rt6W",
            cents: 2_500,
            action: "refund",
        },
    ),
    (
        6,
        Invoice {
            id: "INV-21391",
            customer: "cus_3Mm7Q",
            cents: 18_800,
            action: "send_reminder",
        },
    ),
];

fn input(inv: &Invoice) -> Value {
    json!({"invoiceId": inv.id, "customerId": inv.customer, "amountCents": inv.cents, "currency": "EUR", "action": inv.action})
}

fn eur(cents: i64) -> String {
    format!("€{}.{:02}", cents / 100, cents % 100)
}

/// One earlier billing dispatch, processed to completion.
fn handle(d: &mut Demo, s: &mut Session, sub: &Sub, run: &mut Option<Run>, inv: &Invoice) {
    let amount = eur(inv.cents);
    let email = |kind: &str| json!({"to": format!("billing+{}@example.com", inv.customer), "template": kind, "invoiceId": inv.id});
    match inv.action {
        "collect_overdue" => {
            let charge = json!({"chargeId": format!("ch_{}", &inv.id[4..]), "status": "succeeded", "amountCents": inv.cents});
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                Some("Charging the card on file, then sending the receipt."),
                &[
                    (
                        "charge_card",
                        json!({"customerId": inv.customer, "amountCents": inv.cents, "currency": "EUR", "idempotencyKey": inv.id}),
                        ok(charge),
                    ),
                    (
                        "send_email",
                        email("payment_receipt"),
                        ok(
                            json!({"messageId": format!("<{}@mail.example.com>", inv.id), "queued": true}),
                        ),
                    ),
                ],
            );
            text_turn(
                d,
                s,
                sub,
                run,
                &HAIKU,
                &format!(
                    "{}: collected {amount} from {} and sent the receipt.",
                    inv.id, inv.customer
                ),
            );
        }
        "send_reminder" => {
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                None,
                &[(
                    "send_email",
                    email("payment_reminder"),
                    ok(json!({"queued": true})),
                )],
            );
            text_turn(
                d,
                s,
                sub,
                run,
                &HAIKU,
                &format!(
                    "Reminder for {} ({amount}) sent to {}.",
                    inv.id, inv.customer
                ),
            );
        }
        _ => {
            let refund = json!({"refundId": format!("re_{}", &inv.id[4..]), "status": "pending"});
            tool_round(
                d,
                s,
                sub,
                run,
                &HAIKU,
                Some("Issuing the refund."),
                &[(
                    "refund_charge",
                    json!({"invoiceId": inv.id, "amountCents": inv.cents, "reason": "duplicate"}),
                    ok(refund),
                )],
            );
            text_turn(
                d,
                s,
                sub,
                run,
                &HAIKU,
                &format!(
                    "Refund of {amount} for {} issued (pending at the bank, 3-5 days).",
                    inv.id
                ),
            );
        }
    }
}

/// An earlier dispatch that hung in `charge_card`; the process was restarted 40 minutes later,
/// past the agent's 15-minute timeout. Runtime (then): rule 3, failed with
/// "Submission exceeded the configured timeout." and an `exceeded_timeout` advisory.
fn timed_out(d: &mut Demo, s: &mut Session) {
    s.jump(d.now - 146 * HOUR);
    let inv = Invoice {
        id: "INV-21077",
        customer: "cus_6Vv4B",
        cents: 54_000,
        action: "collect_overdue",
    };
    let mut sub = Sub::dispatch(d, s, input(&inv), s.t);
    start(d, s, &mut sub, PAST_A, BILLING);
    let mut run = None;
    let args = json!({"customerId": inv.customer, "amountCents": inv.cents, "currency": "EUR", "idempotencyKey": inv.id});
    tool_request(
        d,
        s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        None,
        &[("charge_card", args)],
    );
    let lease = sub.started_at.unwrap_or(0) + 30 * SEC;
    s.jump(s.t + 40 * MIN);
    let reason = "exceeded_timeout";
    let attrs = json!({"submissionId": sub.id, "kind": "dispatch", "reason": reason});
    let msg = "Submission exceeded the configured timeout.";
    s.append(
        d,
        shapes::signal("submission_interrupted", msg, attrs.clone(), s.t),
        vec![("submissionTerminal", attrs)],
    );
    s.tick(d, 2, 9);
    sub.fail(s.t, msg);
    sub.lease_expires_at = lease;
    d.subs.push(sub);
    d.journals.extend(run);
}

/// `billing-bot` (billing): the latest dispatch's assistant asked for `charge_card` and
/// `send_email`, the journal recorded the request, and the process died while the tools ran
/// (no result saved). Runtime: `tool_use_unresolved`; journal `tool_request_recorded` → rule 6,
/// repair (two synthetic `interrupted` results), phase back to `before_provider`, replace.
pub(crate) fn tool_use_unresolved(d: &mut Demo) {
    let mut s = Session::new("billing-bot", "billing", d.now - 14 * DAY);
    for (i, (h, inv)) in HISTORY.iter().enumerate() {
        if i == 5 {
            timed_out(d, &mut s);
        }
        past_dispatch_with(d, &mut s, d.now - h * HOUR, inv);
        if i == 3 {
            compact(d, &mut s, "Billing log so far: INV-20931 collected (€129.00) then refunded as duplicate INV-20932; reminders sent for INV-20940; INV-21010 collected (€890.00) from cus_9QxT2.", 4);
        }
        if i == 8 {
            compact(d, &mut s, "Billing log: 9 invoices handled since the last summary. INV-21077 (cus_6Vv4B, €540.00) timed out during charge_card and must be checked by hand. All other collections succeeded.", 4);
        }
    }
    s.jump(stuck_start(d, CRASH_4M, 6 * SEC));
    let inv = Invoice {
        id: "INV-21877",
        customer: "cus_9QxT2",
        cents: 89_000,
        action: "collect_overdue",
    };
    let mut sub = Sub::dispatch(d, &s, input(&inv), s.t);
    start(d, &mut s, &mut sub, CRASH_4M, BILLING);
    let mut run = None;
    let charge = json!({"customerId": inv.customer, "amountCents": inv.cents, "currency": "EUR", "idempotencyKey": inv.id});
    let email = json!({"to": "billing+cus_9QxT2@example.com", "template": "payment_receipt", "invoiceId": inv.id});
    tool_request(d, &mut s, &sub, &mut run, &HAIKU,
        Some("Invoice INV-21877 is 30 days overdue; the customer has a valid card on file. Charge it and send the receipt."),
        Some("Charging €890.00 and emailing the receipt."),
        &[("charge_card", charge), ("send_email", email)]);
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, run);
}

fn past_dispatch_with(d: &mut Demo, s: &mut Session, at: i64, inv: &Invoice) {
    s.jump(at);
    let mut sub = Sub::dispatch(d, s, input(inv), s.t);
    let owner = if at < d.now - 100 * HOUR {
        PAST_A
    } else {
        PAST_B
    };
    start(d, s, &mut sub, owner, BILLING);
    let mut run = None;
    handle(d, s, &sub, &mut run, inv);
    complete(d, s, &mut sub);
    d.journals.extend(run);
    d.subs.push(sub);
}
