//! Which files' text contains any of a set of words: a cheap, exact pre-check that lets a
//! project-wide pass skip files where what it looks for cannot be.
//!
//! A call's name, a type's name and a string literal's words are written in the file, so a
//! file whose text contains none of the words a pass matches against cannot have a match.
//! Three things the front ends produce are not written as such, and the check allows for
//! them: Kotlin's `f(x)` on a function value is a call named `invoke`; Kotlin decodes `\u..`
//! escapes in string literals; Java joins a text block's lines at a `\` that ends one (after
//! its trailing spaces are stripped). A file with any of these passes whenever it could
//! matter.

use crate::facts::Lang;
use aho_corasick::AhoCorasick;

pub struct Needles {
    /// Case-insensitive: a superset for exact-case names too.
    words: Option<AhoCorasick>,
    /// A needle is `invoke`: every Kotlin file may call it.
    invoke: bool,
}

/// A string escape that the lowering decodes into other letters.
const DECODED: &[&str] = &["\\u"];

/// A `\` that ends a line, maybe before trailing white space (which a Java text block strips
/// first): the block joins the line with the next one there.
fn has_line_continuation(text: &str) -> bool {
    text.match_indices('\\').any(|(i, _)| {
        text[i + 1..]
            .chars()
            .find(|c| *c == '\n' || !c.is_whitespace())
            .is_none_or(|c| c == '\n')
    })
}

impl Needles {
    pub fn new<'a>(words: impl IntoIterator<Item = &'a str>) -> Needles {
        let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
        let invoke = words.contains(&"invoke");
        let words = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(words.iter().copied().chain(DECODED.iter().copied()))
            .ok();
        Needles { words, invoke }
    }

    /// May a file of `lang` with this text hold one of the words in its code? A word inside
    /// one of `comments` (byte ranges, in order, as the lexer finds them) does not count: the
    /// front ends lower no comment.
    pub fn may_contain_code(&self, lang: Lang, text: &str, comments: &[(u32, u32)]) -> bool {
        // (A word in code and one in a comment cannot overlap: the comment's end lies between.)
        self.any_match(lang, text, |at| !within(comments, at))
    }

    /// [`Self::may_contain_code`], counting only words inside one of `strings` (the byte ranges of
    /// string literals, in order, as the lexer finds them).
    pub fn may_contain_in_strings(&self, lang: Lang, text: &str, strings: &[(u32, u32)]) -> bool {
        self.any_match(lang, text, |at| within(strings, at))
    }

    /// Does a word start at a position `counts` accepts (or may the text hold one anyway)?
    fn any_match(&self, lang: Lang, text: &str, counts: impl Fn(usize) -> bool) -> bool {
        if self.invoke && lang == Lang::Kotlin {
            return true;
        }
        let Some(ac) = &self.words else {
            // Too many words to build a matcher (cannot happen at our sizes): stay exact.
            return true;
        };
        ac.find_iter(text).any(|m| counts(m.start())) || has_line_continuation(text)
    }
}

/// Does byte `at` lie inside one of `ranges` (sorted, not overlapping)?
fn within(ranges: &[(u32, u32)], at: usize) -> bool {
    let k = ranges.partition_point(|&(start, _)| start as usize <= at);
    k > 0 && at < ranges[k - 1].1 as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting words anywhere in the text (no comments known).
    fn anywhere(n: &Needles, lang: Lang, text: &str) -> bool {
        n.may_contain_code(lang, text, &[])
    }

    #[test]
    fn words_match_in_any_case_and_decoded_text_always_passes() {
        let n = Needles::new(["tryLock", "pg_advisory_lock"]);
        assert!(anywhere(&n, Lang::Java, "lock.trylock(key)"));
        assert!(anywhere(
            &n,
            Lang::Java,
            "q(\"SELECT PG_ADVISORY_LOCK(1)\")"
        ));
        assert!(!anywhere(&n, Lang::Java, "lock.lock(); unlock();"));
        // An escape may spell a word out: such files always pass.
        assert!(anywhere(
            &n,
            Lang::Kotlin,
            "q(\"pg\\u005fadvisory_lock(1)\")"
        ));
        assert!(anywhere(
            &n,
            Lang::Java,
            "q(\"\"\"\n  pg_advisory_\\\nlock\"\"\")"
        ));
        // Trailing spaces after the `\` are stripped before the lines are joined.
        assert!(anywhere(
            &n,
            Lang::Java,
            "q(\"\"\"\n  pg_advisory_\\   \r\nlock\"\"\")"
        ));
        assert!(!anywhere(&n, Lang::Java, "s.split(\"\\\\s+\"); x.lock();"));
        // `invoke` is what Kotlin calls a function value by.
        let inv = Needles::new(["invoke"]);
        assert!(anywhere(&inv, Lang::Kotlin, "fun f(g: () -> Unit) = g()"));
        assert!(!anywhere(
            &inv,
            Lang::Java,
            "void f(Runnable g) { g.run(); }"
        ));
    }

    /// A word in a comment does not count; the same word in code or in a string does, and a
    /// comment marker inside a string starts no comment.
    #[test]
    fn words_in_comments_do_not_count() {
        let n = Needles::new(["obtain"]);
        let check = |text: &str| {
            let comments = crate::lex::lex(Lang::Java, text).comments;
            n.may_contain_code(Lang::Java, text, &comments)
        };
        assert!(!check("/* You may obtain a copy */ class A {}"));
        assert!(!check("class A { // obtain\n void f() {} }"));
        assert!(check("/* x */ class A { void f() { pool.obtain(); } }"));
        assert!(check("class A { String u = \"http://x/obtain\"; }"));
        // Without the comment ranges the licence's word counts.
        assert!(anywhere(
            &n,
            Lang::Java,
            "/* You may obtain a copy */ class A {}"
        ));
    }

    /// Counting only words in strings: a name or a comment with the word does not count.
    #[test]
    fn words_in_strings_only() {
        let n = Needles::new(["post"]);
        let check = |text: &str| {
            let strings = crate::lex::lex(Lang::Java, text).string_ranges();
            n.may_contain_in_strings(Lang::Java, text, &strings)
        };
        assert!(check(
            "class A { @RequestLine(\"POST /v1/charges\") void f(); }"
        ));
        assert!(!check("class A { void postProcess() {} } // a POST"));
    }
}
