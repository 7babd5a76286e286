//! A synthetic journal with one long session, for the TUI's scroll tests and the scale bench:
//! the demo's schema (the runtime's DDL), rows shaped like the runtime's, sizes chosen by the
//! caller.

use std::path::Path;

use rusqlite::{params, Connection};

/// Write a journal database with the schema and no rows.
pub fn write_empty_journal(path: &Path) -> rusqlite::Result<()> {
    let conn = Connection::open(path)?;
    conn.execute_batch(super::DDL)?;
    conn.execute("INSERT INTO flue_meta VALUES ('schema_version', '3')", [])?;
    Ok(())
}

/// The submission id of the synthetic database's stuck submission.
pub const SYNTH_SUBMISSION: &str = "5e5e5e5e-0000-4000-8000-000000000001";

/// Write a journal whose one session has about `entries` entries: 20 turns before the input, then
/// tool turns (assistant + 2 results) up to the size, a repaired batch that left an abandoned
/// branch, and a trailing partial batch (2 of 3 calls missing) under an expired lease.
pub fn write_synthetic_journal(
    path: &Path,
    entries: usize,
    now_ms: i64,
) -> rusqlite::Result<usize> {
    let mut conn = Connection::open(path)?;
    conn.execute_batch(super::DDL)?;
    let tx = conn.transaction()?;
    tx.execute("INSERT INTO flue_meta VALUES ('schema_version', '3')", [])?;
    let key = r#"agent-session:["synthetic-1","default","default"]"#;
    let iso = turnscope_core::journal::time::iso_from_ms;
    let t0 = now_ms - 3_600_000;
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut parent: Option<String> = None;
    let mut n = 0usize;
    let mut push = |rows: &mut Vec<(String, String)>,
                    parent: &mut Option<String>,
                    message: String,
                    extra: &str|
     -> String {
        let id = format!("{:08x}", 0x1000_0000u32 + n as u32);
        let p = parent
            .as_ref()
            .map_or("null".to_string(), |p| format!("\"{p}\""));
        let ts = iso(t0 + n as i64 * 500);
        rows.push((
            id.clone(),
            format!(r#"{{"type":"message","id":"{id}","parentId":{p},"timestamp":"{ts}","message":{message}{extra}}}"#),
        ));
        *parent = Some(id.clone());
        n += 1;
        id
    };
    let assistant = |calls: &[(String, &str)], stop: &str| {
        let blocks: Vec<String> = calls
            .iter()
            .map(|(id, name)| format!(r#"{{"type":"toolCall","id":"{id}","name":"{name}","arguments":{{"city":"Oslo","n":{}}}}}"#, id.len()))
            .collect();
        format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"Working on it."}},{}],"api":"anthropic-messages","provider":"anthropic","model":"claude-haiku-4-5","usage":{{"input":1204,"output":88,"cacheRead":0,"cacheWrite":0,"totalTokens":1292,"cost":{{"input":0.001204,"output":0.00044,"cacheRead":0,"cacheWrite":0,"total":0.001644}}}},"stopReason":"{stop}","timestamp":{t0}}}"#,
            blocks.join(",")
        )
    };
    let result = |call: &str, name: &str, err: bool| {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{call}","toolName":"{name}","content":[{{"type":"text","text":"result of {call}"}}],"details":{{}},"isError":{err},"timestamp":{t0}}}"#
        )
    };
    // Earlier conversation, before the submission's input.
    for i in 0..10 {
        push(
            &mut rows,
            &mut parent,
            format!(r#"{{"role":"user","content":"question {i}","timestamp":{t0}}}"#),
            "",
        );
        push(
            &mut rows,
            &mut parent,
            r#"{"role":"assistant","content":[{"type":"text","text":"answer"}],"model":"claude-haiku-4-5","usage":{"input":10,"output":5,"cost":{"total":0.0001}},"stopReason":"stop"}"#.into(),
            "",
        );
    }
    let input = push(
        &mut rows,
        &mut parent,
        format!(
            r#"{{"role":"signal","type":"dispatch_input","tagName":"dispatch","content":"{{}}","attributes":{{"agent":"bench","id":"synthetic-1","dispatchId":"{SYNTH_SUBMISSION}"}},"timestamp":{t0}}}"#
        ),
        &format!(r#","dispatch":{{"dispatchId":"{SYNTH_SUBMISSION}"}}"#),
    );
    let _ = input;
    let mut turn = 0;
    while rows.len() + 8 < entries {
        let calls = [
            (format!("toolu_{turn:05}a"), "get_weather"),
            (format!("toolu_{turn:05}b"), "get_time"),
        ];
        let a = push(&mut rows, &mut parent, assistant(&calls, "toolUse"), "");
        if turn == 3 {
            // A repair: an old partial result left on an abandoned branch, then the leaf moves back.
            push(
                &mut rows,
                &mut parent,
                result(&calls[0].0, calls[0].1, false),
                "",
            );
            parent = Some(a.clone());
        }
        push(
            &mut rows,
            &mut parent,
            result(&calls[0].0, calls[0].1, false),
            "",
        );
        push(
            &mut rows,
            &mut parent,
            result(&calls[1].0, calls[1].1, turn % 7 == 0),
            "",
        );
        turn += 1;
    }
    let calls = [
        ("toolu_last_a".to_string(), "get_weather"),
        ("toolu_last_b".to_string(), "get_time"),
        ("toolu_last_c".to_string(), "search"),
    ];
    let owner = push(&mut rows, &mut parent, assistant(&calls, "toolUse"), "");
    push(
        &mut rows,
        &mut parent,
        result(&calls[0].0, calls[0].1, false),
        "",
    );
    let leaf = parent.clone().unwrap_or_default();
    let data = format!(
        r#"{{"version":8,"conversationId":"conv_01KT3P3GZGFBCKHKMQ11A7H2HW","affinityKey":"aff_01KT3P3H0Q8Z6V5X4W3R2N1M0K","leafId":"{leaf}","childSessions":[],"metadata":{{}},"createdAt":"{}","updatedAt":"{}"}}"#,
        iso(t0),
        iso(now_ms - 60_000)
    );
    tx.execute(
        "INSERT INTO flue_sessions (id, data) VALUES (?1, ?2)",
        params![key, data],
    )?;
    {
        let mut ins = tx.prepare("INSERT INTO flue_session_entries VALUES (?1, ?2, ?3, ?4)")?;
        for (pos, (id, d)) in rows.iter().enumerate() {
            ins.execute(params![key, id, pos as i64, d])?;
        }
    }
    let payload = format!(
        r#"{{"kind":"dispatch","submissionId":"{SYNTH_SUBMISSION}","id":"synthetic-1","agent":"bench","dispatchId":"{SYNTH_SUBMISSION}","input":{{}},"acceptedAt":"{}"}}"#,
        iso(t0)
    );
    tx.execute(
        "INSERT INTO flue_agent_submissions (submission_id, session_key, kind, payload, status, accepted_at, attempt_id,
           input_applied_at, started_at, attempt_count, max_retry, timeout_at, owner_id, lease_expires_at)
         VALUES (?1, ?2, 'dispatch', ?3, 'running', ?4, 'att-1', ?4, ?4, 1, 10, ?5, 'owner-1', ?6)",
        params![SYNTH_SUBMISSION, key, payload, t0, now_ms + 3_600_000, now_ms - 252_000],
    )?;
    let req = r#"{"toolCalls":[{"type":"toolCall","id":"toolu_last_a","name":"get_weather","arguments":{}},{"type":"toolCall","id":"toolu_last_b","name":"get_time","arguments":{}},{"type":"toolCall","id":"toolu_last_c","name":"search","arguments":{}}]}"#;
    tx.execute(
        "INSERT INTO flue_agent_turn_journals VALUES (?1, ?2, 'dispatch', 'att-1', 'op_1', 'turn_1',
           'tool_request_recorded', 7, ?3, ?3, ?4, ?5, NULL, NULL, 0, NULL)",
        params![SYNTH_SUBMISSION, key, t0, owner, req],
    )?;
    tx.commit()?;
    Ok(rows.len())
}
