//! Stuck submissions around tool batches (spec §4.1 `tool_results`, `tool_results_partial`, the
//! graceful-shutdown shape), plus the budget (rule 2), timeout (rule 3) and unmarked-input
//! (rule 8) cases. Every one has an expired lease.

use serde_json::json;

use super::build::{Demo, Run, Session, Sub, DAY, HOUR, MIN, SEC};
use super::flow::*;
use super::shapes::{Tokens, GPT5_MINI, HAIKU};

pub(crate) fn build(d: &mut Demo) {
    tool_results_complete(d);
    tool_results_partial(d);
    graceful_shutdown_partial_batch(d);
    retry_budget_exhausted(d);
    timeout_exceeded(d);
    input_not_marked(d);
}

/// `warehouse-3` (inventory, gpt-5-mini): a 3-call batch completed, "checkpointReady" moved the
/// journal to `before_provider` (checkpoint = last result), then the process died.
/// Runtime: `resume`/`tool_results` (continuable) → rule 5, replace.
fn tool_results_complete(d: &mut Demo) {
    let mut s = Session::new("warehouse-3", "inventory", d.now - 12 * HOUR);
    s.jump(stuck_start(d, CRASH_4M, 12 * SEC));
    let input = json!({"orderId": "SO-55120", "lines": [{"sku": "BRK-220", "qty": 4}, {"sku": "CHN-118", "qty": 1}]});
    let mut sub = Sub::dispatch(d, &s, input, s.t);
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    let mut run = None;
    tool_round(
        d,
        &mut s,
        &sub,
        &mut run,
        &GPT5_MINI,
        None,
        &[
            (
                "lookup_sku",
                json!({"sku": "BRK-220"}),
                ok(json!({"sku": "BRK-220", "name": "Brake pad set", "bin": "A-14-3"})),
            ),
            (
                "check_stock",
                json!({"sku": "CHN-118", "warehouse": "OSL-3"}),
                ok(json!({"sku": "CHN-118", "available": 7})),
            ),
            (
                "reserve_stock",
                json!({"orderId": "SO-55120", "sku": "BRK-220", "qty": 4}),
                ok(json!({"reservationId": "rsv_8812", "expiresInMin": 30})),
            ),
        ],
    );
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, run);
}

/// `travel-desk` (concierge): 3 calls requested and journaled; only `search_flights` saved its
/// result before the crash. Runtime: `resume`/`tool_results_partial` (continuable); journal
/// `tool_request_recorded` → rule 6, repair (1 copied + 2 synthetic results), then replace.
fn tool_results_partial(d: &mut Demo) {
    let mut s = Session::new("travel-desk", "concierge", d.now - DAY);
    s.jump(stuck_start(d, CRASH_30S, 8 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"traveller": "emp_2291", "trip": "OSL-LHR", "dates": ["2026-03-09", "2026-03-12"]}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    let mut run = None;
    let (_, calls) = tool_request(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        Some("Looking up flights, hotels and entry rules."),
        &[
            (
                "search_flights",
                json!({"from": "OSL", "to": "LHR", "date": "2026-03-09"}),
            ),
            (
                "search_hotels",
                json!({"city": "London", "checkIn": "2026-03-09", "nights": 3, "near": "Canary Wharf"}),
            ),
            (
                "check_visa",
                json!({"nationality": "NO", "destination": "GB"}),
            ),
        ],
    );
    let flights = json!({"options": [{"flight": "SK 803", "dep": "07:05", "priceNok": 2140}, {"flight": "BA 763", "dep": "09:40", "priceNok": 2380}]});
    tool_results(d, &mut s, None, &calls[..1], vec![ok(flights)]);
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, run);
}

