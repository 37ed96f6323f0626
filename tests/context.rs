//! Project context (issue 16 item 1): a file linted alone, by path or as an editor's buffer,
//! gets exactly the findings the whole project's run has for it.

mod common;

use common::source_files;
use idemlint::context::Scope;
use idemlint::discover::is_test_path;
use idemlint::report::json;
use idemlint::rules::Selection;
use idemlint::{Options, Report, lint_project};
use std::path::{Path, PathBuf};

/// Fixture directories that are projects (a build file at their top), outermost only.
fn fixture_projects() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let markers = [
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle.kts",
        "Cargo.toml",
    ];
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        if markers.iter().any(|m| dir.join(m).is_file()) {
            out.push(dir);
            continue;
        }
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The JSON findings of `report` in `file`, as a user reads them.
fn findings_in(report: &Report, file: &Path, base: &Path) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(&json::render(report, base)).unwrap();
    let want = idemlint::report::display_path(file, base);
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == want.as_str())
        .cloned()
        .collect()
}

#[test]
fn every_fixture_file_alone_gets_its_project_findings() {
    let opts = Options {
        selection: Selection::all(),
        ..Options::default()
    };
    let mut failures = Vec::new();
    let (mut files, mut with_findings) = (0, 0);
    for dir in fixture_projects() {
        let whole = lint_project(&dir, &Scope::new(std::slice::from_ref(&dir)), &[], &opts);
        for f in source_files(&dir) {
            if is_test_path(f.strip_prefix(&dir).unwrap()) {
                continue;
            }
            files += 1;
            let want = findings_in(&whole, &f, &dir);
            with_findings += usize::from(!want.is_empty());
            let alone = lint_project(&dir, &Scope::new(std::slice::from_ref(&f)), &[], &opts);
            let got = findings_in(&alone, &f, &dir);
            if got != want || alone.findings.len() != got.len() {
                failures.push(format!(
                    "{}: alone {:?}\n  whole {:?}",
                    f.display(),
                    got,
                    want
                ));
            }
            // Every third file also as an editor buffer (the on-disk text, through stdin).
            if files % 3 == 0 {
                let text = std::fs::read_to_string(&f).unwrap();
                let buffer = lint_project(
                    &dir,
                    &Scope::new(std::slice::from_ref(&f)),
                    &[(f.clone(), text)],
                    &opts,
                );
                let got = findings_in(&buffer, &f, &dir);
                if got != want {
                    failures.push(format!("{} (as a buffer): {:?}", f.display(), got));
                }
            }
        }
    }
    eprintln!("{files} files alone, {with_findings} with findings");
    assert!(
        files > 500 && with_findings > 100,
        "{files} {with_findings}"
    );
    assert!(
        failures.is_empty(),
        "{} file(s) differ alone:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
