//! A source file's text with line/column lookup.

use crate::facts::Span;
use std::path::PathBuf;

/// One scanned file's text.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as given or discovered (used for display and SARIF URIs).
    pub path: PathBuf,
    pub text: String,
    line_starts: Vec<usize>,
}

/// A 1-based line and column (columns count characters, as editors and SARIF do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            path,
            text,
            line_starts,
        }
    }

    /// 1-based line and character column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col_text = self.text.get(start..offset).unwrap_or("");
        // A BOM at the start of the file is not a column.
        let bom = usize::from(line == 0 && col_text.starts_with('\u{feff}'));
        LineCol {
            line: line + 1,
            column: col_text.chars().count() - bom + 1,
        }
    }

    /// The text of a 1-based line without its line ending.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or("")
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_columns() {
        let f = SourceFile::new("a".into(), "ab\r\nçd\nx".into());
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(4), LineCol { line: 2, column: 1 });
        // 'd' comes after a 2-byte char: byte 6, column 2.
        assert_eq!(f.line_col(6), LineCol { line: 2, column: 2 });
        assert_eq!(f.line_text(1), "ab");
        assert_eq!(f.line_text(2), "çd");
        assert_eq!(f.line_text(3), "x");
        assert_eq!(f.line_text(9), "");
    }

    #[test]
    fn bom_is_not_a_column() {
        let f = SourceFile::new("a".into(), "\u{feff}class A".into());
        assert_eq!(f.line_col(3), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(9), LineCol { line: 1, column: 7 });
    }
}
