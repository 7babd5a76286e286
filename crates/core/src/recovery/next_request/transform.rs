//! The model library's last step, ported: `transformMessages` of `@earendil-works/pi-ai`
//! 0.79.10 (the version `@flue/runtime` 1.0.0-beta.7 pins; `dist/providers/transform-messages.js`),
//! which every built-in provider applies to the context before it builds its payload, with the
//! tool-call id normaliser of the provider's module (`anthropic.js`, `amazon-bedrock.js`,
//! `openai-completions.js`, `google-shared.js`).

use serde::Serialize;
use serde_json::{json, Value};

use super::context::{js_text, role, tool_calls, ContextMessage, LeftOut, LeftOutReason, Source};

/// The model the next turn is sent to. turnscope cannot read the agent's configured model from
/// the journal: it is taken from the last assistant that names one (the model that answered
/// last), and whether it takes images is the operator's to say (`None`: unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetModel {
    pub provider: String,
    pub api: String,
    pub id: String,
    pub vision: Option<bool>,
}

/// A provider module's tool-call id normaliser, chosen by the model's `api`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdNormaliser {
    /// `anthropic.js` and `amazon-bedrock.js`: `[^a-zA-Z0-9_-]` → `_`, at most 64 characters.
    Sanitise64,
    /// `openai-completions.js`: a `call|item` id keeps its call part, sanitised, 40 characters;
    /// for provider `openai` an id over 40 characters is cut to 40; otherwise unchanged.
    OpenAiCompletions,
    /// `google-shared.js`: `Sanitise64` for `claude-*` and `gpt-oss-*` models, unchanged otherwise.
    Google,
    /// A provider whose normaliser is not ported (`openai-responses`, `mistral`, …): ids of
    /// another model's calls may be renamed by it.
    NotPorted,
}

impl IdNormaliser {
    pub fn for_api(api: &str) -> IdNormaliser {
        match api {
            "anthropic-messages" | "bedrock-converse-stream" => IdNormaliser::Sanitise64,
            "openai-completions" => IdNormaliser::OpenAiCompletions,
            "google-generative-ai" | "google-vertex" | "google-gemini-cli" => IdNormaliser::Google,
            _ => IdNormaliser::NotPorted,
        }
    }

    /// The id the provider sends for `id`, `None` when the normaliser is not ported.
    pub fn normalise(self, id: &str, target: &TargetModel) -> Option<String> {
        self.normalise_for(id, target, ModelLibrary::PiAi0_79_10)
    }

    /// [`IdNormaliser::normalise`] at a given version of the model library: 0.83.0's
    /// `openai-completions.js` keeps a `call|item` id's item part (`call_item`, sanitised) and,
    /// over 40 characters, cuts the call part and appends `shortHash` of the whole id; the other
    /// normalisers are the same in both.
    pub fn normalise_for(
        self,
        id: &str,
        target: &TargetModel,
        library: ModelLibrary,
    ) -> Option<String> {
        if self == IdNormaliser::OpenAiCompletions && library == ModelLibrary::PiAi0_83_0 {
            if let Some(sep) = id.find('|') {
                let call = sanitise_units(&id[..sep]);
                let item = sanitise_units(&id[sep + 1..]);
                let combined = if item.is_empty() {
                    call.clone()
                } else {
                    format!("{call}_{item}")
                };
                // After sanitising every character is ASCII: lengths are UTF-16 lengths.
                if combined.len() <= 40 {
                    return Some(combined);
                }
                let hash: String = short_hash(id).chars().take(8).collect();
                let keep = 40usize.saturating_sub(hash.len() + 1).max(1);
                let prefix: String = call.chars().take(keep).collect();
                return Some(format!("{prefix}_{hash}"));
            }
        }
        let sanitise = |s: &str, max: usize| -> String {
            let mut out = sanitise_units(s);
            out.truncate(max);
            out
        };
        // JavaScript's `slice` counts UTF-16 units; after sanitising every character is ASCII.
        match self {
            IdNormaliser::Sanitise64 => Some(sanitise(id, 64)),
            IdNormaliser::OpenAiCompletions => Some(if let Some((call, _)) = id.split_once('|') {
                sanitise(call, 40)
            } else if target.provider == "openai" && utf16_len(id) > 40 {
                utf16_prefix(id, 40)
            } else {
                id.to_string()
            }),
            IdNormaliser::Google => Some(
                if target.id.starts_with("claude-") || target.id.starts_with("gpt-oss-") {
                    sanitise(id, 64)
                } else {
                    id.to_string()
                },
            ),
            IdNormaliser::NotPorted => None,
        }
    }
}

