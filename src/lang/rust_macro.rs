//! Macro bodies and attribute arguments.
//!
//! tree-sitter leaves a macro body as a flat token tree. Simple bodies (`println!("{}", x)`,
//! `#[derive(Debug)]`, `#[cfg(test)]`) are lowered straight from those tokens; everything else
//! is parsed with `proc-macro2` + `syn` and the resulting `syn::Expr`s are lowered to the
//! facts model with byte spans mapped back into the file.
//!
//! Safety valves: bodies over [`MAX_BODY`] bytes are skipped; a cheap estimate of how deep
//! syn would recurse ([`risk`]) decides whether syn runs inline, on a helper thread with a
//! big stack, or not at all. proc-macro2 keeps a thread-local source map for span locations;
//! it is cleared after every top-level macro so memory stays flat and 32-bit positions never
//! wrap.

use super::{Cx, clean_ty, decode_str, field, is_comment, join, kids, other};
use crate::facts::{
    Arg, Binding, Expr, ExprKind, FnKind, Function, LoopKind, MatchArm, Param, Span, Stmt,
};
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use std::str::FromStr;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use tree_sitter::Node;

/// Macro bodies larger than this are not parsed.
const MAX_BODY: usize = 64 * 1024;
/// Estimated syn recursion (see [`risk`]) up to which syn runs on the current stack.
const INLINE_RISK: u32 = 60;
/// Estimated syn recursion above which the body is skipped.
const HARD_RISK: u32 = 4000;
/// Stack for the helper thread that parses deeply nested bodies.
const BIG_STACK: usize = 64 << 20;

/// Macros whose first string literal argument is a format string (implicit captures).
fn is_format_macro(name: &str) -> bool {
    matches!(
        name,
        "format"
            | "write"
            | "writeln"
            | "print"
            | "println"
            | "eprint"
            | "eprintln"
            | "panic"
            | "anyhow"
            | "bail"
            | "ensure"
            | "format_args"
            | "info"
            | "warn"
            | "error"
            | "debug"
            | "trace"
            | "unreachable"
            | "todo"
            | "unimplemented"
    )
}

/// Clears proc-macro2's thread-local source map when dropped.
struct SpanReset;

impl Drop for SpanReset {
    fn drop(&mut self) {
        proc_macro2::extra::invalidate_current_thread_spans();
    }
}

/// What one syn run parses.
struct Job<'s> {
    inner: &'s str,
    base: usize,
    fmt: bool,
    json: bool,
    named: bool,
}

/// Conservative estimate of how deep syn's recursive descent goes on a token tree, in units
/// of roughly one prefix operator (about 4.5 KiB of stack in a debug build). Groups and
/// operators/keywords since the last `,` / `;` / `=>` add up along each path; `<` (generic
/// arguments) is the most expensive. Iterative; stops counting past [`HARD_RISK`].
fn risk(tt: Node) -> u32 {
    let mut cur = tt.walk();
    if !cur.goto_first_child() {
        return 0;
    }
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let (mut acc, mut run, mut max) = (0u32, 0u32, 0u32);
    loop {
        let n = cur.node();
        let mut descended = false;
        if matches!(n.kind(), "token_tree" | "token_repetition") {
            let w = if n.child(0).map(|c| c.kind()) == Some("{") {
                6
            } else {
                4
            };
            stack.push((acc, run));
            acc = acc.saturating_add(run).saturating_add(w);
            run = 0;
            max = max.max(acc);
            if max > HARD_RISK {
                return max;
            }
            if cur.goto_first_child() {
                descended = true;
            } else if let Some((a, r)) = stack.pop() {
                acc = a;
                run = r;
            }
        } else if !n.is_named() {
            match n.kind() {
                "," | ";" | "=>" => run = 0,
                "." | "::" | "(" | ")" | "[" | "]" | "{" | "}" | "#" | "'" | "$" => {}
                "<" => run += 13,
                "=" | "|" | "||" => run += 2,
                k if k.starts_with(|c: char| c.is_ascii_alphabetic()) => run += 2,
                _ => run += 1,
            }
            max = max.max(acc.saturating_add(run));
            if max > HARD_RISK {
                return max;
            }
        }
        if descended {
            continue;
        }
        loop {
            if cur.goto_next_sibling() {
                break;
            }
            if !cur.goto_parent() || cur.node().id() == tt.id() {
                return max;
            }
            if let Some((a, r)) = stack.pop() {
                acc = a;
                run = r;
            }
        }
    }
}

fn is_ident(s: &str) -> bool {
    let s = s.strip_prefix("r#").unwrap_or(s);
    let mut it = s.chars();
    match it.next() {
        Some(c) if c.is_alphabetic() || c == '_' => {}
        _ => return false,
    }
    s != "_" && it.all(|c| c.is_alphanumeric() || c == '_')
}

