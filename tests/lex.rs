//! The lexical pass finds every name the parser's facts hold (issue 16 item 2): a file whose
//! identifiers hold none of a rule's evidence cannot hold that evidence in its facts either.
//! Checked on every fixture file; the few names the front ends make up are listed.

mod common;

use idemlint::facts::{Expr, ExprKind, FileFacts, simple_name};
use idemlint::walk::{walk_expr, walk_lets, walk_stmts};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The directories `IDEMLINT_LEX_DIRS` names (colon-separated), for the `--ignored` checks.
fn env_dirs() -> Vec<PathBuf> {
    std::env::var("IDEMLINT_LEX_DIRS")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The identifier-like names in `facts`: declarations, calls, names, fields, types built,
/// macros and annotations (the last segment of a qualified one).
fn names(facts: &FileFacts) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |n: &str| {
        let n = simple_name(n);
        if !n.is_empty() {
            out.insert(n.to_string());
        }
    };
    let mut exprs: Vec<&Expr> = Vec::new();
    for f in &facts.functions {
        if let Some(n) = &f.name {
            add(n);
        }
        for a in &f.annotations {
            add(&a.name);
        }
        walk_stmts(&f.body, &mut |e| exprs.push(e));
        walk_lets(&f.body, &mut |b| add(&b.name));
    }
    for t in &facts.types {
        if let Some(n) = &t.name {
            add(n);
        }
        for a in &t.annotations {
            add(&a.name);
        }
        for b in &t.fields {
            add(&b.name);
            if let Some(i) = &b.init {
                walk_expr(i, &mut |e| exprs.push(e));
            }
        }
    }
    for b in &facts.globals {
        add(&b.name);
        if let Some(i) = &b.init {
            walk_expr(i, &mut |e| exprs.push(e));
        }
    }
    walk_stmts(&facts.top_level, &mut |e| exprs.push(e));
    for e in exprs {
        match &e.kind {
            ExprKind::Name(n) => add(n),
            ExprKind::Field { name, .. } | ExprKind::Call { name, .. } => add(name),
            ExprKind::Macro { name, .. } => add(name),
            ExprKind::New { ty, .. } => {
                let t = simple_name(ty);
                add(t.split(['<', '[', '(', '?']).next().unwrap_or(t))
            }
            _ => {}
        }
    }
    out
}

/// Names the front ends make up rather than read (`invoke`, operators, `Companion`).
const MADE_UP: &[&str] = idemlint::lex::MADE_UP_NAMES;

/// Is `n` a name of the text as the front ends see it? Besides the made-up names: a Rust
/// tuple field (`pair.0`) is a number; Kotlin property getters and `init` blocks are functions
/// named `<get-x>`, `<init>`; the Kotlin front end's grammar patches overwrite letters with `_`
/// in place (`value` -> `_alue`, `suspend` -> `_uspend`, `$$` -> `__`, also inside backtick
/// names); a template whose code holds a lambda keeps its `${` in the name it lowers to.
fn accounted(n: &str, idents: &BTreeSet<&str>) -> bool {
    let patched =
        |i: &&str| i.len() == n.len() && i.bytes().zip(n.bytes()).all(|(a, b)| a == b || b == b'_');
    // Type text in a name (`String[]::new`, a Rust `(Option<..>, ..)` path) counts by its type.
    let bare = n
        .strip_prefix("${")
        .unwrap_or(n)
        .trim_start_matches(['(', '&', '*']);
    let bare = bare.trim_end_matches("[]");
    let trimmed = bare.trim_end_matches('_');
    idents.contains(bare)
        || MADE_UP.contains(&bare)
        || n.starts_with('<')
        || n.bytes().all(|b| b.is_ascii_digit())
        || (n.contains('_') && idents.iter().any(patched))
        || (trimmed.len() < bare.len() && idents.contains(trimmed))
}

/// (names checked, names missing) over the sources under `dirs`.
fn check(dirs: &[PathBuf]) -> (usize, Vec<String>) {
    let mut missing: Vec<String> = Vec::new();
    let mut checked = 0;
    let (mut lex_time, mut bytes) = (0.0, 0usize);
    let files = common::each_parsed(dirs, |path, lang, text, facts| {
        let clock = std::time::Instant::now();
        let lexed = idemlint::lex::lex(lang, text);
        lex_time += clock.elapsed().as_secs_f64();
        bytes += text.len();
        let idents: BTreeSet<&str> = lexed.idents.iter().copied().collect();
        for n in names(facts) {
            checked += 1;
            if !accounted(&n, &idents) {
                missing.push(format!("{}: {n}", path.display()));
            }
        }
    });
    eprintln!(
        "lexed {files} files, {:.1} MB in {lex_time:.3} s on one thread",
        bytes as f64 / 1e6
    );
    (checked, missing)
}

