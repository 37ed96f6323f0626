//! `--format concise`: one line per finding, `path:line:col: CODE message` (as ruff's concise
//! output and compilers write them, so editors and `grep` can jump to each), then the summary.

use super::display_path;
use crate::Report;
use std::path::Path;

pub fn render(report: &Report, base: &Path) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&format!(
            "{}:{}:{}: {} {}\n",
            display_path(&report.files[f.file].path, base),
            f.start.line,
            f.start.column,
            f.rule.code,
            one_line(&f.message),
        ));
    }
    out
}

/// A message on one line: a message may quote code that spans lines (IDEM004 and IDEM005 quote
/// a multi-line call), which one line per finding cannot hold.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