/// `s.replace(/[^a-zA-Z0-9_-]/g, "_")`, as every provider module writes it: the regex has no `u`
/// flag, so it replaces UTF-16 units, and a character outside the BMP (a surrogate pair) becomes
/// two `_`. The answer is ASCII: its length is its UTF-16 length.
fn sanitise_units(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            let n = if keep { 1 } else { c.len_utf16() };
            std::iter::repeat_n(if keep { c } else { '_' }, n)
        })
        .collect()
}

/// The model library whose `transformMessages` (and providers' id normalisers) the runtime pins:
/// 0.79.10 under flue 1.0.0-beta.7, 0.83.0 under 2.x (`^0.83.0`; 2.1.0's lockfile resolves
/// 0.83.0). Their `transform-messages.js` differ in one line: 0.83.0 first turns a message whose
/// `content` is `null` or absent into `content: []`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ModelLibrary {
    #[serde(rename = "pi-ai@0.79.10")]
    PiAi0_79_10,
    #[serde(rename = "pi-ai@0.83.0")]
    PiAi0_83_0,
}

/// pi-ai 0.83.0's `shortHash` (`utils/hash.js`): two 32-bit multiplicative hashes over the UTF-16
/// units, in base 36.
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        let ch = u32::from(ch);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn utf16_prefix(s: &str, n: usize) -> String {
    String::from_utf16_lossy(&s.encode_utf16().take(n).collect::<Vec<u16>>())
}

/// What the library changed in a message it kept.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum Mark {
    /// A tool call id (of another model's call, or the result answering it) renamed.
    Renamed { from: String, to: String },
    /// Image blocks replaced by the library's placeholder text (a model without vision).
    ImagesReplaced { count: usize },
    /// Another model's thinking sent as plain text, or dropped (empty, or redacted).
    ThinkingRewritten { count: usize },
    /// The result the library synthesises for a call without one (`No result provided`).
    Synthesised,
}

/// A message of the request: as sent, where it comes from, what the library changed.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMessage {
    pub message: Value,
    pub source: Source,
    pub marks: Vec<Mark>,
}

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
/// The text of the result the library synthesises.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// `transformMessages(messages, model, normalizeToolCallId)`: the request and the assistants it
/// drops. `target` `None`: no model known, so no call is another model's (nothing renamed) and
/// images are left as they are.
pub fn transform_messages(
    context: Vec<ContextMessage>,
    target: Option<&TargetModel>,
) -> (Vec<RequestMessage>, Vec<LeftOut>) {
    transform_messages_with(context, target, ModelLibrary::PiAi0_79_10)
}