#[test]
fn every_name_in_the_facts_is_an_identifier_of_the_text() {
    let (checked, missing) = check(&[Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")]);
    assert!(checked > 20_000, "{checked}");
    assert!(
        missing.is_empty(),
        "{} of {checked} names are not identifiers of their file:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

/// The same on other code: `IDEMLINT_LEX_DIRS=/path/a:/path/b cargo test --release --test lex
/// -- --ignored` (real repositories, the bench corpus).
#[test]
#[ignore]
fn every_name_in_the_facts_of_other_code_is_an_identifier() {
    let (checked, missing) = check(&env_dirs());
    eprintln!("{checked} names, {} missing", missing.len());
    for m in missing.iter().take(40) {
        eprintln!("  {m}");
    }
    assert!(missing.is_empty());
}

/// The declared type names of `facts`: not Rust `impl` blocks nor anonymous classes.
fn declared_types(facts: &FileFacts) -> Vec<String> {
    use idemlint::facts::TypeKind;
    let mut v: Vec<String> = facts
        .types
        .iter()
        .filter(|t| !matches!(t.kind, TypeKind::Impl | TypeKind::Anonymous))
        .filter_map(|t| t.name.clone())
        .collect();
    v.sort();
    v
}

/// (files compared, files whose lexical type names differ from the facts') under `dirs`.
fn check_types(dirs: &[PathBuf]) -> (usize, Vec<String>) {
    let mut differ = Vec::new();
    let files = common::each_parsed(dirs, |path, lang, text, facts| {
        let want = declared_types(facts);
        let mut got: Vec<String> = idemlint::lex::lex(lang, text)
            .types
            .iter()
            .map(|s| s.to_string())
            .collect();
        got.sort();
        if got != want {
            differ.push(format!("{}: lexed {got:?}, facts {want:?}", path.display()));
        }
    });
    (files, differ)
}

/// Fixture files where the two disagree, and why; each must still disagree (so the list
/// shrinks when either side is fixed).
const KNOWN_TYPE_DIFFERENCES: &[(&str, &str)] = &[
    (
        "fixtures/kotlin/grammar_gaps/SettlementJobs.kt",
        "a Kotlin enum entry with a body (`LIVE { .. }`) is a type in the facts; the lexer does not \
         find enum entries yet",
    ),
    (
        "fixtures/projects14/kotlin-tallyho/src/main/kotlin/app/tallyho/marketplace/http/PaymentsGateway.kt",
        "a Kotlin front-end defect the lexer found: the annotated `interface PaymentsGatewayClient` \
         is lowered as an unnamed function when a later class has an array-valued annotation \
         argument (alone it is lowered right)",
    ),
];

#[test]
fn the_declared_type_names_are_the_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (n, differ) = check_types(&[root.join("fixtures")]);
    assert!(n > 1000);
    let known = |d: &String| {
        KNOWN_TYPE_DIFFERENCES
            .iter()
            .any(|(f, _)| d.starts_with(&format!("{}:", root.join(f).display())))
    };
    let unexpected: Vec<&String> = differ.iter().filter(|d| !known(d)).collect();
    assert!(
        unexpected.is_empty(),
        "{} of {n} files:\n{}",
        unexpected.len(),
        unexpected
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (f, why) in KNOWN_TYPE_DIFFERENCES {
        let prefix = format!("{}:", root.join(f).display());
        assert!(
            differ.iter().any(|d| d.starts_with(&prefix)),
            "{f} now agrees ({why}): take it off the list"
        );
    }
}

/// The same on other code (`IDEMLINT_LEX_DIRS`, as above).
#[test]
#[ignore]
fn the_declared_type_names_of_other_code_are_the_facts() {
    let (n, differ) = check_types(&env_dirs());
    eprintln!("{n} files, {} differ", differ.len());
    for d in differ.iter().take(40) {
        eprintln!("  {d}");
    }
    assert!(differ.is_empty());
}
