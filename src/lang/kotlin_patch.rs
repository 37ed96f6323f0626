//! Same-length rewrites of Kotlin source for valid constructs that tree-sitter-kotlin-ng 1.1.0
//! cannot parse. Its error recovery often takes the rest of a class or file with the construct,
//! hiding that code from every rule, so each construct is rewritten, byte for byte in place, into
//! one the grammar reads the same way for our purposes. Every byte offset (and so every line and
//! column reported) stays right, and the analysed text keeps its length.
//!
//! The rewrites only touch code: a small lexer marks comments and string bodies first, so nothing
//! inside a string or comment is changed (except the multi-dollar strings' own bodies, below).
//!
//! | construct (valid Kotlin) | rewrite |
//! |---|---|
//! | the stdlib call `suspend { .. }` (read as a modifier) | `_uspend { .. }` |
//! | a parenthesised suspending function type `suspend ((A) -> B)` | the outer parentheses blanked |
//! | context parameters `context(a: A, b: B)` before a declaration, context function types `context(A) () -> B` | blanked |
//! | annotations on a property accessor after another accessor (`@Synchronized set(v)`) | blanked |
//! | multi-dollar strings `$$"..$ref..$${x}.."` (Kotlin 2.1) | an ordinary string: the prefix blanked, literal `$` before a name spelt `_` |
//! | a primary constructor's modifiers on the line after the class header (`class A<T>⏎internal constructor(..)`) | the line break read as a space |
//! | a parenthesised callee `(f)(x)` | `f (x)`-style: the parentheses blanked |
//! | a callable reference on a nullable type `String?::plus` | `String ::plus` |
//! | a trailing comma in type parameters `<A,⏎>` | the comma blanked |
//!
//! Tests at the bottom show each rewrite and that the rewritten snippet parses.

/// What a byte of the source is, as far as the rewrites care.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Code,
    Comment,
    Str,
}

/// A multi-dollar string literal: `dollars` `$` signs open it at `open`; its body (between the
/// quotes) is `body`.
struct MultiDollar {
    open: usize,
    dollars: usize,
    body: std::ops::Range<usize>,
}

struct Lexed {
    class: Vec<Class>,
    multi: Vec<MultiDollar>,
}

