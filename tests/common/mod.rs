//! Helpers shared by the end-to-end tests: run the binary in a directory, write files.
#![allow(dead_code)] // Each test crate uses some of these helpers.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `idemlint ARGS` in `dir`, without colour.
pub fn idemlint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run idemlint")
}

/// Writes `text` to `dir/rel`, creating directories.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies the directory tree `from` into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// A copy of a fixture directory (relative to the repository) in a fresh repository: a `.git`
/// directory marks its root.
pub fn fixture_repo(fixture: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture),
        d.path(),
    );
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    d
}

/// The Java, Kotlin and Rust sources below `dir` (not inside `.git`), sorted.
pub fn source_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with(".git") {
                    stack.push(p);
                }
            } else if idemlint::facts::Lang::from_path(&p).is_some() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The findings of a `--format json` run, as `CODE path` lines.
pub fn code_paths(o: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&stdout(o))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["code"].as_str().unwrap(),
                f["path"].as_str().unwrap()
            )
        })
        .collect()
}

/// Calls `f` with each source file under `dirs` that reads and parses: its path, language,
/// text and facts. Returns how many source files there were.
pub fn each_parsed(
    dirs: &[std::path::PathBuf],
    mut f: impl FnMut(&Path, idemlint::facts::Lang, &str, &idemlint::facts::FileFacts),
) -> usize {
    let mut files: Vec<std::path::PathBuf> = dirs.iter().flat_map(|d| source_files(d)).collect();
    files.sort();
    for path in &files {
        let lang = idemlint::facts::Lang::from_path(path).unwrap();
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if let Some(parsed) = idemlint::lang::parse_and_lower(lang, &text) {
            f(path, lang, &text, &parsed.facts);
        }
    }
    files.len()
}