/// [`transform_messages`] of the given library version.
pub fn transform_messages_with(
    context: Vec<ContextMessage>,
    target: Option<&TargetModel>,
    library: ModelLibrary,
) -> (Vec<RequestMessage>, Vec<LeftOut>) {
    let normaliser = target.map(|t| IdNormaliser::for_api(&t.api));
    let mut renamed: Vec<(String, String)> = Vec::new();
    // First pass: images, thinking, ids.
    let first: Vec<RequestMessage> = context
        .into_iter()
        .map(|c| {
            let mut message = c.message;
            let mut marks = Vec::new();
            if library == ModelLibrary::PiAi0_83_0
                && message.get("content").is_none_or(Value::is_null)
            {
                if let Some(o) = message.as_object_mut() {
                    o.insert("content".into(), json!([]));
                }
            }
            if target.and_then(|t| t.vision) == Some(false) {
                downgrade_images(&mut message, &mut marks);
            }
            match role(&message) {
                "toolResult" => {
                    let id = message.get("toolCallId").map(js_text).unwrap_or_default();
                    if let Some((_, to)) = renamed.iter().rev().find(|(f, _)| *f == id) {
                        if *to != id {
                            marks.push(Mark::Renamed {
                                from: id,
                                to: to.clone(),
                            });
                            message["toolCallId"] = Value::from(to.clone());
                        }
                    }
                }
                "assistant" => {
                    if let (Some(t), Some(n)) = (target, normaliser) {
                        rewrite_assistant(&mut message, t, n, library, &mut renamed, &mut marks);
                    }
                }
                _ => {}
            }
            RequestMessage {
                message,
                source: c.source,
                marks,
            }
        })
        .collect();
    // Second pass: drop error/aborted assistants, synthesise results for orphaned calls.
    let mut out: Vec<RequestMessage> = Vec::new();
    let mut left = Vec::new();
    let mut pending: Vec<(Value, Value)> = Vec::new();
    let mut answered: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<RequestMessage>,
                 pending: &mut Vec<(Value, Value)>,
                 answered: &mut Vec<Value>| {
        if pending.is_empty() {
            return;
        }
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(RequestMessage {
                    message: json!({
                        "role": "toolResult",
                        "toolCallId": id,
                        "toolName": name,
                        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
                        "isError": true,
                    }),
                    source: Source::Library,
                    marks: vec![Mark::Synthesised],
                });
            }
        }
        answered.clear();
    };
    for m in first {
        match role(&m.message) {
            "assistant" => {
                flush(&mut out, &mut pending, &mut answered);
                let stop = m.message.get("stopReason").and_then(Value::as_str);
                if matches!(stop, Some("error" | "aborted")) {
                    left.push(dropped(&m));
                    continue;
                }
                let calls = tool_calls(&m.message);
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(m);
            }
            "toolResult" => {
                answered.push(m.message.get("toolCallId").cloned().unwrap_or(Value::Null));
                out.push(m);
            }
            "user" => {
                flush(&mut out, &mut pending, &mut answered);
                out.push(m);
            }
            _ => out.push(m),
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    (out, left)
}

fn dropped(m: &RequestMessage) -> LeftOut {
    let (entry_id, written) = match &m.source {
        Source::Stored { entry_id } => (entry_id.clone(), None),
        Source::Recovery { written } => (String::new(), Some(written.clone())),
        _ => (String::new(), None),
    };
    LeftOut {
        entry_id,
        kind: "assistant".into(),
        written,
        by: LeftOutReason::LibraryDroppedAssistant.by(),
        reason: LeftOutReason::LibraryDroppedAssistant,
        calls: tool_calls(&m.message)
            .iter()
            .map(|(i, n)| (js_text(i), js_text(n)))
            .collect(),
    }
}

/// The assistant branch of the first pass: another model's thinking, thought signatures and ids.
fn rewrite_assistant(
    message: &mut Value,
    target: &TargetModel,
    normaliser: IdNormaliser,
    library: ModelLibrary,
    renamed: &mut Vec<(String, String)>,
    marks: &mut Vec<Mark>,
) {
    let field = |k: &str| message.get(k).and_then(Value::as_str).map(str::to_string);
    let same = field("provider").as_deref() == Some(target.provider.as_str())
        && field("api").as_deref() == Some(target.api.as_str())
        && field("model").as_deref() == Some(target.id.as_str());
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let mut thinking = 0;
    let mut kept = Vec::with_capacity(blocks.len());
    for mut b in blocks.drain(..) {
        match b.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let redacted = b.get("redacted").is_some_and(js_truthy);
                let signed = b.get("thinkingSignature").is_some_and(js_truthy);
                let text = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                if redacted {
                    if same {
                        kept.push(b);
                    } else {
                        thinking += 1;
                    }
                } else if same && signed {
                    kept.push(b);
                } else if text.trim().is_empty() {
                    thinking += 1;
                } else if same {
                    kept.push(b);
                } else {
                    thinking += 1;
                    kept.push(json!({"type": "text", "text": text}));
                }
            }
            Some("text") if !same => {
                let text = b.get("text").cloned().unwrap_or(Value::Null);
                kept.push(json!({"type": "text", "text": text}));
            }
            Some("toolCall") if !same => {
                if let Some(o) = b.as_object_mut() {
                    o.shift_remove("thoughtSignature");
                }
                if let Some(id) = b.get("id").and_then(Value::as_str).map(str::to_string) {
                    if let Some(to) = normaliser.normalise_for(&id, target, library) {
                        if to != id {
                            renamed.push((id.clone(), to.clone()));
                            marks.push(Mark::Renamed {
                                from: id,
                                to: to.clone(),
                            });
                            b["id"] = Value::from(to);
                        }
                    }
                }
                kept.push(b);
            }
            _ => kept.push(b),
        }
    }
    *blocks = kept;
    if thinking > 0 {
        marks.push(Mark::ThinkingRewritten { count: thinking });
    }
}

