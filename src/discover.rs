//! Finding the files to check.

use crate::facts::Lang;
use std::path::{Component, Path, PathBuf};

/// Directory names never descended into (build output and vendored code).
pub const SKIP_DIRS: &[&str] = &[
    "target",
    "build",
    ".gradle",
    "node_modules",
    "out",
    "vendor",
    "third_party",
];

/// A file selected for checking.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: PathBuf,
    pub lang: Lang,
    /// Test sources (`src/test/**`, `*Test.java`, `tests/**`, ...).
    pub is_test: bool,
    /// Named on the command line rather than found by walking.
    pub explicit: bool,
}

/// A path that could not be walked.
#[derive(Debug, Clone)]
pub struct WalkError {
    pub path: PathBuf,
    pub message: String,
}

/// Walks `roots`: directories recursively (respecting `.gitignore` / `.ignore`, skipping
/// hidden and build directories, never following symlinks), files as given. Returns files in
/// a stable order.
pub fn discover(roots: &[PathBuf]) -> (Vec<Candidate>, Vec<WalkError>) {
    let (c, e, _) = discover_all(roots);
    (c, e)
}

/// A build-output or vendored directory (`target`, `build`, …) that is skipped — unless it
/// sits inside a source tree, where the same names are ordinary packages
/// (`src/main/java/org/springframework/aop/target`).
fn skipped_dir(rel: &Path) -> bool {
    let mut parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    SKIP_DIRS.contains(&name) && !parts.contains(&"src")
}

/// Is this file a service configuration the rules read (`application.yml`,
/// `application-prod.properties`, `quartz.properties`)?
pub fn is_config_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    matches!(ext, "properties" | "yml" | "yaml")
        && (stem.starts_with("application")
            || stem.starts_with("quartz")
            || stem.starts_with("bootstrap"))
}

/// Like [`discover`], also returning the configuration files found while walking (with
/// whether each is test configuration).
pub fn discover_all(roots: &[PathBuf]) -> (Vec<Candidate>, Vec<WalkError>, Vec<(PathBuf, bool)>) {
    let d = discover_files(roots);
    (d.candidates, d.errors, d.configs)
}

/// What a walk found.
#[derive(Default)]
pub struct Discovered {
    /// Source files, sorted by path.
    pub candidates: Vec<Candidate>,
    pub errors: Vec<WalkError>,
    /// Service configuration the rules read (`application.yml`, ...), with whether each is test
    /// configuration.
    pub configs: Vec<(PathBuf, bool)>,
    /// Files that may hold idemlint's own settings (`idemlint.toml`, `.idemlint.toml`,
    /// `Cargo.toml`): where projects of their own may start.
    pub settings: Vec<PathBuf>,
}

impl Discovered {
    /// Adds what another walk (or another thread of this one) found.
    fn absorb(&mut self, other: Discovered) {
        self.candidates.extend(other.candidates);
        self.errors.extend(other.errors);
        self.configs.extend(other.configs);
        self.settings.extend(other.settings);
    }
}

/// What a path named on the command line that is no source file is told.
pub const NOT_SOURCE: &str = "not a Java, Kotlin or Rust source file (.java, .kt, .kts, .rs)";

/// Is this the name of a file that may hold idemlint's settings?
fn settings_name(name: &str) -> bool {
    matches!(name, "idemlint.toml" | ".idemlint.toml" | "Cargo.toml")
}

