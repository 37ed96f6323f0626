//! `--diff-base REV`: the lines changed since the merge-base with REV, working tree included
//! (staged, unstaged and untracked files), so findings can be limited to new code.

use crate::hash::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Changed line ranges per file (absolute paths).
#[derive(Debug, Default)]
pub struct ChangedLines {
    files: HashMap<PathBuf, Vec<(usize, usize)>>,
    /// Files that are new to git: every line counts as changed.
    untracked: Vec<PathBuf>,
}

impl ChangedLines {
    /// Is 1-based `line` of `path` changed?
    pub fn contains(&self, path: &Path, line: usize) -> bool {
        let abs = absolute(path);
        self.untracked.contains(&abs)
            || self
                .files
                .get(&abs)
                .is_some_and(|r| r.iter().any(|&(a, b)| a <= line && line <= b))
    }
}

fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    std::fs::canonicalize(&p).unwrap_or(p)
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Lines changed between the merge-base of `rev` and HEAD, and the working tree.
pub fn changed_lines(rev: &str, dir: &Path) -> Result<ChangedLines, String> {
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?.trim());
    let base =
        git(dir, &["merge-base", rev, "HEAD"]).map_err(|e| format!("--diff-base {rev}: {e}"))?;
    let base = base.trim();
    let diff = git(
        &top,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--unified=0",
            "--no-renames",
            base,
            "--",
        ],
    )?;
    let mut out = ChangedLines::default();
    let mut current: Option<PathBuf> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ ") {
            current = path.strip_prefix("b/").map(|p| absolute(&top.join(p)));
        } else if let (Some(hunk), Some(file)) = (line.strip_prefix("@@ "), &current) {
            // `@@ -a,b +c,d @@`: lines c .. c+d-1 of the new file.
            if let Some(plus) = hunk.split_whitespace().find(|t| t.starts_with('+')) {
                let mut parts = plus[1..].split(',');
                let start: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                let count: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
                if count > 0 {
                    out.files
                        .entry(file.clone())
                        .or_default()
                        .push((start, start + count - 1));
                }
            }
        }
    }
    let untracked = git(&top, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    out.untracked = untracked
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(|s| absolute(&top.join(s)))
        .collect();
    Ok(out)
}
