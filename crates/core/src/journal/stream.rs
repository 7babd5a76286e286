//! Reconstruction of an interrupted provider stream from `flue_agent_stream_chunks` bodies
//! (spec §3.6; the runtime's `reconstructInterruptedStream`).

use serde_json::Value;

/// What the runtime would rebuild from the stored segments.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamReconstruction {
    /// Non-empty text or thinking was rebuilt: rule 4 can recover it.
    Recoverable { text_chars: usize, blocks: usize },
    /// Nothing usable: the runtime's function returns null and rule 4 falls through.
    NotRecoverable(&'static str),
}

impl StreamReconstruction {
    pub fn is_recoverable(&self) -> bool {
        matches!(self, StreamReconstruction::Recoverable { .. })
    }
}

#[derive(Clone)]
enum Block {
    Text(String),
    Thinking(String),
}

/// Rebuild the stream from segment bodies in `segment_index` order.
pub fn reconstruct_stream(bodies: &[String]) -> StreamReconstruction {
    rebuild(bodies).0
}

/// The aborted partial assistant message the runtime appends when it recovers the stream:
/// the stored partial's keys first, then `role`, `content`, `stopReason`, `errorMessage`.
pub fn recovered_partial_message(bodies: &[String]) -> Option<Value> {
    match rebuild(bodies) {
        (StreamReconstruction::Recoverable { .. }, Some((partial, content))) => {
            let mut m = match partial {
                Value::Object(o) => o,
                _ => serde_json::Map::new(),
            };
            m.insert("role".into(), "assistant".into());
            m.insert("content".into(), Value::Array(content));
            m.insert("stopReason".into(), "aborted".into());
            m.insert(
                "errorMessage".into(),
                "Stream interrupted before completion.".into(),
            );
            Some(Value::Object(m))
        }
        _ => None,
    }
}

fn rebuild(bodies: &[String]) -> (StreamReconstruction, Option<(Value, Vec<Value>)>) {
    let mut blocks: Vec<Option<Block>> = Vec::new();
    let mut partial: Option<Value> = None;
    let mut saw_tool_call = false;
    for body in bodies {
        // A body that is not a JSON array counts as no events, as in the runtime's parseSegment.
        let Ok(Value::Array(events)) = crate::js::lone_surrogates::from_str::<Value>(body) else {
            continue;
        };
        for ev in &events {
            if let Some(p) = ev
                .get("partial")
                .filter(|p| crate::journal::entry::js_truthy(p))
            {
                partial = Some(p.clone());
            }
            let ty = ev.get("type").and_then(Value::as_str).unwrap_or("");
            if matches!(
                ty,
                "toolcall" | "toolcall_start" | "toolcall_delta" | "toolcall_end"
            ) {
                saw_tool_call = true;
                continue;
            }
            let Some(index) = ev
                .get("contentIndex")
                .and_then(Value::as_u64)
                .map(|i| i as usize)
            else {
                continue;
            };
            if index > 10_000 {
                continue; // a sparse JS array; nothing a real stream writes
            }
            if blocks.len() <= index {
                blocks.resize(index + 1, None);
            }
            let text = |k: &str| {
                ev.get(k)
                    .map(crate::journal::entry::js_to_string)
                    .unwrap_or_default()
            };
            match ty {
                "text_delta" => match &mut blocks[index] {
                    Some(Block::Text(t)) => t.push_str(&text("delta")),
                    slot => *slot = Some(Block::Text(text("delta"))),
                },
                "text_end" => blocks[index] = Some(Block::Text(text("content"))),
                "thinking_start" => blocks[index] = Some(Block::Thinking(String::new())),
                "thinking_delta" => match &mut blocks[index] {
                    Some(Block::Thinking(t)) => t.push_str(&text("delta")),
                    slot => *slot = Some(Block::Thinking(text("delta"))),
                },
                "thinking_end" => blocks[index] = Some(Block::Thinking(text("content"))),
                _ => {}
            }
        }
    }
    if saw_tool_call {
        return (
            StreamReconstruction::NotRecoverable("the stream contains a tool call marker"),
            None,
        );
    }
    let Some(partial) = partial else {
        return (
            StreamReconstruction::NotRecoverable("no segment carries the partial message"),
            None,
        );
    };
    let kept: Vec<&Block> = blocks
        .iter()
        .flatten()
        .filter(|b| match b {
            Block::Text(t) | Block::Thinking(t) => !t.is_empty(),
        })
        .collect();
    if kept.is_empty() {
        return (
            StreamReconstruction::NotRecoverable("no non-empty text or thinking was streamed"),
            None,
        );
    }
    let text_chars = kept
        .iter()
        .map(|b| match b {
            Block::Text(t) | Block::Thinking(t) => t.chars().count(),
        })
        .sum();
    let content = kept
        .iter()
        .map(|b| match b {
            Block::Text(t) => serde_json::json!({"type": "text", "text": t}),
            Block::Thinking(t) => serde_json::json!({"type": "thinking", "thinking": t}),
        })
        .collect();
    (
        StreamReconstruction::Recoverable {
            text_chars,
            blocks: kept.len(),
        },
        Some((partial, content)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_with_partial_is_recoverable() {
        let b = vec![
            r#"[{"type":"text_delta","contentIndex":0,"delta":"lorem "}]"#.to_string(),
            r#"[{"type":"text_delta","contentIndex":0,"delta":"ipsum","partial":{"api":"x"}}]"#
                .to_string(),
        ];
        assert_eq!(
            reconstruct_stream(&b),
            StreamReconstruction::Recoverable {
                text_chars: 11,
                blocks: 1
            }
        );
    }

    #[test]
    fn tool_call_marker_or_missing_partial_is_not() {
        let tc = vec![r#"[{"type":"text_delta","contentIndex":0,"delta":"a"},{"type":"toolcall","partial":{}}]"#.to_string()];
        assert!(!reconstruct_stream(&tc).is_recoverable());
        let np = vec![r#"[{"type":"text_delta","contentIndex":0,"delta":"a"}]"#.to_string()];
        assert!(!reconstruct_stream(&np).is_recoverable());
        let empty =
            vec![r#"[{"type":"text_delta","contentIndex":0,"delta":"","partial":{}}]"#.to_string()];
        assert!(!reconstruct_stream(&empty).is_recoverable());
        let junk = vec!["{oops".to_string()];
        assert!(!reconstruct_stream(&junk).is_recoverable());
    }

    #[test]
    fn recovered_partial_keeps_the_partial_keys_first() {
        let b = vec![r#"[{"type":"thinking_start","contentIndex":0},{"type":"thinking_delta","contentIndex":0,"delta":"hm"},{"type":"text_delta","contentIndex":1,"delta":"lorem","partial":{"api":"x","model":"m","usage":{"input":1},"timestamp":5}}]"#.to_string()];
        let m = recovered_partial_message(&b).unwrap();
        assert_eq!(
            m.to_string(),
            r#"{"api":"x","model":"m","usage":{"input":1},"timestamp":5,"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"lorem"}],"stopReason":"aborted","errorMessage":"Stream interrupted before completion."}"#
        );
    }
}
