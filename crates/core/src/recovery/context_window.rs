//! The context window used for silent-overflow detection. The database does not record it (the
//! runtime takes it from its configured model), so it comes from the operator, else from this table
//! of well-known model ids, else 0 (only explicit overflow error texts count).

use serde::Serialize;

/// Where the context window value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// `--context-window N`.
    Flag,
    /// The well-known model table, matched on the last assistant's `model`.
    ModelTable,
    /// Unknown: 0, explicit overflow errors only.
    Default,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextWindow {
    pub tokens: u64,
    pub source: WindowSource,
    /// The model id the table matched, if any.
    pub model: Option<String>,
}

impl ContextWindow {
    pub fn describe(&self) -> String {
        match self.source {
            WindowSource::Flag => format!("{} (from --context-window)", self.tokens),
            WindowSource::ModelTable => format!(
                "{} (model table: {})",
                self.tokens,
                self.model.as_deref().unwrap_or("?")
            ),
            WindowSource::Default => {
                "0 (unknown model: only explicit overflow errors count)".into()
            }
        }
    }
}

/// Prefix → context window, longest prefix first where they overlap.
pub const MODEL_WINDOWS: &[(&str, u64)] = &[
    ("claude-sonnet-4-5", 200_000),
    ("claude-haiku-4-5", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-3-5-sonnet", 200_000),
    ("claude-3-5-haiku", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-2.5", 1_048_576),
];

/// Look a model id up in the table.
pub fn window_for_model(model: &str) -> Option<u64> {
    MODEL_WINDOWS
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|&(_, w)| w)
}

/// Resolve: the flag wins, then the model table, then 0.
pub fn resolve(flag: Option<u64>, model: Option<&str>) -> ContextWindow {
    if let Some(tokens) = flag {
        return ContextWindow {
            tokens,
            source: WindowSource::Flag,
            model: None,
        };
    }
    match model.and_then(|m| window_for_model(m).map(|w| (m, w))) {
        Some((m, tokens)) => ContextWindow {
            tokens,
            source: WindowSource::ModelTable,
            model: Some(m.to_string()),
        },
        None => ContextWindow {
            tokens: 0,
            source: WindowSource::Default,
            model: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_then_table_then_zero() {
        assert_eq!(resolve(Some(5), Some("claude-haiku-4-5")).tokens, 5);
        let t = resolve(None, Some("claude-haiku-4-5-20251001"));
        assert_eq!((t.tokens, t.source), (200_000, WindowSource::ModelTable));
        assert_eq!(resolve(None, Some("gpt-5-mini")).tokens, 400_000);
        let d = resolve(None, Some("scripted-1"));
        assert_eq!((d.tokens, d.source), (0, WindowSource::Default));
        assert_eq!(resolve(None, None).tokens, 0);
    }
}
