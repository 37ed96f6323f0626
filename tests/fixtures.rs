//! The fixture runner: every rule over every fixture.
//!
//! Each directory under `fixtures/` that holds sources is linted as one project (so helpers
//! and registrations in sibling files are seen), with every rule enabled and test sources
//! skipped, as a user runs it (a fixture may hold a test file or a `#[cfg(test)]` module as a
//! trap). A line ending in `// expect: IDEM001` (or several codes, comma-separated) must be
//! reported with exactly those codes; every other line must be clean. `// todo-expect: CODE`
//! marks a known miss and `// todo-ok: CODE` a known false alarm: both are listed, and both
//! fail once they stop being true, so they never pass silently forever.

use idemlint::discover::is_test_path;
use idemlint::rules::Selection;
use idemlint::{Options, lint};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Key = (PathBuf, usize, String);

#[derive(Default)]
struct Expectations {
    expect: BTreeSet<Key>,
    todo_expect: BTreeSet<Key>,
    todo_ok: BTreeSet<Key>,
}

fn parse_codes(rest: &str) -> Vec<String> {
    rest.split([',', ' '])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .take_while(|c| c.starts_with("IDEM"))
        .map(str::to_string)
        .collect()
}

fn read_expectations(path: &Path, exp: &mut Expectations) {
    let text = std::fs::read_to_string(path).unwrap();
    for (i, line) in text.lines().enumerate() {
        for (marker, set) in [
            ("// expect:", &mut exp.expect),
            ("// todo-expect:", &mut exp.todo_expect),
            ("// todo-ok:", &mut exp.todo_ok),
        ] {
            if let Some(pos) = line.find(marker) {
                let codes = parse_codes(&line[pos + marker.len()..]);
                assert!(
                    !codes.is_empty(),
                    "{}:{}: `{marker}` without a rule code",
                    path.display(),
                    i + 1
                );
                for c in codes {
                    set.insert((path.to_path_buf(), i + 1, c));
                }
            }
        }
    }
}

/// Build files that make a directory one project: everything below it is linted together,
/// as a user runs `idemlint check <dir>` (configuration files included).
const PROJECT_FILES: &[&str] = &[
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle.kts",
    "Cargo.toml",
];