enum Ctx {
    /// Inside a string; `raw` for `"""`, `dollars` needed to interpolate, start of the body.
    Str {
        raw: bool,
        dollars: usize,
        body_start: usize,
        open: usize,
    },
    /// Inside `${ .. }` of a string: code, with the nesting of braces opened there.
    Template { depth: usize },
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Marks each byte as code, comment or string. Never fails: unterminated constructs run to the
/// end of the file.
fn lex(src: &[u8]) -> Lexed {
    let n = src.len();
    let mut class = vec![Class::Code; n];
    let mut multi = Vec::new();
    let mut stack: Vec<Ctx> = Vec::new();
    let mut i = 0;
    while i < n {
        match stack.last_mut() {
            Some(Ctx::Str {
                raw,
                dollars,
                body_start,
                open,
            }) => {
                let (raw, dollars, body_start, open) = (*raw, *dollars, *body_start, *open);
                let b = src[i];
                if !raw && b == b'\\' {
                    class[i] = Class::Str;
                    if i + 1 < n {
                        class[i + 1] = Class::Str;
                    }
                    i += 2;
                    continue;
                }
                if b == b'"' && (!raw || src[i..].starts_with(b"\"\"\"")) {
                    // A raw string ends at the last three quotes of a run.
                    let mut end = i + 1;
                    if raw {
                        end = i;
                        while end < n && src[end] == b'"' {
                            end += 1;
                        }
                        for c in &mut class[i..end - 3] {
                            *c = Class::Str;
                        }
                        i = end - 3;
                        end = i + 3;
                    }
                    for c in &mut class[i..end] {
                        *c = Class::Str;
                    }
                    if dollars > 1 {
                        multi.push(MultiDollar {
                            open,
                            dollars,
                            body: body_start..i,
                        });
                    }
                    stack.pop();
                    i = end;
                    continue;
                }
                if b == b'$' {
                    let mut j = i;
                    while j < n && src[j] == b'$' {
                        j += 1;
                    }
                    if j - i >= dollars && j < n && src[j] == b'{' {
                        for c in &mut class[i..=j] {
                            *c = Class::Str;
                        }
                        stack.push(Ctx::Template { depth: 0 });
                        i = j + 1;
                        continue;
                    }
                    for c in &mut class[i..j] {
                        *c = Class::Str;
                    }
                    i = j;
                    continue;
                }
                class[i] = Class::Str;
                i += 1;
            }
            ctx => {
                let b = src[i];
                if let Some(Ctx::Template { depth }) = ctx {
                    if b == b'{' {
                        *depth += 1;
                    } else if b == b'}' {
                        if *depth == 0 {
                            class[i] = Class::Str;
                            stack.pop();
                            i += 1;
                            continue;
                        }
                        *depth -= 1;
                    }
                }
                if src[i..].starts_with(b"//") {
                    while i < n && src[i] != b'\n' {
                        class[i] = Class::Comment;
                        i += 1;
                    }
                    continue;
                }
                if src[i..].starts_with(b"/*") {
                    // Kotlin block comments nest.
                    let mut depth = 0usize;
                    while i < n {
                        if src[i..].starts_with(b"/*") {
                            depth += 1;
                            class[i] = Class::Comment;
                            class[i + 1] = Class::Comment;
                            i += 2;
                        } else if src[i..].starts_with(b"*/") {
                            depth -= 1;
                            class[i] = Class::Comment;
                            class[i + 1] = Class::Comment;
                            i += 2;
                            if depth == 0 {
                                break;
                            }
                        } else {
                            class[i] = Class::Comment;
                            i += 1;
                        }
                    }
                    continue;
                }
                if b == b'\'' {
                    // A character literal: '"', '\'', '\u0041'.
                    let mut j = i + 1;
                    if j < n && src[j] == b'\\' {
                        j += 2;
                    }
                    while j < n && src[j] != b'\'' && src[j] != b'\n' {
                        j += 1;
                    }
                    let end = (j + 1).min(n);
                    for c in &mut class[i..end] {
                        *c = Class::Str;
                    }
                    i = end;
                    continue;
                }
                if b == b'`' {
                    let mut j = i + 1;
                    while j < n && src[j] != b'`' && src[j] != b'\n' {
                        j += 1;
                    }
                    i = (j + 1).min(n);
                    continue;
                }
                if b == b'"' || b == b'$' {
                    let mut j = i;
                    while j < n && src[j] == b'$' {
                        j += 1;
                    }
                    if j < n && src[j] == b'"' {
                        let dollars = (j - i).max(1);
                        let raw = src[j..].starts_with(b"\"\"\"");
                        let q = if raw { 3 } else { 1 };
                        for c in &mut class[i..j + q] {
                            *c = Class::Str;
                        }
                        stack.push(Ctx::Str {
                            raw,
                            dollars,
                            body_start: j + q,
                            open: i,
                        });
                        i = j + q;
                        continue;
                    }
                    i = j.max(i + 1);
                    continue;
                }
                i += 1;
            }
        }
    }
    Lexed { class, multi }
}

/// Rewrites `source` when it holds a construct the grammar cannot parse; `None` when nothing
/// needs rewriting. The result has exactly the length of `source`.
pub fn patch(source: &str) -> Option<String> {
    let src = source.as_bytes();
    let lexed = lex(src);
    let mut out = src.to_vec();
    let code = |i: usize| lexed.class.get(i) == Some(&Class::Code);
    let blank = |out: &mut Vec<u8>, range: std::ops::Range<usize>| {
        for b in &mut out[range] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    };
    let n = src.len();
    let mut i = 0;
    while i < n {
        if !code(i) || !is_ident_start(src[i]) || (i > 0 && is_ident(src[i - 1])) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < n && is_ident(src[j]) {
            j += 1;
        }
        let word = &src[i..j];
        if keyword_then_digit(word) {
            out[i] = b'_';
            i = j;
            continue;
        }
        match word {
            b"suspend" => {
                if src[j..].iter().find(|b| **b != b' ' && **b != b'\t') == Some(&b'{') {
                    out[i] = b'_';
                } else if in_type_position(src, i)
                    && let Some(open) = open_paren_after(src, j)
                    && let Some(close) = matching(src, &lexed, open)
                    && !src[close + 1..].trim_ascii_start().starts_with(b"->")
                {
                    // A parenthesised function type: `suspend ((A) -> B)`.
                    out[open] = b' ';
                    out[close] = b' ';
                }
            }
            b"context" if at_line_start(src, i) => {
                if let Some(close) = open_paren_after(src, j).and_then(|p| matching(src, &lexed, p))
                    && starts_declaration(src, &lexed, close + 1)
                {
                    blank(&mut out, i..close + 1);
                    i = close + 1;
                    continue;
                }
            }
            b"context" if in_type_position(src, i) => {
                // A context function type: `block: context(A) () -> Unit`.
                if let Some(close) = open_paren_after(src, j).and_then(|p| matching(src, &lexed, p))
                    && src.get(close + 1) == Some(&b' ')
                    && matches!(
                        src[close + 1..].iter().find(|b| **b != b' '),
                        Some(b'(') | Some(b's')
                    )
                {
                    blank(&mut out, i..close + 1);
                    i = close + 1;
                    continue;
                }
            }
            b"get" | b"set" => {
                if let Some(start) = accessor_annotations(src, &lexed, i) {
                    blank(&mut out, start..i);
                } else if let Some(newline) = call_read_as_accessor(src, &lexed, i, j) {
                    out[newline] = b';';
                }
            }
            b"constructor" => {
                if let Some(gap) = primary_constructor_gap(src, &lexed, i) {
                    for k in gap {
                        if lexed.class[k] == Class::Code && out[k].is_ascii_whitespace() {
                            out[k] = b' ';
                        }
                    }
                }
            }
            _ => {}
        }
        i = j;
    }
    // `(f)(x)`: a parenthesised expression called at once.
    let mut i = 0;
    while i < n {
        if code(i)
            && src[i] == b'('
            && let Some(close) = simple_callee_close(src, i)
            && close + 1 < n
            && src[close + 1] == b'('
            && !prev_code_is_operand(src, &lexed, i)
        {
            out[i] = b' ';
            out[close] = b' ';
            i = close + 1;
            continue;
        }
        // A trailing comma in type parameters or arguments: `<T : A,⏎>`.
        if code(i) && src[i] == b',' && src.get(skip_trivia(src, &lexed, i + 1)) == Some(&b'>') {
            out[i] = b' ';
        }
        if code(i) && src[i..].starts_with(b"?::") && i > 0 && is_ident(src[i - 1]) {
            out[i] = b' ';
        }
        i += 1;
    }
    for m in &lexed.multi {
        blank(&mut out, m.open..m.open + m.dollars);
        let body = &src[m.body.clone()];
        let mut k = 0;
        while k < body.len() {
            if body[k] != b'$' {
                k += 1;
                continue;
            }
            let mut e = k;
            while e < body.len() && body[e] == b'$' {
                e += 1;
            }
            let interpolates = e < body.len() && (is_ident_start(body[e]) || body[e] == b'{');
            if interpolates {
                // A run of at least `dollars` interpolates with its last sign; fewer is text.
                let text = if e - k >= m.dollars { e - k - 1 } else { e - k };
                for b in &mut out[m.body.start + k..m.body.start + k + text] {
                    *b = b'_';
                }
            }
            k = e;
        }
    }
    if out == src {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Where the line holding byte `i` starts.
fn line_start(src: &[u8], i: usize) -> usize {
    src[..i]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1)
}

/// Only spaces or tabs before `i` on its line.
fn at_line_start(src: &[u8], i: usize) -> bool {
    src[..i]
        .iter()
        .rev()
        .take_while(|b| **b != b'\n')
        .all(|b| *b == b' ' || *b == b'\t')
}

/// The code before `i` (spaces skipped) is `:`, `,`, `(`, `<` or `->`: a type may start here.
fn in_type_position(src: &[u8], i: usize) -> bool {
    let p = src[..i].iter().rposition(|b| *b != b' ' && *b != b'\t');
    p.is_some_and(|p| matches!(src[p], b':' | b',' | b'(' | b'<' | b'>'))
}

/// The `(` right after `j` (spaces allowed), if any.
fn open_paren_after(src: &[u8], j: usize) -> Option<usize> {
    let k = j + src[j..].iter().take_while(|b| **b == b' ').count();
    (src.get(k) == Some(&b'(')).then_some(k)
}

/// The longest bracketed span the rewrites look through: the constructs they fix are short, and
/// unmatched brackets in hostile input must not make the pass quadratic.
const MAX_SPAN: usize = 1 << 14;

/// The `)` (or `]`, `}`) matching the opener at `open`, counting only code, within
/// [`MAX_SPAN`] bytes.
fn matching(src: &[u8], lexed: &Lexed, open: usize) -> Option<usize> {
    let (o, c) = match src[open] {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (k, b) in src.iter().enumerate().skip(open).take(MAX_SPAN) {
        if lexed.class[k] != Class::Code {
            continue;
        }
        if *b == o {
            depth += 1;
        } else if *b == c {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Skips whitespace and comments from `k`.
fn skip_trivia(src: &[u8], lexed: &Lexed, mut k: usize) -> usize {
    while k < src.len() && (src[k].is_ascii_whitespace() || lexed.class[k] == Class::Comment) {
        k += 1;
    }
    k
}

const DECLARATION_WORDS: &[&[u8]] = &[
    b"fun",
    b"val",
    b"var",
    b"class",
    b"interface",
    b"object",
    b"constructor",
    b"get",
    b"set",
    b"typealias",
    b"private",
    b"public",
    b"internal",
    b"protected",
    b"override",
    b"open",
    b"abstract",
    b"final",
    b"suspend",
    b"inline",
    b"operator",
    b"infix",
    b"tailrec",
    b"external",
    b"actual",
    b"expect",
    b"data",
    b"sealed",
    b"enum",
    b"annotation",
    b"inner",
    b"value",
    b"const",
    b"lateinit",
    b"context",
];

/// A declaration (or its annotations or modifiers) starts at `k`, after trivia.
fn starts_declaration(src: &[u8], lexed: &Lexed, k: usize) -> bool {
    let k = skip_trivia(src, lexed, k);
    if src.get(k) == Some(&b'@') {
        return true;
    }
    let e = k + src[k..].iter().take_while(|b| is_ident(**b)).count();
    e > k && DECLARATION_WORDS.contains(&&src[k..e])
}

/// For an accessor keyword at `i` (`get` or `set` followed by `(`, `=` or the end of the line)
/// preceded on its line only by annotations (and visibility modifiers): the start of the first
/// annotation.
fn accessor_annotations(src: &[u8], lexed: &Lexed, i: usize) -> Option<usize> {
    let after = i + 3;
    let next = src[after..].iter().find(|b| **b != b' ' && **b != b'\t');
    if !matches!(
        next,
        Some(b'(') | Some(b'=') | Some(b'\n') | Some(b'\r') | None
    ) {
        return None;
    }
    let line_start = line_start(src, i);
    let mut k = line_start
        + src[line_start..i]
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
    if src.get(k) != Some(&b'@') {
        return None;
    }
    let first = k;
    let mut last_annotation_end = k;
    while k < i {
        if src[k] == b'@' {
            k += 1;
            while k < i && (is_ident(src[k]) || src[k] == b'.' || src[k] == b':') {
                k += 1;
            }
            if k < i && src[k] == b'(' {
                let close = matching(src, lexed, k)?;
                if close >= i {
                    return None;
                }
                k = close + 1;
            }
            last_annotation_end = k;
        } else if src[k] == b' ' || src[k] == b'\t' {
            k += 1;
        } else {
            // Visibility modifiers may follow the annotations: `@Foo private set`.
            let e = k + src[k..i].iter().take_while(|b| is_ident(**b)).count();
            if !matches!(
                &src[k..e],
                b"private"
                    | b"protected"
                    | b"internal"
                    | b"public"
                    | b"override"
                    | b"open"
                    | b"final"
            ) {
                return None;
            }
            k = e;
        }
    }
    (last_annotation_end > first).then_some(first)
}

/// For `constructor` at `i`, on a line that holds only its annotations and modifiers and follows
/// a class header (`class Name` or `class Name<..>` as the previous code): the whitespace between
/// the header and this line.
fn primary_constructor_gap(src: &[u8], lexed: &Lexed, i: usize) -> Option<std::ops::Range<usize>> {
    open_paren_after(src, i + "constructor".len())?;
    let mut line_start = line_start(src, i);
    // Annotations and modifiers only before `constructor` on this line.
    if !only_annotations_and_modifiers(src, lexed, line_start, i) {
        return None;
    }
    // Whole lines of annotations above it belong to the constructor too.
    while line_start > 0 {
        let prev_start = self::line_start(src, line_start - 1);
        let prev = src[prev_start..line_start - 1].trim_ascii();
        if prev.starts_with(b"@") && !prev.iter().any(|b| matches!(b, b'{' | b'}' | b'=' | b';')) {
            line_start = prev_start;
        } else {
            break;
        }
    }
    // The previous code byte.
    let mut p = line_start;
    while p > 0 && (src[p - 1].is_ascii_whitespace() || lexed.class[p - 1] == Class::Comment) {
        p -= 1;
    }
    if p == 0 || p == line_start {
        return None;
    }
    let gap = p..line_start;
    if !src[gap.clone()].contains(&b'\n') {
        return None;
    }
    let mut q = p;
    if src[q - 1] == b'>' {
        // Back over the type parameters.
        let mut depth = 0usize;
        loop {
            q -= 1;
            if lexed.class[q] == Class::Code {
                match src[q] {
                    b'>' => depth += 1,
                    b'<' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b'{' | b'}' | b';' => return None,
                    _ => {}
                }
            }
            if q == 0 {
                return None;
            }
        }
        while q > 0 && src[q - 1].is_ascii_whitespace() {
            q -= 1;
        }
    }
    let name_end = q;
    while q > 0 && is_ident(src[q - 1]) {
        q -= 1;
    }
    if q == name_end {
        return None;
    }
    while q > 0 && src[q - 1].is_ascii_whitespace() {
        q -= 1;
    }
    let kw_end = q;
    while q > 0 && is_ident(src[q - 1]) {
        q -= 1;
    }
    (&src[q..kw_end] == b"class").then_some(p..i)
}

/// `src[from..to]` holds only annotations (`@A`, `@A(..)`) and visibility or platform modifiers.
fn only_annotations_and_modifiers(src: &[u8], lexed: &Lexed, from: usize, to: usize) -> bool {
    let mut k = from;
    while k < to {
        let b = src[k];
        if b == b' ' || b == b'\t' {
            k += 1;
        } else if b == b'@' {
            k += 1;
            while k < to && (is_ident(src[k]) || src[k] == b'.' || src[k] == b':') {
                k += 1;
            }
            if k < to && src[k] == b'(' {
                match matching(src, lexed, k) {
                    Some(close) if close < to => k = close + 1,
                    _ => return false,
                }
            }
        } else {
            let e = k + src[k..to].iter().take_while(|b| is_ident(**b)).count();
            if !matches!(
                &src[k..e],
                b"public" | b"private" | b"internal" | b"protected" | b"actual" | b"expect"
            ) {
                return false;
            }
            k = e;
        }
    }
    true
}

/// `in1`, `as2`, `by3`: the grammar reads a keyword and a number.
fn keyword_then_digit(word: &[u8]) -> bool {
    [&b"in"[..], b"as", b"by", b"where", b"else", b"constructor"]
        .iter()
        .any(|kw| word.len() > kw.len() && word.starts_with(kw) && word[kw.len()].is_ascii_digit())
}

/// `get(x)` or `set(k, v)` at the start of a line is a call when no accessor body (`{`, `=`) or
/// return type (`:`) follows its parentheses; after a property line (`val a = b()`) the grammar
/// reads it as that property's accessor. Returns the line break before it, which then ends the
/// statement as a `;`.
fn call_read_as_accessor(src: &[u8], lexed: &Lexed, i: usize, j: usize) -> Option<usize> {
    if !at_line_start(src, i) {
        return None;
    }
    let close = matching(src, lexed, open_paren_after(src, j)?)?;
    let after = src[close + 1..]
        .iter()
        .find(|b| **b != b' ' && **b != b'\t');
    if matches!(after, Some(b'{') | Some(b'=') | Some(b':')) {
        return None;
    }
    let mut p = i;
    while p > 0 && (src[p - 1].is_ascii_whitespace() || lexed.class[p - 1] == Class::Comment) {
        p -= 1;
    }
    if p == 0 {
        return None;
    }
    let b = src[p - 1];
    let ends_operand =
        is_ident(b) || matches!(b, b')' | b']' | b'"' | b'}') || lexed.class[p - 1] == Class::Str;
    if !ends_operand {
        return None;
    }
    src[p..i]
        .iter()
        .position(|b| *b == b'\n')
        .filter(|k| lexed.class[p + k] == Class::Code)
        .map(|k| p + k)
}

/// For `(f)`, `(a.b)` or `( authenticate )` at `open`: a name or dotted name in parentheses, the
/// closing parenthesis.
fn simple_callee_close(src: &[u8], open: usize) -> Option<usize> {
    let mut k = open + 1;
    while src.get(k) == Some(&b' ') {
        k += 1;
    }
    if !src.get(k).copied().is_some_and(is_ident_start) {
        return None;
    }
    while src
        .get(k)
        .copied()
        .is_some_and(|b| is_ident(b) || b == b'.' || b == b' ')
    {
        k += 1;
    }
    (src.get(k) == Some(&b')')).then_some(k)
}

/// The code before `i` ends an operand (a name, `)`, `]`, a literal): then `(` at `i` is a call's
/// argument list, not a parenthesised expression.
fn prev_code_is_operand(src: &[u8], lexed: &Lexed, i: usize) -> bool {
    let mut p = i;
    while p > 0 && (src[p - 1] == b' ' || src[p - 1] == b'\t') {
        p -= 1;
    }
    if p == 0 {
        return false;
    }
    let b = src[p - 1];
    if lexed.class[p - 1] == Class::Str {
        return true;
    }
    if is_ident(b) {
        // Keywords that take a parenthesised expression: `if (a)(b)` does not occur, but
        // `return (f)(x)` does.
        let e = p;
        let mut s = p;
        while s > 0 && is_ident(src[s - 1]) {
            s -= 1;
        }
        return !matches!(&src[s..e], b"return" | b"in" | b"is" | b"else" | b"throw");
    }
    matches!(b, b')' | b']' | b'}' | b'>' | b'?' | b'!')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parses(src: &str) -> bool {
        let tree = crate::lang::parse_tree(crate::facts::Lang::Kotlin, src).unwrap();
        !tree.root_node().has_error()
    }

    /// The snippet does not parse as written, its rewrite does, and the rewrite equals `want`.
    fn fixed(src: &str, want: &str) {
        assert!(!parses(src), "the grammar parses this now: {src}");
        let got = patch(src).expect("rewritten");
        assert_eq!(got.len(), src.len());
        assert_eq!(got, want);
        assert!(parses(&got), "{got}");
    }

    #[test]
    fn the_grammar_gaps_fixture_parses_once_rewritten() {
        let src = include_str!("../../fixtures/kotlin/grammar_gaps/GatewayInterceptors.kt");
        assert!(
            !parses(src),
            "the grammar parses the fixture as written now"
        );
        let parsed = crate::lang::parse_and_lower(crate::facts::Lang::Kotlin, src).unwrap();
        assert!(parsed.facts.syntax_errors.is_empty());
    }

    /// Every prefix of the fixture, and the prefixes with an unterminated construct spliced in:
    /// no panic, the length kept, and unchanged text where no rewrite applies.
    #[test]
    fn any_input_keeps_its_length() {
        let src = include_str!("../../fixtures/kotlin/grammar_gaps/GatewayInterceptors.kt");
        let cuts: Vec<usize> = (0..=src.len())
            .filter(|k| src.is_char_boundary(*k))
            .collect();
        for (n, &cut) in cuts.iter().enumerate() {
            let piece = [
                "\"\"\"", "$$\"", "/*", "context(", "`", "'", "${", "@A ", ">", ",",
            ][n % 10];
            let half = (0..=cut / 2)
                .rev()
                .find(|k| src.is_char_boundary(*k))
                .unwrap_or(0);
            for text in [
                src[..cut].to_string(),
                format!("{}{piece}{}", &src[..half], &src[half..cut]),
            ] {
                if let Some(out) = patch(&text) {
                    assert_eq!(out.len(), text.len());
                    assert_ne!(out, text);
                }
            }
        }
    }

    #[test]
    fn suspend_blocks_become_calls() {
        fixed(
            "fun f() { val b = suspend { 1 } }\n",
            "fun f() { val b = _uspend { 1 } }\n",
        );
        assert!(patch("suspend fun f() {}\nfun g(suspend: Int) {}\n").is_none());
        fixed(
            "val v: suspend ((H) -> J?) = c.v\nfun f(b: suspend (R.(Int) -> Unit)) {}\n",
            "val v: suspend  (H) -> J?  = c.v\nfun f(b: suspend  R.(Int) -> Unit ) {}\n",
        );
        assert!(patch("fun f(b: suspend (T) -> K) {}\n").is_none());
    }

    #[test]
    fn context_parameters_are_blanked() {
        fixed(
            "context(project: Project)\ninternal fun P.report(x: Int) { foo() }\n",
            "                         \ninternal fun P.report(x: Int) { foo() }\n",
        );
        fixed(
            "class A {\n    context(c: C, r: R)\n    override fun f() {}\n}\n",
            "class A {\n                       \n    override fun f() {}\n}\n",
        );
        fixed(
            "fun f(\n    b: context(L) () -> Unit = {}\n): I {\n    return g()\n}\n",
            "fun f(\n    b:            () -> Unit = {}\n): I {\n    return g()\n}\n",
        );
        // A call named context is left alone.
        assert!(patch("fun f() {\n    context(x)\n    g()\n}\n").is_none());
        assert!(
            patch("// context(a: A)\nfun f() {}\nval s = \"\"\"\ncontext(a: A)\nfun\"\"\"\n")
                .is_none()
        );
    }

    #[test]
    fn annotated_accessors_lose_their_annotations() {
        fixed(
            "class A {\n  var s: F?\n    get() = s_\n    @Synchronized set(value) {\n      s_ = value\n    }\n}\n",
            "class A {\n  var s: F?\n    get() = s_\n                  set(value) {\n      s_ = value\n    }\n}\n",
        );
        assert!(patch("fun f() {\n    set(1)\n    @Suppress(\"x\") val a = get(2)\n}\n").is_none());
    }

    #[test]
    fn multi_dollar_strings_become_ordinary_strings() {
        fixed(
            "private const val RefKey = $$\"$ref\"\n",
            "private const val RefKey =   \"_ref\"\n",
        );
        fixed(
            "val s = $$\"\"\"\n  a: \"${PATH:X}\" $${name} $$id $ \"\"\"\n",
            "val s =   \"\"\"\n  a: \"_{PATH:X}\" _${name} _$id $ \"\"\"\n",
        );
        // Ordinary strings ending in dollars are not multi-dollar strings.
        assert!(patch("val a = \"cost $$\"\nval b = \"x\"\n").is_none());
    }

    #[test]
    fn primary_constructor_on_the_next_line() {
        fixed(
            "public value class R<out T>\n@PublishedApi internal constructor(val h: Any?) {\n    fun a() = 1\n}\n",
            "public value class R<out T> @PublishedApi internal constructor(val h: Any?) {\n    fun a() = 1\n}\n",
        );
        fixed(
            "public actual class E<\n    T : A,\n    >\nactual constructor(\n    c: C,\n) : B {\n}\n",
            "public actual class E<\n    T : A \n    > actual constructor(\n    c: C,\n) : B {\n}\n",
        );
        fixed(
            "class S\n  @RequiresApi(37)\n  internal constructor() : A {\n  fun f() = 1\n}\n",
            "class S   @RequiresApi(37)   internal constructor() : A {\n  fun f() = 1\n}\n",
        );
        // A class header without a body followed by another class is left alone.
        assert!(
            patch("public actual sealed class S\n\npublic class I actual constructor(\n    val h: String\n) : S()\n").is_none()
        );
        // A secondary constructor in a body is left alone.
        assert!(
            patch(
                "class A(val x: Int) {\n    fun f() = 1\n    internal constructor() : this(1)\n}\n"
            )
            .is_none()
        );
    }

    #[test]
    fn keyword_digit_names_and_calls_read_as_accessors() {
        fixed(
            "fun m() {\n  f()\n  in1.skip()\n}\n",
            "fun m() {\n  f()\n  _n1.skip()\n}\n",
        );
        fixed(
            "fun B.m(): A {\n    val a = A(r())\n    get(a)\n    return a\n}\n",
            "fun B.m(): A {\n    val a = A(r());    get(a)\n    return a\n}\n",
        );
        // Accessors are left alone.
        assert!(
            patch("class A {\n  var a: Int = 1\n    get() = 2\n    set(v) { field = v }\n}\n")
                .is_none()
        );
        assert!(patch("fun f() {\n  val index = 1\n  val inX = 2\n}\n").is_none());
    }

    #[test]
    fn parenthesised_callees_and_nullable_references() {
        fixed(
            "fun f() {\n  val p = c?.let { (authenticate)(call, it) }\n}\n",
            "fun f() {\n  val p = c?.let {  authenticate (call, it) }\n}\n",
        );
        fixed(
            "fun f() {\n  val l = a.zip(b, String?::plus)\n}\n",
            "fun f() {\n  val l = a.zip(b, String ::plus)\n}\n",
        );
        assert!(patch("fun f() {\n  g(a)(b)\n  val x = (a + b)(c)\n}\n").is_none());
    }
}
