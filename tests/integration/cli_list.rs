//! `list` as operators use it: `--verdict` checked (and `live` selecting live rows), an empty
//! result naming the filter that left nothing, `--sort`, `-o ids|wide`, `--watch`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::backends::{kinds, TestDb};
use crate::cli_export::db_arg;
use crate::support::turnscope_command;

const NOW: i64 = 1_796_018_889_175;

fn demo(dir: &Path) -> PathBuf {
    let path = dir.join("demo.db");
    turnscope_demo::write_demo(&path, NOW).unwrap();
    path
}

fn list(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(db.as_ref())
        .arg("list")
        .args(args)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn items(db: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Vec<Value> {
    let mut a = args.to_vec();
    a.push("--json");
    let doc: Value = serde_json::from_str(&ok(&list(db, &a))).unwrap();
    doc["submissions"].as_array().unwrap().clone()
}

fn usage_error(o: &Output, needle: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains(needle),
        "{err}"
    );
    assert!(lines[1].starts_with("hint: "), "{err}");
    assert!(o.stdout.is_empty());
    lines[1].to_string()
}

#[test]
fn verdict_is_checked_and_live_selects_live_rows_on_every_backend() {
    for kind in kinds() {
        let dir = tempfile::tempdir().unwrap();
        let test_db = TestDb::from_sqlite(kind, &demo(dir.path()));
        let db = db_arg(&test_db.target);
        let hint = usage_error(
            &list(&db, &["--verdict", "resume/tool_result"]),
            "unknown verdict \"resume/tool_result\"",
        );
        for v in [
            "tool_use_unresolved",
            "resume",
            "resume/tool_results_partial",
            "live",
            "stuck",
            "damaged",
        ] {
            assert!(hint.contains(v), "{v}: {hint}");
        }
        let all = items(&db, &["--status", "all"]);
        let state = |i: &Value| {
            i["plan"]["disposition"]["state"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let live_expected = all.iter().filter(|i| state(i) == "live").count();
        assert!(live_expected > 0, "{kind:?}");
        let live = items(&db, &["--status", "all", "--verdict", "live"]);
        assert_eq!(live.len(), live_expected, "{kind:?}");
        assert!(live.iter().all(|i| state(i) == "live"));
        // A live row's verdict is its classification, not the word `live`.
        assert!(live.iter().all(|i| i["verdict"] != "live"));
        let stuck = items(&db, &["--status", "all", "--verdict", "stuck"]);
        assert_eq!(
            stuck.len(),
            items(&db, &[]).len(),
            "stuck = the expired view"
        );
        // Full ids to paste, and the empty result naming its filter, on this backend too.
        let ids = ok(&list(&db, &["-o", "ids", "--sort", "id"]));
        let mut expected: Vec<String> = items(&db, &[])
            .iter()
            .map(|i| {
                i["submission"]["submissionId"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        expected.sort();
        assert_eq!(ids.lines().collect::<Vec<_>>(), expected, "{kind:?}");
        assert!(
            ok(&list(&db, &["--instance", "nobody"])).starts_with(&format!(
                "{} expired submissions, none of instance nobody",
                expected.len()
            ))
        );
    }
}

#[test]
fn an_empty_result_names_the_filter_that_left_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let expired = items(&db, &[]).len();
    let direct = items(&db, &["--kind", "direct"]).len();
    assert!(expired > direct && direct > 0);
    let first = |o: &Output| ok(o).lines().next().unwrap().to_string();
    assert_eq!(
        first(&list(&db, &["--instance", "nobody"])),
        format!("{expired} expired submissions, none of instance nobody")
    );
    assert_eq!(
        first(&list(&db, &["--kind", "direct", "--verdict", "resume/aborted_partial"])),
        format!("{expired} expired submissions, {direct} of kind direct, none with verdict resume/aborted_partial")
    );
    // Every row-level filter in turn, each counted on what the one before it left (the kind
    // and instance filters apply while the rows are read).
    let all = items(&db, &["--status", "all"]);
    let kind = |s: &Value| s["submission"]["kind"].as_str().unwrap().to_string();
    let instance = |s: &Value| s["submission"]["instanceId"].as_str().unwrap().to_string();
    let owner = |s: &Value| s["submission"]["ownerId"].as_str().map(str::to_string);
    let pick = all
        .iter()
        .find(|s| kind(s) == "dispatch" && owner(s).is_some())
        .unwrap();
    let (i, o) = (instance(pick), owner(pick).unwrap());
    let dispatches = all.iter().filter(|s| kind(s) == "dispatch").count();
    let of_instance = all
        .iter()
        .filter(|s| kind(s) == "dispatch" && instance(s) == i)
        .count();
    let held = all
        .iter()
        .filter(|s| kind(s) == "dispatch" && instance(s) == i && owner(s) == Some(o.clone()))
        .count();
    assert!(held > 0 && all.len() > dispatches);
    assert_eq!(
        first(&list(
            &db,
            &["--status", "all", "--kind", "dispatch", "--instance", &i, "--owner", &o, "--older-than", "3650d"]
        )),
        format!(
            "{} submissions, {dispatches} of kind dispatch, {of_instance} of instance {i}, {held} held by owner {o}, none older than 3650d00h",
            all.len()
        )
    );
    assert_eq!(
        first(&list(&db, &["--status", "all", "--older-than", "3650d"])),
        format!(
            "{} submissions, none older than 3650d00h",
            items(&db, &["--status", "all"]).len()
        )
    );
}

/// A listing read a page of rows at a time (each page inspected before the next is read) says
/// exactly what one read whole says: the items, the counts an empty result names, the limit and
/// the verdict counted across pages.
#[test]
fn a_listing_read_in_pages_is_the_whole_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let all = items(&db, &["--status", "all"]);
    assert!(all.len() > 20, "the demo has rows for many pages");
    let owner = all
        .iter()
        .find_map(|s| s["submission"]["ownerId"].as_str())
        .unwrap()
        .to_string();
    let selections: [&[&str]; 9] = [
        &["--status", "all", "--json"],
        &["--json"],
        &["--status", "all", "-o", "wide"],
        &["--status", "all", "--limit", "5", "--json"],
        &["--status", "all", "--verdict", "completed", "--json"],
        &["--kind", "direct", "--verdict", "resume/aborted_partial"],
        &[
            "--status",
            "all",
            "--owner",
            &owner,
            "--older-than",
            "3650d",
        ],
        &[
            "--status",
            "all",
            "--kind",
            "dispatch",
            "--instance",
            "nobody",
        ],
        &["--status", "all", "--sort", "-seq", "--limit", "7"],
    ];
    for args in selections {
        let whole = ok(&list(&db, args));
        for rows in ["1", "4"] {
            let mut paged = args.to_vec();
            paged.extend(["--page-rows", rows]);
            assert_eq!(ok(&list(&db, &paged)), whole, "{args:?} in pages of {rows}");
        }
    }
    let zero = list(&db, &["--page-rows", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--page-rows"));
}

#[test]
fn sort_orders_by_a_checked_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let hint = usage_error(
        &list(&db, &["--sort", "tries"]),
        "unknown column \"tries\" for --sort",
    );
    assert!(
        hint.contains("seq, id, kind, instance, status, att, lease"),
        "{hint}"
    );
    let lease = |v: &[Value]| -> Vec<i64> {
        v.iter()
            .map(|i| i["submission"]["leaseExpiresAt"].as_i64().unwrap())
            .collect()
    };
    let asc = lease(&items(&db, &["--sort", "lease"]));
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
    let desc = lease(&items(&db, &["--sort=-lease"]));
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    assert_ne!(
        asc,
        lease(&items(&db, &[])),
        "the demo's sequence order is not its lease order"
    );
    // --limit keeps the first N in the sorted order.
    let rules = |v: &[Value]| -> Vec<i64> {
        v.iter()
            .map(|i| i["plan"]["rule"].as_i64().unwrap())
            .collect()
    };
    let mut every = rules(&items(&db, &[]));
    every.sort();
    assert_eq!(
        rules(&items(&db, &["--sort", "rule", "--limit", "3"])),
        every[..3]
    );
}

#[test]
fn output_ids_and_wide() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let o = list(&db, &["-o", "ids", "--kind", "direct"]);
    let ids: Vec<String> = ok(&o).lines().map(str::to_string).collect();
    let expected: Vec<String> = items(&db, &["--kind", "direct"])
        .iter()
        .map(|i| {
            i["submission"]["submissionId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, expected);
    assert!(ids.iter().all(|id| id.len() == 36), "{ids:?}");
    // The pinned-clock note stays off the pasted lines.
    assert!(String::from_utf8_lossy(&o.stderr).contains("clock: pinned"));
    // Nothing selected: no line on stdout, the reason on stderr.
    let o = list(&db, &["-o", "ids", "--instance", "nobody"]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("none of instance nobody"));
    // Wide: full ids and the owner column.
    let wide = ok(&list(&db, &["-o", "wide"]));
    assert!(wide.lines().next().unwrap().contains(" OWNER "), "{wide}");
    for i in items(&db, &[]) {
        assert!(wide.contains(i["submission"]["submissionId"].as_str().unwrap()));
    }
    insta::assert_snapshot!(
        "list_wide_demo",
        wide.replace(dir.path().to_str().unwrap(), "<tmp>")
    );
    assert_eq!(list(&db, &["-o", "ids", "--json"]).status.code(), Some(2));
    // `-o json` is `--json`, byte for byte.
    assert_eq!(
        ok(&list(&db, &["-o", "json", "--status", "all"])),
        ok(&list(&db, &["--json", "--status", "all"]))
    );
    let doc: Value = serde_json::from_str(&ok(&list(&db, &["--output=json"]))).unwrap();
    assert_eq!(doc["schema"], "turnscope.list/1");
}

/// The watch prints a listing, then nothing while nothing changes, then the changed listing
/// once the database changes between readings.
#[test]
fn watch_reprints_only_when_the_listing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let ids: Vec<String> = ok(&list(&db, &["-o", "ids"]))
        .lines()
        .map(str::to_string)
        .collect();
    let mut child = turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(&db)
        .args([
            "list",
            "-o",
            "ids",
            "--watch",
            "100ms",
            "--watch-ticks",
            "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    assert!(next().starts_with("── "), "a time line before each listing");
    let first: Vec<String> = (0..ids.len()).map(|_| next()).collect();
    assert_eq!(first, ids);
    // The first stuck submission settles (as the runtime would once it is reconciled).
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE flue_agent_submissions SET status = 'settled', settled_at = ?1 WHERE submission_id = ?2",
            rusqlite::params![NOW, ids[0]],
        )
        .unwrap();
    let rest: Vec<String> = std::iter::from_fn(|| lines.next().map(Result::unwrap)).collect();
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(
        rest.iter().filter(|l| l.starts_with("── ")).count(),
        1,
        "{rest:#?}"
    );
    assert_eq!(rest[1..], ids[1..], "{rest:#?}");
}

#[cfg(unix)]
#[test]
fn watch_ends_on_ctrl_c_with_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let mut child = turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .env("TURNSCOPE_NOW_MS", NOW.to_string())
        .arg("--db")
        .arg(&db)
        .args(["list", "--watch", "100ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().starts_with("── "));
    // The first listing is on its way: the handler is installed before the first reading.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// The man page carries every command's own flags, these included.
#[test]
fn man_page_describes_list_audit_and_export_flags() {
    let o = turnscope_command().arg("man").output().unwrap();
    let man = ok(&o);
    for needle in [
        ".SH \"OPTIONS OF turnscope list\"",
        "\\fB\\-\\-watch\\fR",
        "\\fB\\-\\-sort\\fR",
        "\\fB\\-o\\fR, \\fB\\-\\-output\\fR",
        ".SH \"OPTIONS OF turnscope audit\"",
        "\\fB\\-\\-since\\fR",
        "\\fB\\-\\-batch\\fR",
        ".SH \"OPTIONS OF turnscope export\"",
        "\\fB\\-\\-force\\fR",
    ] {
        assert!(man.contains(needle), "{needle}");
    }
    // Hidden test flags stay out.
    assert!(!man.contains("watch\\-ticks"));
}

/// A bulk action's `--all` resolves through the same checked selection: a bad verdict writes
/// nothing and lists the values, and `--verdict live` selects what `list` selects.
#[test]
fn bulk_selection_checks_the_verdict_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let o = turnscope_command()
        .env_remove("TURNSCOPE_DB")
        .arg("--db")
        .arg(&db)
        .args([
            "--write",
            "repair",
            "--all",
            "--verdict",
            "livee",
            "--dry-run",
        ])
        .output()
        .unwrap();
    let hint = usage_error(&o, "unknown verdict \"livee\"");
    assert!(
        hint.starts_with("hint: did you mean live? use one of: "),
        "{hint}"
    );
}

/// `--rule` selects the rows whose plan fires that rule next (as the plan in each row's JSON
/// says), `!` and `--not-verdict` select the complement, and the empty result names them.
#[test]
fn rule_and_negated_filters_select_what_the_plans_say() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let all = items(&db, &["--status", "all"]);
    let rule = |i: &Value| i["plan"]["rule"].as_u64();
    let id = |i: &Value| {
        i["submission"]["submissionId"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let ids = |v: &[Value]| v.iter().map(id).collect::<Vec<_>>();
    let mut rules: Vec<u64> = all.iter().filter_map(rule).collect();
    rules.sort();
    rules.dedup();
    assert!(
        rules.len() >= 2,
        "the demo has rows at two rules or more: {rules:?}"
    );
    let r = rules[0];
    let at: Vec<Value> = all.iter().filter(|i| rule(i) == Some(r)).cloned().collect();
    let not_at: Vec<Value> = all.iter().filter(|i| rule(i) != Some(r)).cloned().collect();
    assert_eq!(
        ids(&items(&db, &["--status", "all", "--rule", &r.to_string()])),
        ids(&at)
    );
    assert_eq!(
        ids(&items(
            &db,
            &["--status", "all", "--rule", &format!("!{r}")]
        )),
        ids(&not_at)
    );
    let two = format!("{},{}", rules[0], rules[1]);
    let both = items(&db, &["--status", "all", "--rule", &two]);
    assert_eq!(
        both.len(),
        all.iter()
            .filter(|i| rule(i) == Some(rules[0]) || rule(i) == Some(rules[1]))
            .count()
    );
    let none = items(&db, &["--status", "all", "--rule", "none"]);
    assert_eq!(
        ids(&none),
        ids(&all
            .iter()
            .filter(|i| rule(i).is_none())
            .cloned()
            .collect::<Vec<_>>())
    );
    assert!(!none.is_empty());
    // Negated verdicts: both spellings, the complement of the plain filter.
    let live = items(&db, &["--status", "all", "--verdict", "live"]);
    let not_live = items(&db, &["--status", "all", "--not-verdict", "live"]);
    assert_eq!(live.len() + not_live.len(), all.len());
    assert!(!not_live.is_empty() && !live.is_empty());
    assert_eq!(
        ids(&items(&db, &["--status", "all", "--verdict", "!live"])),
        ids(&not_live)
    );
    // The empty result names them.
    let out = ok(&list(&db, &["--rule", "none"]));
    assert!(
        out.lines().next().unwrap().ends_with("none at no rule"),
        "{out}"
    );
    let out = ok(&list(&db, &["--not-verdict", "stuck"]));
    assert!(
        out.lines()
            .next()
            .unwrap()
            .ends_with("none without verdict stuck"),
        "{out}"
    );
    // A value that is no rule: exit 2 with the values.
    let hint = usage_error(
        &list(&db, &["--rule", "12"]),
        "unknown rule \"12\": a rule is 0 to 9, or none",
    );
    assert!(hint.contains("0, 1, 2") && hint.contains("none"), "{hint}");
    let hint = usage_error(
        &list(&db, &["--not-verdict", "stuk"]),
        "unknown verdict \"stuk\"",
    );
    assert!(hint.starts_with("hint: did you mean stuck? "), "{hint}");
}

/// A verdict or status that names none gets the one it most likely meant before the list; a
/// value near none gets the list alone.
#[test]
fn did_you_mean_for_verdicts_and_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    let hint = usage_error(
        &list(&db, &["--verdict", "tool_results_partial"]),
        "unknown verdict \"tool_results_partial\"",
    );
    assert!(
        hint.starts_with("hint: did you mean resume/tool_results_partial? use one of: "),
        "{hint}"
    );
    let hint = usage_error(
        &list(&db, &["--status", "runing"]),
        "unknown status \"runing\"",
    );
    assert!(
        hint.starts_with("hint: did you mean running? use one of: "),
        "{hint}"
    );
    let hint = usage_error(
        &list(&db, &["--status", "banana"]),
        "unknown status \"banana\"",
    );
    assert!(hint.starts_with("hint: use one of: "), "{hint}");
}

/// `--json` without `--sort` is written item by item as the rows are inspected; its bytes are
/// those of the listing formatted whole (`--sort seq`: the same order, through the other path),
/// with items, with none, and when the two threads inspect a long listing.
#[test]
fn the_streamed_json_listing_is_the_whole_ones_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let db = demo(dir.path());
    for args in [
        &["--status", "all"][..],
        &["--expired"][..],
        &[
            "--status",
            "queued",
            "--kind",
            "direct",
            "--instance",
            "nobody",
        ][..],
        &["--status", "settled", "--limit", "3"][..],
    ] {
        let streamed = ok(&list(&db, &[args, &["--json"]].concat()));
        let whole = ok(&list(&db, &[args, &["--json", "--sort", "seq"]].concat()));
        assert_eq!(streamed, whole, "{args:?}");
        let doc: Value = serde_json::from_str(&streamed).unwrap();
        assert!(doc["submissions"].is_array(), "{args:?}");
    }
    assert!(items(&db, &["--status", "all"]).len() > 16);
}