/// Walks `roots` (in parallel), as [`discover`] describes.
pub fn discover_files(roots: &[PathBuf]) -> Discovered {
    let mut found = Discovered::default();
    for root in roots {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) => {
                found.errors.push(WalkError {
                    path: root.clone(),
                    message: io_message(&e),
                });
                continue;
            }
        };
        if meta.is_file() {
            match Lang::from_path(root) {
                Some(lang) => found.candidates.push(Candidate {
                    path: normalise(root),
                    lang,
                    is_test: false,
                    explicit: true,
                }),
                None => found.errors.push(WalkError {
                    path: root.clone(),
                    message: NOT_SOURCE.into(),
                }),
            }
            continue;
        }
        let walk_root = root.clone();
        let walker = ignore::WalkBuilder::new(root)
            // Hidden entries are skipped below, all but `.idemlint.toml`.
            .hidden(false)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .ignore(true)
            .parents(true)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                if e.depth() == 0 {
                    return true;
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if e.file_name().to_str().is_some_and(|n| n.starts_with('.')) {
                    return !is_dir && e.file_name() == ".idemlint.toml";
                }
                !is_dir || !skipped_dir(e.path().strip_prefix(&walk_root).unwrap_or(e.path()))
            })
            .build_parallel();
        let shared = std::sync::Mutex::new(Discovered::default());
        walker.run(|| {
            let root = root.clone();
            let shared = &shared;
            let mine = Discovered::default();
            // Each thread gathers on its own and hands its part over when it is dropped.
            struct Flush<'a>(Discovered, &'a std::sync::Mutex<Discovered>);
            impl Drop for Flush<'_> {
                fn drop(&mut self) {
                    let part = std::mem::take(&mut self.0);
                    if let Ok(mut all) = self.1.lock() {
                        all.absorb(part);
                    }
                }
            }
            let mut flush = Flush(mine, shared);
            Box::new(move |entry| {
                let out = &mut flush.0;
                match entry {
                    Ok(e) => {
                        if !e.file_type().is_some_and(|t| t.is_file()) {
                            return ignore::WalkState::Continue;
                        }
                        if e.file_name().to_str().is_some_and(settings_name) {
                            out.settings.push(normalise(e.path()));
                        }
                        let rel = e.path().strip_prefix(&root).unwrap_or(e.path());
                        match Lang::from_path(e.path()) {
                            Some(lang) => out.candidates.push(Candidate {
                                path: normalise(e.path()),
                                lang,
                                is_test: is_test_path(rel),
                                explicit: false,
                            }),
                            None if is_config_file(e.path()) => {
                                out.configs.push((normalise(e.path()), is_test_path(rel)))
                            }
                            None => {}
                        }
                    }
                    Err(err) => out.errors.push(WalkError {
                        path: err_path(&err).unwrap_or_else(|| root.clone()),
                        message: err.to_string(),
                    }),
                }
                ignore::WalkState::Continue
            })
        });
        found.absorb(shared.into_inner().unwrap_or_default());
    }
    found.candidates.sort_by(|a, b| a.path.cmp(&b.path));
    found.candidates.dedup_by(|a, b| a.path == b.path);
    found
        .errors
        .sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    found.configs.sort();
    found.configs.dedup();
    found.settings.sort();
    found.settings.dedup();
    found
}

/// The path without `.` components, so `./A.java` and `A.java` are one file.
fn normalise(p: &Path) -> PathBuf {
    let n: PathBuf = p
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if n.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        n
    }
}

fn err_path(e: &ignore::Error) -> Option<PathBuf> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            err_path(err)
        }
        _ => None,
    }
}

pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Is this (root-relative) path test code? JVM: `src/test/..`, `src/androidTest/..`,
/// `src/testFixtures/..`, `src/integrationTest/..`, files named `*Test` or `*Tests`; Rust: a
/// `tests/` directory, `tests.rs`, `*_test.rs`, `test_*.rs`.
pub fn is_test_path(rel: &Path) -> bool {
    let comps: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    let Some((file, dirs)) = comps.split_last() else {
        return false;
    };
    for (i, d) in dirs.iter().enumerate() {
        if *d == "tests" || *d == "test" || *d == "testFixtures" {
            return true;
        }
        if i > 0 && dirs[i - 1] == "src" && (d.ends_with("Test") || d.ends_with("Tests")) {
            return true;
        }
    }
    let stem = file.rsplit_once('.').map(|(s, _)| s).unwrap_or(file);
    let ext = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if ext == "rs" {
        return stem == "tests"
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || stem.starts_with("test_");
    }
    stem.ends_with("Test") || stem.ends_with("Tests")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_dirs_are_skipped_outside_source_trees_only() {
        assert!(skipped_dir(Path::new("target")));
        assert!(skipped_dir(Path::new("app/build")));
        assert!(skipped_dir(Path::new("services/pay/node_modules")));
        assert!(!skipped_dir(Path::new(
            "spring-aop/src/main/java/org/springframework/aop/target"
        )));
        assert!(!skipped_dir(Path::new("src/main/kotlin/com/acme/out")));
        assert!(!skipped_dir(Path::new("crates/core/src/build")));
        assert!(!skipped_dir(Path::new("app/buildSrc")));
    }

    #[test]
    fn test_paths() {
        for p in [
            "src/test/java/com/acme/BillingTest.java",
            "app/src/androidTest/kotlin/A.kt",
            "src/integrationTest/java/A.java",
            "src/main/java/com/acme/ChargeClientTest.java",
            "tests/retry.rs",
            "src/billing/tests.rs",
            "src/billing/charge_test.rs",
            "lib/src/testFixtures/java/Fake.java",
        ] {
            assert!(is_test_path(Path::new(p)), "{p}");
        }
        for p in [
            "src/main/java/com/acme/TestimonialService.java",
            "src/main/kotlin/ContestService.kt",
            "src/billing/attest.rs",
            "src/main/java/com/acme/latest/Charges.java",
            "Charges.java",
            "src/main/java/com/acme/HttpClientSpec.java",
            "src/main/java/com/acme/ChargeIT.java",
        ] {
            assert!(!is_test_path(Path::new(p)), "{p}");
        }
    }
}