/// Names captured implicitly by a format string literal as written (`"{key}-{n:>w$}"` ->
/// `key`, `n`, `w`).
fn format_captures(lit: &str) -> Vec<String> {
    let t = lit.trim_start_matches(['b', 'c']);
    let raw = t.starts_with('r');
    let content: Vec<char> = if raw {
        decode_str(lit).chars().collect()
    } else {
        let b = t.strip_prefix('"').unwrap_or(t);
        b.strip_suffix('"').unwrap_or(b).chars().collect()
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if is_ident(s) && !out.iter().any(|x| x == s) {
            out.push(s.to_string());
        }
    };
    let len = content.len();
    let mut i = 0;
    while i < len {
        let c = content[i];
        if c == '\\' && !raw {
            i += 1;
            if i + 1 < len && content[i] == 'u' && content[i + 1] == '{' {
                while i < len && content[i] != '}' {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        if c == '{' {
            if i + 1 < len && content[i + 1] == '{' {
                i += 2;
                continue;
            }
            let mut j = i + 1;
            while j < len && content[j] != '}' {
                j += 1;
            }
            if j >= len {
                break;
            }
            let inner: String = content[i + 1..j].iter().collect();
            let (arg, spec) = inner.split_once(':').unwrap_or((inner.as_str(), ""));
            push(arg.trim());
            // `width$` / `.prec$` in the spec are captures too.
            let mut word = String::new();
            for ch in spec.chars() {
                if ch.is_alphanumeric() || ch == '_' {
                    word.push(ch);
                } else {
                    if ch == '$' {
                        push(&word);
                    }
                    word.clear();
                }
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

fn punct_char(t: &TokenTree) -> Option<(char, Spacing)> {
    match t {
        TokenTree::Punct(p) => Some((p.as_char(), p.spacing())),
        _ => None,
    }
}

/// Splits tokens at top-level `,` (and, when `all`, also `;` and `=>`; a `{ .. }` right
/// after `=>` is a piece of its own, as in `select!` / match-like arms without commas).
fn split_top(toks: &[TokenTree], all: bool) -> Vec<&[TokenTree]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut after_arrow = false;
    while i < toks.len() {
        let arrow_body = std::mem::take(&mut after_arrow);
        if let Some((c, sp)) = punct_char(&toks[i]) {
            let prev_joint = i > 0 && matches!(punct_char(&toks[i - 1]), Some((_, Spacing::Joint)));
            if c == ',' || (all && c == ';') {
                out.push(&toks[start..i]);
                start = i + 1;
            } else if all
                && c == '='
                && sp == Spacing::Joint
                && !prev_joint
                && toks.get(i + 1).and_then(punct_char).map(|x| x.0) == Some('>')
            {
                out.push(&toks[start..i]);
                start = i + 2;
                i += 1;
                after_arrow = true;
            }
        } else if let TokenTree::Group(g) = &toks[i]
            && arrow_body
            && g.delimiter() == Delimiter::Brace
        {
            out.push(&toks[start..=i]);
            start = i + 1;
        }
        i += 1;
    }
    out.push(&toks[start.min(toks.len())..]);
    out.retain(|p| !p.is_empty());
    out
}

/// Index of the first top-level stand-alone `c` (`:` not part of `::`, `=` not part of `==`,
/// `=>`, `<=` ..).
fn find_alone(toks: &[TokenTree], c: char) -> Option<usize> {
    (0..toks.len()).find(|&i| {
        let Some((ch, sp)) = punct_char(&toks[i]) else {
            return false;
        };
        let prev_joint = i > 0 && matches!(punct_char(&toks[i - 1]), Some((_, Spacing::Joint)));
        let next_punct = toks.get(i + 1).and_then(punct_char).is_some();
        ch == c && !prev_joint && !(sp == Spacing::Joint && next_punct)
    })
}

/// `a.b.c` as text if the tokens are a dotted chain of identifiers.
fn dotted(toks: &[TokenTree]) -> Option<String> {
    let mut s = String::new();
    for (i, t) in toks.iter().enumerate() {
        match (i % 2, t) {
            (0, TokenTree::Ident(id)) => s.push_str(&id.to_string()),
            (1, TokenTree::Punct(p)) if p.as_char() == '.' => s.push('.'),
            _ => return None,
        }
    }
    (!s.is_empty() && toks.len() % 2 == 1).then_some(s)
}

/// A key as written before `:` in `json!` objects and `key: value` pieces.
fn key_text(toks: &[TokenTree]) -> Option<String> {
    if let [TokenTree::Literal(l)] = toks {
        let t = l.to_string();
        return Some(if t.starts_with(['"', 'r']) {
            decode_str(&t)
        } else {
            t
        });
    }
    dotted(toks)
}

fn parse_expr(toks: &[TokenTree]) -> Option<syn::Expr> {
    if toks.is_empty() {
        return None;
    }
    syn::parse2::<syn::Expr>(toks.iter().cloned().collect()).ok()
}

fn strip_sigil(toks: &[TokenTree]) -> &[TokenTree] {
    match toks.first().and_then(punct_char) {
        Some(('%' | '?', _)) => &toks[1..],
        _ => toks,
    }
}

fn bin_op(op: &syn::BinOp) -> (&'static str, bool) {
    use syn::BinOp as B;
    match op {
        B::Add(_) => ("+", false),
        B::Sub(_) => ("-", false),
        B::Mul(_) => ("*", false),
        B::Div(_) => ("/", false),
        B::Rem(_) => ("%", false),
        B::And(_) => ("&&", false),
        B::Or(_) => ("||", false),
        B::BitXor(_) => ("^", false),
        B::BitAnd(_) => ("&", false),
        B::BitOr(_) => ("|", false),
        B::Shl(_) => ("<<", false),
        B::Shr(_) => (">>", false),
        B::Eq(_) => ("==", false),
        B::Lt(_) => ("<", false),
        B::Le(_) => ("<=", false),
        B::Ne(_) => ("!=", false),
        B::Ge(_) => (">=", false),
        B::Gt(_) => (">", false),
        B::AddAssign(_) => ("+=", true),
        B::SubAssign(_) => ("-=", true),
        B::MulAssign(_) => ("*=", true),
        B::DivAssign(_) => ("/=", true),
        B::RemAssign(_) => ("%=", true),
        B::BitXorAssign(_) => ("^=", true),
        B::BitAndAssign(_) => ("&=", true),
        B::BitOrAssign(_) => ("|=", true),
        B::ShlAssign(_) => ("<<=", true),
        B::ShrAssign(_) => (">>=", true),
        _ => ("?", false),
    }
}

fn member_name(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(i) => i.to_string(),
        syn::Member::Unnamed(ix) => ix.index.to_string(),
    }
}

fn member_span(m: &syn::Member) -> proc_macro2::Span {
    match m {
        syn::Member::Named(i) => i.span(),
        syn::Member::Unnamed(ix) => ix.span,
    }
}

/// `a::b::C` (no generics).
fn path_string(p: &syn::Path) -> String {
    let mut s = String::new();
    for (i, seg) in p.segments.iter().enumerate() {
        if i > 0 {
            s.push_str("::");
        }
        s.push_str(&seg.ident.to_string());
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Entry points from the tree-sitter side
// ---------------------------------------------------------------------------------------------

impl Cx<'_, '_> {
    /// `name!(..)` / `path::name! { .. }`.
    pub(super) fn macro_expr(&mut self, n: Node) -> Expr {
        let name = match field(n, "macro") {
            Some(m) if m.kind() == "scoped_identifier" => field(m, "name")
                .map(|x| self.text(x).to_string())
                .unwrap_or_default(),
            Some(m) => self.text(m).to_string(),
            None => String::new(),
        };
        let tt = kids(n).into_iter().find(|k| k.kind() == "token_tree");
        let args = match tt {
            Some(t) => self.token_tree_args(t, &name, false),
            None => Vec::new(),
        };
        Expr::new(
            super::span(n),
            ExprKind::Macro {
                name: name.into(),
                args,
            },
        )
    }

    /// Arguments of an attribute: `cfg(test)`, `serde(rename = "x")` (named), `tokio::main`.
    pub(super) fn attr_args(&mut self, tt: Node) -> Vec<Arg> {
        self.token_tree_args(tt, "", true)
    }

    fn token_tree_args(&mut self, tt: Node, name: &str, attr: bool) -> Vec<Arg> {
        let cnt = tt.child_count();
        let (Some(open), Some(close)) = (tt.child(0), tt.child(cnt.saturating_sub(1))) else {
            return Vec::new();
        };
        if cnt < 2
            || open.is_named()
            || close.is_named()
            || close.is_missing()
            || !matches!(close.kind(), ")" | "]" | "}")
        {
            return Vec::new();
        }
        let (start, end) = (open.end_byte(), close.start_byte());
        let Some(inner) = self.lw.src.get(start..end) else {
            return Vec::new();
        };
        if inner.len() > MAX_BODY || inner.trim().is_empty() || inner.starts_with('\u{feff}') {
            return Vec::new();
        }
        let fmt = !attr && is_format_macro(name);
        let json = !attr && name == "json";
        let named = attr || fmt;
        if !json && let Some(mut args) = self.fast_args(tt, named) {
            if fmt {
                self.add_captures(&mut args);
            }
            return args;
        }
        let r = risk(tt);
        if r > HARD_RISK {
            self.lw.too_deep = true;
            return Vec::new();
        }
        let job = Job {
            inner,
            base: start,
            fmt,
            json,
            named,
        };
        if r <= INLINE_RISK {
            return self.run_syn(&job, false);
        }
        // Deeply nested body: give syn a big stack of its own.
        std::thread::scope(|sc| {
            let this = &mut *self;
            let job = &job;
            match std::thread::Builder::new()
                .stack_size(BIG_STACK)
                .spawn_scoped(sc, move || this.run_syn(job, true))
            {
                Ok(h) => h.join().unwrap_or_default(),
                Err(_) => Vec::new(),
            }
        })
    }

    /// Parses one macro body with syn on the current thread. `own_thread`: this is the
    /// helper thread, whose stack starts here.
    fn run_syn(&mut self, job: &Job, own_thread: bool) -> Vec<Arg> {
        let _reset = SpanReset;
        let saved_base = self.stack_base;
        if own_thread {
            self.stack_base = super::stack_addr();
        }
        let Ok(ts) = TokenStream::from_str(job.inner) else {
            return Vec::new();
        };
        let saved = self.mbase;
        self.mbase = job.base;
        let mut args = if job.json {
            self.json_args(ts)
        } else {
            self.stream_args(ts, job.named)
        };
        if job.fmt {
            self.add_captures(&mut args);
        }
        self.mbase = saved;
        self.stack_base = saved_base;
        args
    }

    /// Bodies that are a comma list of literals, paths (`a::b`), field chains (`a.b`) and
    /// `name = <one of those>`, lowered straight from the tree-sitter tokens.
    fn fast_args(&mut self, tt: Node, named: bool) -> Option<Vec<Arg>> {
        let cnt = tt.child_count();
        let mut pieces: Vec<Vec<Node>> = vec![Vec::new()];
        for i in 1..cnt.saturating_sub(1) {
            let k = tt.child(i)?;
            if is_comment(k) {
                continue;
            }
            if !k.is_named() && k.kind() == "," {
                pieces.push(Vec::new());
            } else if let Some(p) = pieces.last_mut() {
                p.push(k);
            }
        }
        let mut out = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            if p.is_empty() {
                if i + 1 == pieces.len() && i > 0 {
                    continue;
                }
                return None;
            }
            out.push(self.fast_piece(p, named)?);
        }
        Some(out)
    }

    fn fast_piece(&mut self, p: &[Node], named: bool) -> Option<Arg> {
        if p.len() >= 3 && !p[1].is_named() && p[1].kind() == "=" && p[0].kind() == "identifier" {
            let value = self.fast_value(&p[2..])?;
            let name = self.text(p[0]).to_string();
            if named {
                return Some(Arg {
                    name: Some(name),
                    value,
                });
            }
            let target = Expr::new(super::span(p[0]), ExprKind::Name(name.into()));
            let sp = join(target.span, value.span);
            return Some(Arg {
                name: None,
                value: Expr::new(
                    sp,
                    ExprKind::Assign {
                        target: Box::new(target),
                        op: "=".into(),
                        value: Box::new(value),
                    },
                ),
            });
        }
        Some(Arg {
            name: None,
            value: self.fast_value(p)?,
        })
    }

    fn fast_value(&mut self, p: &[Node]) -> Option<Expr> {
        let first = *p.first()?;
        if p.len() == 1 {
            return match first.kind() {
                "string_literal" | "raw_string_literal" => Some(self.str_lit(first)),
                "char_literal" | "integer_literal" | "float_literal" | "boolean_literal" => {
                    Some(self.lit(first))
                }
                "identifier" | "self" | "super" | "crate" => Some(self.name(first)),
                _ => None,
            };
        }
        if p.len().is_multiple_of(2) {
            return None;
        }
        let sep = p[1].kind();
        if p[1].is_named() || !matches!(sep, "::" | ".") {
            return None;
        }
        let mut e: Option<Expr> = None;
        for (i, k) in p.iter().enumerate() {
            if i % 2 == 1 {
                if k.is_named() || k.kind() != sep {
                    return None;
                }
                continue;
            }
            if !matches!(k.kind(), "identifier" | "self" | "super" | "crate") {
                return None;
            }
            let name = self.text(*k).to_string();
            e = Some(match e {
                None => Expr::new(super::span(*k), ExprKind::Name(name.into())),
                Some(r) => Expr::new(
                    Span::new(first.start_byte(), k.end_byte()),
                    ExprKind::Field {
                        receiver: Box::new(r),
                        name: name.into(),
                    },
                ),
            });
        }
        e
    }

    /// Extra `Name` args for the implicit captures of the format string (the first unnamed
    /// string literal argument).
    fn add_captures(&mut self, args: &mut Vec<Arg>) {
        let Some(sp) = args
            .iter()
            .find(|a| a.name.is_none() && matches!(a.value.kind, ExprKind::Str(_)))
            .map(|a| a.value.span)
        else {
            return;
        };
        let Some(raw) = self.lw.src.get(sp.start..sp.end) else {
            return;
        };
        for name in format_captures(raw) {
            args.push(Arg {
                name: None,
                value: Expr::new(sp, ExprKind::Name(name.into())),
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Token streams
// ---------------------------------------------------------------------------------------------

impl Cx<'_, '_> {
    fn sp(&self, s: proc_macro2::Span) -> Span {
        let r = s.byte_range();
        Span::new(self.mbase + r.start, self.mbase + r.end)
    }

    /// Span of a token or other small syntax piece.
    fn tsp<T: Spanned>(&self, t: &T) -> Span {
        self.sp(t.span())
    }

    fn dsp(&self, d: &proc_macro2::extra::DelimSpan) -> Span {
        self.sp(d.join())
    }

    /// A comma list of expressions, or else the split-and-parse fallback.
    fn stream_args(&mut self, ts: TokenStream, named: bool) -> Vec<Arg> {
        match Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated.parse2(ts.clone()) {
            Ok(list) => list.iter().map(|e| self.syn_arg(e, named)).collect(),
            Err(_) => {
                let toks: Vec<TokenTree> = ts.into_iter().collect();
                let mut out = Vec::new();
                for piece in split_top(&toks, true) {
                    if let Some(a) = self.piece_arg(piece, named) {
                        out.push(a);
                    }
                }
                out
            }
        }
    }

    /// `name = value` becomes a named arg for attributes and format-like macros.
    fn syn_arg(&mut self, e: &syn::Expr, named: bool) -> Arg {
        if named && let syn::Expr::Assign(a) = e {
            let target = self.syn_expr(&a.left);
            let value = self.syn_expr(&a.right);
            if let Some(name) = target.path_text() {
                return Arg {
                    name: Some(name),
                    value,
                };
            }
            let sp = join(target.span, value.span);
            return Arg {
                name: None,
                value: Expr::new(
                    sp,
                    ExprKind::Assign {
                        target: Box::new(target),
                        op: "=".into(),
                        value: Box::new(value),
                    },
                ),
            };
        }
        Arg {
            name: None,
            value: self.syn_expr(e),
        }
    }

    /// One piece of a body that is not a comma list of expressions.
    fn piece_arg(&mut self, p: &[TokenTree], named: bool) -> Option<Arg> {
        if let Some(e) = parse_expr(p) {
            return Some(self.syn_arg(&e, named));
        }
        // tracing: `%value`, `?value`
        let stripped = strip_sigil(p);
        if stripped.len() != p.len()
            && let Some(e) = parse_expr(stripped)
        {
            return Some(Arg {
                name: None,
                value: self.syn_expr(&e),
            });
        }
        let colon = find_alone(p, ':');
        let eq = find_alone(p, '=');
        let (key, value) = match (colon, eq) {
            (Some(c), e) if e.is_none_or(|e| c < e) && key_text(&p[..c]).is_some() => {
                (key_text(&p[..c]), &p[c + 1..])
            }
            (c, Some(e)) => {
                let lhs = &p[..e];
                let key = dotted(lhs).or_else(|| {
                    let upto = c.filter(|c| *c < e).unwrap_or(e);
                    lhs[..upto].iter().rev().find_map(|t| match t {
                        TokenTree::Ident(i) => Some(i.to_string()),
                        _ => None,
                    })
                });
                (key, &p[e + 1..])
            }
            _ => return None,
        };
        let e = parse_expr(strip_sigil(value))?;
        Some(Arg {
            name: key,
            value: self.syn_expr(&e),
        })
    }

    /// `json!` body: an object gives one named arg per key, an array one arg per element.
    fn json_args(&mut self, ts: TokenStream) -> Vec<Arg> {
        let toks: Vec<TokenTree> = ts.into_iter().collect();
        if let [TokenTree::Group(g)] = toks.as_slice()
            && matches!(g.delimiter(), Delimiter::Brace | Delimiter::Bracket)
        {
            return self.json_group(g);
        }
        match self.json_value(&toks) {
            Some(v) => vec![Arg {
                name: None,
                value: v,
            }],
            None => Vec::new(),
        }
    }

    fn json_group(&mut self, g: &proc_macro2::Group) -> Vec<Arg> {
        if !self.enter() {
            return Vec::new();
        }
        let toks: Vec<TokenTree> = g.stream().into_iter().collect();
        let object = g.delimiter() == Delimiter::Brace;
        let mut out = Vec::new();
        for piece in split_top(&toks, false) {
            if object {
                let Some(c) = find_alone(piece, ':') else {
                    continue;
                };
                let key = key_text(&piece[..c]).unwrap_or_else(|| {
                    piece[..c]
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join("")
                });
                if let Some(v) = self.json_value(&piece[c + 1..]) {
                    out.push(Arg {
                        name: Some(key),
                        value: v,
                    });
                }
            } else if let Some(v) = self.json_value(piece) {
                out.push(Arg {
                    name: None,
                    value: v,
                });
            }
        }
        self.leave();
        out
    }

    fn json_value(&mut self, toks: &[TokenTree]) -> Option<Expr> {
        if let [TokenTree::Group(g)] = toks
            && matches!(g.delimiter(), Delimiter::Brace | Delimiter::Bracket)
        {
            let sp = self.sp(g.span());
            let args = self.json_group(g);
            return Some(Expr::new(
                sp,
                ExprKind::Macro {
                    name: "json".into(),
                    args,
                },
            ));
        }
        let e = parse_expr(toks)?;
        Some(self.syn_expr(&e))
    }

    /// A macro nested inside a parsed body (its tokens are already lexed).
    fn syn_macro(&mut self, m: &syn::Macro) -> Expr {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        let dspan = match &m.delimiter {
            syn::MacroDelimiter::Paren(p) => self.dsp(&p.span),
            syn::MacroDelimiter::Brace(b) => self.dsp(&b.span),
            syn::MacroDelimiter::Bracket(b) => self.dsp(&b.span),
        };
        let sp = join(self.path_span(&m.path), dspan);
        if !self.enter() {
            return other(sp);
        }
        let fmt = is_format_macro(&name);
        let mut args = if name == "json" {
            self.json_args(m.tokens.clone())
        } else {
            self.stream_args(m.tokens.clone(), fmt)
        };
        if fmt {
            self.add_captures(&mut args);
        }
        self.leave();
        Expr::new(
            sp,
            ExprKind::Macro {
                name: name.into(),
                args,
            },
        )
    }
}

// ---------------------------------------------------------------------------------------------
// syn -> facts
// ---------------------------------------------------------------------------------------------

impl Cx<'_, '_> {
    fn syn_expr(&mut self, e: &syn::Expr) -> Expr {
        if !self.enter() {
            return other(Span::new(self.mbase, self.mbase));
        }
        let r = self.syn_expr_inner(e);
        self.leave();
        r
    }

    /// Dispatch only: picks a helper, then makes one call (small recursive frame).
    fn syn_expr_inner(&mut self, e: &syn::Expr) -> Expr {
        use syn::Expr as E;
        match e {
            E::Lit(_) => self.syn_lit_expr(e),
            E::Path(_) => self.syn_path_expr(e),
            E::Call(_) => self.syn_call(e),
            E::MethodCall(_) => self.syn_method_call(e),
            E::Field(_) => self.syn_field(e),
            E::Binary(_) => self.syn_binary(e),
            E::Unary(_) | E::Reference(_) | E::RawAddr(_) | E::Try(_) => self.syn_unary(e),
            E::Await(_) => self.syn_await(e),
            E::Cast(_) => self.syn_cast(e),
            E::Index(_) => self.syn_index(e),
            E::Paren(_) | E::Group(_) | E::Let(_) => self.syn_inner_expr(e),
            E::Tuple(_) | E::Array(_) | E::Repeat(_) | E::Yield(_) => self.syn_list(e),
            E::Closure(_) => self.syn_closure(e),
            E::Async(_) | E::Block(_) | E::Unsafe(_) | E::Const(_) | E::TryBlock(_) => {
                self.syn_block_expr(e)
            }
            E::If(_) => self.syn_if(e),
            E::Match(_) => self.syn_match(e),
            E::Loop(_) | E::While(_) | E::ForLoop(_) => self.syn_loop(e),
            E::Assign(_) => self.syn_assign(e),
            E::Range(_) => self.syn_range(e),
            E::Return(_) | E::Break(_) | E::Continue(_) => self.syn_jump(e),
            E::Struct(_) => self.syn_struct(e),
            E::Macro(_) => self.syn_macro_expr(e),
            E::Infer(_) => self.syn_infer(e),
            _ => self.syn_unknown(e),
        }
    }

    fn syn_unknown(&mut self, e: &syn::Expr) -> Expr {
        other(self.tsp(e))
    }

    fn syn_lit_expr(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Lit(l) => self.syn_lit(&l.lit),
            _ => self.syn_unknown(e),
        }
    }

    fn syn_path_expr(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Path(p) => self.syn_path(&p.path, p.path.segments.len()),
            _ => self.syn_unknown(e),
        }
    }

    fn syn_inner_expr(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Paren(p) => self.syn_expr(&p.expr),
            syn::Expr::Group(g) => self.syn_expr(&g.expr),
            syn::Expr::Let(l) => self.syn_expr(&l.expr),
            _ => self.syn_unknown(e),
        }
    }

    fn syn_macro_expr(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Macro(m) => self.syn_macro(&m.mac),
            _ => self.syn_unknown(e),
        }
    }

    fn syn_infer(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Infer(i) => {
                Expr::new(self.tsp(&i.underscore_token), ExprKind::Name("_".into()))
            }
            _ => self.syn_unknown(e),
        }
    }

    fn syn_lit(&mut self, l: &syn::Lit) -> Expr {
        let sp = self.sp(l.span());
        let mut text = self
            .lw
            .src
            .get(sp.start..sp.end)
            .unwrap_or_default()
            .to_string();
        if text.is_empty() {
            text = l.to_token_stream().to_string();
        }
        let kind = match l {
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
                ExprKind::Str(decode_str(&text).into())
            }
            syn::Lit::Bool(b) => ExprKind::Lit(b.value.to_string().into()),
            _ => ExprKind::Lit(text.into()),
        };
        Expr::new(sp, kind)
    }

    fn path_span(&self, p: &syn::Path) -> Span {
        let first = p
            .leading_colon
            .as_ref()
            .map(|c| self.tsp(c))
            .or_else(|| p.segments.first().map(|s| self.sp(s.ident.span())));
        let last = p.segments.last().map(|s| self.sp(s.ident.span()));
        match (first, last) {
            (Some(a), Some(b)) => join(a, b),
            (Some(a), None) | (None, Some(a)) => a,
            _ => Span::new(self.mbase, self.mbase),
        }
    }

    /// The first `upto` segments of a path as a Name / Field chain (iterative).
    fn syn_path(&mut self, p: &syn::Path, upto: usize) -> Expr {
        let mut e: Option<Expr> = None;
        let mut start: Option<usize> = None;
        for seg in p.segments.iter().take(upto) {
            let sp = self.sp(seg.ident.span());
            let st = *start.get_or_insert(sp.start);
            let name = seg.ident.to_string();
            e = Some(match e {
                None => Expr::new(sp, ExprKind::Name(name.into())),
                Some(r) => Expr::new(
                    Span::new(st, sp.end),
                    ExprKind::Field {
                        receiver: Box::new(r),
                        name: name.into(),
                    },
                ),
            });
        }
        e.unwrap_or_else(|| other(self.path_span(p)))
    }

    fn syn_args<'e>(&mut self, it: impl Iterator<Item = &'e syn::Expr>) -> Vec<Arg> {
        it.map(|a| Arg {
            name: None,
            value: self.syn_expr(a),
        })
        .collect()
    }

    fn syn_call(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Call(c) = e else {
            return self.syn_unknown(e);
        };
        let close = self.dsp(&c.paren_token.span);
        let (receiver, name, start) = match &*c.func {
            syn::Expr::Path(p) if !p.path.segments.is_empty() => {
                let n = p.path.segments.len();
                let name = p
                    .path
                    .segments
                    .last()
                    .map(|s| s.ident.to_string())
                    .unwrap_or_default();
                let recv = (n > 1).then(|| Box::new(self.syn_path(&p.path, n - 1)));
                (recv, name, self.path_span(&p.path))
            }
            f => {
                let r = self.syn_expr(f);
                let sp = r.span;
                (Some(Box::new(r)), String::new(), sp)
            }
        };
        let args = self.syn_args(c.args.iter());
        Expr::new(
            join(start, close),
            ExprKind::Call {
                receiver,
                name: name.into(),
                args,
            },
        )
    }

    fn syn_method_call(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::MethodCall(m) = e else {
            return self.syn_unknown(e);
        };
        let recv = self.syn_expr(&m.receiver);
        let sp = join(recv.span, self.dsp(&m.paren_token.span));
        let args = self.syn_args(m.args.iter());
        Expr::new(
            sp,
            ExprKind::Call {
                receiver: Some(Box::new(recv)),
                name: m.method.to_string().into(),
                args,
            },
        )
    }

    fn syn_field(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Field(f) = e else {
            return self.syn_unknown(e);
        };
        let base = self.syn_expr(&f.base);
        let sp = join(base.span, self.sp(member_span(&f.member)));
        Expr::new(
            sp,
            ExprKind::Field {
                receiver: Box::new(base),
                name: member_name(&f.member).into(),
            },
        )
    }

    fn syn_binary(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Binary(b) = e else {
            return self.syn_unknown(e);
        };
        let (op, assign) = bin_op(&b.op);
        let l = self.syn_expr(&b.left);
        let r = self.syn_expr(&b.right);
        let sp = join(l.span, r.span);
        let kind = if assign {
            ExprKind::Assign {
                target: Box::new(l),
                op: op.into(),
                value: Box::new(r),
            }
        } else {
            ExprKind::Binary {
                op: op.into(),
                lhs: Box::new(l),
                rhs: Box::new(r),
            }
        };
        Expr::new(sp, kind)
    }

    fn syn_unary(&mut self, e: &syn::Expr) -> Expr {
        let (op, op_span, inner) = match e {
            syn::Expr::Unary(u) => {
                let (op, s) = match &u.op {
                    syn::UnOp::Deref(t) => ("*", Some(self.tsp(t))),
                    syn::UnOp::Not(t) => ("!", Some(self.tsp(t))),
                    syn::UnOp::Neg(t) => ("-", Some(self.tsp(t))),
                    _ => ("?", None),
                };
                (op, s, &*u.expr)
            }
            syn::Expr::Reference(r) => ("&", Some(self.tsp(&r.and_token)), &*r.expr),
            syn::Expr::RawAddr(r) => ("&raw", Some(self.tsp(&r.and_token)), &*r.expr),
            syn::Expr::Try(t) => ("?", Some(self.tsp(&t.question_token)), &*t.expr),
            _ => return other(self.tsp(e)),
        };
        let operand = self.syn_expr(inner);
        let sp = op_span
            .map(|s| join(s, operand.span))
            .unwrap_or(operand.span);
        Expr::new(
            sp,
            ExprKind::Unary {
                op: op.into(),
                operand: Box::new(operand),
            },
        )
    }

    fn syn_await(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Await(a) = e else {
            return self.syn_unknown(e);
        };
        let base = self.syn_expr(&a.base);
        let sp = join(base.span, self.tsp(&a.await_token));
        Expr::new(sp, ExprKind::Await(Box::new(base)))
    }

    /// A type as written (cleaned) and its span.
    fn syn_ty(&self, ty: &syn::Type) -> (String, Span) {
        let sp = self.tsp(ty);
        let text = match self.lw.src.get(sp.start..sp.end) {
            Some(t) if !t.is_empty() => t.to_string(),
            _ => ty.to_token_stream().to_string(),
        };
        (clean_ty(&text), sp)
    }

    fn syn_cast(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Cast(c) = e else {
            return self.syn_unknown(e);
        };
        let inner = self.syn_expr(&c.expr);
        let (ty, tsp) = self.syn_ty(&c.ty);
        Expr::new(
            join(inner.span, tsp),
            ExprKind::Cast {
                expr: Box::new(inner),
                ty: ty.into(),
            },
        )
    }

    fn syn_index(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Index(i) = e else {
            return self.syn_unknown(e);
        };
        let recv = self.syn_expr(&i.expr);
        let idx = self.syn_expr(&i.index);
        let sp = join(recv.span, self.dsp(&i.bracket_token.span));
        Expr::new(
            sp,
            ExprKind::Index {
                receiver: Box::new(recv),
                index: Box::new(idx),
            },
        )
    }

    fn syn_list(&mut self, e: &syn::Expr) -> Expr {
        let (sp, parts): (Span, Vec<&syn::Expr>) = match e {
            syn::Expr::Tuple(t) => (self.dsp(&t.paren_token.span), t.elems.iter().collect()),
            syn::Expr::Array(a) => (self.dsp(&a.bracket_token.span), a.elems.iter().collect()),
            syn::Expr::Repeat(r) => (self.dsp(&r.bracket_token.span), vec![&*r.expr, &*r.len]),
            syn::Expr::Yield(y) => (
                self.tsp(&y.yield_token),
                y.expr.as_deref().into_iter().collect(),
            ),
            _ => (self.tsp(e), Vec::new()),
        };
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            out.push(self.syn_expr(p));
        }
        let sp = out.iter().fold(sp, |a, x| join(a, x.span));
        Expr::new(sp, ExprKind::Other(out))
    }

    fn syn_closure(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Closure(c) = e else {
            return self.syn_unknown(e);
        };
        let mut modifiers = Vec::new();
        let mut start = self.tsp(&c.or1_token);
        if let Some(t) = &c.constness {
            modifiers.push("const".to_string());
            start = join(start, self.tsp(t));
        }
        if let Some(t) = &c.movability {
            modifiers.push("static".to_string());
            start = join(start, self.tsp(t));
        }
        if let Some(t) = &c.asyncness {
            modifiers.push("async".to_string());
            start = join(start, self.tsp(t));
        }
        if let Some(t) = &c.capture {
            modifiers.push("move".to_string());
            start = join(start, self.tsp(t));
        }
        let mut params = Vec::new();
        for pat in &c.inputs {
            let psp = self.tsp(pat);
            let names = self.syn_pat_names(pat);
            if names.is_empty() {
                params.push(Param {
                    name: "_".to_string(),
                    ty: None,
                    annotations: Vec::new(),
                    span: psp,
                    default: None,
                });
            }
            for (name, _, _, ty) in names {
                params.push(Param {
                    name,
                    ty,
                    annotations: Vec::new(),
                    span: psp,
                    default: None,
                });
            }
        }
        let return_type = match &c.output {
            syn::ReturnType::Type(_, t) => Some(self.syn_ty(t).0),
            syn::ReturnType::Default => None,
        };
        let name_span = join(self.tsp(&c.or1_token), self.tsp(&c.or2_token));
        let id = self.lw.add_fn(Function {
            name: None,
            kind: FnKind::Lambda,
            params,
            annotations: Vec::new(),
            modifiers,
            return_type,
            owner: None,
            parent: self.cur_fn(),
            body: Vec::new(),
            has_body: true,
            span: start,
            name_span,
        });
        self.fn_stack.push(id);
        let (body, bsp) = match &*c.body {
            syn::Expr::Block(b) if b.label.is_none() => (
                self.syn_stmts(&b.block.stmts),
                self.dsp(&b.block.brace_token.span),
            ),
            other_body => {
                let e = self.syn_expr(other_body);
                let sp = e.span;
                (vec![Stmt::Expr(e)], sp)
            }
        };
        self.fn_stack.pop();
        let sp = join(start, bsp);
        if let Some(f) = self.lw.facts.functions.get_mut(id) {
            f.body = body;
            f.span = sp;
        }
        Expr::new(sp, ExprKind::Lambda(id))
    }

    fn syn_block_expr(&mut self, e: &syn::Expr) -> Expr {
        let (first, block) = match e {
            syn::Expr::Async(a) => (Some(self.tsp(&a.async_token)), &a.block),
            syn::Expr::Block(b) => (b.label.as_ref().map(|l| self.tsp(l)), &b.block),
            syn::Expr::Unsafe(u) => (Some(self.tsp(&u.unsafe_token)), &u.block),
            syn::Expr::Const(c) => (Some(self.tsp(&c.const_token)), &c.block),
            syn::Expr::TryBlock(t) => (Some(self.tsp(&t.try_token)), &t.block),
            _ => return other(self.tsp(e)),
        };
        let bsp = self.dsp(&block.brace_token.span);
        let sp = first.map(|f| join(f, bsp)).unwrap_or(bsp);
        let stmts = self.syn_stmts(&block.stmts);
        Expr::new(sp, ExprKind::Block(stmts))
    }

    fn syn_if(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::If(i) = e else {
            return self.syn_unknown(e);
        };
        let cond = self.syn_expr(&i.cond);
        let tsp = self.dsp(&i.then_branch.brace_token.span);
        let then = Expr::new(tsp, ExprKind::Block(self.syn_stmts(&i.then_branch.stmts)));
        let els = i
            .else_branch
            .as_ref()
            .map(|(_, e)| Box::new(self.syn_expr(e)));
        let end = els.as_ref().map(|e| e.span).unwrap_or(tsp);
        let sp = join(self.tsp(&i.if_token), end);
        Expr::new(
            sp,
            ExprKind::If {
                cond: Box::new(cond),
                then: Box::new(then),
                els,
            },
        )
    }

    fn syn_match(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Match(m) = e else {
            return self.syn_unknown(e);
        };
        let subject = self.syn_expr(&m.expr);
        let mut arms = Vec::new();
        for arm in &m.arms {
            let psp = self.tsp(&arm.pat);
            let guard = arm.guard.as_ref().map(|(_, g)| self.syn_expr(g));
            let text_span = guard.as_ref().map(|g| join(psp, g.span)).unwrap_or(psp);
            let pattern_text = self
                .lw
                .src
                .get(text_span.start..text_span.end)
                .unwrap_or_default()
                .to_string();
            let alts: Vec<&syn::Pat> = match &arm.pat {
                syn::Pat::Or(o) => o.cases.iter().collect(),
                p => vec![p],
            };
            let mut patterns = Vec::new();
            for a in alts {
                let asp = self.tsp(a);
                let pe = match a {
                    syn::Pat::Wild(_) => continue,
                    syn::Pat::Lit(l) => self.syn_lit(&l.lit),
                    syn::Pat::Path(p) => self.syn_path(&p.path, p.path.segments.len()),
                    _ => {
                        let names = self
                            .syn_pat_names(a)
                            .into_iter()
                            .map(|(n, s, _, _)| Expr::new(s, ExprKind::Name(n.into())))
                            .collect();
                        Expr::new(asp, ExprKind::Other(names))
                    }
                };
                patterns.push(pe);
            }
            let body = self.syn_expr(&arm.body);
            arms.push(MatchArm {
                patterns,
                pattern_text,
                guard,
                body,
            });
        }
        let sp = join(self.tsp(&m.match_token), self.dsp(&m.brace_token.span));
        Expr::new(
            sp,
            ExprKind::Match {
                subject: Some(Box::new(subject)),
                arms,
            },
        )
    }

    fn syn_loop(&mut self, e: &syn::Expr) -> Expr {
        let (label, kw, block, kind) = match e {
            syn::Expr::Loop(l) => (&l.label, self.tsp(&l.loop_token), &l.body, LoopKind::Loop),
            syn::Expr::While(w) => (&w.label, self.tsp(&w.while_token), &w.body, LoopKind::While),
            syn::Expr::ForLoop(f) => (&f.label, self.tsp(&f.for_token), &f.body, LoopKind::ForEach),
            _ => return other(self.tsp(e)),
        };
        let mut vars = Vec::new();
        let mut header = Vec::new();
        match e {
            syn::Expr::While(w) => {
                if let syn::Expr::Let(l) = &*w.cond {
                    vars.extend(self.syn_pat_names(&l.pat).into_iter().map(|x| x.0));
                }
                header.push(self.syn_expr(&w.cond));
            }
            syn::Expr::ForLoop(f) => {
                vars.extend(self.syn_pat_names(&f.pat).into_iter().map(|x| x.0));
                header.push(self.syn_expr(&f.expr));
            }
            _ => {}
        }
        let bsp = self.dsp(&block.brace_token.span);
        let body = Expr::new(bsp, ExprKind::Block(self.syn_stmts(&block.stmts)));
        let start = label.as_ref().map(|l| self.tsp(l)).unwrap_or(kw);
        Expr::new(
            join(start, bsp),
            ExprKind::Loop {
                kind,
                vars: vars.into(),
                header: header.into(),
                body: Box::new(body),
                label: label.as_ref().map(|l| l.name.ident.to_string().into()),
            },
        )
    }

    fn syn_assign(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Assign(a) = e else {
            return self.syn_unknown(e);
        };
        let t = self.syn_expr(&a.left);
        let v = self.syn_expr(&a.right);
        Expr::new(
            join(t.span, v.span),
            ExprKind::Assign {
                target: Box::new(t),
                op: "=".into(),
                value: Box::new(v),
            },
        )
    }

    fn syn_range(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Range(r) = e else {
            return self.syn_unknown(e);
        };
        let (op, lsp) = match &r.limits {
            syn::RangeLimits::HalfOpen(t) => ("..", self.tsp(t)),
            syn::RangeLimits::Closed(t) => ("..=", self.tsp(t)),
        };
        let s = r.start.as_ref().map(|x| self.syn_expr(x));
        let e = r.end.as_ref().map(|x| self.syn_expr(x));
        let sp = [&s, &e]
            .into_iter()
            .flatten()
            .fold(lsp, |a, x| join(a, x.span));
        match (s, e) {
            (Some(l), Some(rh)) => Expr::new(
                sp,
                ExprKind::Binary {
                    op: op.into(),
                    lhs: Box::new(l),
                    rhs: Box::new(rh),
                },
            ),
            (l, rh) => Expr::new(sp, ExprKind::Other(l.into_iter().chain(rh).collect())),
        }
    }

    fn syn_jump(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Return(r) => {
                let v = r.expr.as_ref().map(|x| Box::new(self.syn_expr(x)));
                let kw = self.tsp(&r.return_token);
                let sp = v.as_ref().map(|x| join(kw, x.span)).unwrap_or(kw);
                Expr::new(sp, ExprKind::Return(v))
            }
            syn::Expr::Break(b) => {
                let kw = self.tsp(&b.break_token);
                let label = b.label.as_ref().map(|l| l.ident.to_string());
                let lsp = b
                    .label
                    .as_ref()
                    .map(|l| join(kw, self.tsp(l)))
                    .unwrap_or(kw);
                let brk = Expr::new(lsp, ExprKind::Break(label));
                match &b.expr {
                    None => brk,
                    Some(v) => {
                        let v = self.syn_expr(v);
                        Expr::new(join(lsp, v.span), ExprKind::Other(vec![brk, v]))
                    }
                }
            }
            syn::Expr::Continue(c) => {
                let kw = self.tsp(&c.continue_token);
                let sp = c
                    .label
                    .as_ref()
                    .map(|l| join(kw, self.tsp(l)))
                    .unwrap_or(kw);
                Expr::new(
                    sp,
                    ExprKind::Continue(c.label.as_ref().map(|l| l.ident.to_string())),
                )
            }
            _ => other(self.tsp(e)),
        }
    }

    fn syn_struct(&mut self, e: &syn::Expr) -> Expr {
        let syn::Expr::Struct(s) = e else {
            return self.syn_unknown(e);
        };
        let mut args = Vec::new();
        for fv in &s.fields {
            let value = self.syn_expr(&fv.expr);
            args.push(Arg {
                name: Some(member_name(&fv.member)),
                value,
            });
        }
        if let Some(rest) = &s.rest {
            let value = self.syn_expr(rest);
            args.push(Arg { name: None, value });
        }
        let sp = join(self.path_span(&s.path), self.dsp(&s.brace_token.span));
        Expr::new(
            sp,
            ExprKind::New {
                ty: path_string(&s.path).into(),
                args,
                body: None,
            },
        )
    }

    /// Bound names of a syn pattern: (name, span, mutable, type) — iterative.
    fn syn_pat_names(&self, pat: &syn::Pat) -> Vec<(String, Span, bool, Option<String>)> {
        let mut out: Vec<(String, Span, bool, Option<String>)> = Vec::new();
        let mut stack: Vec<(&syn::Pat, Option<String>)> = vec![(pat, None)];
        while let Some((p, ty)) = stack.pop() {
            use syn::Pat as P;
            match p {
                P::Ident(pi) => {
                    let n = pi.ident.to_string();
                    if !out.iter().any(|x| x.0 == n) {
                        out.push((n, self.sp(pi.ident.span()), pi.mutability.is_some(), ty));
                    }
                    if let Some((_, sub)) = &pi.subpat {
                        stack.push((sub, None));
                    }
                }
                P::Type(pt) => {
                    let t = self.syn_ty(&pt.ty).0;
                    stack.push((&pt.pat, Some(t)));
                }
                P::Tuple(t) => stack.extend(t.elems.iter().rev().map(|x| (x, None))),
                P::TupleStruct(t) => stack.extend(t.elems.iter().rev().map(|x| (x, None))),
                P::Struct(s) => stack.extend(s.fields.iter().rev().map(|f| (&*f.pat, None))),
                P::Slice(s) => stack.extend(s.elems.iter().rev().map(|x| (x, None))),
                P::Or(o) => stack.extend(o.cases.iter().rev().map(|x| (x, None))),
                P::Reference(r) => stack.push((&r.pat, None)),
                P::Paren(pp) => stack.push((&pp.pat, ty)),
                _ => {}
            }
        }
        out
    }

    fn syn_stmts(&mut self, stmts: &[syn::Stmt]) -> Vec<Stmt> {
        if !self.enter() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for s in stmts {
            match s {
                syn::Stmt::Local(l) => self.syn_local(l, &mut out),
                syn::Stmt::Expr(e, _) => {
                    let e = self.syn_expr(e);
                    out.push(Stmt::Expr(e));
                }
                syn::Stmt::Macro(m) => {
                    let e = self.syn_macro(&m.mac);
                    out.push(Stmt::Expr(e));
                }
                syn::Stmt::Item(item) => self.syn_item(item, &mut out),
            }
        }
        self.leave();
        out
    }

    fn syn_local(&mut self, l: &syn::Local, out: &mut Vec<Stmt>) {
        let sp = join(self.tsp(&l.let_token), self.tsp(&l.semi_token));
        let init = l.init.as_ref().map(|i| {
            let v = self.syn_expr(&i.expr);
            match &i.diverge {
                None => v,
                Some((_, d)) => {
                    let el = self.syn_expr(d);
                    Expr::new(join(v.span, el.span), ExprKind::Other(vec![v, el]))
                }
            }
        });
        let mut names = self.syn_pat_names(&l.pat);
        if names.is_empty() {
            names.push(("_".to_string(), self.tsp(&l.pat), false, None));
        }
        for (name, name_span, mutable, ty) in names {
            out.push(Stmt::Let(Box::new(Binding {
                name,
                ty,
                init: init.clone(),
                annotations: Vec::new(),
                modifiers: if mutable {
                    vec!["mut".to_string()]
                } else {
                    Vec::new()
                },
                mutable,
                span: sp,
                name_span,
            })));
        }
    }

    fn syn_item(&mut self, item: &syn::Item, out: &mut Vec<Stmt>) {
        match item {
            syn::Item::Fn(f) => {
                let id = self.syn_fn(f);
                out.push(Stmt::LocalFn(id));
            }
            syn::Item::Const(c) => {
                let init = self.syn_expr(&c.expr);
                out.push(Stmt::Let(Box::new(Binding {
                    name: c.ident.to_string(),
                    ty: Some(self.syn_ty(&c.ty).0),
                    init: Some(init),
                    annotations: Vec::new(),
                    modifiers: vec!["const".to_string()],
                    mutable: false,
                    span: join(self.tsp(&c.const_token), self.tsp(&c.semi_token)),
                    name_span: self.sp(c.ident.span()),
                })));
            }
            syn::Item::Static(s) => {
                let init = self.syn_expr(&s.expr);
                let mutable = matches!(s.mutability, syn::StaticMutability::Mut(_));
                out.push(Stmt::Let(Box::new(Binding {
                    name: s.ident.to_string(),
                    ty: Some(self.syn_ty(&s.ty).0),
                    init: Some(init),
                    annotations: Vec::new(),
                    modifiers: vec!["static".to_string()],
                    mutable,
                    span: join(self.tsp(&s.static_token), self.tsp(&s.semi_token)),
                    name_span: self.sp(s.ident.span()),
                })));
            }
            syn::Item::Macro(m) => {
                let e = self.syn_macro(&m.mac);
                out.push(Stmt::Expr(e));
            }
            _ => {}
        }
    }

    fn syn_fn(&mut self, f: &syn::ItemFn) -> usize {
        let mut modifiers = Vec::new();
        if !matches!(f.vis, syn::Visibility::Inherited) {
            modifiers.push("pub".to_string());
        }
        let sig = &f.sig;
        for (present, m) in [
            (sig.constness.is_some(), "const"),
            (sig.asyncness.is_some(), "async"),
            (sig.unsafety.is_some(), "unsafe"),
            (sig.abi.is_some(), "extern"),
        ] {
            if present {
                modifiers.push(m.to_string());
            }
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => params.push(Param {
                    name: "self".to_string(),
                    ty: None,
                    annotations: Vec::new(),
                    span: self.tsp(&r.self_token),
                    default: None,
                }),
                syn::FnArg::Typed(pt) => {
                    let ty = self.syn_ty(&pt.ty).0;
                    let psp = self.tsp(&pt.colon_token);
                    for (name, nsp, _, _) in self.syn_pat_names(&pt.pat) {
                        params.push(Param {
                            name,
                            ty: Some(ty.clone()),
                            annotations: Vec::new(),
                            span: join(nsp, psp),
                            default: None,
                        });
                    }
                }
            }
        }
        let return_type = match &sig.output {
            syn::ReturnType::Type(_, t) => Some(self.syn_ty(t).0),
            syn::ReturnType::Default => None,
        };
        let name_span = self.sp(sig.ident.span());
        let sp = join(self.tsp(&sig.fn_token), self.dsp(&f.block.brace_token.span));
        let id = self.lw.add_fn(Function {
            name: Some(sig.ident.to_string()),
            kind: FnKind::Function,
            params,
            annotations: Vec::new(),
            modifiers,
            return_type,
            owner: None,
            parent: self.cur_fn(),
            body: Vec::new(),
            has_body: true,
            span: sp,
            name_span,
        });
        self.fn_stack.push(id);
        let body = self.syn_stmts(&f.block.stmts);
        self.fn_stack.pop();
        if let Some(func) = self.lw.facts.functions.get_mut(id) {
            func.body = body;
        }
        id
    }
}
