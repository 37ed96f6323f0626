//! The lexical pass (issue 16 item 2, first step; see `docs/design/evidence-first.md`): one
//! byte-level scan per file that finds its identifiers and string literal pieces without
//! parsing, for Java, Kotlin and Rust. It is meant to decide which files a rule's evidence can
//! be in, so it must find a superset of the names the parser's facts hold: comments are
//! skipped, but everything code-like is kept, including the code inside Kotlin string
//! templates (`"${order.id}"`, `"$key"`).
//!
//! Its identifiers make the project's name index and its tokens the declaration outline
//! ([`crate::decls::declared`]). `tests/lex.rs` checks it finds every name the facts hold, on
//! the fixtures (and, `--ignored`, on any code), and times it.

use crate::facts::Lang;

/// What the lexical pass finds in one file. Slices borrow the file's text.
#[derive(Default, Debug)]
pub struct Lexed<'a> {
    /// Identifiers in order of appearance (repeats included; Kotlin backtick names without
    /// their backticks, Rust raw identifiers with their `r#`).
    pub idents: Vec<&'a str>,
    /// String literal pieces as written between their quotes (escapes not decoded; a Kotlin
    /// template contributes its literal pieces, its code goes to `idents`).
    pub strings: Vec<&'a str>,
    /// Names of the types the file declares (`class X`, `interface X`, `enum X`, `record X`,
    /// Kotlin `object X` and `companion object` as `Companion`, Rust `struct`/`enum`/`trait`/
    /// `union`), in order: the first piece of the outline. Not Rust `impl` blocks and not
    /// anonymous classes, which declare no name.
    pub types: Vec<&'a str>,
    /// The code's tokens in order, for the declaration outline ([`crate::outline`]):
    /// identifiers, the punctuation declarations are made of, a string literal as one `"`
    /// token spanning the whole literal (a Rust raw string from its `r`), a character literal
    /// as one `'` token and a number as one `0` token; nothing inside string literals.
    pub tokens: Vec<Tok>,
    /// Comments (`//..`, `/*..*/`) as byte ranges, in order.
    pub comments: Vec<(u32, u32)>,
}

impl Lexed<'_> {
    /// The byte ranges of the string literals, in order.
    pub fn string_ranges(&self) -> Vec<(u32, u32)> {
        self.tokens
            .iter()
            .filter(|t| t.kind == b'"')
            .map(|t| (t.start, t.end))
            .collect()
    }

    /// May the code of `text` (lexed as `self`) call a name `pred` accepts with an argument?
    /// Where the name is followed by `(` and something other than `)`, by a block or lambda
    /// (`withLock {`), a macro's `!`, type arguments (`<`, Rust's `::<`), or by an operand (a
    /// Kotlin infix call); or it is written in a Kotlin string template, which has no tokens.
    /// A superset: `lock()` and `lock.unlock()` are not such calls.
    pub fn may_call_with_args(&self, text: &str, pred: impl Fn(&str) -> bool) -> bool {
        let kind = |i: usize| self.tokens.get(i).map(|t| t.kind);
        let mut written = 0;
        for (i, t) in self.tokens.iter().enumerate() {
            if t.kind != b'a' || !pred(&text[t.start as usize..t.end as usize]) {
                continue;
            }
            written += 1;
            let with_args = match kind(i + 1) {
                Some(b'(') => kind(i + 2) != Some(b')'),
                Some(b':') => kind(i + 2) == Some(b':') && kind(i + 3) == Some(b'<'),
                Some(b'{' | b'!' | b'<' | b'a' | b'"' | b'0' | b'\'') => true,
                _ => false,
            };
            if with_args {
                return true;
            }
        }
        self.idents.iter().filter(|w| pred(w)).count() > written
    }
}

