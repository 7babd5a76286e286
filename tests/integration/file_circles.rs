//! What Cargo cannot check: no circle between the files of one crate. The layers are crates, so
//! Cargo already refuses an arrow from a lower crate to a higher one; inside a crate, every module
//! path written (`crate::…`, `super::…`, `self::…` and paths through a child module or an
//! imported name) is resolved to the file that defines it, and no two files may use each other,
//! directly or around a loop. A failure names the files and the paths that close the circle.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// File circles inside the TUI that its split into screens and popups removes. Each entry is one
/// circle's exact set of files: a circle not listed here fails, and so does an entry whose circle
/// is gone or has changed (delete or update it), so the list can only shrink honestly.
const PENDING_TUI_CIRCLES: &[&[&str]] = &[];

type ModPath = Vec<String>;

/// A path as written, with the module it was written in.
struct Written {
    file: PathBuf,
    module: ModPath,
    segs: Vec<String>,
}

/// Blank out comments, string and character literals (keeping line breaks and every other
/// character's position), so braces and `::` are only the code's.
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_'))
        {
            // A raw string: r"…" or r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (1..=hashes).all(|k| b.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &ch in &b[i..j.min(b.len())] {
                out.push(blank(ch));
            }
            i = j;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F}') or a lifetime ('a).
            let end = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for _ in i..=e {
                        out.push(' ');
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A small cursor over stripped source.
struct Cur<'a> {
    s: &'a [char],
    i: usize,
}

