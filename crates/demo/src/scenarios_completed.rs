//! Stuck submissions whose session already holds the final answer (spec §4.1 `completed`, with
//! and without silent overflow): the reconciler settles them as completed (rule 1).

use serde_json::{json, Value};

use super::build::{Demo, Session, Sub, DAY, HOUR, SEC};
use super::flow::*;
use super::shapes::{self, Tokens, HAIKU, SONNET};

pub(crate) fn build(d: &mut Demo) {
    completed_dispatch(d);
    completed_direct(d);
    completed_overflow(d);
}

/// `weather-desk` (assistant): the final answer was committed, then the process died before
/// `completeSubmission`; its lease expired 2 h ago, past the 1 h default timeout.
/// Runtime: `completed` (overflow false) → rule 1 settles it completed (rule 1 beats rule 3).
fn completed_dispatch(d: &mut Demo) {
    let mut s = Session::new("weather-desk", "assistant", d.now - 6 * DAY);
    for (h, city) in [(130, "Bergen"), (52, "Tromsø")] {
        past_dispatch(
            d,
            &mut s,
            PAST_A,
            d.now - h * HOUR,
            json!({"city": city, "question": "Is it a good day for a hike?"}),
            |d, s, sub, run| {
                let out =
                    json!({"city": city, "tempC": 7, "conditions": "light rain", "windKmh": 22});
                tool_round(
                    d,
                    s,
                    sub,
                    run,
                    &HAIKU,
                    None,
                    &[("get_weather", json!({"city": city}), ok(out))],
                );
                text_turn(d, s, sub, run, &HAIKU, &format!("{city}: 7°C, light rain and 22 km/h wind. Short forest trails are fine; skip the exposed ridges."));
            },
        );
    }
    s.jump(stuck_start(d, CRASH_2H, 16 * SEC));
    let q = "Do I need studded tyres for the drive to Lillehammer tomorrow?";
    let mut sub = Sub::dispatch(d, &s, json!({"city": "Oslo", "question": q}), s.t);
    start(d, &mut s, &mut sub, CRASH_2H, DEFAULT_DURABILITY);
    let mut run = None;
    tool_round(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        Some("Checking both ends of the route."),
        &[
            (
                "get_weather",
                json!({"city": "Oslo", "day": "tomorrow"}),
                ok(
                    json!({"city": "Oslo", "tempC": -3, "conditions": "light snow", "roads": "icy patches"}),
                ),
            ),
            (
                "get_weather",
                json!({"city": "Lillehammer", "day": "tomorrow"}),
                ok(
                    json!({"city": "Lillehammer", "tempC": -9, "conditions": "snow", "roads": "packed snow"}),
                ),
            ),
        ],
    );
    text_turn(d, &mut s, &sub, &mut run, &HAIKU, "Yes. Oslo is -3°C with icy patches and Lillehammer -9°C on packed snow; studded or good Nordic winter tyres are strongly advised.");
    crash(d, &mut s, &mut sub, CRASH_2H);
    finish(d, s, sub, run);
}

/// `alice-laptop` (assistant, direct): answer committed, process died before the terminal
/// event was reserved. Runtime: `completed` → rule 1 through the direct terminal outbox.
/// A second direct prompt is queued behind it.
fn completed_direct(d: &mut Demo) {
    let mut s = Session::new("alice-laptop", "assistant", d.now - 4 * DAY);
    past_direct(d, &mut s, PAST_A, d.now - 90 * HOUR, "What's the status of the Q3 roadmap doc?", &HAIKU,
        "The Q3 roadmap doc was last edited yesterday by Priya; two sections (Search, Billing) are still marked draft.");
    past_direct(d, &mut s, PAST_B, d.now - 20 * HOUR, "Remind me what ticket 17 was about.", &HAIKU,
        "Ticket 17: customer Nordlys AS reports duplicate invoices after the plan change on the 3rd.");
    s.jump(stuck_start(d, CRASH_30S, 14 * SEC));
    let mut sub = Sub::direct(
        d,
        &s,
        "Summarize ticket 17 and draft a reply to the customer.",
        s.t,
    );
    start(d, &mut s, &mut sub, CRASH_30S, DEFAULT_DURABILITY);
    let mut run = None;
    let out = json!({"tickets": [{"id": 17, "title": "Duplicate invoices after plan change", "status": "open", "messages": 4}]});
    tool_round(
        d,
        &mut s,
        &sub,
        &mut run,
        &HAIKU,
        None,
        &[(
            "search_tickets",
            json!({"query": "#17", "limit": 1}),
            ok(out),
        )],
    );
    text_turn(d, &mut s, &sub, &mut run, &HAIKU, "Summary: Nordlys AS got two invoices (INV-20931, INV-20932) after switching plans on the 3rd.\n\nDraft reply: \"Hi Kari, sorry for the confusion: INV-20932 was issued in error and has been voided. No action is needed on your side.\"");
    crash(d, &mut s, &mut sub, CRASH_30S);
    let q = Sub::direct(
        d,
        &s,
        "Also add a note about this to the CRM.",
        sub.accepted_at + 9_400,
    );
    d.subs.push(q);
    finish(d, s, sub, run);
}