/// Directories under `fixtures/` that directly contain source files, and project roots (with
/// every source file below them).
fn fixture_dirs(root: &Path) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let mut out: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut stack: Vec<(PathBuf, Option<PathBuf>)> = vec![(root.to_path_buf(), None)];
    while let Some((dir, project)) = stack.pop() {
        let project = project.or_else(|| {
            PROJECT_FILES
                .iter()
                .any(|f| dir.join(f).is_file())
                .then(|| dir.clone())
        });
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let owner = project.clone().unwrap_or_else(|| dir.clone());
            if p.is_dir() {
                stack.push((p, project.clone()));
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("java" | "kt" | "kts" | "rs")
            ) {
                out.entry(owner).or_default().push(p);
            }
        }
    }
    for files in out.values_mut() {
        files.sort();
    }
    out
}

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let dirs = fixture_dirs(&root);
    assert!(
        !dirs.is_empty(),
        "no fixtures found under {}",
        root.display()
    );
    // As a user runs it: every rule, test sources skipped (a fixture may hold a `*Test.kt` or a
    // `#[cfg(test)]` module as a trap).
    let opts = Options {
        selection: Selection::all(),
        ..Options::default()
    };
    let mut failures = Vec::new();
    let mut todos = Vec::new();
    let (mut n_expect, mut n_files) = (0, 0);
    for (dir, files) in &dirs {
        let files: Vec<PathBuf> = files
            .iter()
            .filter(|f| !is_test_path(f.strip_prefix(dir).unwrap_or(f)))
            .cloned()
            .collect();
        let files = &files;
        let mut exp = Expectations::default();
        for f in files {
            read_expectations(f, &mut exp);
        }
        n_expect += exp.expect.len();
        n_files += files.len();
        // A project root is linted as a directory (discovery, configuration files); other
        // fixture directories file by file.
        let is_project = PROJECT_FILES.iter().any(|f| dir.join(f).is_file());
        let run = |exhaustive: bool| {
            let mut opts = Options {
                exhaustive,
                ..opts.clone()
            };
            if is_project {
                // A project with a configuration of its own (its catalogue extensions, per-file
                // ignores) is linted with it, still with every rule.
                if let Some(cfg) = idemlint::config::in_dir(dir) {
                    opts.config = idemlint::config::load(&cfg).unwrap();
                }
                lint(std::slice::from_ref(dir), &opts)
            } else {
                lint(files, &opts)
            }
        };
        let report = run(false);
        if let Err(e) = snapshot(&root, dir, &report) {
            failures.push(e);
        }
        // The evidence gates only skip work: with them off, every finding is the same.
        let exhaustive = run(true);
        if rendered(dir, &exhaustive) != rendered(dir, &report) {
            failures.push(format!(
                "{}: --exhaustive (the evidence gates off) gives other findings:\n{}",
                dir.display(),
                rendered(dir, &exhaustive)
            ));
        }
        for e in &report.errors {
            failures.push(format!("tool error: {}: {}", e.path.display(), e.message));
        }
        for n in &report.notices {
            failures.push(format!(
                "{}:{}: fixture does not parse cleanly: {}",
                n.path.display(),
                n.line,
                n.message
            ));
        }
        let actual: BTreeSet<Key> = report
            .findings
            .iter()
            .map(|f| {
                (
                    report.path(f.file).to_path_buf(),
                    f.start.line,
                    f.rule.code.to_string(),
                )
            })
            .collect();
        let message_of = |k: &Key| {
            report
                .findings
                .iter()
                .find(|f| report.path(f.file) == k.0 && f.start.line == k.1 && f.rule.code == k.2)
                .map(|f| f.message.clone())
                .unwrap_or_default()
        };
        for k in exp.expect.difference(&actual) {
            failures.push(format!(
                "{}:{}: expected {} but it was not reported",
                k.0.display(),
                k.1,
                k.2
            ));
        }
        for k in actual.difference(&exp.expect) {
            if exp.todo_ok.contains(k) {
                todos.push(format!(
                    "{}:{}: todo-ok {} (known false alarm)",
                    k.0.display(),
                    k.1,
                    k.2
                ));
                continue;
            }
            if exp.todo_expect.contains(k) {
                failures.push(format!(
                    "{}:{}: {} is now reported: change `todo-expect` to `expect`",
                    k.0.display(),
                    k.1,
                    k.2
                ));
                continue;
            }
            failures.push(format!(
                "{}:{}: unexpected {}: {}",
                k.0.display(),
                k.1,
                k.2,
                message_of(k)
            ));
        }
        for k in exp.todo_expect.difference(&actual) {
            todos.push(format!(
                "{}:{}: todo-expect {} (known miss)",
                k.0.display(),
                k.1,
                k.2
            ));
        }
        for k in exp.todo_ok.difference(&actual) {
            failures.push(format!(
                "{}:{}: todo-ok {} is no longer reported: remove the marker",
                k.0.display(),
                k.1,
                k.2
            ));
        }
    }
    eprintln!(
        "fixtures: {n_files} files, {n_expect} expected findings, {} known gaps",
        todos.len()
    );
    for t in &todos {
        eprintln!("  {t}");
    }
    assert!(
        failures.is_empty(),
        "{} fixture failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What a user reads for a fixture directory: the human output (with its summary line) and the
/// SARIF results, paths relative to the directory. Kept in `tests/snapshots/` beside the
/// line-level expectations; a changed rendering fails until it is blessed:
/// `INSTA_UPDATE=always cargo test --test fixtures` (or `cargo insta review`).
fn rendered(dir: &Path, report: &idemlint::Report) -> String {
    use idemlint::report::{human, sarif};
    let mut out = human::render(report, dir, false);
    out.push_str(&human::summary(report));
    out.push_str("\n\n--- SARIF results ---\n");
    // One result per line. The rest of the log is the same for every directory: the rule
    // metadata has a snapshot of its own, the base URI is where the checkout lives.
    let v: serde_json::Value = serde_json::from_str(&sarif::render(report, dir)).unwrap();
    for r in v["runs"][0]["results"].as_array().unwrap() {
        out.push_str(&serde_json::to_string(r).unwrap());
        out.push('\n');
    }
    let invocation = &v["runs"][0]["invocations"][0];
    if invocation["executionSuccessful"] != true
        || !invocation["toolExecutionNotifications"]
            .as_array()
            .is_none_or(|n| n.is_empty())
    {
        out.push_str(&serde_json::to_string(invocation).unwrap());
        out.push('\n');
    }
    out
}

fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

/// Compares a fixture directory's rendered output with its snapshot (insta prints the diff).
fn snapshot(fixtures: &Path, dir: &Path, report: &idemlint::Report) -> Result<(), String> {
    let name = dir
        .strip_prefix(fixtures)
        .unwrap()
        .to_string_lossy()
        .replace(['/', '\\'], "__");
    let text = rendered(dir, report);
    let settings = snapshot_settings();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(name.as_str(), text));
    }))
    .map_err(|_| format!("snapshot {name}: the rendered output changed (diff above)"))
}

/// The rules as SARIF describes them to code scanning (names, descriptions, help, tags).
#[test]
fn sarif_rule_metadata_snapshot() {
    let config = idemlint::config::Config::default();
    let report = idemlint::Report {
        rule_levels: idemlint::rules::RULES
            .iter()
            .map(|r| (r.code, config.level_of(r.code, r.severity)))
            .collect(),
        ..Default::default()
    };
    let v: serde_json::Value =
        serde_json::from_str(&idemlint::report::sarif::render(&report, Path::new("."))).unwrap();
    let tool = serde_json::to_string_pretty(&v["runs"][0]["tool"]).unwrap();
    snapshot_settings().bind(|| insta::assert_snapshot!("sarif_tool", tool));
}

#[test]
fn codes_parse() {
    assert_eq!(parse_codes(" IDEM001, IDEM008"), vec!["IDEM001", "IDEM008"]);
    assert_eq!(parse_codes(" IDEM001 because reasons"), vec!["IDEM001"]);
    assert!(parse_codes(" nothing").is_empty());
}
