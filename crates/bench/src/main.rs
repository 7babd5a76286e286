//! `turnscope-scale`: write a large production-like journal database for the scale bench and
//! for trying turnscope at size. Not part of the operator's binary.
//!
//! `cargo run --release -p turnscope-bench -- PATH --scale 1 [--profile runtime] [--seed N]
//! [--whale-entries N] [--json]`. `TURNSCOPE_NOW_MS` pins the clock (the same seed, factor and
//! time give the same rows). To try it on PostgreSQL, copy the file with
//! `turnscope --db postgres://… --write copy-to-postgres PATH`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use turnscope_bench::scale::{write_scale_watched, ScaleOptions, ScaleProfile};
use turnscope_store::progress::Progress;

#[derive(Parser)]
#[command(
    name = "turnscope-scale",
    version,
    about = "Write a large production-like flue journal database (the scale bench's data)"
)]
struct Args {
    /// Where to write it (must not exist).
    path: PathBuf,
    /// 1 = 200,000 submissions over 20,000 sessions (about 2,000,000 entries, 5 GB) with a
    /// 120,000-entry whale session (profile session; see --profile for the runtime's shape);
    /// 0.01 is a hundredth of that.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    scale: f64,
    /// The same seed, factor and time give the same rows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `session` (one whale session of thousands of submissions) or `runtime` (the runtime's own
    /// shape: 20,000 sessions of 5-200 entries, 148,000 submissions of 3-call tool cycles, 401
    /// expired, about 2 GB at 1, and a whale whose stuck submission has 100,000 entries after its
    /// input plus 20,000 abandoned) or `flue2` (a flue 2.1.0 journal of conversation streams:
    /// tool-heavy instances, 400 expired leases stuck at every classification, a whale stream of
    /// 100,000 records, about 2 GB at 1).
    #[arg(long, value_enum, default_value_t = ProfileArg::Session)]
    profile: ProfileArg,
    /// The whale's history, in entries: its session's active path (profile session) or its stuck
    /// submission's active path after the input (profile runtime); a fifth of that again goes on
    /// abandoned repair branches. Default: the factor's share of 100,000.
    #[arg(long, value_name = "N")]
    whale_entries: Option<usize>,
    /// Print one JSON document (schema turnscope.scale/1) instead of the summary.
    #[arg(long)]
    json: bool,
    /// Pin the clock (ms since the epoch) the rows are written against.
    #[arg(long, env = "TURNSCOPE_NOW_MS", hide = true)]
    now_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ProfileArg {
    Session,
    Runtime,
    Flue2,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err((message, hint, code)) => {
            eprintln!("error: {message}");
            eprintln!("hint: {hint}");
            ExitCode::from(code)
        }
    }
}

type Failure = (String, &'static str, u8);

fn run(args: &Args) -> Result<(), Failure> {
    let factor = args.scale;
    if !(factor > 0.0 && factor <= 20.0) {
        return Err((
            format!("--scale {factor} is out of range"),
            "use a factor above 0 and at most 20 (1 = 200,000 submissions)",
            2,
        ));
    }
    let profile = match args.profile {
        ProfileArg::Session => ScaleProfile::Session,
        ProfileArg::Runtime => ScaleProfile::Runtime,
        ProfileArg::Flue2 => ScaleProfile::Flue2,
    };
    let now = args.now_ms.unwrap_or_else(turnscope_store::clock::now_ms);
    let mut opts = ScaleOptions::for_profile(profile, factor, now);
    opts.seed = args.seed;
    if let Some(n) = args.whale_entries {
        opts = opts.with_whale_entries(n).map_err(|e| {
            (
                format!("--whale-entries {n}: {e}"),
                "give a number of entries in that range, e.g. --whale-entries 30000",
                2,
            )
        })?;
    }
    let started = Instant::now();
    let mut bars = Bars::new(!args.json && std::io::stderr().is_terminal());
    let written = write_scale_watched(&args.path, &opts, &mut bars);
    bars.finish();
    let s = written.map_err(|e| {
        (
            format!("could not write the scale database at {}: {e}", args.path.display()),
            "give a PATH that does not exist yet in a directory with enough space (about 5 GB at scale 1)",
            1,
        )
    })?;
    let secs = started.elapsed().as_secs_f64();
    let shown = args.path.display().to_string();
    if args.json {
        let doc = serde_json::json!({
            "schema": "turnscope.scale/1",
            "database": shown,
            "seed": args.seed,
            "factor": factor,
            "profile": profile.name(),
            "whaleEntries": opts.whale_active,
            "whaleAbandoned": opts.whale_abandoned,
            "now": now,
            "submissions": s.submissions,
            "sessions": s.sessions,
            "entries": s.entries,
            "expired": s.expired,
            "whaleSubmissionId": s.whale_submission_id,
            "whaleSessionKey": s.whale_session_key,
            "bytes": s.bytes,
            "seconds": secs,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("a JSON value")
        );
        return Ok(());
    }
    println!(
        "scale journal database ({} profile): {shown} ({} submissions, {} sessions, {} entries, {} expired, {:.1} MB, {secs:.1} s)",
        profile.name(),
        s.submissions,
        s.sessions,
        s.entries,
        s.expired,
        s.bytes as f64 / 1e6
    );
    if profile == ScaleProfile::Flue2 {
        println!(
            "whale: submission {} in {} (its stream holds {} records; the submission is stuck)",
            s.whale_submission_id, s.whale_session_key, opts.whale_active
        );
    } else {
        println!(
            "whale: submission {} in {} ({} entries{}, {} abandoned)",
            s.whale_submission_id,
            s.whale_session_key,
            opts.whale_active,
            match profile {
                ScaleProfile::Session => " on the session's active path",
                _ => " after its input",
            },
            opts.whale_abandoned
        );
    }
    println!("next: turnscope --db {shown} list");
    Ok(())
}

/// One progress bar per stage on stderr, only where a person watches.
struct Bars {
    watched: bool,
    bar: Option<ProgressBar>,
}

impl Bars {
    fn new(watched: bool) -> Bars {
        Bars { watched, bar: None }
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}

impl Progress for Bars {
    fn stage(&mut self, what: &str, total: Option<u64>) {
        self.finish();
        if !self.watched {
            return;
        }
        let template = match total {
            Some(_) => "{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})",
            None => "{spinner} {msg} ({elapsed})",
        };
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("a fixed template")
                .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        if total.is_none() {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        self.bar = Some(bar);
    }

    fn advance(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }
}
