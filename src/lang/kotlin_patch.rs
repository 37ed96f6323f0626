//! Same-length rewrites of Kotlin source for valid constructs that tree-sitter-kotlin-ng 1.1.0
//! cannot parse. Its error recovery often takes the rest of a class or file with the construct,
//! hiding that code from every rule, so each construct is rewritten, byte for byte in place, into
//! one the grammar reads the same way for our purposes. Every byte offset (and so every line and
//! column reported) stays right, and the analysed text keeps its length.
//!
//! The rewrites only touch code: a small lexer marks comments, string bodies and backtick names
//! first, so nothing inside a string, a comment or a name like `` `set a value` `` is changed
//! (except the multi-dollar strings' own bodies, below).
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
//! | a `get`/`set` call or variable at line start after a property (`get("/") { .. }`, `set = x`) | the line break before it (or its annotations) read as `;` |
//! | annotations on the lines above an accessor (`@Deprecated(..)⏎get() = 1`) | blanked |
//! | a modifier or soft keyword used as a name (`open = true`, `suspend(w)`, `var dynamic`) | its first letter spelt `_` |
//! | a guard in a `when` branch `is A if ok ->` (Kotlin 2.1) | `is A , ok ->` |
//! | an import after other code (a build script's `plugins { }` first) | blanked |
//! | a callable reference starting a statement after a block `}⏎::f.start(c)` | the line break read as `;` |
//! | a one-line body ending in a declaration `{ val a = 1 }`, `{ fun a() {} }` | the space before `}` read as `;` |
//! | two file annotations on one line `@file:A @file:B` | the space between read as `;` |
//! | quotes ending a raw string's text `"""a"""""` | the extra quotes spelt `'` |
//! | a typed destructuring lambda parameter `{ (a, b): Pair<A, B> -> .. }` | the type blanked |
//! | an empty collection literal in an annotation `@Constraint(validatedBy = [])` | `{}` |
//! | a primary constructor without its keyword after a doc comment `class A⏎/** .. */⏎(val x: Int)` | the line breaks read as spaces |
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
    /// Quotes a raw string ends with before its closing `"""` (`"""a""""` holds `a"`).
    extra_quotes: Vec<std::ops::Range<usize>>,
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
    let mut extra_quotes = Vec::new();
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
                        if end - i > 3 {
                            extra_quotes.push(i..end - 3);
                        }
                        i = end - 3;
                        end = i + 3;
                    }
                    for c in &mut class[i..end] {
                        *c = Class::Str;
                    }
                    // `$$"..."`, and `$"""..."""` (one sign: interpolation as usual, but the
                    // grammar does not know the prefix).
                    if src[open] == b'$' {
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
                    // A backtick name is a name whatever its words (`` `set a field` ``,
                    // `` `suspend` ``): nothing in it is rewritten.
                    let mut j = i + 1;
                    while j < n && src[j] != b'`' && src[j] != b'\n' {
                        class[j] = Class::Str;
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
    Lexed {
        class,
        multi,
        extra_quotes,
    }
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
    let first_statement = first_statement(src, &lexed);
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
            _ if modifier_used_as_name(src, &lexed, i, j)
                || parameter_named_as_modifier(src, i, j) =>
            {
                out[i] = b'_'
            }
            b"if" if when_guard(src, &lexed, i) => {
                // A guard in a `when` branch (`is A if ok ->`, Kotlin 2.1) read as one more
                // condition of the branch: `is A , ok ->`.
                out[i] = b',';
                out[i + 1] = b' ';
            }
            b"import"
                if first_statement.is_some_and(|f| i > f)
                    && at_line_start(src, i)
                    && src.get(j) == Some(&b' ')
                    && src[j..]
                        .trim_ascii_start()
                        .first()
                        .copied()
                        .is_some_and(is_ident_start) =>
            {
                // An import after other code (a build script's `plugins { }` block first).
                let end = src[i..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(n, |e| i + e);
                blank(&mut out, i..end);
                i = end;
                continue;
            }
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
                // A context function type: `block: context(A) () -> Unit`, with a receiver
                // `context(A) T.() -> Unit` or suspending.
                if let Some(close) = open_paren_after(src, j).and_then(|p| matching(src, &lexed, p))
                    && src.get(close + 1) == Some(&b' ')
                    && context_function_type_follows(src, j, close)
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
                } else if infix_call(src, &lexed, i, j) {
                    // `insert { .. } get T.id`: an accessor is never followed by a name.
                    out[i] = b'_';
                } else if at_line_start(src, i)
                    && let Some(start) = annotation_lines_above(src, &lexed, line_start(src, i))
                {
                    // An accessor whose annotations stand on the lines above it.
                    for k in start..i {
                        if lexed.class[k] != Class::Comment && !src[k].is_ascii_whitespace() {
                            out[k] = b' ';
                        }
                    }
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
        // An empty collection literal in an annotation (`@Constraint(validatedBy = [])`,
        // `annotation class A(val v: Array<String> = [])`): read as an empty lambda.
        if code(i)
            && src[i..].starts_with(b"[]")
            && src[..i]
                .trim_ascii_end()
                .last()
                .is_some_and(|b| matches!(b, b'=' | b'(' | b','))
        {
            out[i] = b'{';
            out[i + 1] = b'}';
        }
        // A typed destructuring lambda parameter `{ (a, b): Pair<A, B> -> .. }`: the type
        // blanked.
        if code(i)
            && src[i] == b'{'
            && let Some(range) = destructuring_parameter_type(src, &lexed, i)
        {
            blank(&mut out, range);
        }
        // A primary constructor without the keyword on a line of its own after the class
        // header, with a doc comment between (`class A⏎/** .. */⏎(val x: Int)`).
        if code(i)
            && src[i] == b'('
            && at_line_start(src, i)
            && let Some(close) = matching(src, &lexed, i)
            && matches!(
                src[close + 1..]
                    .iter()
                    .find(|b| **b != b' ' && **b != b'\t'),
                None | Some(b'{') | Some(b':') | Some(b'\n') | Some(b'\r')
            )
            && let Some(p) = class_header_before(src, &lexed, line_start(src, i))
        {
            for (b, class) in out[p..i].iter_mut().zip(&lexed.class[p..i]) {
                if *class == Class::Code && b.is_ascii_whitespace() {
                    *b = b' ';
                }
            }
        }
        // A callable reference starting a statement (`::g.startCoroutine(c)`) after a
        // declaration: the grammar joins it to the line before.
        if code(i)
            && src[i..].starts_with(b"::")
            && at_line_start(src, i)
            && let Some(newline) = line_break_after_operand(src, &lexed, i)
        {
            out[newline] = b';';
        }
        // A one-line body whose last declaration runs into its `}`: `{ val a = 1 }`,
        // `MAIN { override fun f() = x },`.
        if code(i)
            && src[i] == b'}'
            && i > 1
            && src[i - 1] == b' '
            && one_line_declaration_body(src, &lexed, i)
        {
            out[i - 1] = b';';
        }
        // Two file annotations on one line: `@file:JvmMultifileClass @file:JvmName("A")`.
        if code(i) && src[i..].starts_with(b"@file:") && i > 0 && src[i - 1] == b' ' {
            let ls = line_start(src, i);
            if src[ls..i].trim_ascii_start().starts_with(b"@file:") {
                out[i - 1] = b';';
            }
        }
        i += 1;
    }
    for q in &lexed.extra_quotes {
        // Quotes that end a raw string's text, before its closing `"""`: the grammar ends the
        // string at the first three. Read as apostrophes.
        for b in &mut out[q.clone()] {
            *b = b'\'';
        }
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

/// Where the code before `i` ends: `i` with the whitespace and comments before it skipped.
fn code_end_before(src: &[u8], lexed: &Lexed, i: usize) -> usize {
    let mut p = i;
    while p > 0 && (src[p - 1].is_ascii_whitespace() || lexed.class[p - 1] == Class::Comment) {
        p -= 1;
    }
    p
}

/// `if` at `i` follows a branch condition on its line (`is A if ok ->`): the code before it is an
/// operand, not a keyword such as `else` or `return`.
fn when_guard(src: &[u8], lexed: &Lexed, i: usize) -> bool {
    let mut p = i;
    while p > 0 && (src[p - 1] == b' ' || src[p - 1] == b'\t') {
        p -= 1;
    }
    if p == i || p == 0 {
        return false;
    }
    let b = src[p - 1];
    if is_ident(b) {
        let mut s = p;
        while s > 0 && is_ident(src[s - 1]) {
            s -= 1;
        }
        if matches!(
            &src[s..p],
            b"else" | b"return" | b"throw" | b"in" | b"is" | b"as" | b"to" | b"and" | b"or"
        ) {
            return false;
        }
    } else if !matches!(b, b')' | b'>' | b']' | b'?') || src[..p].ends_with(b"->") {
        // (`is A -> if (ok) ..` is an `if` expression as the branch's value.)
        return false;
    }
    // The branch's arrow follows on the line (within a guard's length), or after the guard's
    // parentheses when they span lines (`is A if (⏎ ok⏎) -> {`).
    let mut from = i + 2;
    let k = from + src[from..].iter().take_while(|b| **b == b' ').count();
    if src.get(k) == Some(&b'(')
        && let Some(close) = matching(src, lexed, k)
    {
        from = close + 1;
    }
    let end = (from + SHORT_SPAN).min(src.len());
    let end = src[from..end]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(end, |e| from + e);
    src[from..end].windows(2).any(|w| w == b"->")
}

/// Where the first code that is not a package, import or file annotation starts.
fn first_statement(src: &[u8], lexed: &Lexed) -> Option<usize> {
    let mut k = 0;
    loop {
        k = skip_trivia(src, lexed, k);
        if k >= src.len() {
            return None;
        }
        let rest = &src[k..];
        if rest.starts_with(b"@file:") {
            // Its arguments may span lines (`@file:Suppress(⏎"A",⏎)`): past their bracket,
            // then to the end of that line.
            k = past_annotation_arguments(src, lexed, k + b"@file:".len());
            k += src[k..]
                .iter()
                .position(|b| *b == b'\n')
                .unwrap_or(src.len() - k);
            continue;
        }
        if rest.starts_with(b"package") || rest.starts_with(b"import") || rest.starts_with(b"#!") {
            // To the end of this line.
            k += rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            continue;
        }
        return Some(k);
    }
}

/// The index after a file annotation's name at `i` and its bracketed arguments, if any
/// (brackets inside strings and comments do not count).
fn past_annotation_arguments(src: &[u8], lexed: &Lexed, mut i: usize) -> usize {
    while i < src.len() && (is_ident(src[i]) || src[i] == b'.') {
        i += 1;
    }
    if !matches!(src.get(i), Some(b'(' | b'[')) {
        return i;
    }
    let mut depth = 0usize;
    while i < src.len() {
        if lexed.class[i] == Class::Code {
            match src[i] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    i
}

/// For a statement at line start `i`: the line break before it when the code before ends an
/// operand or a block (so the grammar would continue that line).
fn line_break_after_operand(src: &[u8], lexed: &Lexed, i: usize) -> Option<usize> {
    let p = code_end_before(src, lexed, i);
    let b = *src.get(p.checked_sub(1)?)?;
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

/// The `}` at `close` ends a body opened on its line whose content starts with a declaration
/// and whose last code, before the space at `close - 1`, ends an operand.
fn one_line_declaration_body(src: &[u8], lexed: &Lexed, close: usize) -> bool {
    let lo = close.saturating_sub(SHORT_SPAN);
    let ls = src[lo..close]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(lo, |p| lo + p + 1);
    let mut depth = 0usize;
    let mut open = None;
    for k in (ls..close).rev() {
        if lexed.class[k] != Class::Code {
            continue;
        }
        match src[k] {
            b'}' => depth += 1,
            b'{' if depth == 0 => {
                open = Some(k);
                break;
            }
            b'{' => depth -= 1,
            _ => {}
        }
    }
    let Some(open) = open else {
        return false;
    };
    let mut p = close - 1;
    while p > open && src[p - 1] == b' ' {
        p -= 1;
    }
    if p <= open + 1 {
        return false;
    }
    let b = src[p - 1];
    // (Or a declaration's block: `class D { fun a() {} }`, `object : R { override fun run() {} }`.)
    let ends_operand =
        is_ident(b) || matches!(b, b')' | b']' | b'"' | b'}') || lexed.class[p - 1] == Class::Str;
    if !ends_operand {
        return false;
    }
    let k = open
        + 1
        + src[open + 1..close]
            .iter()
            .take_while(|b| **b == b' ')
            .count();
    let e = k + src[k..close].iter().take_while(|b| is_ident(**b)).count();
    e > k
        && matches!(
            &src[k..e],
            b"val"
                | b"var"
                | b"fun"
                | b"override"
                | b"private"
                | b"protected"
                | b"internal"
                | b"public"
                | b"const"
        )
}

/// Modifiers and soft keywords (`where`, `by`) the grammar cannot read as names where a
/// statement starts (`open(closer)`, `open = isOpen`), and the two it cannot read as names
/// anywhere.
const STATEMENT_MODIFIERS: &[&[u8]] = &[
    b"abstract",
    b"crossinline",
    b"enum",
    b"external",
    b"final",
    b"infix",
    b"inline",
    b"internal",
    b"lateinit",
    b"noinline",
    b"open",
    b"override",
    b"private",
    b"protected",
    b"public",
    b"sealed",
    b"tailrec",
    b"vararg",
    b"where",
    b"by",
];
/// Class modifiers the grammar cannot read as enum entries (`enum class MorphMode { outer,
/// inner, .. }`); elsewhere (`value = 0`, `data.size`) they parse as names already.
const ENTRY_MODIFIERS: &[&[u8]] = &[b"inner", b"data", b"value", b"companion", b"annotation"];
const NAME_MODIFIERS: &[&[u8]] = &[b"suspend", b"dynamic"];

/// A parameter after a parameter modifier whose name is a modifier too (`vararg data: T`): in a
/// primary constructor the grammar reads both as modifiers. (A function's parameters parse
/// either way; renaming them too is harmless, names are read from the original text.)
fn parameter_named_as_modifier(src: &[u8], i: usize, j: usize) -> bool {
    const PARAMETER_MODIFIERS: &[&[u8]] = &[b"vararg", b"noinline", b"crossinline"];
    const OTHER_MODIFIERS: &[&[u8]] = &[
        b"data",
        b"inner",
        b"value",
        b"annotation",
        b"companion",
        b"const",
        b"actual",
        b"expect",
        b"operator",
        b"reified",
    ];
    let word = &src[i..j];
    if !(OTHER_MODIFIERS.contains(&word)
        || STATEMENT_MODIFIERS.contains(&word)
        || NAME_MODIFIERS.contains(&word))
    {
        return false;
    }
    let before = src[..i].trim_ascii_end();
    let k = before
        .iter()
        .rposition(|b| !is_ident(*b))
        .map_or(0, |p| p + 1);
    let after = src[j..].trim_ascii_start();
    k < before.len()
        && k < i
        && PARAMETER_MODIFIERS.contains(&&before[k..])
        && after.starts_with(b":")
        && !after.starts_with(b"::")
}

/// The modifier `src[i..j]` is a name here (a variable, parameter, named argument, enum entry or
/// called function: `suspend(waiter)`, `suspend = { .. }`, `var dynamic = 0`, `open(closer)`):
/// the next token is one a modifier never has after it. Member names (`a.open(..)`, `A::open`)
/// parse already and keep their spelling; `suspend` before a function type
/// (`suspend (A) -> B`, `suspend ((A) -> B)`) and `dynamic` as a type stay.
fn modifier_used_as_name(src: &[u8], lexed: &Lexed, i: usize, j: usize) -> bool {
    let word = &src[i..j];
    if ENTRY_MODIFIERS.contains(&word) {
        return enum_entry(src, lexed, i, j);
    }
    let anywhere = NAME_MODIFIERS.contains(&word);
    if !anywhere && !STATEMENT_MODIFIERS.contains(&word) {
        return false;
    }
    let p = code_end_before(src, lexed, i);
    let prev = p.checked_sub(1).map(|p| src[p]);
    if matches!(prev, Some(b'.') | Some(b':') | Some(b'@') | Some(b'`')) {
        // A member (`a.open`, `A::open`), a type (`x: dynamic`) or an annotation.
        return false;
    }
    // A statement modifier is a name only where a statement starts.
    let statement_start = at_line_start(src, i)
        || matches!(prev, Some(b'{') | Some(b';'))
        || src[..p].ends_with(b"->");
    if !(anywhere || statement_start) {
        return false;
    }
    if word == b"dynamic" {
        let before = &src[..p];
        if before.ends_with(b"<")
            || before.ends_with(b" as")
            || before.ends_with(b" is")
            || before.ends_with(b"as?")
        {
            return false;
        }
    }
    let k = j + src[j..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    let next = src.get(k).copied();
    let after = src.get(k + 1).copied();
    match next {
        Some(b'(') => {
            let Some(close) = matching(src, lexed, k) else {
                return false;
            };
            // A function type (`suspend (A) -> B`) or a parenthesised one (`suspend ((A) -> B)`).
            let inner_paren = src[k + 1..close].trim_ascii_start().starts_with(b"(");
            let arrow = src[close + 1..].trim_ascii_start().starts_with(b"->");
            !anywhere || (!inner_paren && !arrow)
        }
        Some(b'/') => !matches!(after, Some(b'/') | Some(b'*')),
        Some(b'?') => matches!(after, Some(b'.') | Some(b':')),
        Some(b'-') => after != Some(b'>') || anywhere,
        // A comparison (`dynamic > 3`), not type arguments (`Map<K, dynamic>`).
        Some(b'<') | Some(b'>') => k > j && matches!(after, Some(b' ') | Some(b'=')),
        Some(b) => {
            lexed.class[k] == Class::Code
                && matches!(
                    b,
                    b'=' | b'.'
                        | b'!'
                        | b')'
                        | b','
                        | b']'
                        | b';'
                        | b'['
                        | b'+'
                        | b'*'
                        | b'%'
                        | b'&'
                        | b'|'
                        | b':'
                        | b'}'
                )
        }
        None => false,
    }
}

/// The word `src[i..j]` stands alone between `{` or `,` and `,`, `;` or `}`: an enum entry
/// (`enum class Shape { data, annotation }`, `value;`).
fn enum_entry(src: &[u8], lexed: &Lexed, i: usize, j: usize) -> bool {
    let p = code_end_before(src, lexed, i);
    let k = skip_trivia(src, lexed, j);
    matches!(p.checked_sub(1).map(|p| src[p]), Some(b'{') | Some(b','))
        && matches!(src.get(k), Some(b',') | Some(b';') | Some(b'}'))
}

/// For a lambda's `{` at `open` whose first parameter is a destructuring declaration with a type
/// (`{ (a, _, c): Data ->`, `{ (k, v): Map.Entry<K, V>, i: Int ->`): the type with its colon.
fn destructuring_parameter_type(
    src: &[u8],
    lexed: &Lexed,
    open: usize,
) -> Option<std::ops::Range<usize>> {
    let k = open + 1 + src[open + 1..].iter().take_while(|b| **b == b' ').count();
    if src.get(k) != Some(&b'(') {
        return None;
    }
    let close = matching(src, lexed, k)?;
    // Names, `_` and commas inside: a destructuring, not an expression.
    let inner = &src[k + 1..close];
    if !inner
        .iter()
        .all(|b| is_ident(*b) || b", \t\n\r".contains(b))
    {
        return None;
    }
    let colon = close + 1 + src[close + 1..].iter().take_while(|b| **b == b' ').count();
    if src.get(colon) != Some(&b':') || src.get(colon + 1) == Some(&b':') {
        return None;
    }
    // The type runs to the parameter's end (`,` outside type arguments, or `->`) on this line.
    let mut depth = 0usize;
    let end = (colon + SHORT_SPAN).min(src.len());
    for e in colon + 1..end {
        match src[e] {
            b'<' => depth += 1,
            b'>' if depth > 0 => depth -= 1,
            b'-' if src.get(e + 1) == Some(&b'>') && depth == 0 => return Some(colon..e),
            b',' if depth == 0 => return Some(colon..e),
            b'\n' | b'{' | b'}' | b'(' | b')' | b'=' => return None,
            _ => {}
        }
    }
    None
}

/// After `context(..)` at `close`: a function type (`() -> B`, `suspend () -> B`, a receiver
/// `T.() -> B`), and the parentheses hold something (`ShareDialog(context() as A)` is a call).
fn context_function_type_follows(src: &[u8], j: usize, close: usize) -> bool {
    if src[j..close]
        .iter()
        .all(|b| matches!(b, b'(' | b' ' | b'\t'))
    {
        return false;
    }
    let rest = src[close + 1..].trim_ascii_start();
    if rest.starts_with(b"(") || rest.starts_with(b"suspend ") {
        return true;
    }
    // A receiver type: a (dotted, generic) name, then `.(`, on this line.
    let line = rest
        .iter()
        .position(|b| *b == b'\n')
        .map_or(rest, |e| &rest[..e]);
    let line = &line[..line.len().min(SHORT_SPAN)];
    rest.first().copied().is_some_and(is_ident_start)
        && line.windows(2).position(|w| w == b".(").is_some_and(|k| {
            line[..k]
                .iter()
                .all(|b| is_ident(*b) || b".<>, ?".contains(b))
        })
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

/// How far the line-bound rewrites (a `when` guard, a one-line body) look: they are short, and a
/// long line of hostile input must not make the pass quadratic.
const SHORT_SPAN: usize = 512;

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

/// The lines right above `line` (comments between allowed) that hold only annotations: where
/// the first of them starts, if there is one.
fn annotation_lines_above(src: &[u8], lexed: &Lexed, line: usize) -> Option<usize> {
    let mut first = None;
    let mut end = line;
    loop {
        // The previous code byte.
        let p = code_end_before(src, lexed, end);
        if p == 0 {
            break;
        }
        let start = line_start(src, p - 1);
        // An annotation's arguments may span lines: start from the line of its `@`.
        let start = if src[p - 1] == b')' {
            let open = opening(src, lexed, p - 1)?;
            line_start(src, open)
        } else {
            start
        };
        let from = start
            + src[start..p]
                .iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .count();
        if src.get(from) != Some(&b'@') || !only_annotations_and_modifiers(src, lexed, from, p) {
            break;
        }
        first = Some(from);
        end = start;
    }
    first
}

/// The `(` matching the `)` at `close`, counting only code, within [`MAX_SPAN`] bytes.
fn opening(src: &[u8], lexed: &Lexed, close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for k in (close.saturating_sub(MAX_SPAN)..=close).rev() {
        if lexed.class[k] != Class::Code {
            continue;
        }
        match src[k] {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
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
    class_header_before(src, lexed, line_start).map(|p| p..i)
}

/// For a line starting at `line_start`: when the code before it ends a class header (`class
/// Name` or `class Name<..>`) on an earlier line, with only whitespace and block comments
/// between (a `//` comment would swallow what is joined to it), where that header ends.
fn class_header_before(src: &[u8], lexed: &Lexed, line_start: usize) -> Option<usize> {
    // The previous code byte.
    let p = code_end_before(src, lexed, line_start);
    if p == 0 || p == line_start {
        return None;
    }
    let gap = p..line_start;
    if !src[gap.clone()].contains(&b'\n') {
        return None;
    }
    let line_comment = gap.clone().any(|k| {
        lexed.class[k] == Class::Comment
            && (k == 0 || lexed.class[k - 1] != Class::Comment)
            && src[k..].starts_with(b"//")
    });
    if line_comment {
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
                        // (An unmatched `<`: not type parameters.)
                        depth = depth.checked_sub(1)?;
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
    (&src[q..kw_end] == b"class").then_some(p)
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

/// `get` or `set` at the start of a line that cannot be an accessor: a call `get("/") { .. }`,
/// `set(k, v)`, `get { .. }` or a variable `set = set or bit`. After a property line
/// (`val a = b()`) the grammar reads it as that property's accessor. An accessor is `get()` or
/// `set(value)` / `set(value: T)` followed by a body (`{`, `=`) or return type (`:`), or a bare
/// `get`/`set` that ends its line. Returns the line break before it, which then ends the
/// statement as a `;`.
fn call_read_as_accessor(src: &[u8], lexed: &Lexed, i: usize, j: usize) -> Option<usize> {
    if !at_line_start(src, i) {
        return None;
    }
    let k = j + src[j..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    match src.get(k) {
        None | Some(b'\n') | Some(b'\r') | Some(b';') | Some(b'}') | Some(b'/') => return None,
        Some(b'=') if src.get(k + 1) != Some(&b'=') => {}
        Some(b'(') => {
            let close = matching(src, lexed, k)?;
            let after = src[close + 1..]
                .iter()
                .find(|b| **b != b' ' && **b != b'\t');
            let accessor_body = matches!(after, Some(b'{') | Some(b'=') | Some(b':'));
            if accessor_body && accessor_params(&src[i..j], &src[k + 1..close]) {
                return None;
            }
        }
        Some(_) => {}
    }
    // An annotated call (`@OptIn(..)⏎get("/") {..}`) is cut from what precedes its annotations.
    let i = annotation_lines_above(src, lexed, line_start(src, i)).unwrap_or(i);
    line_break_after_operand(src, lexed, i)
}

/// `get`/`set` at `i..j` is an infix call (`a get b`, `} get (T.id)`, `} get "id"`): a name or
/// literal follows it on its line, or parentheses no accessor has; and it is no member (`a.get b` is no Kotlin).
fn infix_call(src: &[u8], lexed: &Lexed, i: usize, j: usize) -> bool {
    let k = j + src[j..]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    if k == j || src[..i].trim_ascii_end().ends_with(b".") {
        return false;
    }
    match src.get(k) {
        Some(b) if is_ident_start(*b) || b.is_ascii_digit() || *b == b'"' || *b == b'\'' => true,
        Some(b'(') => matching(src, lexed, k)
            .is_some_and(|close| !accessor_params(&src[i..j], &src[k + 1..close])),
        _ => false,
    }
}

/// `inner` (between an accessor keyword's parentheses) is its parameter list: nothing for `get`,
/// a name (and a type) for `set`.
fn accessor_params(keyword: &[u8], inner: &[u8]) -> bool {
    let inner = inner.trim_ascii();
    if keyword == b"get" || inner.is_empty() {
        return inner.is_empty();
    }
    let name = inner.iter().take_while(|b| is_ident(**b)).count();
    let rest = inner[name..].trim_ascii_start();
    name > 0
        && is_ident_start(inner[0])
        && (rest.is_empty() || rest[0] == b':')
        && !inner.contains(&b'"')
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

    const GAP_FIXTURES: [&str; 3] = [
        include_str!("../../fixtures/kotlin/grammar_gaps/GatewayInterceptors.kt"),
        include_str!("../../fixtures/kotlin/grammar_gaps/SettlementJobs.kt"),
        include_str!("../../fixtures/kotlin/grammar_gaps/EnumEntries.kt"),
    ];

    #[test]
    fn the_grammar_gaps_fixtures_parse_once_rewritten() {
        for src in GAP_FIXTURES {
            assert!(
                !parses(src),
                "the grammar parses the fixture as written now"
            );
            let parsed = crate::lang::parse_and_lower(crate::facts::Lang::Kotlin, src).unwrap();
            assert!(parsed.facts.syntax_errors.is_empty());
        }
    }

    /// Every prefix of the fixtures (joined), and the prefixes with an unterminated construct spliced in:
    /// no panic, the length kept, and unchanged text where no rewrite applies.
    #[test]
    fn any_input_keeps_its_length() {
        let src = GAP_FIXTURES.concat();
        let src = src.as_str();
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
    fn class_modifiers_as_enum_entries_are_names() {
        fixed(
            "enum class M {\n    outer,\n    inner,\n}\n",
            "enum class M {\n    outer,\n    _nner,\n}\n",
        );
        fixed(
            "enum class F {\n    value;\n}\n",
            "enum class F {\n    _alue;\n}\n",
        );
        fixed(
            "enum class S { data, annotation, companion }\n",
            "enum class S { _ata, _nnotation, _ompanion }\n",
        );
        // Still modifiers: nothing to rewrite.
        assert_eq!(
            patch("inner class A\ndata class B(val x: Int)\nvalue class C(val y: Int)\n"),
            None
        );
    }

    /// Words in a backtick name are not code: `set` and `suspend` there stay as written (the
    /// facts named such tests `reports _et name`).
    #[test]
    fn backtick_names_are_not_rewritten() {
        assert_eq!(
            patch("class T {\n    @Test fun `set a value`() {}\n    fun `suspend`() {}\n}\n"),
            None
        );
        fixed(
            "fun f() {\n  `set up`(); val b = suspend { 1 }\n}\n",
            "fun f() {\n  `set up`(); val b = _uspend { 1 }\n}\n",
        );
    }

    #[test]
    fn suspend_blocks_become_calls() {
        fixed(
            "fun f() { val b = suspend { 1 } }\n",
            "fun f() { val b = _uspend { 1 };}\n",
        );
        assert!(patch("suspend fun f() {}\nsuspend\nfun h() {}\n").is_none());
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
        fixed(
            "fun f(b: context(S) T.() -> Unit) {}\n",
            "fun f(b:            T.() -> Unit) {}\n",
        );
        // A call named context inside a call is left alone.
        assert!(
            patch("val d = Dialog(context() as Activity)\nval e = f(context(a) as B)\n").is_none()
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
        // One sign: interpolation as in an ordinary string (http4k's release workflow).
        fixed(
            "val u = $\"\"\"\n  x ${x} $y\n\"\"\"\n",
            "val u =  \"\"\"\n  x ${x} $y\n\"\"\"\n",
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
        fixed(
            "abstract class S\n/**\n * doc\n */\n(p: P) : B(p) {\n    fun f() = 1\n}\n",
            "abstract class S /**\n * doc\n */ (p: P) : B(p) {\n    fun f() = 1\n}\n",
        );
        // An expression after a local class is no constructor.
        assert!(patch("fun f() {\n    class L\n    (a + b).let { g(it) }\n}\n").is_none());
        // A line comment between would swallow what is joined to it: left alone.
        assert!(patch("class S // note\ninternal constructor() : A {\n}\n").is_none());
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

    #[test]
    fn get_and_set_calls_that_cannot_be_accessors() {
        // A routing call with a path and a block, a block-only call, a variable named `set`.
        fixed(
            "fun f() {\n  val r = routing()\n  get(\"/\") { ok() }\n}\n",
            "fun f() {\n  val r = routing();  get(\"/\") { ok() }\n}\n",
        );
        fixed(
            "fun f() {\n  val r = b()\n  get { ok() }\n}\n",
            "fun f() {\n  val r = b();  get { ok() }\n}\n",
        );
        fixed(
            "fun f() {\n  var set = 0\n  set = set or 1\n}\n",
            "fun f() {\n  var set = 0;  set = _et or 1\n}\n",
        );
        // An annotated call is cut before its annotation.
        fixed(
            "fun f() {\n  val r = b()\n  @OptIn(X::class)\n  get(\"/\") { ok() }\n}\n",
            "fun f() {\n  val r = b();  @OptIn(X::class)\n  get(\"/\") { ok() }\n}\n",
        );
        // Accessors stay: `get()` and `set(value)` / `set(value: T)` with a body, bare ones.
        for src in [
            "class A {\n  val a: Int\n    get() = 1\n  var b: Int = 0\n    set(value: Int) { field = value }\n}\n",
            "class A {\n  var b: Int = 0\n    private set\n  val c: Int get() = 2\n}\n",
            "class A {\n  var b: Int = 0\n    set\n}\n",
        ] {
            assert!(parses(src), "{src}");
            assert!(patch(src).is_none(), "{src}");
        }
        // An infix call after a block.
        fixed(
            "fun f() {\n  val id = t.insert {\n    it[a] = 1\n  } get t.id\n}\n",
            "fun f() {\n  val id = t.insert {\n    it[a] = 1\n  } _et t.id\n}\n",
        );
        fixed(
            "fun f() {\n  val id = t.insert {\n    it[a] = 1\n  } get (t.id)\n}\n",
            "fun f() {\n  val id = t.insert {\n    it[a] = 1\n  } _et (t.id)\n}\n",
        );
        assert!(patch("class A {\n  var a: Int = 0 set (value) { field = value }\n}\n").is_none());
    }

    #[test]
    fn annotations_on_the_lines_above_an_accessor() {
        fixed(
            "class A {\n  val a: Int\n    @Deprecated(\n      \"x\"\n    ) // why\n    get() = 1\n}\n",
            "class A {\n  val a: Int\n                \n         \n      // why\n    get() = 1\n}\n",
        );
    }

    #[test]
    fn modifiers_used_as_names() {
        fixed(
            "class A {\n  var open = false\n  fun f() {\n    open = true\n  }\n}\n",
            "class A {\n  var open = false\n  fun f() {\n    _pen = true\n  }\n}\n",
        );
        fixed(
            "fun f(w: W) {\n  val x = suspend(w)\n}\n",
            "fun f(w: W) {\n  val x = _uspend(w)\n}\n",
        );
        fixed("var dynamic = 0\n", "var _ynamic = 0\n");
        // Members, modifiers, a suspending function type and `dynamic` as a type stay.
        for src in [
            "fun f() {\n  a.open(b)\n  val r = A::open\n}\n",
            "open class A {\n  open fun f() {}\n  internal val x = 1\n}\n",
            "val f: suspend (A) -> B = g\nfun h(m: Map<K, dynamic>) = m as dynamic\n",
            "class C<T>(val t: T)\n  where T : Any\n",
        ] {
            assert!(patch(src).is_none(), "{src}");
        }
    }

    #[test]
    fn parameters_named_as_modifiers() {
        fixed(
            "class T(vararg data: Pair<String, Any>) : R()\n",
            "class T(vararg _ata: Pair<String, Any>) : R()\n",
        );
        fixed("class T(vararg open: Int)\n", "class T(vararg _pen: Int)\n");
        assert!(
            patch("class T(data: Int, vararg items: Int)\nfun f(vararg a: Int) {}\n").is_none()
        );
    }

    #[test]
    fn when_guards_become_conditions() {
        fixed(
            "fun f(x: Any) = when (x) {\n  is A if x.ok -> 1\n  else -> 2\n}\n",
            "fun f(x: Any) = when (x) {\n  is A ,  x.ok -> 1\n  else -> 2\n}\n",
        );
        fixed(
            "fun f(x: Any) = when (x) {\n  is A if (\n    x.ok\n  ) -> 1\n  else -> 2\n}\n",
            "fun f(x: Any) = when (x) {\n  is A ,  (\n    x.ok\n  ) -> 1\n  else -> 2\n}\n",
        );
        // `else if` and an `if` expression as a branch's value stay.
        assert!(
            patch("fun f(x: Any) = when (x) {\n  is A -> if (ok) l.map { it -> it } else 0\n  else -> if (b) 1 else 2\n}\n")
                .is_none()
        );
    }

    #[test]
    fn imports_after_a_multi_line_file_annotation_are_kept() {
        // okhttp's `@file:Suppress(..)` spans lines; its imports are not "after code".
        let src = "@file:Suppress(\n  \"A\",\n  \"B(\",\n)\npackage p\n\nimport a.b.C\n\nclass X\n";
        assert!(patch(src).is_none_or(|p| p.contains("import a.b.C")));
        let facts = crate::lang::parse_and_lower(crate::facts::Lang::Kotlin, src)
            .unwrap()
            .facts;
        assert_eq!(facts.imports, ["a.b.C"]);
    }

    #[test]
    fn imports_after_a_build_scripts_first_block() {
        fixed(
            "plugins {\n  id(\"a\")\n}\nimport a.b.C\n\nval x = C()\n",
            "plugins {\n  id(\"a\")\n}\n            \n\nval x = C()\n",
        );
        // A lambda parameter named `import` is not an import.
        assert!(patch("fun f() {\n  l.map { import ->\n    import.x\n  }\n}\n").is_none());
    }

    #[test]
    fn statements_the_grammar_joins_to_the_line_before() {
        fixed(
            "fun f() {\n  fun t() {\n    g()\n  }\n  ::t.startCoroutine(c)\n}\n",
            "fun f() {\n  fun t() {\n    g()\n  };  ::t.startCoroutine(c)\n}\n",
        );
        fixed(
            "class A { val x = 1 }\nfun g() {}\n",
            "class A { val x = 1;}\nfun g() {}\n",
        );
        fixed(
            "enum class E {\n  MAIN { override fun f() = x },\n  B;\n  open fun f() = 0\n}\n",
            "enum class E {\n  MAIN { override fun f() = x;},\n  B;\n  open fun f() = 0\n}\n",
        );
        // A declaration with a block last: a class body, an object expression.
        fixed("class D { fun a() {} }\n", "class D { fun a() {};}\n");
        fixed(
            "class C {\n  fun g() {\n    val r = object : Runnable { override fun run() { charge() } }\n  }\n}\n",
            "class C {\n  fun g() {\n    val r = object : Runnable { override fun run() { charge() };}\n  }\n}\n",
        );
        fixed(
            "@file:JvmMultifileClass @file:JvmName(\"A\")\npackage p\n",
            "@file:JvmMultifileClass;@file:JvmName(\"A\")\npackage p\n",
        );
        // Bodies that start with a call, not a declaration, stay.
        assert!(patch("fun f() { g() }\nval l = listOf(1).map { it + 1 }\n").is_none());
    }

    #[test]
    fn typed_destructuring_lambda_parameters() {
        fixed(
            "val s = d.map { (a, _, c): Data ->\n    a\n}\n",
            "val s = d.map { (a, _, c)       ->\n    a\n}\n",
        );
        fixed(
            "val s = m.mapIndexed { (k, v): Map.Entry<K, V>, i: Int -> k }\n",
            "val s = m.mapIndexed { (k, v)                 , i: Int -> k }\n",
        );
        // Untyped, and a block starting with a parenthesised expression, stay.
        assert!(
            patch("val t = d.map { (a, b) -> a }\nfun f() { (a + b).let { g(it) } }\n").is_none()
        );
    }

    #[test]
    fn empty_collection_literals_in_annotations() {
        fixed(
            "@Constraint(validatedBy = [])\nannotation class M(val a: Array<String> = [])\n",
            "@Constraint(validatedBy = {})\nannotation class M(val a: Array<String> = {})\n",
        );
        assert!(patch("@Constraint(validatedBy = [A::class])\nval x = a[0]\n").is_none());
    }

    #[test]
    fn quotes_ending_a_raw_string() {
        fixed(
            "val s = \"\"\"a\"\"\"\"\"\nval t = \"\"\"x\"\"\"\"\nfun f() = 1\n",
            "val s = \"\"\"a''\"\"\"\nval t = \"\"\"x'\"\"\"\nfun f() = 1\n",
        );
    }
}
