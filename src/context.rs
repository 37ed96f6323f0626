//! Project context: which directory's files are analysed together when only some files (or a
//! subdirectory) are named.
//!
//! The cross-file rules need the whole project: the interceptor that sets a stable key lives in
//! one file, the request it covers in another, the retry helper in a third. A pre-commit hook
//! or an editor names only some files, so idemlint finds their project and analyses all of it,
//! then reports only what lies in the named paths. The project of a path is, walking up from it:
//!
//! 1. the directory of the configuration file found for it (`idemlint.toml`, `.idemlint.toml`,
//!    or a `Cargo.toml` with an idemlint section), when that lies inside the repository (or
//!    there is none): a configuration file marks a project, which is how a monorepo keeps its
//!    services apart;
//! 2. else the version-control root (`.git`, `.hg`, `.jj`, `.svn`);
//! 3. else the outermost build root (`settings.gradle(.kts)`, `pom.xml`, `build.gradle(.kts)`,
//!    `Cargo.toml`);
//! 4. else a named directory is its own project, and a named file (a loose file in a scratch
//!    directory) is checked alone.

use std::path::{Component, Path, PathBuf};

/// Files or directories whose presence makes a directory a version-control root.
const VCS_MARKERS: &[&str] = &[".git", ".hg", ".jj", ".svn"];

/// Files that make a directory a build root.
const BUILD_MARKERS: &[&str] = &[
    "settings.gradle.kts",
    "settings.gradle",
    "pom.xml",
    "build.gradle.kts",
    "build.gradle",
    "Cargo.toml",
];

/// `p` made absolute against `cwd`, with `.` and `..` resolved lexically (symbolic links are
/// not followed, so a path keeps the form the user gave it).
pub fn absolute(p: &Path, cwd: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // `/..` is `/`; a relative `cwd` keeps its leading `..`.
                let at_root = out.parent().is_none() && out.has_root();
                if !at_root && !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The directory a path's search starts from: itself for a directory, else its parent (a file
/// that does not exist yet, such as an unsaved editor buffer, counts as a file).
fn start_dir(path: &Path) -> &Path {
    if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(path)
    }
}

fn nearest_with(start: &Path, markers: &[&str]) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| markers.iter().any(|m| d.join(m).exists()))
        .map(Path::to_path_buf)
}

/// The version-control root at or above `start`.
pub fn vcs_root(start: &Path) -> Option<PathBuf> {
    nearest_with(start, VCS_MARKERS)
}

/// The outermost build root at or above `start` (a Gradle or Maven multi-project, or a Cargo
/// workspace, holds its modules below it).
pub fn build_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .filter(|d| BUILD_MARKERS.iter().any(|m| d.join(m).is_file()))
        .last()
        .map(Path::to_path_buf)
}

/// The project root of an absolute `path` (see the module documentation). `config` is the
/// configuration file found for it, if any (not one given with `--config`: that names settings,
/// not a project).
pub fn project_root(path: &Path, config: Option<&Path>) -> Option<PathBuf> {
    let start = start_dir(path);
    let vcs = vcs_root(start);
    let config_dir = config
        .and_then(Path::parent)
        .filter(|d| start.starts_with(d));
    if let Some(d) = config_dir
        && vcs.as_deref().is_none_or(|v| d.starts_with(v))
    {
        return Some(d.to_path_buf());
    }
    vcs.or_else(|| build_root(start))
        .or_else(|| config_dir.map(Path::to_path_buf))
        // A directory outside any repository or build is a project of its own.
        .or_else(|| path.is_dir().then(|| path.to_path_buf()))
}

/// Where a configuration file is looked for: from the named path itself, not the working
/// directory.
pub fn config_start(path: &Path) -> &Path {
    start_dir(path)
}

/// The files a run reports on: named files and everything under named directories.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Scope {
    /// A scope of absolute, lexically normalised paths.
    pub fn new(named: &[PathBuf]) -> Scope {
        let mut s = Scope::default();
        for p in named {
            if p.is_dir() {
                s.dirs.push(p.clone());
            } else {
                s.files.push(p.clone());
            }
        }
        s.files.sort();
        s.files.dedup();
        s.dirs.sort();
        s.dirs.dedup();
        s
    }

    /// Does the scope hold this (absolute) path?
    pub fn contains(&self, path: &Path) -> bool {
        self.files
            .binary_search_by(|f| f.as_path().cmp(path))
            .is_ok()
            || self.dirs.iter().any(|d| path.starts_with(d))
    }

    /// The named files (not directories).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// The named directories.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn absolute_resolves_dots_lexically() {
        let cwd = Path::new("/work/app");
        assert_eq!(
            absolute(Path::new("./src/../lib/A.java"), cwd),
            Path::new("/work/app/lib/A.java")
        );
        assert_eq!(
            absolute(Path::new("../other"), cwd),
            Path::new("/work/other")
        );
        assert_eq!(absolute(Path::new("/x/./y"), cwd), Path::new("/x/y"));
        assert_eq!(absolute(Path::new("/../x"), cwd), Path::new("/x"));
    }

    #[test]
    fn roots_in_order_config_vcs_outermost_build() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        // A Gradle multi-project with a module, no repository yet.
        touch(&r.join("settings.gradle.kts"));
        touch(&r.join("billing/build.gradle.kts"));
        let file = r.join("billing/src/main/java/Pay.java");
        touch(&file);
        assert_eq!(project_root(&file, None).as_deref(), Some(r));
        // A repository root above the build wins.
        let outer = r.join("billing");
        std::fs::create_dir_all(outer.join(".git")).unwrap();
        assert_eq!(project_root(&file, None).as_deref(), Some(outer.as_path()));
        // A configuration file inside the repository marks a project of its own.
        let cfg = r.join("billing/src/idemlint.toml");
        touch(&cfg);
        assert_eq!(
            project_root(&file, Some(&cfg)).as_deref(),
            Some(r.join("billing/src").as_path())
        );
        // One above the repository does not widen it.
        let above = r.join("idemlint.toml");
        touch(&above);
        assert_eq!(
            project_root(&file, Some(&above)).as_deref(),
            Some(outer.as_path())
        );
        // A directory is its own start; a file that does not exist yet starts at its parent.
        assert_eq!(
            project_root(&r.join("billing/src/main/New.java"), None).as_deref(),
            Some(outer.as_path())
        );
    }

    #[test]
    fn loose_files_have_no_project() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("A.java");
        touch(&file);
        // (Assumes the temporary directory is not inside a repository or build.)
        assert_eq!(project_root(&file, None), None);
        assert_eq!(project_root(d.path(), None).as_deref(), Some(d.path()));
    }

    #[test]
    fn scope_holds_named_files_and_what_is_under_named_directories() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        touch(&r.join("a/A.java"));
        touch(&r.join("b/B.java"));
        touch(&r.join("c/C.java"));
        let s = Scope::new(&[r.join("a"), r.join("b/B.java")]);
        assert!(s.contains(&r.join("a/A.java")));
        assert!(s.contains(&r.join("b/B.java")));
        assert!(!s.contains(&r.join("c/C.java")));
        assert!(
            !s.contains(&r.join("ab/X.java")),
            "a prefix of a name is not a parent"
        );
    }
}