/// Names the front ends make up rather than read from the text: Kotlin calls a function value
/// through `invoke`, lowers operators and loops to the functions they call and names a
/// `companion object` `Companion`; `this`, `self` and `super` stand for the receiver. A file
/// may call any of these without writing it.
pub const MADE_UP_NAMES: &[&str] = &[
    "invoke",
    "get",
    "set",
    "contains",
    "iterator",
    "next",
    "hasNext",
    "rangeTo",
    "compareTo",
    "plus",
    "minus",
    "times",
    "div",
    "not",
    "unaryMinus",
    "equals",
    "this",
    "self",
    "super",
    "Companion",
];

/// One token of [`Lexed::tokens`]: `kind` is `b'a'` for an identifier (its text is
/// `start..end`), `b'"'` for a string literal, `b'0'` for a number, else the punctuation byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tok {
    pub kind: u8,
    pub start: u32,
    pub end: u32,
}

/// Punctuation kept as tokens: what declarations are made of.
fn kept_punct(c: u8) -> bool {
    matches!(
        c,
        b'{' | b'}'
            | b'('
            | b')'
            | b'<'
            | b'>'
            | b','
            | b';'
            | b'='
            | b'.'
            | b':'
            | b'@'
            | b'['
            | b']'
            | b'"'
            | b'?'
            | b'-'
            | b'&'
            | b'*'
            | b'!'
            | b'#'
            | b'|'
    )
}

/// Keywords after which the next name is a declared type.
fn type_keyword(lang: Lang, w: &str) -> bool {
    match lang {
        Lang::Java => matches!(w, "class" | "interface" | "enum" | "record"),
        Lang::Kotlin => matches!(w, "class" | "interface" | "object"),
        Lang::Rust => matches!(w, "struct" | "enum" | "trait" | "union"),
    }
}

/// Lexes `text` as `lang`. Never panics, whatever the bytes; unterminated literals and
/// comments run to the end of the file.
pub fn lex(lang: Lang, text: &str) -> Lexed<'_> {
    let mut l = Lexer {
        b: text.as_bytes(),
        text,
        i: 0,
        lang,
        out: Lexed::default(),
        pending: None,
        before: 0,
        quiet: 0,
    };
    l.code(None);
    l.out
}

struct Lexer<'a> {
    b: &'a [u8],
    text: &'a str,
    i: usize,
    lang: Lang,
    out: Lexed<'a>,
    /// A type keyword just read (its name may follow).
    pending: Option<&'a str>,
    /// The last byte of code before the current token that was not white space.
    before: u8,
    /// Inside a string literal's template code: no tokens are recorded.
    quiet: usize,
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

impl<'a> Lexer<'a> {
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn starts(&self, s: &str) -> bool {
        self.b[self.i..].starts_with(s.as_bytes())
    }

