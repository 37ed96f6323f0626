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
    /// Case-insensitive: a superset for exact-case names too. The words, then [`DECODED`].
    words: Option<AhoCorasick>,
    /// How many of the patterns are words (the rest are [`DECODED`]).
    n_words: usize,
    /// A needle is `invoke`: every Kotlin file may call it.
    invoke: bool,
}

/// A string escape that the lowering decodes into other letters.
const DECODED: &[&str] = &["\\u"];

/// Where each `\` that ends a line (maybe before trailing white space, which a Java text block
/// strips first) is, and where the next line starts: a text block joins the two lines there.
fn line_continuations(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    text.match_indices('\\').filter_map(|(i, _)| {
        let rest = &text[i + 1..];
        let k = rest.find(|c: char| c == '\n' || !c.is_whitespace());
        match k {
            Some(k) if rest.as_bytes()[k] == b'\n' => Some((i, i + 1 + k + 1)),
            Some(_) => None,
            None => Some((i, text.len())),
        }
    })
}

/// Bytes either side of a line continuation looked at for a word spanning it (longer than any
/// word we look for).
const JOIN_WINDOW: usize = 64;

/// May a word of `ac` span a line continuation (`pg_advisory_\` + `lock`)?
fn word_spans_continuation(ac: &AhoCorasick, text: &str) -> bool {
    line_continuations(text).any(|(end, next)| {
        let mut from = end.saturating_sub(JOIN_WINDOW);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (next + JOIN_WINDOW).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        let left = &text[from..end];
        let joined = format!("{left}{}", &text[next..to]);
        ac.find_iter(joined.as_str())
            .any(|m| m.start() < left.len() && m.end() > left.len())
    })
}

impl Needles {
    pub fn new<'a>(words: impl IntoIterator<Item = &'a str>) -> Needles {
        let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
        let invoke = words.contains(&"invoke");
        let n_words = words.len();
        // Leftmost-longest: where two words start at one place the longer is tried (`payouts`,
        // not `pay`, in `/v1/payouts`). A word starting inside another's match is not tried.
        let words = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(words.iter().copied().chain(DECODED.iter().copied()))
            .ok();
        Needles {
            words,
            n_words,
            invoke,
        }
    }

    /// May a string literal of a file of `lang` hold one of the words? `strings` are the byte
    /// ranges of the literals in `text`, in order, as the lexer finds them; only words inside
    /// one count.
    pub fn may_contain_in_strings(&self, lang: Lang, text: &str, strings: &[(u32, u32)]) -> bool {
        self.any_match_in(lang, text, Some(strings), |at, _| within(strings, at))
    }

    /// [`Self::may_contain_in_strings`], counting a word only where `stands(text, start, end)`
    /// holds of its byte range (a path segment, not part of a longer word). A string with an
    /// escape that may spell a letter is read decoded (`\\u0063harges` is `charges`), and
    /// `stands` is asked of the decoded literal (quotes included).
    pub fn may_contain_in_strings_where(
        &self,
        lang: Lang,
        text: &str,
        strings: &[(u32, u32)],
        stands: impl Fn(&str, usize, usize) -> bool,
    ) -> bool {
        // The last string decoded for an escape, and its answer.
        let decoded: std::cell::Cell<Option<(usize, bool)>> = std::cell::Cell::new(None);
        self.any_match_in(
            lang,
            text,
            Some(strings),
            |at, m: Option<(usize, usize)>| {
                let k = strings.partition_point(|&(start, _)| start as usize <= at);
                if k == 0 || at >= strings[k - 1].1 as usize {
                    return false;
                }
                match m {
                    Some((s, e)) => stands(text, s, e),
                    None => {
                        if let Some((last, answer)) = decoded.get()
                            && last == k
                        {
                            return answer;
                        }
                        let (from, to) = strings[k - 1];
                        let literal = decode_escapes(&text[from as usize..to as usize]);
                        let answer = self.words.as_ref().is_none_or(|ac| {
                            ac.find_iter(literal.as_str()).any(|m| {
                                m.pattern().as_usize() < self.n_words
                                    && stands(&literal, m.start(), m.end())
                            })
                        });
                        decoded.set(Some((k, answer)));
                        answer
                    }
                }
            },
        )
    }

    /// Does a word start at a position `counts` accepts (or may the text hold one anyway)?
    /// `counts` gets the match's start, and its range when it is one of the words (not an
    /// escape). Only the inside of `ranges` (byte ranges of `text`, in order) is searched when
    /// they are given: a word in a string literal lies wholly inside the literal's range.
    fn any_match_in(
        &self,
        lang: Lang,
        text: &str,
        ranges: Option<&[(u32, u32)]>,
        counts: impl Fn(usize, Option<(usize, usize)>) -> bool,
    ) -> bool {
        if self.invoke && lang == Lang::Kotlin {
            return true;
        }
        let Some(ac) = &self.words else {
            // Too many words to build a matcher (cannot happen at our sizes): stay exact.
            return true;
        };
        let hit = |m: aho_corasick::Match| {
            if m.pattern().as_usize() < self.n_words {
                counts(m.start(), Some((m.start(), m.end())))
            } else {
                decodes_ascii(text, m.start()) && counts(m.start(), None)
            }
        };
        let found = match ranges {
            None => ac.find_iter(text).any(hit),
            Some(ranges) => ranges.iter().any(|&(s, e)| {
                let input = aho_corasick::Input::new(text).span(s as usize..e as usize);
                ac.find_iter(input).any(hit)
            }),
        };
        found || word_spans_continuation(ac, text)
    }
}

