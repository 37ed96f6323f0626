//! `--format github`: GitHub Actions workflow commands, one annotation per finding.

use super::display_path;
use crate::Report;
use std::path::Path;

pub fn render(report: &Report, base: &Path) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.level {
            crate::config::Level::Error => "error",
            crate::config::Level::Warning => "warning",
            crate::config::Level::Note => "notice",
        };
        out.push_str(&format!(
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            escape_property(&display_path(&report.files[f.file].path, base)),
            f.start.line,
            f.start.column,
            f.end.line,
            f.end.column,
            escape_property(f.rule.code),
            escape_data(&super::message_text(f)),
        ));
    }
    for e in &report.errors {
        out.push_str(&format!(
            "::error file={},title=idemlint::{}\n",
            escape_property(&display_path(&e.path, base)),
            escape_data(&e.message)
        ));
    }
    out
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape_data("50%\nx"), "50%25%0Ax");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