    /// A slice of the text; boundaries that are not on a character (possible only in broken
    /// input) widen to the nearest ones.
    fn slice(&self, a: usize, b: usize) -> &'a str {
        // (An escape at the very end steps past it.)
        let (mut a, mut b) = (a.min(self.text.len()), b.min(self.text.len()));
        while a > 0 && !self.text.is_char_boundary(a) {
            a -= 1;
        }
        while b < self.text.len() && !self.text.is_char_boundary(b) {
            b += 1;
        }
        &self.text[a.min(b)..b]
    }

    /// Code until the end of the text, or (inside a Kotlin `${..}`) until the `}` that closes
    /// the template, which is consumed.
    fn code(&mut self, template: Option<()>) {
        let mut depth = 0usize;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            let comment = c == b'/' && matches!(self.at(1), b'/' | b'*');
            let backtick = c == b'`' && self.lang == Lang::Kotlin;
            if c == b'\n' || !(ident_start(c) || c.is_ascii_whitespace() || comment || backtick) {
                // (A declared name is on its keyword's line.)
                self.punct(c);
                if !comment && kept_punct(c) {
                    self.token(c, self.i, self.i + 1);
                } else if c.is_ascii_digit() {
                    self.token(b'0', self.i, self.i + 1);
                }
            }
            match c {
                b'/' if self.at(1) == b'/' => self.line_comment(),
                b'/' if self.at(1) == b'*' => self.block_comment(),
                b'"' => self.string(1, self.i),
                b'$' if self.lang == Lang::Kotlin && self.dollar_string() => {}
                b'\'' => self.quote(),
                b'`' if self.lang == Lang::Kotlin => self.backtick(),
                b'{' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' => {
                    self.i += 1;
                    if template.is_some() {
                        if depth == 0 {
                            return;
                        }
                        depth -= 1;
                    }
                }
                b'r' if self.lang == Lang::Rust && self.rust_raw() => {}
                b'b' | b'c' if self.lang == Lang::Rust && matches!(self.at(1), b'"' | b'\'') => {
                    self.i += 1;
                }
                b'b' if self.lang == Lang::Rust && self.at(1) == b'r' && self.rust_raw_at(1) => {}
                c if c.is_ascii_digit() => {
                    // A number, with its suffix and exponent letters (`10L`, `1e9`, `0xff_u8`).
                    while self.i < self.b.len() {
                        let d = self.b[self.i];
                        // A `.` belongs to the number only before a digit (`1.5`, not `0..n`).
                        let fraction = d == b'.' && self.at(1).is_ascii_digit();
                        if !(ident_continue(d) || fraction) {
                            break;
                        }
                        self.i += 1;
                    }
                }
                c if ident_start(c) => {
                    let s = self.i;
                    while self.i < self.b.len() && ident_continue(self.b[self.i]) {
                        self.i += 1;
                    }
                    let w = self.slice(s, self.i);
                    self.out.idents.push(w);
                    self.token(b'a', s, self.i);
                    self.declaration(w);
                    self.before = b'a';
                }
                _ => self.i += 1,
            }
        }
    }

    /// Records `w` as a declared type name when it follows a type keyword, and notes a type
    /// keyword (not `X.class`, `X::class`, a Kotlin `::class` or a `.object` member).
    fn declaration(&mut self, w: &'a str) {
        if let Some(kw) = self.pending.take() {
            if type_keyword(self.lang, w) {
                // `enum class X`, `annotation class X`: the last keyword counts.
                self.pending = Some(w);
                return;
            }
            let _ = kw;
            // (Not a `macro_rules!` metavariable: `struct $name`.)
            if !w.starts_with('$') {
                self.out.types.push(w);
            }
            return;
        }
        if type_keyword(self.lang, w) && !matches!(self.before, b'.' | b':') {
            self.pending = Some(w);
        }
    }

    /// Any other token, or the end of a line: a pending type keyword takes no name after it,
    /// except that an unnamed `companion object` is named `Companion`.
    fn punct(&mut self, c: u8) {
        if self.pending == Some("object")
            && self.out.idents.iter().rev().nth(1) == Some(&"companion")
        {
            self.out.types.push("Companion");
        }
        self.pending = None;
        if c != b'\n' {
            self.before = c;
        }
    }

    fn token(&mut self, kind: u8, start: usize, end: usize) {
        if self.quiet == 0 {
            self.out.tokens.push(Tok {
                kind,
                start: start as u32,
                end: end as u32,
            });
        }
    }

    fn line_comment(&mut self) {
        let start = self.i;
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
        self.comment(start);
    }

    fn comment(&mut self, start: usize) {
        if self.quiet == 0 {
            self.out.comments.push((start as u32, self.i as u32));
        }
    }

    /// `/* .. */`, nested in Kotlin and Rust.
    fn block_comment(&mut self) {
        let nests = self.lang != Lang::Java;
        let start = self.i;
        self.i += 2;
        let mut depth = 1;
        while self.i < self.b.len() {
            if self.starts("*/") {
                self.i += 2;
                depth -= 1;
                if depth == 0 {
                    self.comment(start);
                    return;
                }
            } else if nests && self.starts("/*") {
                self.i += 2;
                depth += 1;
            } else {
                self.i += 1;
            }
        }
        self.comment(start);
    }

    /// A `"` string, or a triple-quoted text block (Java) / raw string (Kotlin). In Kotlin a
    /// template takes `dollars` dollar signs (in `$$"..$${x}.."`, two).
    /// A string literal at the current byte (a Kotlin multi-dollar string's `$`s start at
    /// `start`).
    fn string(&mut self, dollars: usize, start: usize) {
        if self.lang != Lang::Rust && self.starts("\"\"\"") {
            self.i += 3;
            let raw = self.lang == Lang::Kotlin;
            self.string_body(b"\"\"\"", !raw, dollars);
        } else {
            self.i += 1;
            self.string_body(b"\"", true, dollars);
        }
        self.literal_token(start);
    }

    /// The `"` token of the literal that started at `start` (its quote, or a Rust raw
    /// string's `r`) spans the whole literal.
    fn literal_token(&mut self, start: usize) {
        if self.quiet > 0 {
            return;
        }
        // (An escape at the very end, `"\`, steps past the text.)
        let end = self.i.min(self.b.len());
        match self.out.tokens.last_mut() {
            Some(t) if t.kind == b'"' && t.start as usize == start => t.end = end as u32,
            _ => self.token(b'"', start, end),
        }
    }

    /// A Kotlin multi-dollar string (`$$"..."`) at the current byte.
    fn dollar_string(&mut self) -> bool {
        let mut k = 1;
        while self.at(k) == b'$' {
            k += 1;
        }
        if self.at(k) != b'"' {
            return false;
        }
        let start = self.i;
        self.i += k;
        self.string(k, start);
        true
    }

    /// The body of a string up to `close`; `escapes`: a backslash escapes the next byte.
    /// Kotlin templates are lexed as code.
    fn string_body(&mut self, close: &[u8], escapes: bool, dollars: usize) {
        let mut piece = self.i;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if escapes && c == b'\\' {
                self.i += 2;
                continue;
            }
            if self.b[self.i..].starts_with(close) {
                // A raw string ends at the last of a run of quotes (`"""a""""` is `a"`).
                if close.len() == 3 {
                    while self.at(3) == b'"' {
                        self.i += 1;
                    }
                }
                self.out.strings.push(self.slice(piece, self.i));
                self.i += close.len();
                return;
            }
            if self.lang == Lang::Kotlin && c == b'$' {
                // A run of dollars: as many as the string's templates take (the extra ones
                // are literal) before a name or `{` start a template.
                let mut k = 1;
                while self.at(k) == b'$' {
                    k += 1;
                }
                if k < dollars {
                    self.i += k;
                    continue;
                }
                if self.at(k) == b'{' {
                    self.out.strings.push(self.slice(piece, self.i));
                    self.i += k + 1;
                    self.quiet += 1;
                    self.code(Some(()));
                    self.quiet -= 1;
                    piece = self.i;
                    continue;
                }
                if ident_start(self.at(k)) {
                    self.out.strings.push(self.slice(piece, self.i));
                    self.i += k;
                    let s = self.i;
                    while self.i < self.b.len()
                        && ident_continue(self.b[self.i])
                        && self.b[self.i] != b'$'
                    {
                        self.i += 1;
                    }
                    self.out.idents.push(self.slice(s, self.i));
                    piece = self.i;
                    continue;
                }
            }
            self.i += 1;
        }
        self.out.strings.push(self.slice(piece, self.i));
    }

    /// `'x'`, `'\n'`, `'\u{1F600}'`, or a Rust lifetime / label (`'a`, `'outer:`).
    fn quote(&mut self) {
        if self.lang == Lang::Rust && ident_start(self.at(1)) {
            // `'a'` is a char; `'a` and `'static` are lifetimes.
            let mut k = 2;
            while ident_continue(self.at(k)) {
                k += 1;
            }
            if self.at(k) != b'\'' {
                self.i += k;
                return;
            }
        }
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'\'' => {
                    self.i += 1;
                    break;
                }
                b'\n' => break,
                _ => self.i += 1,
            }
        }
        self.token(b'\'', start, self.i.min(self.b.len()));
    }

    /// A Kotlin backtick name: `` `when` ``, `` `a test name` ``.
    fn backtick(&mut self) {
        let s = self.i + 1;
        self.i += 1;
        while self.i < self.b.len() && self.b[self.i] != b'`' && self.b[self.i] != b'\n' {
            self.i += 1;
        }
        // (The front ends drop the spaces a name ends with.)
        let w = self.slice(s, self.i).trim_end();
        self.out.idents.push(w);
        self.token(b'a', s, s + w.len());
        self.declaration(w);
        self.before = b'a';
        self.i += 1;
    }

    /// `r"..."`, `r#"..."#` or a raw identifier `r#match` at the current byte.
    fn rust_raw(&mut self) -> bool {
        self.rust_raw_at(0)
    }

    fn rust_raw_at(&mut self, k: usize) -> bool {
        let mut j = k + 1;
        let mut hashes = 0;
        while self.at(j) == b'#' {
            hashes += 1;
            j += 1;
        }
        if self.at(j) == b'"' {
            let start = self.i;
            self.i += j + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            self.string_body(&close, false, 1);
            self.literal_token(start);
            return true;
        }
        if hashes == 1 && k == 0 && ident_start(self.at(j)) {
            // `r#type`, as written (the facts name it so too).
            let s = self.i;
            self.i += j;
            while self.i < self.b.len() && ident_continue(self.b[self.i]) {
                self.i += 1;
            }
            self.out.idents.push(self.slice(s, self.i));
            self.token(b'a', s, self.i);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call with an argument, in each way one is written; a call with none, a field of the
    /// same name and a method reference are not.
    #[test]
    fn calls_with_arguments() {
        let calls = |lang: Lang, text: &str, name: &str| {
            lex(lang, text).may_call_with_args(text, |n| n == name)
        };
        let java = |text: &str, name: &str| calls(Lang::Java, text, name);
        assert!(java("class A { void f() { locks.lock(key); } }", "lock"));
        assert!(java(
            "class A { void f() { lock /* why */ (key); } }",
            "lock"
        ));
        assert!(java(
            "class A { Object m = new InterProcessMutex<>(c, p); }",
            "InterProcessMutex"
        ));
        assert!(!java(
            "class A { Lock lock = new ReentrantLock(); void f() { lock.lock(); lock.unlock(); } }",
            "lock"
        ));
        assert!(!java(
            "class A { void f(Lock l) { run(l::lock); } }",
            "lock"
        ));
        assert!(!java(
            "class A { void f() { lock(); } } // lock(key)",
            "lock"
        ));
        let kotlin = |text: &str, name: &str| calls(Lang::Kotlin, text, name);
        assert!(kotlin(
            "fun f() { mutex.withLock { charge() } }",
            "withLock"
        ));
        assert!(kotlin("fun f() { val s = \"${redis.lock(k)}\" }", "lock"));
        assert!(kotlin("fun f() { registry lock key }", "lock"));
        assert!(!kotlin("fun f() { mutex.lock() }", "lock"));
        let rust = |text: &str, name: &str| calls(Lang::Rust, text, name);
        assert!(rust("fn f() { con.set_nx::<_, _, ()>(key, 1); }", "set_nx"));
        assert!(rust("fn f() { lock!(key); }", "lock"));
        assert!(!rust("fn f() { let g = state.lock().await; }", "lock"));
    }

    #[test]
    fn comments_are_skipped_code_and_strings_kept() {
        let l = lex(
            Lang::Java,
            "// charge() here\nclass A { /* UUID */ String k = \"Idem\\\"potency\"; int n = 10L; }",
        );
        assert_eq!(l.idents, ["class", "A", "String", "k", "int", "n"]);
        assert_eq!(l.strings, ["Idem\\\"potency"]);
        let tb = lex(
            Lang::Java,
            "String s = \"\"\"\n  {\"a\": 1}\n  \"\"\"; f();",
        );
        assert_eq!(tb.idents, ["String", "s", "f"]);
        assert_eq!(tb.strings, ["\n  {\"a\": 1}\n  "]);
    }

    #[test]
    fn kotlin_templates_are_code() {
        let l = lex(
            Lang::Kotlin,
            "val k = \"charge-${order.id}-$period\" /* a /* nested */ comment */ `when`()",
        );
        assert_eq!(l.idents, ["val", "k", "order", "id", "period", "when"]);
        assert_eq!(l.strings, ["charge-", "-", ""]);
        let raw = lex(Lang::Kotlin, r#"x("""a\n ${f("}")} b"""")"#);
        assert_eq!(raw.idents, ["x", "f"]);
        assert_eq!(raw.strings, ["a\\n ", "}", " b\""]);
        let dollars = lex(
            Lang::Kotlin,
            "$$\"$$parent$$$full ${x} $y\".endsWith(\"}\")",
        );
        assert_eq!(dollars.idents, ["parent", "full", "endsWith"]);
        assert_eq!(dollars.strings, ["", "", " ${x} $y", "}"]);
    }

    #[test]
    fn a_string_token_spans_its_literal_and_stays_in_the_text() {
        for lang in [Lang::Java, Lang::Kotlin, Lang::Rust] {
            let text = "x = \"a\\\"b\";";
            let l = lex(lang, text);
            let s = l.tokens.iter().find(|t| t.kind == b'"').unwrap();
            assert_eq!(&text[s.start as usize..s.end as usize], "\"a\\\"b\"");
            // Found by fuzzing: an escape at the very end.
            let l = lex(lang, "\"\\");
            assert!(
                l.tokens.iter().all(|t| t.start <= t.end && t.end <= 2),
                "{lang:?}"
            );
        }
        let raw = "let k = r#\"a\"b\"#;";
        let l = lex(Lang::Rust, raw);
        let s = l.tokens.iter().find(|t| t.kind == b'"').unwrap();
        assert_eq!(&raw[s.start as usize..s.end as usize], "r#\"a\"b\"#");
    }

    #[test]
    fn rust_raw_strings_chars_and_lifetimes() {
        let l = lex(
            Lang::Rust,
            "fn f<'a>(x: &'a str) -> char { let r#type = r#\"a\"b\"#; let c = 'x'; b\"y\"; 'z' }",
        );
        assert_eq!(
            l.idents,
            ["fn", "f", "x", "str", "char", "let", "r#type", "let", "c"]
        );
        assert_eq!(l.strings, ["a\"b", "y"]);
    }

    #[test]
    fn declared_type_names() {
        let java = lex(
            Lang::Java,
            "public final class A extends B { enum Mode { X } Class<?> c = A.class; record R(int x) {} \
             @interface Tag {} void f() { new Runnable() { public void run() {} }; } }",
        );
        assert_eq!(java.types, ["A", "Mode", "R", "Tag"]);
        let kotlin = lex(
            Lang::Kotlin,
            "enum class E { A } data class D(val x: Int) : I { companion object : Log() }\n\
             object O { val k = D::class }\nval a = object : Runnable { override fun run() {} }\n\
             class `a spec` { inner class `a case` }\nclass Outer {\n  companion object\n  val y = 1\n}",
        );
        assert_eq!(
            kotlin.types,
            [
                "E",
                "D",
                "Companion",
                "O",
                "a spec",
                "a case",
                "Outer",
                "Companion"
            ]
        );
        let rust = lex(
            Lang::Rust,
            "pub struct S; enum E { A } trait T {} impl T for S {} macro_rules! m { ($n:ident) => { struct $n; } }",
        );
        assert_eq!(rust.types, ["S", "E", "T"]);
    }

    #[test]
    fn broken_input_runs_to_the_end_without_panicking() {
        for text in [
            "\"open",
            "/* open",
            "'",
            "r#\"",
            "`",
            "\"${",
            "é\"é",
            "\\",
            "\"a\\",
            "'\\",
            "\"\"\"a\\",
            "$$\"$",
            "\"${\"",
            "b'",
            "br#",
            "r#",
        ] {
            for lang in [Lang::Java, Lang::Kotlin, Lang::Rust] {
                let _ = lex(lang, text);
            }
        }
    }
}