impl Cur<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_whitespace() {
            self.i += 1;
        }
    }
    fn ident(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && is_ident(self.s[self.i]) {
            self.i += 1;
        }
        (self.i > start).then(|| self.s[start..self.i].iter().collect())
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        let t: Vec<char> = t.chars().collect();
        if self.s[self.i..].starts_with(&t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
}

/// One leaf of a path or use tree: the segments, and the name it is imported as (`None` for a
/// glob or `as _`).
type Leaf = (Vec<String>, Option<String>);

/// Parse `a::b::{c, d::e as f, self, *}` from the cursor (after the first segment).
fn tree(cur: &mut Cur<'_>, prefix: Vec<String>, out: &mut Vec<Leaf>) {
    let mut segs = prefix;
    loop {
        let save = cur.i;
        if !cur.eat("::") {
            break;
        }
        if cur.eat("{") {
            loop {
                cur.ws();
                if cur.eat("}") {
                    return;
                }
                if cur.eat("*") {
                    out.push((segs.clone(), None));
                } else if let Some(first) = cur.ident() {
                    if first == "self" {
                        let name = segs.last().cloned();
                        let name = alias(cur).unwrap_or(name);
                        out.push((segs.clone(), name));
                    } else {
                        let mut sub = segs.clone();
                        sub.push(first);
                        tree(cur, sub, out);
                    }
                } else {
                    // Something this parser does not know: stop at the group.
                    return;
                }
                cur.eat(",");
            }
        }
        if cur.eat("*") {
            out.push((segs, None));
            return;
        }
        match cur.ident() {
            Some(s) => segs.push(s),
            None => {
                cur.i = save;
                break;
            }
        }
    }
    let name = segs.last().cloned();
    let name = alias(cur).unwrap_or(name);
    out.push((segs, name));
}

fn alias(cur: &mut Cur<'_>) -> Option<Option<String>> {
    let save = cur.i;
    cur.ws();
    if cur.ident().as_deref() == Some("as") {
        let a = cur.ident();
        return Some(a.filter(|a| a != "_"));
    }
    cur.i = save;
    None
}

/// Everything read from `src/`.
#[derive(Default)]
struct Crate {
    /// Module path → the file that holds it (inline modules map to their file).
    modules: BTreeMap<ModPath, PathBuf>,
    /// Module → (imported name → absolute path).
    imports: HashMap<ModPath, HashMap<String, Vec<String>>>,
    written: Vec<Written>,
}

fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Make a path written in `module` absolute (`None`: not a path into this crate).
fn absolute(c: &Crate, module: &ModPath, segs: &[String]) -> Option<Vec<String>> {
    let first = segs.first()?;
    let (mut base, rest) = match first.as_str() {
        "crate" => (Vec::new(), &segs[1..]),
        "self" => (module.clone(), &segs[1..]),
        "super" => {
            let mut m = module.clone();
            let mut k = 0;
            while segs.get(k).map(String::as_str) == Some("super") {
                m.pop();
                k += 1;
            }
            (m, &segs[k..])
        }
        _ => {
            let mut child = module.clone();
            child.push(first.clone());
            if c.modules.contains_key(&child) {
                (child, &segs[1..])
            } else if let Some(target) = c.imports.get(module).and_then(|m| m.get(first)) {
                let mut t = target.clone();
                t.extend_from_slice(&segs[1..]);
                return Some(t);
            } else {
                return None;
            }
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module an absolute path ends in, following re-exports (`pub use`) and imports.
fn resolve(c: &Crate, segs: &[String], depth: usize) -> ModPath {
    let mut m: ModPath = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let mut next = m.clone();
        next.push(s.clone());
        if c.modules.contains_key(&next) {
            m = next;
            continue;
        }
        if depth < 16 {
            if let Some(target) = c.imports.get(&m).and_then(|x| x.get(s)) {
                let mut t = target.clone();
                t.extend_from_slice(&segs[i + 1..]);
                return resolve(c, &t, depth + 1);
            }
        }
        break;
    }
    m
}

fn read_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut c = Crate::default();
    let mut stripped = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap().to_path_buf();
        // The binary is its own crate: its `crate::` is not the library's.
        if rel == Path::new("main.rs") {
            continue;
        }
        c.modules.insert(module_of(&rel), rel.clone());
        stripped.push((rel, strip(&std::fs::read_to_string(f).unwrap())));
    }
    // First pass: inline modules and imports; every path kept with its module.
    let mut found: Vec<(PathBuf, ModPath, Vec<Leaf>, bool)> = Vec::new();
    for (rel, text) in &stripped {
        let chars: Vec<char> = text.chars().collect();
        let file_mod = module_of(rel);
        // (module, brace depth at which it closes)
        let mut stack: Vec<(ModPath, usize)> = vec![(file_mod.clone(), usize::MAX)];
        let mut depth = 0usize;
        let mut i = 0;
        while i < chars.len() {
            let ch = chars[i];
            if ch == '{' {
                depth += 1;
                i += 1;
                continue;
            }
            if ch == '}' {
                depth = depth.saturating_sub(1);
                if stack.last().is_some_and(|(_, d)| *d == depth) {
                    stack.pop();
                }
                i += 1;
                continue;
            }
            if !is_ident(ch) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
                i += 1;
                continue;
            }
            let mut cur = Cur { s: &chars, i };
            let word = cur.ident().unwrap_or_default();
            let module = stack.last().unwrap().0.clone();
            if word == "mod" {
                if let Some(name) = cur.ident() {
                    if cur.eat("{") {
                        let mut m = module.clone();
                        m.push(name);
                        c.modules.insert(m.clone(), rel.clone());
                        stack.push((m, depth));
                        depth += 1;
                    }
                }
                i = cur.i;
                continue;
            }
            if word == "use" {
                let mut leaves = Vec::new();
                cur.ws();
                cur.eat("::");
                if let Some(first) = cur.ident() {
                    tree(&mut cur, vec![first], &mut leaves);
                }
                found.push((rel.clone(), module, leaves, true));
                i = cur.i;
                continue;
            }
            // A path in code: `word::…` (a lone word is not a path).
            let save = cur.i;
            if cur.eat("::") {
                cur.i = save;
                let mut leaves = Vec::new();
                tree(&mut cur, vec![word], &mut leaves);
                found.push((rel.clone(), module, leaves, false));
                i = cur.i.max(i + 1);
                continue;
            }
            i = cur.i;
        }
    }
    // Imports need every module known (a `use` may name a child declared further down).
    for (_, module, leaves, is_use) in &found {
        if !is_use {
            continue;
        }
        for (segs, name) in leaves {
            if let (Some(abs), Some(name)) = (absolute(&c, module, segs), name) {
                c.imports
                    .entry(module.clone())
                    .or_default()
                    .insert(name.clone(), abs);
            }
        }
    }
    for (rel, module, leaves, _) in found {
        for (segs, _) in leaves {
            c.written.push(Written {
                file: rel.clone(),
                module: module.clone(),
                segs,
            });
        }
    }
    c
}