/// `research-lab` (researcher, Sonnet with the 1M-context beta): the final answer is `stop` but
/// used 211k prompt tokens against the configured 200k window. Runtime: `completed` with
/// overflow true → rule 1 (settled completed; the silent overflow only matters on resume).
/// The history has a `task` child session.
fn completed_overflow(d: &mut Demo) {
    let mut s = Session::new("research-lab", "researcher", d.now - 2 * DAY);
    s.jump(stuck_start(d, CRASH_4M, 50 * SEC));
    let input =
        json!({"topic": "solid-state battery degradation", "depth": "survey", "maxSources": 40});
    let mut sub = Sub::dispatch(d, &s, input, s.t);
    start(d, &mut s, &mut sub, CRASH_4M, DEFAULT_DURABILITY);
    let mut run = None;
    let prompt =
        "Find and summarize 2023-2025 papers on dendrite formation in sulfide electrolytes.";
    let (_, calls) = tool_request(
        d,
        &mut s,
        &sub,
        &mut run,
        &SONNET,
        Some("Splitting the survey; delegating the literature search."),
        None,
        &[(
            "task",
            json!({"description": "Literature search", "prompt": prompt}),
        )],
    );
    let task_id = d.uuid();
    let name = format!("task:default:{task_id}");
    s.children
        .push(json!({"type": "task", "session": name, "taskId": task_id}));
    let mut c = Session::with_key(
        &s.instance,
        &s.agent,
        &format!("[\"research-lab\",\"default\",\"{name}\"]"),
        s.t + 12,
    );
    c.tick(d, 5, 20);
    c.append(d, shapes::user_text(prompt, c.t), vec![]);
    let out = json!({"results": 37, "top": ["Kasemchainan 2023", "Ning 2024", "Lewis 2025"]});
    let search = tool_call_of(
        d,
        &mut c,
        "web_search",
        json!({"query": "sulfide electrolyte dendrite 2023..2025"}),
    );
    tool_results(d, &mut c, None, &[search], vec![ok(out)]);
    c.tick(d, 2_000, 5_000);
    let answer = "37 relevant papers. Consensus: dendrites nucleate at grain boundaries; stack pressure above 5 MPa and Li-alloy interlayers delay short circuits.";
    let tk = tokens(d, &c, &SONNET, answer.len());
    let msg_id = assistant(
        d,
        &mut c,
        &SONNET,
        vec![shapes::text(answer)],
        tk,
        "stop",
        None,
        (3_000, 6_000),
    );
    s.jump(c.t + 8);
    let details = json!({"taskId": task_id, "session": name, "messageId": msg_id});
    let tr = shapes::tool_result(&calls[0].id, "task", answer, Some(details), false, s.t);
    let last = s.append(d, tr, vec![]);
    s.tick(d, 1, 3);
    run.as_mut().expect("journal").checkpoint_ready(s.t, &last);
    provider(d, &mut s, &sub, &mut run);
    let text = "Survey: 37 papers (2023-2025). Dendrite growth in sulfide SSEs is driven by grain-boundary defects and uneven stack pressure. Mitigations with evidence: Li-In/Ag-C interlayers, pressure > 5 MPa, halide coatings. Open question: long-term capacity fade above 1C.";
    let tk = Tokens::new(23_112, 1_874, 188_416, 0);
    let id = assistant(
        d,
        &mut s,
        &SONNET,
        vec![shapes::text(text)],
        tk,
        "stop",
        None,
        (30_000, 38_000),
    );
    s.tick(d, 1, 5);
    run.as_mut().expect("journal").commit(s.t, &id);
    crash(d, &mut s, &mut sub, CRASH_4M);
    d.push_session(c);
    finish(d, s, sub, run);
}

/// A tool call block for a session without a journal (task child sessions), appended as a
/// `toolUse` assistant.
fn tool_call_of(d: &mut Demo, s: &mut Session, name: &str, args: Value) -> Call {
    let id = d.call_id(&SONNET);
    let block = shapes::tool_call(&id, name, args);
    let tk = tokens(d, s, &SONNET, 120);
    assistant(
        d,
        s,
        &SONNET,
        vec![block.clone()],
        tk,
        "toolUse",
        None,
        (1_500, 3_000),
    );
    Call {
        block,
        id,
        name: name.to_string(),
    }
}