/// May the `\\u` at byte `at` be an escape of a printable ASCII character (which may spell
/// part of a word or of a URL)? Not when its `\\` is itself escaped (`"\\\\u"`), nor for a
/// control character or one past ASCII (`\\u0000`, `\\u00e9`, Rust's `\\u{a0}`): no word of ours
/// has one. A malformed escape counts.
fn decodes_ascii(text: &str, at: usize) -> bool {
    let b = text.as_bytes();
    let slashes = b[..at].iter().rev().take_while(|&&c| c == b'\\').count();
    if slashes % 2 == 1 {
        return false;
    }
    let rest = &b[at + 1..];
    let rest = &rest[rest.iter().take_while(|&&c| c == b'u').count()..];
    let hex = match rest.strip_prefix(b"{") {
        Some(braced) => braced.split(|&c| c == b'}').next().filter(|h| h.len() <= 6),
        None => rest.get(..4),
    };
    match hex
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|h| u32::from_str_radix(h, 16).ok())
    {
        Some(v) => (0x21..0x7f).contains(&v),
        None => true,
    }
}

/// A literal with its `\\u` escapes decoded (`\\u0063`, `\\uu0063`, Rust's `\\u{63}`); other
/// text, and escapes that do not decode, as written.
fn decode_escapes(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len());
    let mut rest = literal;
    while let Some(i) = rest.find("\\u") {
        let slashes = rest[..i].bytes().rev().take_while(|&c| c == b'\\').count();
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let after_u = after.trim_start_matches('u');
        let (hex, len) = match after_u.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(j) => (&b[..j], j + 2),
                None => ("", 0),
            },
            None => (after_u.get(..4).unwrap_or(""), 4),
        };
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) if slashes % 2 == 0 && !hex.is_empty() => {
                out.push(c);
                rest = &after_u[len..];
            }
            _ => {
                out.push('\\');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Does byte `at` lie inside one of `ranges` (sorted, not overlapping)?
fn within(ranges: &[(u32, u32)], at: usize) -> bool {
    let k = ranges.partition_point(|&(start, _)| start as usize <= at);
    k > 0 && at < ranges[k - 1].1 as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting words anywhere in the text.
    fn anywhere(n: &Needles, lang: Lang, text: &str) -> bool {
        n.any_match_in(lang, text, None, |_, _| true)
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

    /// Words standing where a predicate says, in strings: overlapping words are all tried, an
    /// escaped letter is read decoded, and a line continuation counts only when a word spans it.
    #[test]
    fn words_where_a_predicate_holds() {
        let n = Needles::new(["pay", "payouts", "charges"]);
        let after_slash = |t: &str, s: usize, e: usize| {
            t.as_bytes()[s - 1] == b'/' && !t.as_bytes()[e].is_ascii_alphanumeric()
        };
        let check = |lang: Lang, text: &str| {
            let strings = crate::lex::lex(lang, text).string_ranges();
            n.may_contain_in_strings_where(lang, text, &strings, after_slash)
        };
        // `pay` fails inside `/payouts`; `payouts` at the same place is still tried.
        assert!(check(Lang::Java, "class A { String u = \"/v1/payouts\"; }"));
        assert!(!check(
            Lang::Java,
            "class A { String u = \"/v1/payment\"; }"
        ));
        // Not in a string.
        assert!(!check(Lang::Java, "class A { void f() { x./charges(); } }"));
        // Escapes: decoded, then asked.
        assert!(check(Lang::Kotlin, "val u = \"/v1/\\u0063harges\""));
        assert!(!check(Lang::Kotlin, "val u = \"x\\u0063harges\""));
        assert!(!check(
            Lang::Java,
            "class A { String s = \"\\u00e9t\\u00e9\"; }"
        ));
        // A continuation that splits no word.
        assert!(!check(
            Lang::Java,
            "class A { String s = \"\"\"\n  some \\\n  text\"\"\"; }"
        ));
    }

    #[test]
    fn escapes_that_may_spell_a_letter() {
        assert!(decodes_ascii("\\u0063", 0));
        assert!(decodes_ascii("\\uu0063", 0));
        assert!(decodes_ascii("\\u{63}", 0));
        assert!(!decodes_ascii("\\u0000", 0));
        assert!(!decodes_ascii("\\u00e9", 0));
        assert!(!decodes_ascii("\\u{a0}", 0));
        // An escaped backslash before `u`.
        assert!(!decodes_ascii("\\\\u0063", 1));
        // Malformed: counts.
        assert!(decodes_ascii("\\uzz", 0));
        assert_eq!(decode_escapes("\"/\\u0063harges\\u{2f}\""), "\"/charges/\"");
        assert_eq!(decode_escapes("\"\\\\u0063\""), "\"\\\\u0063\"");
    }
}