/// Strongly connected components of a graph (Tarjan), only those with more than one node.
fn circles(
    nodes: &BTreeSet<PathBuf>,
    edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
) -> Vec<Vec<PathBuf>> {
    struct T<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: HashMap<&'a PathBuf, usize>,
        low: HashMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        out: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a PathBuf) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.edges.get(v) {
            for w in ws {
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let l = t.low[w].min(t.low[v]);
                    t.low.insert(v, l);
                } else if t.on.contains(w) {
                    let l = t.index[w].min(t.low[v]);
                    t.low.insert(v, l);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The violations in the crate at `src`: one line each, naming the file and the path.
fn violations(src: &Path, pending: &[&[&str]]) -> Vec<String> {
    let c = read_crate(src);
    let mut bad = Vec::new();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    let mut why: BTreeMap<(PathBuf, PathBuf), String> = BTreeMap::new();
    for w in &c.written {
        let Some(abs) = absolute(&c, &w.module, &w.segs) else {
            continue;
        };
        let written = w.segs.join("::");
        let target = resolve(&c, &abs, 0);
        if let Some(to) = c.modules.get(&target) {
            if *to != w.file && !target.is_empty() {
                edges.entry(w.file.clone()).or_default().insert(to.clone());
                why.entry((w.file.clone(), to.clone())).or_insert(written);
            }
        }
    }
    let nodes: BTreeSet<PathBuf> = c.modules.values().cloned().collect();
    let found = circles(&nodes, &edges);
    for pending in pending {
        if !found.iter().any(|comp| {
            comp.iter()
                .map(|p| p.to_string_lossy())
                .eq(pending.iter().copied())
        }) {
            bad.push(format!(
                "the pending circle {pending:?} no longer exists as listed: delete or update its entry in PENDING_TUI_CIRCLES"
            ));
        }
    }
    for comp in found {
        if pending.iter().any(|p| {
            comp.iter()
                .map(|f| f.to_string_lossy())
                .eq(p.iter().copied())
        }) {
            continue;
        }
        let set: BTreeSet<&PathBuf> = comp.iter().collect();
        let mut lines = Vec::new();
        for a in &comp {
            for b in edges.get(a).into_iter().flatten() {
                if set.contains(b) {
                    lines.push(format!(
                        "    src/{} → src/{} (`{}`)",
                        a.display(),
                        b.display(),
                        why[&(a.clone(), b.clone())]
                    ));
                }
            }
        }
        bad.push(format!(
            "a circle between {} files:\n{}",
            comp.len(),
            lines.join("\n")
        ));
    }
    bad
}

#[test]
fn no_circle_between_the_files_of_a_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![root.join("src")];
    for c in std::fs::read_dir(root.join("crates")).unwrap() {
        roots.push(c.unwrap().path().join("src"));
    }
    roots.sort();
    assert!(roots.len() >= 7, "{roots:?}");
    let mut bad = Vec::new();
    for src in &roots {
        for v in violations(src, PENDING_TUI_CIRCLES) {
            bad.push(format!("{}: {v}", src.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "{} circle(s):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The checker itself: a small crate on disk with one circle.
#[test]
fn the_checker_finds_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |p: &str, text: &str| {
        let p = src.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod core;\npub mod cli;\n");
    write(
        "core/mod.rs",
        "mod a;\nmod b;\nmod c;\npub use a::A;\n// crate::cli::ignored in a comment\nconst S: &str = \"crate::cli::ignored\";\n",
    );
    write("core/a.rs", "use super::b::B;\npub struct A;\n");
    write(
        "core/b.rs",
        "pub struct B;\nfn f() { let _ = super::A; let _ = '\"'; }\n#[cfg(test)]\nmod tests { use super::*; }\n",
    );
    write("core/c.rs", "fn g() { crate::cli::run(); }\n");
    write("cli/mod.rs", "use crate::core::{A, a};\npub fn run() {}\n");
    let bad = violations(src, &[]);
    // Only the circle: c.rs → cli/mod.rs → core/mod.rs is no loop back to c.rs.
    assert_eq!(bad.len(), 1, "{bad:#?}");
    // `super::A` in b.rs is a.rs's A through core/mod.rs's re-export: a ⇄ b.
    assert!(
        bad[0].starts_with("a circle between 2 files:"),
        "{}",
        bad[0]
    );
    assert!(bad[0].contains("src/core/a.rs → src/core/b.rs (`super::b::B`)"));
    assert!(bad[0].contains("src/core/b.rs → src/core/a.rs (`super::A`)"));
}

/// A listed pending circle excuses exactly that circle; a stale entry is itself a failure.
#[test]
fn pending_circles_must_match_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |p: &str, text: &str| {
        let p = src.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "pub mod tui;\n");
    write("tui/mod.rs", "mod a;\nmod b;\n");
    write("tui/a.rs", "use super::b::B;\npub struct A;\n");
    write("tui/b.rs", "use super::a::A;\npub struct B;\n");
    assert!(violations(src, &[&["tui/a.rs", "tui/b.rs"]]).is_empty());
    let bad = violations(src, &[&["tui/a.rs", "tui/c.rs"]]);
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].contains("no longer exists"), "{}", bad[0]);
    assert!(
        bad[1].starts_with("a circle between 2 files:"),
        "{}",
        bad[1]
    );
}