fn js_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// `downgradeUnsupportedImages`: in user (array content) and tool result messages, each run of
/// image blocks becomes one placeholder text (none after a block that is the placeholder).
fn downgrade_images(message: &mut Value, marks: &mut Vec<Mark>) {
    let placeholder = match role(message) {
        "user" => USER_IMAGE_PLACEHOLDER,
        "toolResult" => TOOL_IMAGE_PLACEHOLDER,
        _ => return,
    };
    let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    let mut count = 0;
    let mut out = Vec::with_capacity(blocks.len());
    let mut previous_was_placeholder = false;
    for b in blocks.drain(..) {
        if b.get("type").and_then(Value::as_str) == Some("image") {
            count += 1;
            if !previous_was_placeholder {
                out.push(json!({"type": "text", "text": placeholder}));
            }
            previous_was_placeholder = true;
            continue;
        }
        previous_was_placeholder = b.get("text").and_then(Value::as_str) == Some(placeholder);
        out.push(b);
    }
    *blocks = out;
    if count > 0 {
        marks.push(Mark::ImagesReplaced { count });
    }
}

/// Image blocks in a user or tool result message (what a model without vision loses).
pub fn image_count(message: &Value) -> usize {
    if !matches!(role(message), "user" | "toolResult") {
        return 0;
    }
    message
        .get("content")
        .and_then(Value::as_array)
        .map_or(0, |c| {
            c.iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
                .count()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(id: &str, message: Value) -> ContextMessage {
        ContextMessage {
            message,
            source: Source::Stored {
                entry_id: id.into(),
            },
        }
    }

    fn target(api: &str, vision: Option<bool>) -> TargetModel {
        TargetModel {
            provider: "p".into(),
            api: api.into(),
            id: "m".into(),
            vision,
        }
    }

    fn assistant(model: &str, stop: &str, calls: &[&str]) -> Value {
        let content: Vec<Value> = calls
            .iter()
            .map(|i| json!({"type": "toolCall", "id": i, "name": "t", "arguments": {}}))
            .collect();
        json!({"role": "assistant", "provider": "p", "api": "anthropic-messages", "model": model, "stopReason": stop, "content": content})
    }

    fn roles(out: &[RequestMessage]) -> Vec<String> {
        out.iter().map(|m| role(&m.message).to_string()).collect()
    }

    #[test]
    fn error_and_aborted_assistants_are_dropped() {
        let ctx = vec![
            stored("u", json!({"role": "user", "content": "hi"})),
            stored("e", assistant("m", "error", &[])),
            stored("p", assistant("m", "aborted", &[])),
            stored("u2", json!({"role": "user", "content": "go on"})),
        ];
        let (out, left) = transform_messages(ctx, Some(&target("anthropic-messages", None)));
        assert_eq!(roles(&out), ["user", "user"]);
        assert_eq!(
            left.iter().map(|l| l.entry_id.as_str()).collect::<Vec<_>>(),
            ["e", "p"]
        );
        assert!(left
            .iter()
            .all(|l| l.reason == LeftOutReason::LibraryDroppedAssistant));
    }

    #[test]
    fn a_call_without_a_result_gets_a_synthetic_one_before_the_next_user_message_or_at_the_end() {
        let ctx = vec![
            stored("a", assistant("m", "toolUse", &["c1", "c2"])),
            stored(
                "r",
                json!({"role": "toolResult", "toolCallId": "c1", "toolName": "t"}),
            ),
            stored("u", json!({"role": "user", "content": "next"})),
            stored("b", assistant("m", "toolUse", &["c3"])),
        ];
        let (out, _) = transform_messages(ctx, None);
        assert_eq!(
            roles(&out),
            [
                "assistant",
                "toolResult",
                "toolResult",
                "user",
                "assistant",
                "toolResult"
            ]
        );
        assert_eq!(out[2].message["toolCallId"], "c2");
        assert_eq!(out[2].message["content"][0]["text"], NO_RESULT_TEXT);
        assert_eq!(out[2].message["isError"], true);
        assert_eq!(out[2].source, Source::Library);
        assert_eq!(out[5].message["toolCallId"], "c3");
    }

    #[test]
    fn a_dropped_assistant_does_not_leave_its_calls_pending() {
        let ctx = vec![
            stored("u", json!({"role": "user", "content": "x"})),
            stored("p", assistant("m", "aborted", &["c1"])),
        ];
        let (out, left) = transform_messages(ctx, None);
        assert_eq!(roles(&out), ["user"]);
        assert_eq!(left[0].calls, [("c1".to_string(), "t".to_string())]);
    }

    #[test]
    fn another_models_call_ids_are_normalised_and_their_results_follow() {
        let ctx = vec![
            stored("a", assistant("other", "toolUse", &["call|item+/="])),
            stored(
                "r",
                json!({"role": "toolResult", "toolCallId": "call|item+/=", "toolName": "t"}),
            ),
        ];
        let (out, _) = transform_messages(ctx.clone(), Some(&target("anthropic-messages", None)));
        assert_eq!(out[0].message["content"][0]["id"], "call_item___");
        assert_eq!(out[1].message["toolCallId"], "call_item___");
        assert_eq!(
            out[1].marks,
            [Mark::Renamed {
                from: "call|item+/=".into(),
                to: "call_item___".into()
            }]
        );
        let (out, _) = transform_messages(ctx.clone(), Some(&target("openai-completions", None)));
        assert_eq!(out[0].message["content"][0]["id"], "call");
        // The same model's ids are never touched.
        let mut same = target("anthropic-messages", None);
        same.id = "other".into();
        let (out, _) = transform_messages(ctx, Some(&same));
        assert_eq!(out[0].message["content"][0]["id"], "call|item+/=");
        assert!(out[1].marks.is_empty());
    }

    #[test]
    fn normalisers_cut_and_keep_as_their_provider_modules_do() {
        let long = "x".repeat(70);
        let t = target("anthropic-messages", None);
        assert_eq!(
            IdNormaliser::Sanitise64.normalise(&long, &t).unwrap().len(),
            64
        );
        let mut openai = target("openai-completions", None);
        assert_eq!(
            IdNormaliser::OpenAiCompletions
                .normalise(&long, &openai)
                .unwrap()
                .len(),
            70
        );
        openai.provider = "openai".into();
        assert_eq!(
            IdNormaliser::OpenAiCompletions
                .normalise(&long, &openai)
                .unwrap()
                .len(),
            40
        );
        // No `u` flag: a character outside the BMP is two UTF-16 units, two `_` (Node's
        // `"a😀b".replace(/[^a-zA-Z0-9_-]/g, "_")` is `a__b`), and the cut counts them.
        assert_eq!(
            IdNormaliser::Sanitise64.normalise("a😀b.é", &t).unwrap(),
            "a__b__"
        );
        let edge = format!("{}😀", "x".repeat(63));
        assert_eq!(
            IdNormaliser::Sanitise64.normalise(&edge, &t).unwrap(),
            format!("{}_", "x".repeat(63))
        );
        assert_eq!(
            IdNormaliser::OpenAiCompletions
                .normalise("call😀|item", &openai)
                .unwrap(),
            "call__"
        );
        let mut g = target("google-generative-ai", None);
        assert_eq!(IdNormaliser::Google.normalise("a.b", &g).unwrap(), "a.b");
        g.id = "claude-x".into();
        assert_eq!(IdNormaliser::Google.normalise("a.b", &g).unwrap(), "a_b");
        assert_eq!(
            IdNormaliser::for_api("mistral-conversations").normalise("a", &g),
            None
        );
    }

    #[test]
    fn images_become_one_placeholder_per_run_only_without_vision() {
        let img = json!({"type": "image", "data": "", "mimeType": "image/png"});
        let user =
            json!({"role": "user", "content": [img, img, {"type": "text", "text": "t"}, img]});
        let (out, _) = transform_messages(
            vec![stored("u", user.clone())],
            Some(&target("anthropic-messages", Some(false))),
        );
        let texts: Vec<&str> = out[0].message["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, [USER_IMAGE_PLACEHOLDER, "t", USER_IMAGE_PLACEHOLDER]);
        assert_eq!(out[0].marks, [Mark::ImagesReplaced { count: 3 }]);
        for vision in [Some(true), None] {
            let (out, _) = transform_messages(
                vec![stored("u", user.clone())],
                Some(&target("anthropic-messages", vision)),
            );
            assert_eq!(image_count(&out[0].message), 3);
        }
    }

    #[test]
    fn another_models_thinking_becomes_text_or_goes() {
        let a = json!({"role": "assistant", "provider": "q", "api": "x", "model": "y", "stopReason": "stop", "content": [
            {"type": "thinking", "thinking": "plan"}, {"type": "thinking", "thinking": " "},
            {"type": "thinking", "thinking": "secret", "redacted": true}, {"type": "text", "text": "answer"}]});
        let (out, _) = transform_messages(
            vec![stored("a", a)],
            Some(&target("anthropic-messages", None)),
        );
        assert_eq!(
            out[0].message["content"],
            json!([{"type": "text", "text": "plan"}, {"type": "text", "text": "answer"}])
        );
        assert_eq!(out[0].marks, [Mark::ThinkingRewritten { count: 3 }]);
    }
}
