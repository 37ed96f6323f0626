//! A source file's text with line/column lookup.

use crate::facts::Span;
use std::path::PathBuf;

/// One scanned file's text.
///
/// A file read from disk may let go of its text once it is outlined ([`SourceFile::release`]):
/// most files of a project are never parsed nor reported, and their texts were most of a
/// run's memory. The text is read again when something asks for it; if it no longer reads,
/// or reads differently (it changed during the run), the file reads as empty and
/// [`SourceFile::read_back_error`] says why.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as given or discovered (used for display and SARIF URIs).
    pub path: PathBuf,
    text: std::sync::OnceLock<String>,
    /// The length and hash of the text let go, to know it again when it is read back.
    released: Option<(usize, u64)>,
    /// Why the text let go could not be read back.
    read_back_error: std::sync::OnceLock<String>,
    /// Where each line starts, found when a line or column is first asked for (most files
    /// never are: 18 MB on the bench corpus's 2.2 M lines).
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

/// A 1-based line and column (columns count characters, as editors and SARIF do).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

/// What tells a released text from another: fixed-seed, so two reads of one text agree.
fn text_hash(text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0x1de7_1147).hash_one(text)
}

impl SourceFile {
    pub fn new(path: PathBuf, text: String) -> Self {
        SourceFile {
            path,
            text: std::sync::OnceLock::from(text),
            released: None,
            read_back_error: std::sync::OnceLock::new(),
            line_starts: std::sync::OnceLock::new(),
        }
    }

    /// Its text (read back from [`Self::path`] if it was released).
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| self.read_back())
    }

    /// Lets go of the text, which is read from [`Self::path`] (and checked to be the same)
    /// when next asked for. Only for a text read from that path.
    pub fn release(&mut self) {
        if let Some(text) = self.text.take() {
            self.released = Some((text.len(), text_hash(&text)));
            self.line_starts = std::sync::OnceLock::new();
        }
    }

    /// Its text was let go and has not been read again.
    pub fn released_unread(&self) -> bool {
        self.released.is_some() && self.text.get().is_none()
    }

    fn read_back(&self) -> String {
        let Some((len, hash)) = self.released else {
            return String::new();
        };
        let err = |why: String| {
            let _ = self.read_back_error.set(why);
            String::new()
        };
        match std::fs::read(&self.path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) if text.len() == len && text_hash(&text) == hash => text,
                _ => err("changed while it was being checked; run again".into()),
            },
            Err(e) => err(format!(
                "could not be read again while it was being checked: {e}"
            )),
        }
    }

    /// Why its released text could not be read back (it changed or no longer reads), if so:
    /// what was found in it may be wrong.
    pub fn read_back_error(&self) -> Option<&str> {
        self.read_back_error.get().map(String::as_str)
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(self.text().match_indices('\n').map(|(i, _)| i + 1));
            starts
        })
    }

    /// 1-based line and character column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text().len());
        let starts = self.line_starts();
        let line = match starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = starts[line];
        let col_text = self.text().get(start..offset).unwrap_or("");
        // A BOM at the start of the file is not a column.
        let bom = usize::from(line == 0 && col_text.starts_with('\u{feff}'));
        LineCol {
            line: line + 1,
            column: col_text.chars().count() - bom + 1,
        }
    }

    /// The text of a 1-based line without its line ending.
    pub fn line_text(&self, line: usize) -> &str {
        let starts = self.line_starts();
        let Some(&start) = starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = starts.get(line).copied().unwrap_or(self.text().len());
        self.text()
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text().get(span.start..span.end).unwrap_or("")
    }

    pub fn line_count(&self) -> usize {
        self.line_starts().len()
    }
}

/// `text` (a piece of Java, Kotlin or Rust) with its comments left out, for checks that read
/// code as text: `.setConfirm(true)` counts, `// created without confirm` does not. Strings
/// (`"https://.."`, `""".."""`) and character literals are kept as they are; block comments
/// may nest (Kotlin, Rust).
pub fn without_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("//") && !text.contains("/*") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let triple = b[i..].starts_with(b"\"\"\"");
                let open = if triple { 3 } else { 1 };
                let mut j = i + open;
                while j < b.len() {
                    if triple {
                        if b[j..].starts_with(b"\"\"\"") {
                            j += 3;
                            break;
                        }
                        j += 1;
                    } else if b[j] == b'\\' {
                        j += 2;
                    } else if b[j] == b'"' || b[j] == b'\n' {
                        j += 1;
                        break;
                    } else {
                        j += 1;
                    }
                }
                let j = j.min(b.len());
                out.extend_from_slice(&b[i..j]);
                i = j;
            }
            // A character literal (`'"'`, `'\''`), not a Rust lifetime (`'a`).
            b'\'' if b.get(i + 1) == Some(&b'\\') || b.get(i + 2) == Some(&b'\'') => {
                let end = if b.get(i + 1) == Some(&b'\\') {
                    i + 4
                } else {
                    i + 3
                };
                let end = end.min(b.len());
                out.extend_from_slice(&b[i..end]);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(b' ');
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Only whole ASCII comment delimiters and literals were cut: what is left is UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_left_out() {
        assert_eq!(
            without_comments("builder() // created without confirm\n.setAmount(1)"),
            "builder() \n.setAmount(1)"
        );
        assert_eq!(without_comments("a /* x /* y */ confirm */ b"), "a   b");
        assert_eq!(
            without_comments("url(\"https://api/v1\") // c"),
            "url(\"https://api/v1\") "
        );
        assert_eq!(
            without_comments("c('/') + d(\"\\\"//\")"),
            "c('/') + d(\"\\\"//\")"
        );
        assert_eq!(
            without_comments("fn f<'a>(x: &'a str) // é"),
            "fn f<'a>(x: &'a str) "
        );
        assert_eq!(without_comments("no comment"), "no comment");
        assert_eq!(without_comments("unterminated /* é"), "unterminated  ");
    }

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

    /// A released text is read back from disk when asked for; a text that changed meanwhile,
    /// or a file that is gone, reads as empty and says why.
    #[test]
    fn released_texts_are_read_back_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("A.java");
        let text = "class A {\n  void f() {}\n}\n";
        std::fs::write(&path, text).unwrap();
        let read = |path: &std::path::Path| {
            let mut f = SourceFile::new(path.to_path_buf(), std::fs::read_to_string(path).unwrap());
            assert_eq!(f.line_col(12).line, 2);
            f.release();
            f
        };
        let same = read(&path);
        assert_eq!(same.text(), text);
        assert_eq!(same.line_text(2), "  void f() {}");
        assert_eq!(same.read_back_error(), None);

        // Same length, other content: a changed text is not taken for the one outlined.
        let changed = read(&path);
        std::fs::write(&path, text.replace("f()", "g()")).unwrap();
        assert_eq!(changed.text(), "");
        assert_eq!(changed.line_col(12), LineCol { line: 1, column: 1 });
        assert!(changed.read_back_error().unwrap().contains("changed"));

        let gone = read(&path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(gone.slice(Span::new(0, 5)), "");
        assert!(
            gone.read_back_error()
                .unwrap()
                .contains("could not be read again")
        );

        // A text not released stays whatever happens on disk.
        let kept = SourceFile::new(path.clone(), text.to_string());
        assert_eq!(kept.text(), text);
        assert_eq!(kept.read_back_error(), None);
    }
}