/// `crm-sync` (sync): graceful shutdown during a 3-call batch: one "Operation aborted" result,
/// checkpointReady, then the next turn was aborted (empty aborted assistant). Runtime:
/// `resume`/`tool_results_partial` (continuable, the batch is second-to-last behind the aborted
/// assistant); journal `provider_started` without chunks → rule 5, replace (flue repairs at
/// resume time, §6.2).
fn graceful_shutdown_partial_batch(d: &mut Demo) {
    let mut s = Session::new("crm-sync", "sync", d.now - 2 * DAY);
    s.jump(stuck_start(d, CRASH_4M, 10 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"source": "hubspot", "since": "2026-02-01T00:00:00Z", "batch": 3}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    let mut run = None;
    let (_, calls) = tool_request(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        None,
        &[
            (
                "fetch_contacts",
                json!({"source": "hubspot", "updatedSince": "2026-02-01T00:00:00Z", "limit": 500}),
            ),
            ("update_crm", json!({"mode": "upsert", "batchId": "b-3"})),
            (
                "write_file",
                json!({"path": "exports/sync-b3.csv", "content": "id,email,updated_at\n"}),
            ),
        ],
    );
    tool_results(
        d,
        &mut s,
        run.as_mut(),
        &calls[..1],
        vec![Err("Operation aborted")],
    );
    provider(d, &mut s, &sub, &mut run);
    let tk = Tokens::new(s.ctx, 0, 0, 0);
    assistant(
        d,
        &mut s,
        &HAIKU,
        vec![],
        tk,
        "aborted",
        Some("Request was aborted."),
        (20, 120),
    );
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, run);
}

/// `pdf-render-1` (renderer): a crash loop before the provider call; every restart replaced the
/// attempt (rule 5) until `attempt_count` reached 10/10. Runtime: `resume`/`input_only`, but
/// rule 2 fires first: failed, "Submission exceeded maximum recovery attempts (10/10)."
fn retry_budget_exhausted(d: &mut Demo) {
    let mut s = Session::new("pdf-render-1", "renderer", d.now - HOUR);
    s.jump(stuck_start(d, CRASH_4M, 3 * SEC) - 28 * MIN);
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"documentId": "annual-report-2025", "template": "print-a4", "attachments": 212}),
        s.t,
    );
    start(d, &mut s, &mut sub, PAST_B, DEFAULT_DURABILITY);
    s.tick(d, 2, 6);
    let mut run = Run::begin(d, &sub, s.t, s.leaf.as_deref());
    for i in 1..10 {
        let restart = if i == 9 {
            stuck_start(d, CRASH_4M, 3 * SEC)
        } else {
            s.t + d.jitter(2 * MIN, 3 * MIN)
        };
        s.jump(restart);
        let owner = if i == 9 {
            d.procs[CRASH_4M].clone()
        } else {
            d.uuid()
        };
        let attempt = sub.replace(d, s.t, &owner);
        run.replace_attempt(s.t, &attempt);
        s.tick(d, 60, 400);
        let leaf = s.leaf.clone();
        run.next_turn(d, s.t, leaf.as_deref());
    }
    crash(d, &mut s, &mut sub, CRASH_4M);
    finish(d, s, sub, Some(run));
}

/// `etl-nightly` (etl, 15-minute timeout): died while `run_query` ran; the lease expired 2 h
/// ago, long past `timeout_at`. Runtime: `tool_use_unresolved`, but rule 3 fires first:
/// failed, "Submission exceeded the configured timeout."
fn timeout_exceeded(d: &mut Demo) {
    let mut s = Session::new("etl-nightly", "etl", d.now - 3 * DAY);
    s.jump(stuck_start(d, CRASH_2H, 5 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"job": "rebuild_revenue_mart", "partition": "2026-02"}),
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_2H, (10, 15 * MIN));
    let mut run = None;
    let sql = "INSERT INTO mart.revenue_daily SELECT day, sku, sum(net) FROM raw.orders WHERE month = '2026-02' GROUP BY 1, 2";
    tool_request(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        Some("Rebuilding the February partition."),
        &[("run_query", json!({"warehouse": "analytics", "sql": sql}))],
    );
    crash(d, &mut s, &mut sub, CRASH_2H);
    finish(d, s, sub, run);
}

/// `intake-form` (intake): the input entry was saved, then the process died before
/// `markSubmissionInputApplied`. Runtime: `resume`/`input_only`; `input_applied_at` NULL and
/// not absent → rule 8, failed "…before input application was confirmed…".
fn input_not_marked(d: &mut Demo) {
    let mut s = Session::new("intake-form", "intake", d.now - 5 * HOUR);
    s.jump(stuck_start(d, CRASH_30S, 2 * SEC));
    let mut sub = Sub::dispatch(
        d,
        &s,
        json!({"formId": "f-20931", "fields": {"name": "Ola Nordmann", "reason": "billing dispute"}}),
        s.t,
    );
    s.tick(d, 3, 40);
    let owner = d.procs[CRASH_30S].clone();
    sub.claim(d, s.t, &owner);
    s.tick(d, 8, 90);
    sub.input_entry(d, &mut s);
    crash(d, &mut s, &mut sub, CRASH_30S);
    finish(d, s, sub, None);
}
