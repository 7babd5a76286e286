//! The selection `list` and every bulk action share, from their flags: the status view, the
//! row-level filters (kind, instance, owner, age), the verdict and the limit, handed to the
//! engine's listing driver (`turnscope_engine::listing`), which resolves it in one read snapshot.

use super::args::SelectionArgs;
use super::{exit, CliError};
use turnscope_engine::listing::{self, ListingError, Selection};
use turnscope_engine::report::rule_filter::{rule_names, RuleFilter};
use turnscope_engine::report::verdict_filter::VerdictFilter;
use turnscope_engine::report::SubmissionReport;
use turnscope_store::{JournalStore, RowFilter};

pub use turnscope_engine::listing::Funnel;

impl SelectionArgs {
    /// The status view: `--status`, else the expired view.
    pub fn row_filter(&self) -> Result<RowFilter, CliError> {
        match self.status.as_deref() {
            None => Ok(RowFilter::Expired),
            Some(s) => s.parse::<RowFilter>().map_err(|_| {
                let names: Vec<String> = RowFilter::all().map(|f| f.name().to_string()).collect();
                CliError::new(
                    format!("unknown status {s:?}"),
                    format!(
                        "{}use one of: {} (or --expired)",
                        meant(s, &names),
                        RowFilter::names()
                    ),
                    exit::USAGE,
                )
            }),
        }
    }

    /// `--verdict`, checked against every verdict there is (exit 2 listing them).
    pub fn verdict_filter(&self) -> Result<Option<VerdictFilter>, CliError> {
        if let Some(v) = self.not_verdict.as_deref() {
            return Ok(Some(parse_verdict(v)?.negate()));
        }
        self.verdict.as_deref().map(parse_verdict).transpose()
    }

    /// `--rule`, checked (exit 2 naming the values).
    pub fn rule_filter(&self) -> Result<Option<RuleFilter>, CliError> {
        self.rule
            .as_deref()
            .map(|r| {
                RuleFilter::parse(r).map_err(|e| {
                    CliError::new(
                        e,
                        format!("use one of: {}", rule_names().join(", ")),
                        exit::USAGE,
                    )
                })
            })
            .transpose()
    }

    /// The selection these flags give, for the listing driver.
    pub fn selection(&self) -> Result<Selection, CliError> {
        Ok(Selection {
            view: self.row_filter()?,
            kind: self.kind.clone(),
            instance: self.instance.clone(),
            owner: self.owner.clone(),
            older_than: self.older_than,
            verdict: self.verdict_filter()?,
            rule: self.rule_filter()?,
            limit: self.limit,
            page_rows: self.page_rows.map(|n| n as usize),
        })
    }
}

/// `--verdict`/`--not-verdict`'s value, checked against every verdict there is.
fn parse_verdict(v: &str) -> Result<VerdictFilter, CliError> {
    VerdictFilter::parse(v).map_err(|e| {
        let bare = v.trim().trim_start_matches('!').trim();
        CliError::new(
            e.to_string(),
            format!(
                "{}use one of: {}",
                meant(bare, &VerdictFilter::names()),
                VerdictFilter::names_line()
            ),
            exit::USAGE,
        )
    })
}

/// "did you mean X? " before a hint's list, when `given` is close to one of `names`.
fn meant(given: &str, names: &[String]) -> String {
    turnscope_core::suggest::did_you_mean(given, names)
        .map(|m| format!("did you mean {m}? "))
        .unwrap_or_default()
}

/// Resolve `sel` at `now` in one read snapshot and hand each matching submission's report
/// (scanned as for a listing: the active path since the input, not the whole session) to
/// `visit`, oldest first, at most `--limit` of them. Returns the status view used.
/// `list` uses [`scan_counted`] for the counts an empty result names.
pub fn scan(
    store: &dyn JournalStore,
    sel: &SelectionArgs,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<RowFilter, CliError> {
    scan_counted(store, sel, context_window, now, visit).map(|f| f.view)
}

/// [`scan`], also counting what each filter let through ([`Funnel`]).
pub fn scan_counted(
    store: &dyn JournalStore,
    sel: &SelectionArgs,
    context_window: Option<u64>,
    now: i64,
    visit: &mut dyn FnMut(&SubmissionReport),
) -> Result<Funnel, CliError> {
    let selection = sel.selection()?;
    listing::scan_counted(store, &selection, context_window, now, visit).map_err(|e| match e {
        ListingError::Store(e) => e.into(),
        ListingError::AmbiguousOwner { message, hint } => CliError::new(message, hint, exit::USAGE),
    })
}
