//! Rust front end: lowers a tree-sitter-rust tree into the language-neutral facts model.
//!
//! Items (modules, impls, traits, structs, enums, functions, consts) become [`TypeDecl`]s,
//! [`Function`]s and globals; statements and expressions become [`Stmt`] / [`Expr`]. Macro
//! bodies (which tree-sitter leaves as token trees) are parsed with `syn` in
//! [`rust_macro`] so the values inside `format!`, `json!`, `tokio::select!` .. are seen.

use super::syntax::{Lowerer, clean_type, span};
use crate::facts::{
    Annotation, Arg, Binding, Expr, ExprKind, FnId, FnKind, Function, LoopKind, MatchArm, Param,
    Span, Stmt, Text, TypeDecl, TypeId, TypeKind,
};
use tree_sitter::Node;

#[path = "rust_macro.rs"]
mod rust_macro;

/// Lowers one Rust source file.
pub fn lower(lw: &mut Lowerer, root: Node) {
    let mut cx = Cx {
        lw,
        fn_stack: Vec::new(),
        mbase: 0,
        stack_base: stack_addr(),
    };
    let mut inner = Vec::new();
    let stmts = cx.lower_children(root, Scope::Module, Some(&mut inner));
    cx.lw.facts.top_level.extend(stmts);
    if inner.iter().any(is_test_attr) {
        cx.lw.facts.test_regions.push(span(root));
    }
}

/// Where a list of items / statements stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scope {
    /// File level or inside a `mod { .. }`.
    Module,
    /// Inside an `impl` / `trait` body.
    Type(TypeId),
    /// Inside a block (function body, closure body, `{ .. }`).
    Block,
}

/// Lowering state for one file.
struct Cx<'a, 's> {
    lw: &'a mut Lowerer<'s>,
    /// Enclosing functions / closures, innermost last.
    fn_stack: Vec<FnId>,
    /// Byte offset in the file of the macro body currently parsed with syn (spans from
    /// proc-macro2 are relative to it).
    mbase: usize,
    /// Approximate stack address where lowering started on the current thread.
    stack_base: usize,
}

/// Stack the lowering itself may use below [`Cx::stack_base`]. `MAX_DEPTH` bounds nesting,
/// but a level costs several KiB of stack in debug builds, so the guard also checks how
/// much stack is really in use (leaving room for the caller and for syn on macro bodies).
const STACK_BUDGET: usize = 1 << 20;

/// Address of a local: the current stack position (the stack grows down on every platform
/// we build for; if it did not, the check below is simply never triggered).
#[inline(always)]
fn stack_addr() -> usize {
    let x = 0u8;
    std::hint::black_box(&x as *const u8) as usize
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/// Field names used by this front end; ids are looked up once (tree-sitter's by-name lookup
/// string-compares against every field name of the grammar on each call).
const FIELD_NAMES: [&str; 24] = [
    "alternative",
    "argument",
    "arguments",
    "body",
    "bounds",
    "condition",
    "consequence",
    "field",
    "function",
    "left",
    "list",
    "macro",
    "name",
    "operator",
    "parameters",
    "path",
    "pattern",
    "return_type",
    "right",
    "trait",
    "type",
    "value",
    "alias",
    "label",
];

fn field_id(name: &str) -> Option<u16> {
    static IDS: std::sync::OnceLock<[u16; FIELD_NAMES.len()]> = std::sync::OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let lang: tree_sitter::Language = tree_sitter_rust::LANGUAGE.into();
        FIELD_NAMES.map(|f| lang.field_id_for_name(f).map(|x| x.get()).unwrap_or(0))
    });
    let i = FIELD_NAMES.iter().position(|f| *f == name)?;
    ids.get(i).copied().filter(|id| *id != 0)
}

fn field<'t>(n: Node<'t>, name: &str) -> Option<Node<'t>> {
    match field_id(name) {
        Some(id) => n.child_by_field_id(id),
        None => n.child_by_field_name(name),
    }
}

/// Whether the cursor's current node is in field `name`.
fn in_field(c: &tree_sitter::TreeCursor, name: &str) -> bool {
    match field_id(name) {
        Some(id) => c.field_id().map(|x| x.get()) == Some(id),
        None => c.field_name() == Some(name),
    }
}

fn is_comment(n: Node) -> bool {
    matches!(n.kind(), "line_comment" | "block_comment")
}

/// Named children without comments.
fn kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| !is_comment(*k))
        .collect()
}

/// First named, non-comment child.
fn first_kid(n: Node) -> Option<Node> {
    let mut c = n.walk();
    n.named_children(&mut c).find(|k| !is_comment(*k))
}

fn other(sp: Span) -> Expr {
    Expr::new(sp, ExprKind::Other(Vec::new()))
}

fn join(a: Span, b: Span) -> Span {
    Span::new(a.start.min(b.start), a.end.max(b.end))
}

/// `clean_type` plus Rust specifics: leading `&'a mut`, trailing `::` of turbofish paths and
/// whitespace inside paths.
pub(crate) fn clean_ty(t: &str) -> String {
    let mut t = t.trim();
    loop {
        let before = t;
        t = t.trim_start_matches('&').trim_start();
        if t.starts_with('\'') {
            t = t.split_once(char::is_whitespace).map(|x| x.1).unwrap_or("");
        }
        for p in ["mut ", "dyn ", "impl ", "const "] {
            if let Some(r) = t.strip_prefix(p) {
                t = r.trim_start();
            }
        }
        // A smart pointer is the value it points to, for what its methods are
        // (`payouts: Arc<CaptainPayouts>`, `&Box<dyn Middleware>`).
        if crate::facts::SMART_POINTERS.contains(&crate::facts::simple_name(t))
            && let (Some(a), Some(b)) = (t.find('<'), t.rfind('>'))
            && a < b
        {
            t = t[a + 1..b].trim();
        }
        if t == before {
            break;
        }
    }
    let c = clean_type(t);
    c.trim_end_matches(':')
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Path text without whitespace (`std :: sync` -> `std::sync`).
fn squash(t: &str) -> String {
    t.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Content of a string literal as written (`"a\"b"`, `r#"x"#`, `b"x"`): quotes removed, simple
/// escapes decoded, other escapes kept as written.
pub(crate) fn decode_str(t: &str) -> String {
    let t = t.trim_start_matches(['b', 'c']);
    if let Some(r) = t.strip_prefix('r') {
        let body = r.trim_start_matches('#');
        let hashes = r.len() - body.len();
        let body = body.strip_prefix('"').unwrap_or(body);
        let mut close = String::from("\"");
        close.extend(std::iter::repeat_n('#', hashes));
        return body
            .strip_suffix(close.as_str())
            .unwrap_or(body)
            .to_string();
    }
    let body = t.strip_prefix('"').unwrap_or(t);
    let body = body.strip_suffix('"').unwrap_or(body);
    let mut out = String::with_capacity(body.len());
    let mut it = body.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\'') => out.push('\''),
            Some('0') => out.push('\0'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// `#[test]`, `#[tokio::test]`, `#[cfg(test)]`, `#[cfg(all(test, ..))]` (not under `not(..)`).
fn is_test_attr(a: &Annotation) -> bool {
    if a.name == "test" {
        return true;
    }
    if a.name != "cfg" {
        return false;
    }
    let mut stack: Vec<&Expr> = a.args.iter().map(|x| &x.value).collect();
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Name(n) if n == "test" => return true,
            ExprKind::Call { name, .. } if name == "not" => {}
            ExprKind::Call { args, .. } => stack.extend(args.iter().map(|x| &x.value)),
            _ => {}
        }
    }
    false
}

/// Identifiers bound by a pattern, in source order, with their span and whether they are
/// bound mutably. Iterative (patterns can be deeply nested in hostile input).
fn pattern_names<'t>(lw: &Lowerer, pat: Node<'t>) -> Vec<(String, Span, bool)> {
    let mut out: Vec<(String, Span, bool)> = Vec::new();
    let mut stack: Vec<(Node<'t>, bool)> = vec![(pat, false)];
    while let Some((p, m)) = stack.pop() {
        let mut push_kids = |p: Node<'t>, m: bool, skip_type: bool| {
            let mut c = p.walk();
            let mut v = Vec::new();
            if c.goto_first_child() {
                loop {
                    let n = c.node();
                    if n.is_named() && !is_comment(n) && !(skip_type && in_field(&c, "type")) {
                        v.push(n);
                    }
                    if !c.goto_next_sibling() {
                        break;
                    }
                }
            }
            stack.extend(v.into_iter().rev().map(|n| (n, m)));
        };
        match p.kind() {
            "identifier" | "self" => {
                let t = lw.text(p);
                if !t.is_empty() && !out.iter().any(|x| x.0 == t) {
                    out.push((t.to_string(), span(p), m));
                }
            }
            "shorthand_field_identifier" => {
                let t = lw.text(p);
                if !out.iter().any(|x| x.0 == t) {
                    out.push((t.to_string(), span(p), m));
                }
            }
            "mut_pattern" => push_kids(p, true, false),
            "tuple_struct_pattern" => push_kids(p, m, true),
            "struct_pattern" => push_kids(p, m, true),
            "field_pattern" => {
                let fm = m || kids(p).iter().any(|k| k.kind() == "mutable_specifier");
                match field(p, "pattern") {
                    Some(sub) => stack.push((sub, fm)),
                    None => {
                        if let Some(n) = field(p, "name") {
                            stack.push((n, fm));
                        }
                    }
                }
            }
            "ref_pattern" | "reference_pattern" | "tuple_pattern" | "slice_pattern"
            | "or_pattern" | "captured_pattern" | "parameter" | "let_condition" => {
                if p.kind() == "parameter" || p.kind() == "let_condition" {
                    if let Some(sub) = field(p, "pattern") {
                        stack.push((sub, m));
                    }
                } else {
                    push_kids(p, m, false)
                }
            }
            _ => {}
        }
    }
    out
}

fn label_of(lw: &Lowerer, n: Node) -> Option<String> {
    let l = kids(n).into_iter().find(|k| k.kind() == "label")?;
    let t = lw.text(l);
    Some(t.trim_start_matches('\'').to_string())
}

/// What an item-list / block child is (classified outside the recursive frame).
#[derive(Clone, Copy)]
enum M {
    Fn,
    Type,
    Const,
    Mod,
    Use,
    ExternCrate,
    Foreign,
    Let,
    ExprStmt,
    Error,
    Skip,
    Expr,
}

fn member_kind(kind: &str) -> M {
    match kind {
        "function_item" | "function_signature_item" => M::Fn,
        "impl_item" | "trait_item" | "struct_item" | "enum_item" | "union_item" => M::Type,
        "const_item" | "static_item" => M::Const,
        "mod_item" => M::Mod,
        "use_declaration" => M::Use,
        "extern_crate_declaration" => M::ExternCrate,
        "foreign_mod_item" => M::Foreign,
        "let_declaration" => M::Let,
        "expression_statement" => M::ExprStmt,
        "ERROR" => M::Error,
        "empty_statement"
        | "type_item"
        | "associated_type"
        | "macro_definition"
        | "visibility_modifier"
        | "where_clause"
        | "type_parameters"
        | "mutable_specifier" => M::Skip,
        _ => M::Expr,
    }
}

/// Expression node classes (classified outside the recursive frame).
#[derive(Clone, Copy)]
enum X {
    Name,
    Str,
    Lit,
    Call,
    Field,
    Path,
    GenericFn,
    FirstChild,
    Binary,
    Unary,
    Await,
    Cast,
    Index,
    Range,
    Assign,
    Closure,
    Block,
    If,
    Match,
    Loop,
    Return,
    Break,
    Continue,
    Struct,
    Macro,
    Cond,
    Other,
}

fn expr_kind(kind: &str) -> X {
    match kind {
        "identifier"
        | "self"
        | "super"
        | "crate"
        | "metavariable"
        | "field_identifier"
        | "type_identifier"
        | "primitive_type"
        | "shorthand_field_identifier" => X::Name,
        "string_literal" | "raw_string_literal" => X::Str,
        "char_literal" | "integer_literal" | "float_literal" | "boolean_literal"
        | "negative_literal" => X::Lit,
        "call_expression" => X::Call,
        "field_expression" => X::Field,
        "scoped_identifier"
        | "scoped_type_identifier"
        | "generic_type"
        | "generic_type_with_turbofish"
        | "bracketed_type" => X::Path,
        "generic_function" => X::GenericFn,
        "parenthesized_expression" | "expression_statement" | "else_clause" => X::FirstChild,
        "binary_expression" => X::Binary,
        "unary_expression" | "reference_expression" | "try_expression" => X::Unary,
        "await_expression" => X::Await,
        "type_cast_expression" => X::Cast,
        "index_expression" => X::Index,
        "range_expression" => X::Range,
        "assignment_expression" | "compound_assignment_expr" => X::Assign,
        "closure_expression" => X::Closure,
        "block" | "async_block" | "gen_block" | "try_block" | "unsafe_block" | "const_block" => {
            X::Block
        }
        "if_expression" => X::If,
        "match_expression" => X::Match,
        "loop_expression" | "while_expression" | "for_expression" => X::Loop,
        "return_expression" => X::Return,
        "break_expression" => X::Break,
        "continue_expression" => X::Continue,
        "struct_expression" => X::Struct,
        "macro_invocation" => X::Macro,
        "let_condition" | "let_chain" => X::Cond,
        _ => X::Other,
    }
}

// ---------------------------------------------------------------------------------------------
// Items and statements
// ---------------------------------------------------------------------------------------------

impl<'s> Cx<'_, 's> {
    fn text(&self, n: Node) -> &'s str {
        self.lw.text(n)
    }

    /// Depth guard: [`Lowerer::enter`] plus a check of the stack actually in use. Every
    /// recursive lowering function calls this first and [`Cx::leave`] before returning.
    fn enter(&mut self) -> bool {
        if self.stack_base.saturating_sub(stack_addr()) > STACK_BUDGET {
            self.lw.too_deep = true;
            return false;
        }
        self.lw.enter()
    }

    fn leave(&mut self) {
        self.lw.leave();
    }

    fn cur_fn(&self) -> Option<FnId> {
        self.fn_stack.last().copied()
    }

    /// Lowers the children of a file, module body, impl/trait body, block or ERROR node.
    /// Items are registered in the facts; statements (and, outside blocks, stray expressions
    /// and macro invocations) are returned. Inner attributes go to `inner`.
    fn lower_children(
        &mut self,
        node: Node,
        scope: Scope,
        mut inner: Option<&mut Vec<Annotation>>,
    ) -> Vec<Stmt> {
        if !self.enter() {
            return Vec::new();
        }
        // Sized up front, like arguments (an item may add more than one statement).
        let mut out = Vec::with_capacity(node.named_child_count());
        let mut pending: Vec<Annotation> = Vec::new();
        let mut pending_start: Option<usize> = None;
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            match child.kind() {
                "line_comment" | "block_comment" | "label" | "shebang" => {}
                "attribute_item" => {
                    let a = self.attribute(child);
                    pending.push(a);
                    pending_start.get_or_insert(child.start_byte());
                }
                "inner_attribute_item" => {
                    let a = self.attribute(child);
                    if let Some(v) = inner.as_mut() {
                        v.push(a);
                    }
                }
                _ => {
                    let attrs = std::mem::take(&mut pending);
                    let start = pending_start.take().unwrap_or(child.start_byte());
                    self.lower_member(child, scope, attrs, start, &mut out);
                }
            }
        }
        self.leave();
        out
    }

    /// One item / statement of a list. Dispatch only, so the recursive frame stays small.
    fn lower_member(
        &mut self,
        n: Node,
        scope: Scope,
        attrs: Vec<Annotation>,
        start: usize,
        out: &mut Vec<Stmt>,
    ) {
        if attrs.iter().any(is_test_attr) {
            self.push_test_region(Span::new(start.min(n.start_byte()), n.end_byte()));
        }
        match member_kind(n.kind()) {
            M::Fn => self.member_fn(n, scope, attrs, out),
            M::Type => self.member_type(n, scope, attrs, out),
            M::Const => self.member_const(n, scope, attrs, out),
            M::Mod => self.mod_item(n, attrs),
            M::Use => self.use_decl(n),
            M::ExternCrate => self.member_extern_crate(n),
            M::Foreign => self.member_foreign(n, scope, out),
            M::Let => self.let_decl(n, attrs, out),
            M::ExprStmt => self.member_expr_stmt(n, out),
            M::Error => self.member_error(n, scope, out),
            M::Skip => {}
            M::Expr => self.member_expr(n, out),
        }
    }

    fn push_test_region(&mut self, sp: Span) {
        self.lw.facts.test_regions.push(sp);
    }

    fn member_fn(&mut self, n: Node, scope: Scope, attrs: Vec<Annotation>, out: &mut Vec<Stmt>) {
        let id = self.function(n, scope, attrs);
        if scope == Scope::Block {
            out.push(Stmt::LocalFn(id));
        }
    }

    fn member_type(&mut self, n: Node, scope: Scope, attrs: Vec<Annotation>, out: &mut Vec<Stmt>) {
        let id = self.type_item(n, attrs);
        if scope == Scope::Block {
            out.push(Stmt::LocalType(id));
        }
    }

    fn member_const(&mut self, n: Node, scope: Scope, attrs: Vec<Annotation>, out: &mut Vec<Stmt>) {
        let b = self.const_binding(n, attrs);
        match scope {
            Scope::Module => self.lw.facts.globals.push(b),
            Scope::Type(t) => {
                if let Some(td) = self.lw.facts.types.get_mut(t) {
                    td.fields.push(b);
                }
            }
            Scope::Block => out.push(Stmt::Let(Box::new(b))),
        }
    }

    fn member_extern_crate(&mut self, n: Node) {
        if let Some(name) = field(n, "name") {
            let t = squash(self.text(name));
            self.lw.facts.imports.push(t);
        }
    }

    fn member_foreign(&mut self, n: Node, scope: Scope, out: &mut Vec<Stmt>) {
        if let Some(body) = field(n, "body") {
            let s = self.lower_children(body, scope, None);
            out.extend(s);
        }
    }

    fn member_expr_stmt(&mut self, n: Node, out: &mut Vec<Stmt>) {
        if let Some(e) = first_kid(n) {
            let e = self.expr(e);
            out.push(Stmt::Expr(e));
        }
    }

    fn member_error(&mut self, n: Node, scope: Scope, out: &mut Vec<Stmt>) {
        let s = self.lower_children(n, scope, None);
        out.extend(s);
    }

    fn member_expr(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let e = self.expr(n);
        out.push(Stmt::Expr(e));
    }

    /// `#[path(args)]` / `#![path(args)]` / `#[path = value]`.
    fn attribute(&mut self, item: Node) -> Annotation {
        let sp = span(item);
        let Some(attr) = kids(item).into_iter().find(|k| k.kind() == "attribute") else {
            return Annotation {
                name: String::new(),
                args: Vec::new(),
                span: sp,
            };
        };
        let name = match first_kid(attr) {
            Some(p) if p.kind() == "scoped_identifier" => field(p, "name")
                .map(|x| self.text(x).to_string())
                .unwrap_or_default(),
            Some(p) => self.text(p).to_string(),
            None => String::new(),
        };
        let args = if let Some(tt) = field(attr, "arguments") {
            self.attr_args(tt)
        } else if let Some(v) = field(attr, "value") {
            vec![Arg {
                name: None,
                value: self.expr(v),
            }]
        } else {
            Vec::new()
        };
        Annotation {
            name,
            args,
            span: sp,
        }
    }

    fn visibility(&self, n: Node, mods: &mut Vec<String>) {
        for k in kids(n) {
            if k.kind() == "visibility_modifier" {
                let t = squash(self.text(k));
                if t.starts_with("pub") {
                    mods.push("pub".to_string());
                }
                if t != "pub" && !t.is_empty() {
                    mods.push(t);
                }
            }
        }
    }

    fn function(&mut self, n: Node, scope: Scope, attrs: Vec<Annotation>) -> FnId {
        let name_node = field(n, "name");
        let name = name_node.map(|x| self.text(x).to_string());
        let name_span = name_node.map(span).unwrap_or(span(n));
        let mut modifiers = Vec::new();
        self.visibility(n, &mut modifiers);
        for k in kids(n) {
            if k.kind() == "function_modifiers" {
                let mut c = k.walk();
                for m in k.children(&mut c) {
                    match m.kind() {
                        "extern_modifier" => modifiers.push("extern".to_string()),
                        "async" | "const" | "unsafe" | "default" | "gen" => {
                            modifiers.push(m.kind().to_string())
                        }
                        _ => {}
                    }
                }
            }
        }
        let (kind, owner, parent) = match scope {
            Scope::Type(t) => (FnKind::Method, Some(t), None),
            Scope::Block => (FnKind::Function, None, self.cur_fn()),
            Scope::Module => (FnKind::Function, None, None),
        };
        let params = field(n, "parameters")
            .map(|p| self.params(p))
            .unwrap_or_default();
        let return_type = field(n, "return_type").map(|t| clean_ty(self.text(t)));
        let body = field(n, "body");
        let id = self.lw.add_fn(Function {
            name,
            kind,
            params,
            annotations: attrs,
            modifiers,
            return_type,
            owner,
            parent,
            body: Vec::new(),
            has_body: body.is_some(),
            span: span(n),
            name_span,
        });
        if let Scope::Type(t) = scope
            && let Some(td) = self.lw.facts.types.get_mut(t)
        {
            td.methods.push(id);
        }
        if let Some(b) = body {
            self.fn_stack.push(id);
            let mut inner = Vec::new();
            let stmts = self.lower_children(b, Scope::Block, Some(&mut inner));
            self.fn_stack.pop();
            if let Some(f) = self.lw.facts.functions.get_mut(id) {
                f.body = stmts;
                f.annotations.extend(inner);
            }
        }
        id
    }

    fn params(&mut self, list: Node) -> Vec<Param> {
        let mut out = Vec::new();
        let mut pending: Vec<Annotation> = Vec::new();
        for p in kids(list) {
            match p.kind() {
                "attribute_item" => {
                    let a = self.attribute(p);
                    pending.push(a);
                }
                "self_parameter" => out.push(Param {
                    name: "self".to_string(),
                    ty: None,
                    annotations: std::mem::take(&mut pending),
                    span: span(p),
                    default: None,
                }),
                "parameter" => {
                    let ty = field(p, "type").map(|t| clean_ty(self.text(t)));
                    let annotations = std::mem::take(&mut pending);
                    let names = match field(p, "pattern") {
                        Some(pat) => pattern_names(self.lw, pat),
                        None => Vec::new(),
                    };
                    if names.is_empty() {
                        out.push(Param {
                            name: "_".to_string(),
                            ty,
                            annotations,
                            span: span(p),
                            default: None,
                        });
                    } else {
                        for (name, _, _) in names {
                            out.push(Param {
                                name,
                                ty: ty.clone(),
                                annotations: annotations.clone(),
                                span: span(p),
                                default: None,
                            });
                        }
                    }
                }
                "variadic_parameter" => {}
                _ => {
                    // A bare type (`fn(u8)` style) or a closure pattern without type.
                    pending.clear();
                }
            }
        }
        out
    }

    fn closure_params(&mut self, list: Node) -> Vec<Param> {
        let mut out = Vec::new();
        for p in kids(list) {
            let (pat, ty) = if p.kind() == "parameter" {
                (
                    field(p, "pattern"),
                    field(p, "type").map(|t| clean_ty(self.text(t))),
                )
            } else {
                (Some(p), None)
            };
            let names = pat.map(|x| pattern_names(self.lw, x)).unwrap_or_default();
            if names.is_empty() {
                out.push(Param {
                    name: "_".to_string(),
                    ty: ty.clone(),
                    annotations: Vec::new(),
                    span: span(p),
                    default: None,
                });
            }
            for (name, _, _) in names {
                out.push(Param {
                    name,
                    ty: ty.clone(),
                    annotations: Vec::new(),
                    span: span(p),
                    default: None,
                });
            }
        }
        out
    }

    fn new_type(
        &mut self,
        kind: TypeKind,
        name: Option<String>,
        name_span: Span,
        n: Node,
        attrs: Vec<Annotation>,
    ) -> TypeId {
        let parent_fn = self.cur_fn();
        self.lw.add_type(TypeDecl {
            name,
            kind,
            supertypes: Vec::new(),
            annotations: attrs,
            fields: Vec::new(),
            methods: Vec::new(),
            nested: Vec::new(),
            span: span(n),
            name_span,
            parent_type: None,
            parent_fn,
        })
    }

    fn type_item(&mut self, n: Node, attrs: Vec<Annotation>) -> TypeId {
        let (kind, name_node) = match n.kind() {
            "impl_item" => (TypeKind::Impl, field(n, "type")),
            "trait_item" => (TypeKind::Interface, field(n, "name")),
            "enum_item" => (TypeKind::Enum, field(n, "name")),
            _ => (TypeKind::Class, field(n, "name")),
        };
        let name = name_node.map(|x| clean_ty(self.text(x)));
        let name_span = name_node.map(span).unwrap_or(span(n));
        let tid = self.new_type(kind, name, name_span, n, attrs);
        let mut supers = Vec::new();
        if let Some(tr) = field(n, "trait") {
            supers.push(clean_ty(self.text(tr)));
        }
        if let Some(bounds) = field(n, "bounds") {
            for b in kids(bounds) {
                if !matches!(b.kind(), "lifetime" | "removed_trait_bound") {
                    supers.push(clean_ty(self.text(b)));
                }
            }
        }
        if let Some(td) = self.lw.facts.types.get_mut(tid) {
            td.supertypes = supers;
        }
        let Some(body) = field(n, "body") else {
            return tid;
        };
        match kind {
            TypeKind::Impl | TypeKind::Interface => {
                let mut inner = Vec::new();
                let stmts = self.lower_children(body, Scope::Type(tid), Some(&mut inner));
                self.lw.facts.top_level.extend(stmts);
                if let Some(td) = self.lw.facts.types.get_mut(tid) {
                    td.annotations.extend(inner);
                }
            }
            TypeKind::Enum => {
                let fields = self.enum_variants(body);
                if let Some(td) = self.lw.facts.types.get_mut(tid) {
                    td.fields = fields;
                }
            }
            _ => {
                let fields = self.struct_fields(body);
                if let Some(td) = self.lw.facts.types.get_mut(tid) {
                    td.fields = fields;
                }
            }
        }
        tid
    }

    fn struct_fields(&mut self, body: Node) -> Vec<Binding> {
        let mut out = Vec::new();
        let mut pending = Vec::new();
        let mut mods = Vec::new();
        let mut index = 0usize;
        let mut c = body.walk();
        if !c.goto_first_child() {
            return out;
        }
        loop {
            let k = c.node();
            let is_type_field = in_field(&c, "type");
            match k.kind() {
                "attribute_item" => {
                    let a = self.attribute(k);
                    pending.push(a);
                }
                "visibility_modifier" => {
                    let t = squash(self.text(k));
                    mods.push("pub".to_string());
                    if t != "pub" {
                        mods.push(t);
                    }
                }
                "field_declaration" => {
                    let mut modifiers = Vec::new();
                    self.visibility(k, &mut modifiers);
                    let nm = field(k, "name");
                    out.push(Binding {
                        name: nm.map(|x| self.text(x).to_string()).unwrap_or_default(),
                        ty: field(k, "type").map(|t| clean_ty(self.text(t))),
                        init: None,
                        annotations: std::mem::take(&mut pending),
                        modifiers,
                        mutable: false,
                        span: span(k),
                        name_span: nm.map(span).unwrap_or(span(k)),
                    });
                }
                _ if is_type_field && k.is_named() => {
                    out.push(Binding {
                        name: index.to_string(),
                        ty: Some(clean_ty(self.text(k))),
                        init: None,
                        annotations: std::mem::take(&mut pending),
                        modifiers: std::mem::take(&mut mods),
                        mutable: false,
                        span: span(k),
                        name_span: span(k),
                    });
                    index += 1;
                }
                _ => {}
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
        out
    }

    fn enum_variants(&mut self, body: Node) -> Vec<Binding> {
        let mut out = Vec::new();
        let mut pending = Vec::new();
        for k in kids(body) {
            match k.kind() {
                "attribute_item" => {
                    let a = self.attribute(k);
                    pending.push(a);
                }
                "enum_variant" => {
                    let nm = field(k, "name");
                    let init = field(k, "value").map(|v| self.expr(v));
                    out.push(Binding {
                        name: nm.map(|x| self.text(x).to_string()).unwrap_or_default(),
                        ty: None,
                        init,
                        annotations: std::mem::take(&mut pending),
                        modifiers: Vec::new(),
                        mutable: false,
                        span: span(k),
                        name_span: nm.map(span).unwrap_or(span(k)),
                    });
                }
                _ => {}
            }
        }
        out
    }

    fn const_binding(&mut self, n: Node, attrs: Vec<Annotation>) -> Binding {
        let mut modifiers = Vec::new();
        self.visibility(n, &mut modifiers);
        let is_static = n.kind() == "static_item";
        modifiers.push(if is_static { "static" } else { "const" }.to_string());
        let mutable = kids(n).iter().any(|k| k.kind() == "mutable_specifier");
        if mutable {
            modifiers.push("mut".to_string());
        }
        let nm = field(n, "name");
        Binding {
            name: nm.map(|x| self.text(x).to_string()).unwrap_or_default(),
            ty: field(n, "type").map(|t| clean_ty(self.text(t))),
            init: field(n, "value").map(|v| self.expr(v)),
            annotations: attrs,
            modifiers,
            mutable,
            span: span(n),
            name_span: nm.map(span).unwrap_or(span(n)),
        }
    }

    fn mod_item(&mut self, n: Node, attrs: Vec<Annotation>) {
        let Some(body) = field(n, "body") else {
            return;
        };
        let mut inner = Vec::new();
        let stmts = self.lower_children(body, Scope::Module, Some(&mut inner));
        self.lw.facts.top_level.extend(stmts);
        if inner.iter().any(is_test_attr) && !attrs.iter().any(is_test_attr) {
            self.lw.facts.test_regions.push(span(n));
        }
    }

    /// Flattens a `use` tree into full paths (iteratively).
    fn use_decl(&mut self, n: Node) {
        let Some(arg) = field(n, "argument") else {
            return;
        };
        let joined = |a: &str, b: &str| {
            if a.is_empty() {
                b.to_string()
            } else {
                format!("{a}::{b}")
            }
        };
        let mut stack = vec![(arg, String::new())];
        while let Some((node, prefix)) = stack.pop() {
            match node.kind() {
                "scoped_use_list" => {
                    let p = field(node, "path")
                        .map(|x| squash(self.text(x)))
                        .unwrap_or_default();
                    let np = if p.is_empty() {
                        prefix.clone()
                    } else {
                        joined(&prefix, &p)
                    };
                    if let Some(list) = field(node, "list") {
                        stack.push((list, np));
                    }
                }
                "use_list" => {
                    for k in kids(node).into_iter().rev() {
                        stack.push((k, prefix.clone()));
                    }
                }
                "use_as_clause" => {
                    if let Some(p) = field(node, "path") {
                        let t = squash(self.text(p));
                        self.lw.facts.imports.push(joined(&prefix, &t));
                    }
                }
                "self" if !prefix.is_empty() => self.lw.facts.imports.push(prefix),
                "attribute_item" | "line_comment" | "block_comment" => {}
                _ => {
                    let t = squash(self.text(node));
                    if !t.is_empty() {
                        self.lw.facts.imports.push(joined(&prefix, &t));
                    }
                }
            }
        }
    }

    fn let_decl(&mut self, n: Node, attrs: Vec<Annotation>, out: &mut Vec<Stmt>) {
        let ty = field(n, "type").map(|t| clean_ty(self.text(t)));
        let value = field(n, "value");
        let mut init = value.map(|v| self.expr(v));
        if let Some(alt) = field(n, "alternative") {
            let stmts = self.lower_children(alt, Scope::Block, None);
            let els = Expr::new(span(alt), ExprKind::Block(stmts));
            let start = value.map(|v| v.start_byte()).unwrap_or(alt.start_byte());
            let sp = Span::new(start, alt.end_byte());
            let mut parts = Vec::new();
            parts.extend(init.take());
            parts.push(els);
            init = Some(Expr::new(sp, ExprKind::Other(parts)));
        }
        let let_mut = kids(n).iter().any(|k| k.kind() == "mutable_specifier");
        let mut names = match field(n, "pattern") {
            Some(p) => pattern_names(self.lw, p),
            None => Vec::new(),
        };
        if names.is_empty() {
            let sp = field(n, "pattern").map(span).unwrap_or(span(n));
            names.push(("_".to_string(), sp, false));
        }
        let count = names.len();
        for (i, (name, name_span, m)) in names.into_iter().enumerate() {
            let init = if i + 1 == count {
                init.take()
            } else {
                init.clone()
            };
            let mutable = m || let_mut;
            out.push(Stmt::Let(Box::new(Binding {
                name,
                ty: ty.clone(),
                init,
                annotations: attrs.clone(),
                modifiers: if mutable {
                    vec!["mut".to_string()]
                } else {
                    Vec::new()
                },
                mutable,
                span: span(n),
                name_span,
            })));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

impl Cx<'_, '_> {
    /// Lowers any expression node (guarded against deep nesting).
    fn expr(&mut self, n: Node) -> Expr {
        if !self.enter() {
            return other(span(n));
        }
        let e = self.expr_inner(n);
        self.leave();
        e
    }

    /// Dispatch only: picks a helper, then makes one call (keeps the recursive frame small).
    fn expr_inner(&mut self, n: Node) -> Expr {
        match expr_kind(n.kind()) {
            X::Name => self.name(n),
            X::Str => self.str_lit(n),
            X::Lit => self.lit(n),
            X::Call => self.call(n),
            X::Field => self.field_expr(n),
            X::Path => self.path_expr(n),
            X::GenericFn => self.generic_function(n),
            X::FirstChild => self.first_child_expr(n),
            X::Binary => self.binary(n),
            X::Unary => self.unary(n),
            X::Await => self.await_expr(n),
            X::Cast => self.cast(n),
            X::Index => self.index(n),
            X::Range => self.range(n),
            X::Assign => self.assign(n),
            X::Closure => self.closure(n),
            X::Block => self.block_expr(n),
            X::If => self.if_expr(n),
            X::Match => self.match_expr(n),
            X::Loop => self.loop_expr(n),
            X::Return => self.return_expr(n),
            X::Break => self.break_expr(n),
            X::Continue => self.continue_expr(n),
            X::Struct => self.struct_expr(n),
            X::Macro => self.macro_expr(n),
            X::Cond => self.cond(n),
            X::Other => self.other_expr(n),
        }
    }

    fn first_child_expr(&mut self, n: Node) -> Expr {
        match first_kid(n) {
            Some(k) => self.expr(k),
            None => other(span(n)),
        }
    }

    fn continue_expr(&mut self, n: Node) -> Expr {
        let l = label_of(self.lw, n);
        Expr::new(span(n), ExprKind::Continue(l))
    }

    fn name(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Name(self.text(n).into()))
    }

    fn str_lit(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Str(decode_str(self.text(n)).into()))
    }

    fn lit(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Lit(self.text(n).into()))
    }

    /// Unknown node: every named child lowered, statements wrapped in blocks.
    fn other_expr(&mut self, n: Node) -> Expr {
        let mut parts = Vec::new();
        for k in kids(n) {
            match k.kind() {
                "attribute_item" | "inner_attribute_item" | "label" | "mutable_specifier" => {}
                "let_declaration"
                | "expression_statement"
                | "function_item"
                | "function_signature_item"
                | "impl_item"
                | "trait_item"
                | "struct_item"
                | "enum_item"
                | "union_item"
                | "const_item"
                | "static_item"
                | "mod_item"
                | "use_declaration"
                | "extern_crate_declaration"
                | "foreign_mod_item" => {
                    let mut stmts = Vec::new();
                    self.lower_member(k, Scope::Block, Vec::new(), k.start_byte(), &mut stmts);
                    if !stmts.is_empty() {
                        parts.push(Expr::new(span(k), ExprKind::Block(stmts)));
                    }
                }
                "empty_statement" | "type_item" | "associated_type" | "macro_definition" => {}
                _ => parts.push(self.expr(k)),
            }
        }
        Expr::new(span(n), ExprKind::Other(parts))
    }

    fn args(&mut self, n: Node) -> Vec<Arg> {
        // Sized up front (see the Java front end's `lower_args`).
        let mut out = Vec::with_capacity(n.named_child_count());
        for k in kids(n) {
            if k.kind() != "attribute_item" {
                out.push(Arg {
                    name: None,
                    value: self.expr(k),
                });
            }
        }
        out
    }

    fn call(&mut self, n: Node) -> Expr {
        let mut f = field(n, "function");
        // `foo::<T>(..)`: strip the generics.
        while let Some(g) = f.filter(|g| g.kind() == "generic_function") {
            f = field(g, "function");
        }
        let (receiver, name) = match f {
            None => (None, Text::default()),
            Some(f) => match f.kind() {
                "identifier" | "self" | "super" | "crate" | "metavariable" => {
                    (None, Text::from(self.text(f)))
                }
                "scoped_identifier" => {
                    let recv = field(f, "path").map(|p| Box::new(self.path_expr(p)));
                    let name = field(f, "name")
                        .map(|x| Text::from(self.text(x)))
                        .unwrap_or_default();
                    (recv, name)
                }
                "field_expression" => {
                    let recv = field(f, "value").map(|v| Box::new(self.expr(v)));
                    let name = field(f, "field")
                        .map(|x| Text::from(self.text(x)))
                        .unwrap_or_default();
                    (recv, name)
                }
                _ => (Some(Box::new(self.expr(f))), Text::default()),
            },
        };
        let args = field(n, "arguments")
            .map(|a| self.args(a))
            .unwrap_or_default();
        Expr::new(
            span(n),
            ExprKind::Call {
                receiver,
                name,
                args,
            },
        )
    }

    fn field_expr(&mut self, n: Node) -> Expr {
        let recv = match field(n, "value") {
            Some(v) => self.expr(v),
            None => other(span(n)),
        };
        let name = field(n, "field")
            .map(|x| Text::from(self.text(x)))
            .unwrap_or_default();
        Expr::new(
            span(n),
            ExprKind::Field {
                receiver: Box::new(recv),
                name,
            },
        )
    }

    /// A path in expression position: `Ordering::SeqCst` -> Field{Name(Ordering), SeqCst};
    /// generic arguments are dropped.
    fn path_expr(&mut self, n: Node) -> Expr {
        if !self.enter() {
            return other(span(n));
        }
        let e = match n.kind() {
            "scoped_identifier" | "scoped_type_identifier" => {
                let name = field(n, "name")
                    .map(|x| self.text(x).to_string())
                    .unwrap_or_default();
                match field(n, "path") {
                    Some(p) => {
                        let recv = self.path_expr(p);
                        Expr::new(
                            span(n),
                            ExprKind::Field {
                                receiver: Box::new(recv),
                                name: name.into(),
                            },
                        )
                    }
                    None => Expr::new(span(n), ExprKind::Name(name.into())),
                }
            }
            "generic_type" | "generic_type_with_turbofish" => match field(n, "type") {
                Some(t) => {
                    let mut e = self.path_expr(t);
                    e.span = span(n);
                    e
                }
                None => other(span(n)),
            },
            "bracketed_type" => Expr::new(span(n), ExprKind::Name(squash(self.text(n)).into())),
            _ => self.expr(n),
        };
        self.leave();
        e
    }

    fn generic_function(&mut self, n: Node) -> Expr {
        match field(n, "function") {
            Some(f) => {
                let mut e = self.expr(f);
                e.span = span(n);
                e
            }
            None => other(span(n)),
        }
    }

    fn binary(&mut self, n: Node) -> Expr {
        let op = field(n, "operator")
            .map(|o| Text::from(self.text(o)))
            .unwrap_or_default();
        let lhs = field(n, "left").map(|x| self.expr(x));
        let rhs = field(n, "right").map(|x| self.expr(x));
        match (lhs, rhs) {
            (Some(l), Some(r)) => Expr::new(
                span(n),
                ExprKind::Binary {
                    op,
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                },
            ),
            (l, r) => Expr::new(span(n), ExprKind::Other(l.into_iter().chain(r).collect())),
        }
    }

    fn unary(&mut self, n: Node) -> Expr {
        let op = match n.kind() {
            "reference_expression" => "&".to_string(),
            "try_expression" => "?".to_string(),
            _ => n
                .child(0)
                .filter(|c| !c.is_named())
                .map(|c| self.text(c).to_string())
                .unwrap_or_default(),
        };
        let operand = match field(n, "value").or_else(|| first_kid(n)) {
            Some(k) => self.expr(k),
            None => other(span(n)),
        };
        Expr::new(
            span(n),
            ExprKind::Unary {
                op: op.into(),
                operand: Box::new(operand),
            },
        )
    }

    fn await_expr(&mut self, n: Node) -> Expr {
        let inner = match first_kid(n) {
            Some(k) => self.expr(k),
            None => other(span(n)),
        };
        Expr::new(span(n), ExprKind::Await(Box::new(inner)))
    }

    fn cast(&mut self, n: Node) -> Expr {
        let inner = match field(n, "value") {
            Some(k) => self.expr(k),
            None => other(span(n)),
        };
        let ty = field(n, "type")
            .map(|t| clean_ty(self.text(t)))
            .unwrap_or_default();
        Expr::new(
            span(n),
            ExprKind::Cast {
                expr: Box::new(inner),
                ty: ty.into(),
            },
        )
    }

    fn index(&mut self, n: Node) -> Expr {
        let k = kids(n);
        if k.len() != 2 {
            return self.other_expr(n);
        }
        let recv = self.expr(k[0]);
        let idx = self.expr(k[1]);
        Expr::new(
            span(n),
            ExprKind::Index {
                receiver: Box::new(recv),
                index: Box::new(idx),
            },
        )
    }

    fn range(&mut self, n: Node) -> Expr {
        let k = kids(n);
        if k.len() != 2 {
            return self.other_expr(n);
        }
        let mut c = n.walk();
        let op = n
            .children(&mut c)
            .find(|x| !x.is_named())
            .map(|x| Text::from(self.text(x)))
            .unwrap_or_else(|| "..".into());
        let l = self.expr(k[0]);
        let r = self.expr(k[1]);
        Expr::new(
            span(n),
            ExprKind::Binary {
                op,
                lhs: Box::new(l),
                rhs: Box::new(r),
            },
        )
    }

    fn assign(&mut self, n: Node) -> Expr {
        let op = match field(n, "operator") {
            Some(o) => self.text(o).to_string(),
            None => "=".to_string(),
        };
        let (Some(l), Some(r)) = (field(n, "left"), field(n, "right")) else {
            return self.other_expr(n);
        };
        let target = self.expr(l);
        let value = self.expr(r);
        Expr::new(
            span(n),
            ExprKind::Assign {
                target: Box::new(target),
                op: op.into(),
                value: Box::new(value),
            },
        )
    }

    fn closure(&mut self, n: Node) -> Expr {
        let mut modifiers = Vec::new();
        let mut c = n.walk();
        for k in n.children(&mut c) {
            if !k.is_named() && matches!(k.kind(), "move" | "async" | "static" | "const") {
                modifiers.push(k.kind().to_string());
            }
        }
        let pnode = field(n, "parameters");
        let params = pnode.map(|p| self.closure_params(p)).unwrap_or_default();
        let return_type = field(n, "return_type").map(|t| clean_ty(self.text(t)));
        let name_span = pnode
            .map(span)
            .unwrap_or(Span::new(n.start_byte(), n.start_byte()));
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
            span: span(n),
            name_span,
        });
        if let Some(b) = field(n, "body") {
            self.fn_stack.push(id);
            let body = if b.kind() == "block" {
                self.lower_children(b, Scope::Block, None)
            } else {
                vec![Stmt::Expr(self.expr(b))]
            };
            self.fn_stack.pop();
            if let Some(f) = self.lw.facts.functions.get_mut(id) {
                f.body = body;
            }
        }
        Expr::new(span(n), ExprKind::Lambda(id))
    }

    /// `{ .. }`, `unsafe { .. }`, `async move { .. }`, `const { .. }`, `try { .. }`.
    fn block_expr(&mut self, n: Node) -> Expr {
        let block = if n.kind() == "block" {
            Some(n)
        } else {
            field(n, "body").or_else(|| kids(n).into_iter().find(|k| k.kind() == "block"))
        };
        let stmts = match block {
            Some(b) => self.lower_children(b, Scope::Block, None),
            None => Vec::new(),
        };
        Expr::new(span(n), ExprKind::Block(stmts))
    }

    /// A condition: `let` conditions give their value; let chains fold to `&&`.
    fn cond(&mut self, n: Node) -> Expr {
        match n.kind() {
            // `if let Ok(v) = expr`: a binding of the pattern's names to the value, written as
            // an assignment with op "let" so that value flow sees `v`.
            "let_condition" => match field(n, "value") {
                Some(v) => {
                    let value = self.expr(v);
                    match field(n, "pattern") {
                        Some(p) => Expr::new(
                            span(n),
                            ExprKind::Assign {
                                target: Box::new(self.pattern_expr(p)),
                                op: "let".into(),
                                value: Box::new(value),
                            },
                        ),
                        None => value,
                    }
                }
                None => other(span(n)),
            },
            "let_chain" => {
                let mut acc: Option<Expr> = None;
                for k in kids(n) {
                    let e = self.expr(k);
                    acc = Some(match acc {
                        None => e,
                        Some(l) => Expr::new(
                            join(l.span, e.span),
                            ExprKind::Binary {
                                op: "&&".into(),
                                lhs: Box::new(l),
                                rhs: Box::new(e),
                            },
                        ),
                    });
                }
                acc.unwrap_or_else(|| other(span(n)))
            }
            _ => self.expr(n),
        }
    }

    fn if_expr(&mut self, n: Node) -> Expr {
        let cond = match field(n, "condition") {
            Some(c) => self.expr(c),
            None => other(span(n)),
        };
        let then = match field(n, "consequence") {
            Some(c) => self.expr(c),
            None => other(span(n)),
        };
        let els = field(n, "alternative").map(|a| Box::new(self.expr(a)));
        Expr::new(
            span(n),
            ExprKind::If {
                cond: Box::new(cond),
                then: Box::new(then),
                els,
            },
        )
    }

    fn match_expr(&mut self, n: Node) -> Expr {
        let subject = field(n, "value").map(|v| Box::new(self.expr(v)));
        let mut arms = Vec::new();
        if let Some(body) = field(n, "body") {
            for arm in kids(body) {
                if arm.kind() != "match_arm" {
                    continue;
                }
                arms.push(self.match_arm(arm));
            }
        }
        Expr::new(span(n), ExprKind::Match { subject, arms })
    }

    fn match_arm(&mut self, arm: Node) -> MatchArm {
        let mp = field(arm, "pattern");
        let pattern_text = mp.map(|p| self.text(p).to_string()).unwrap_or_default();
        let mut patterns = Vec::new();
        let mut guard = None;
        if let Some(mp) = mp {
            let mut c = mp.walk();
            let mut pat = None;
            if c.goto_first_child() {
                loop {
                    let k = c.node();
                    if in_field(&c, "condition") {
                        guard = Some(self.expr(k));
                    } else if k.is_named() && !is_comment(k) && pat.is_none() {
                        pat = Some(k);
                    }
                    if !c.goto_next_sibling() {
                        break;
                    }
                }
            }
            if let Some(p) = pat {
                let alts = if p.kind() == "or_pattern" {
                    kids(p)
                } else {
                    vec![p]
                };
                for a in alts {
                    patterns.push(self.pattern_expr(a));
                }
            }
        }
        let body = match field(arm, "value") {
            Some(v) => self.expr(v),
            None => other(span(arm)),
        };
        MatchArm {
            patterns,
            pattern_text,
            guard,
            body,
        }
    }

    /// A pattern as an expression: a literal stays a literal, a path stays a path, anything
    /// else is `Other` of the names it binds.
    fn pattern_expr(&mut self, p: Node) -> Expr {
        match p.kind() {
            "string_literal" | "raw_string_literal" => self.str_lit(p),
            "char_literal" | "integer_literal" | "float_literal" | "boolean_literal"
            | "negative_literal" => self.lit(p),
            "scoped_identifier" => self.path_expr(p),
            _ => {
                let names = pattern_names(self.lw, p)
                    .into_iter()
                    .map(|(n, sp, _)| Expr::new(sp, ExprKind::Name(n.into())))
                    .collect();
                Expr::new(span(p), ExprKind::Other(names))
            }
        }
    }

    fn loop_expr(&mut self, n: Node) -> Expr {
        let label = label_of(self.lw, n);
        let mut vars = Vec::new();
        let mut header = Vec::new();
        let kind = match n.kind() {
            "loop_expression" => LoopKind::Loop,
            "while_expression" => {
                if let Some(c) = field(n, "condition") {
                    let lets = if c.kind() == "let_chain" {
                        kids(c)
                    } else {
                        vec![c]
                    };
                    for l in lets {
                        if l.kind() == "let_condition" {
                            vars.extend(pattern_names(self.lw, l).into_iter().map(|x| x.0));
                        }
                    }
                    header.push(self.expr(c));
                }
                LoopKind::While
            }
            _ => {
                if let Some(p) = field(n, "pattern") {
                    vars.extend(pattern_names(self.lw, p).into_iter().map(|x| x.0));
                }
                if let Some(v) = field(n, "value") {
                    header.push(self.expr(v));
                }
                LoopKind::ForEach
            }
        };
        let body = match field(n, "body") {
            Some(b) => self.expr(b),
            None => other(span(n)),
        };
        Expr::new(
            span(n),
            ExprKind::Loop {
                kind,
                vars: vars.into(),
                header: header.into(),
                body: Box::new(body),
                label: label.map(Into::into),
            },
        )
    }

    fn return_expr(&mut self, n: Node) -> Expr {
        let v = first_kid(n).map(|k| Box::new(self.expr(k)));
        Expr::new(span(n), ExprKind::Return(v))
    }

    /// `break 'l value`: the model's `Break` has no value, so a valued break is
    /// `Other([Break(label), value])`.
    fn break_expr(&mut self, n: Node) -> Expr {
        let label = label_of(self.lw, n);
        let value = kids(n).into_iter().find(|k| k.kind() != "label");
        let brk = Expr::new(span(n), ExprKind::Break(label));
        match value {
            None => brk,
            Some(v) => {
                let v = self.expr(v);
                Expr::new(span(n), ExprKind::Other(vec![brk, v]))
            }
        }
    }

    /// `CreateCharge { idempotency_key: k, amount, ..Default::default() }`.
    fn struct_expr(&mut self, n: Node) -> Expr {
        let ty = match field(n, "name") {
            Some(t) => {
                let t = if t.kind() == "generic_type_with_turbofish" {
                    field(t, "type").unwrap_or(t)
                } else {
                    t
                };
                clean_ty(self.text(t))
            }
            None => String::new(),
        };
        let mut args = Vec::new();
        if let Some(body) = field(n, "body") {
            for k in kids(body) {
                match k.kind() {
                    "field_initializer" => {
                        let name = field(k, "field").map(|x| self.text(x).to_string());
                        let value = match field(k, "value") {
                            Some(v) => self.expr(v),
                            None => other(span(k)),
                        };
                        args.push(Arg { name, value });
                    }
                    "shorthand_field_initializer" => {
                        if let Some(id) = kids(k).into_iter().find(|x| x.kind() == "identifier") {
                            let t = self.text(id).to_string();
                            args.push(Arg {
                                name: Some(t.clone()),
                                value: Expr::new(span(id), ExprKind::Name(t.into())),
                            });
                        }
                    }
                    "base_field_initializer" => {
                        if let Some(v) = first_kid(k) {
                            let value = self.expr(v);
                            args.push(Arg { name: None, value });
                        }
                    }
                    _ => {}
                }
            }
        }
        Expr::new(
            span(n),
            ExprKind::New {
                ty: ty.into(),
                args,
                body: None,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{FileFacts, Lang};
    use crate::lang::{Parsed, parse_and_lower};

    fn parse(src: &str) -> Parsed {
        parse_and_lower(Lang::Rust, src).expect("parse")
    }

    /// Compact rendering of an expression for assertions.
    fn show(e: &Expr) -> String {
        let args = |a: &[Arg]| {
            a.iter()
                .map(|a| match &a.name {
                    Some(n) => format!("{n}: {}", show(&a.value)),
                    None => show(&a.value),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &e.kind {
            ExprKind::Name(n) => n.to_string(),
            ExprKind::Field { receiver, name } => format!("{}.{name}", show(receiver)),
            ExprKind::Call {
                receiver,
                name,
                args: a,
            } => match receiver {
                Some(r) => format!("{}.{name}({})", show(r), args(a)),
                None => format!("{name}({})", args(a)),
            },
            ExprKind::Macro { name, args: a } => format!("{name}!({})", args(a)),
            ExprKind::New { ty, args: a, .. } => format!("new {ty}{{{}}}", args(a)),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Lit(l) => l.to_string(),
            ExprKind::Binary { op, lhs, rhs } => format!("({} {op} {})", show(lhs), show(rhs)),
            ExprKind::Unary { op, operand } => format!("({op} {})", show(operand)),
            ExprKind::Cast { expr, ty } => format!("({} as {ty})", show(expr)),
            ExprKind::Index { receiver, index } => format!("{}[{}]", show(receiver), show(index)),
            ExprKind::Await(x) => format!("{}.await", show(x)),
            ExprKind::Lambda(id) => format!("lambda#{id}"),
            ExprKind::Assign { target, op, value } => {
                format!("({} {op} {})", show(target), show(value))
            }
            ExprKind::If { cond, then, els } => match els {
                Some(x) => format!("if {} {} else {}", show(cond), show(then), show(x)),
                None => format!("if {} {}", show(cond), show(then)),
            },
            ExprKind::Match { subject, arms } => format!(
                "match {} {{{}}}",
                subject.as_ref().map(|s| show(s)).unwrap_or_default(),
                arms.iter()
                    .map(|a| format!(
                        "[{}] {}{} => {}",
                        a.pattern_text,
                        a.patterns.iter().map(show).collect::<Vec<_>>().join("|"),
                        a.guard
                            .as_ref()
                            .map(|g| format!(" if {}", show(g)))
                            .unwrap_or_default(),
                        show(&a.body)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            ExprKind::Block(stmts) => format!("{{{}}}", show_stmts(stmts)),
            ExprKind::Loop {
                kind,
                vars,
                header,
                body,
                label,
            } => format!(
                "loop:{kind:?}{}[{}]({}) {}",
                label.as_ref().map(|l| format!("'{l}")).unwrap_or_default(),
                vars.join(","),
                header.iter().map(show).collect::<Vec<_>>().join(", "),
                show(body)
            ),
            ExprKind::Return(x) => {
                format!("return {}", x.as_ref().map(|x| show(x)).unwrap_or_default())
            }
            ExprKind::Break(l) => format!("break {}", l.clone().unwrap_or_default()),
            ExprKind::Continue(l) => format!("continue {}", l.clone().unwrap_or_default()),
            ExprKind::Other(parts) => {
                format!(
                    "other({})",
                    parts.iter().map(show).collect::<Vec<_>>().join(", ")
                )
            }
            k => format!("{k:?}"),
        }
    }

    fn show_stmts(stmts: &[Stmt]) -> String {
        stmts
            .iter()
            .map(|s| match s {
                Stmt::Let(b) => format!(
                    "let {}{}{} = {}",
                    if b.mutable { "mut " } else { "" },
                    b.name,
                    b.ty.as_ref().map(|t| format!(": {t}")).unwrap_or_default(),
                    b.init.as_ref().map(show).unwrap_or_default()
                ),
                Stmt::Expr(e) => show(e),
                Stmt::LocalFn(id) => format!("fn#{id}"),
                Stmt::LocalType(id) => format!("type#{id}"),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Runs `f` on a thread with the default 2 MiB stack (the stack rayon workers get).
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .expect("spawn")
            .join()
            .expect("no stack overflow / panic")
    }

    #[test]
    fn smart_pointers_are_their_pointee() {
        assert_eq!(clean_ty("Arc<CaptainPayouts>"), "CaptainPayouts");
        assert_eq!(
            clean_ty("&std::sync::Arc<crate::pay::Payouts>"),
            "crate::pay::Payouts"
        );
        assert_eq!(clean_ty("&'a mut Box<dyn Middleware>"), "Middleware");
        assert_eq!(clean_ty("Rc<RefCell<Ledger>>"), "RefCell");
        assert_eq!(clean_ty("Vec<Arc<Ledger>>"), "Vec");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let n = 100_000;
        let cases: Vec<String> = vec![
            format!("fn f() {{ let x = {}1{}; }}", "(".repeat(n), ")".repeat(n)),
            format!("fn f() {{ {}{} }}", "{".repeat(n), "}".repeat(n)),
            format!("fn f() {{ let x = {}x; }}", "!".repeat(n)),
            format!("fn f() {{ let x = {}x; }}", "|a| ".repeat(n)),
            format!("fn f() {{ let x = a{}; }}", ".b()".repeat(n)),
            format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(n)),
            format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(n / 10)),
            format!("{}{}", "mod m { ".repeat(n / 10), "}".repeat(n / 10)),
            format!("{}{}", "fn f() { ".repeat(n / 10), "}".repeat(n / 10)),
            // Macro bodies under the 64 KiB cap: syn must not be asked to recurse that deep.
            format!(
                "fn f() {{ format!(\"{{}}\", {}1{}); }}",
                "(".repeat(n / 5),
                ")".repeat(n / 5)
            ),
            format!(
                "fn f() {{ json!({}1{}); }}",
                "[".repeat(n / 5),
                "]".repeat(n / 5)
            ),
            format!("fn f() {{ m!({}x); }}", "!".repeat(60_000)),
            format!(
                "fn f() {{ m!(x as {}u8{}); }}",
                "V<".repeat(2_000),
                ">".repeat(2_000)
            ),
            format!(
                "fn f() {{ m!({}x{}); }}",
                "{".repeat(1000),
                "}".repeat(1000)
            ),
            format!("fn f() {{ m!({}x); }}", "format!(".repeat(3000)),
        ];
        for (i, src) in cases.into_iter().enumerate() {
            let (deep, errs) = on_small_stack(move || {
                let p = parse(&src);
                (p.too_deep, p.has_errors)
            });
            assert!(
                deep || errs,
                "case {i}: expected a depth cut or syntax errors"
            );
        }
        // Iterative paths (patterns, use trees) handle any depth without a cut.
        let pat = format!("fn f() {{ let {}a{} = 1; }}", "(".repeat(n), ")".repeat(n));
        let names = on_small_stack(move || {
            let p = parse(&pat);
            match p.facts.functions[0].body.first() {
                Some(Stmt::Let(b)) => b.name.clone(),
                _ => String::new(),
            }
        });
        assert_eq!(names, "a");
        let uses = format!("use a::{}b{};", "{b::".repeat(n / 10), "}".repeat(n / 10));
        let count = on_small_stack(move || parse(&uses).facts.imports.len());
        assert_eq!(count, 1);
    }

    fn slice(src: &str, sp: Span) -> &str {
        src.get(sp.start..sp.end).expect("span on char boundaries")
    }

    /// Every expression in the file (function bodies, globals, fields, top level), pre-order.
    fn all_exprs(f: &FileFacts) -> Vec<&Expr> {
        fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            out.push(e);
            e.for_each_child(|c| walk(c, out));
        }
        fn stmts<'a>(ss: &'a [Stmt], out: &mut Vec<&'a Expr>) {
            for s in ss {
                match s {
                    Stmt::Let(b) => b.init.iter().for_each(|e| walk(e, out)),
                    Stmt::Expr(e) => walk(e, out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        for func in &f.functions {
            stmts(&func.body, &mut out);
            for a in &func.annotations {
                a.args.iter().for_each(|x| walk(&x.value, &mut out));
            }
        }
        stmts(&f.top_level, &mut out);
        for b in f
            .globals
            .iter()
            .chain(f.types.iter().flat_map(|t| t.fields.iter()))
        {
            b.init.iter().for_each(|e| walk(e, &mut out));
        }
        out
    }

    fn find_call<'a>(f: &'a FileFacts, name: &str) -> &'a Expr {
        all_exprs(f)
            .into_iter()
            .find(|e| matches!(&e.kind, ExprKind::Call { name: n, .. } if n == name))
            .unwrap_or_else(|| panic!("no call {name}"))
    }

    fn find_macro<'a>(f: &'a FileFacts, name: &str) -> &'a Expr {
        all_exprs(f)
            .into_iter()
            .find(|e| matches!(&e.kind, ExprKind::Macro { name: n, .. } if n == name))
            .unwrap_or_else(|| panic!("no macro {name}"))
    }

    fn func<'a>(f: &'a FileFacts, name: &str) -> &'a Function {
        f.functions
            .iter()
            .find(|x| x.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no fn {name}"))
    }

    fn macro_args(e: &Expr) -> &[Arg] {
        match &e.kind {
            ExprKind::Macro { args, .. } => args,
            _ => panic!("not a macro: {e:?}"),
        }
    }

    const MIDDLEWARE: &str = r#"
use reqwest_middleware::{Middleware, Next};
use uuid::Uuid;

pub struct IdemKeyMiddleware;

#[async_trait::async_trait]
impl Middleware for IdemKeyMiddleware {
    async fn handle(
        &self,
        mut req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let key = Uuid::new_v4().to_string();
        req.headers_mut().insert("Idempotency-Key", key.parse().unwrap());
        next.run(req, extensions).await
    }
}
"#;

    #[test]
    fn impl_trait_method_with_uuid_key_and_header() {
        let p = parse(MIDDLEWARE);
        let f = &p.facts;
        assert!(!p.has_errors);
        assert_eq!(
            f.imports,
            [
                "reqwest_middleware::Middleware",
                "reqwest_middleware::Next",
                "uuid::Uuid"
            ]
        );
        let imp = f
            .types
            .iter()
            .find(|t| t.kind == TypeKind::Impl)
            .expect("impl");
        assert_eq!(imp.name.as_deref(), Some("IdemKeyMiddleware"));
        assert_eq!(imp.supertypes, ["Middleware"]);
        assert_eq!(slice(MIDDLEWARE, imp.name_span), "IdemKeyMiddleware");
        assert_eq!(imp.annotations.len(), 1);
        assert_eq!(imp.annotations[0].name, "async_trait");
        let class = f
            .types
            .iter()
            .find(|t| t.kind == TypeKind::Class)
            .expect("struct");
        assert_eq!(class.name.as_deref(), Some("IdemKeyMiddleware"));

        let handle = func(f, "handle");
        let hid = f
            .functions
            .iter()
            .position(|x| x.name.as_deref() == Some("handle"));
        assert_eq!(handle.kind, FnKind::Method);
        assert_eq!(
            handle.owner,
            Some(
                f.types
                    .iter()
                    .position(|t| t.kind == TypeKind::Impl)
                    .unwrap()
            )
        );
        assert_eq!(imp.methods, [hid.unwrap()]);
        assert!(handle.has_modifier("async"));
        let params: Vec<_> = handle
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.ty.as_deref()))
            .collect();
        assert_eq!(
            params,
            [
                ("self", None),
                ("req", Some("Request")),
                ("extensions", Some("Extensions")),
                ("next", Some("Next"))
            ]
        );
        assert_eq!(
            handle.return_type.as_deref(),
            Some("reqwest_middleware::Result")
        );
        assert_eq!(slice(MIDDLEWARE, handle.name_span), "handle");

        let Stmt::Let(key) = &handle.body[0] else {
            panic!("let")
        };
        assert_eq!(key.name, "key");
        let init = key.init.as_ref().unwrap();
        let ExprKind::Call {
            receiver: Some(r),
            name,
            args,
        } = &init.kind
        else {
            panic!()
        };
        assert_eq!(name, "to_string");
        assert!(args.is_empty());
        let ExprKind::Call {
            receiver: Some(uuid),
            name,
            ..
        } = &r.kind
        else {
            panic!()
        };
        assert_eq!(name, "new_v4");
        assert!(matches!(&uuid.kind, ExprKind::Name(n) if n == "Uuid"));
        assert_eq!(slice(MIDDLEWARE, r.span), "Uuid::new_v4()");

        let insert = find_call(f, "insert");
        let ExprKind::Call {
            receiver: Some(r),
            args,
            ..
        } = &insert.kind
        else {
            panic!()
        };
        assert_eq!(show(r), "req.headers_mut()");
        assert!(matches!(&args[0].value.kind, ExprKind::Str(s) if s == "Idempotency-Key"));
        assert_eq!(show(&args[1].value), "key.parse().unwrap()");
        let Stmt::Expr(last) = &handle.body[2] else {
            panic!()
        };
        assert_eq!(show(last), "next.run(req, extensions).await");
    }

    #[test]
    fn imports_are_flattened() {
        let src = "use a::{b, c as d, e::{f, g::*}, self};\nuse std::sync::atomic::Ordering;\n\
                   use ::x::y;\npub use z::*;\nextern crate serde as s;\n\
                   fn f() { use inner::Thing; }";
        let f = parse(src).facts;
        assert_eq!(
            f.imports,
            [
                "a::b",
                "a::c",
                "a::e::f",
                "a::e::g::*",
                "a",
                "std::sync::atomic::Ordering",
                "::x::y",
                "z::*",
                "serde",
                "inner::Thing"
            ]
        );
    }

    #[test]
    fn attributes_and_test_regions() {
        let src = r#"
#[tokio::main(flavor = "multi_thread")]
async fn main() { #![allow(unused)] }

#[derive(Debug, serde::Serialize)]
struct Charge { #[serde(rename = "idempotency_key")] pub key: String, amount: u64 }

#[cfg(not(test))]
fn prod() {}

#[cfg(test)]
mod tests {
    #[test]
    fn a() {}
    #[tokio::test]
    async fn b() {}
}

#[cfg(all(test, feature = "x"))]
fn helper() {}
"#;
        let f = parse(src).facts;
        let main = func(&f, "main");
        let names: Vec<_> = main.annotations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["main", "allow"]);
        assert_eq!(main.annotations[0].args[0].name.as_deref(), Some("flavor"));
        assert!(
            matches!(&main.annotations[0].args[0].value.kind, ExprKind::Str(s) if s == "multi_thread")
        );
        assert_eq!(
            slice(src, main.annotations[0].span),
            "#[tokio::main(flavor = \"multi_thread\")]"
        );

        let charge = f
            .types
            .iter()
            .find(|t| t.name.as_deref() == Some("Charge"))
            .unwrap();
        assert_eq!(charge.annotations[0].name, "derive");
        let derived: Vec<_> = charge.annotations[0]
            .args
            .iter()
            .map(|a| show(&a.value))
            .collect();
        assert_eq!(derived, ["Debug", "serde.Serialize"]);
        assert_eq!(charge.fields[0].name, "key");
        assert_eq!(charge.fields[0].ty.as_deref(), Some("String"));
        assert_eq!(charge.fields[0].modifiers, ["pub"]);
        assert_eq!(charge.fields[0].annotations[0].name, "serde");
        assert_eq!(
            charge.fields[0].annotations[0].args[0].name.as_deref(),
            Some("rename")
        );

        let regions: Vec<_> = f.test_regions.iter().map(|r| slice(src, *r)).collect();
        assert!(
            regions
                .iter()
                .any(|r| r.starts_with("#[cfg(test)]\nmod tests {") && r.ends_with('}'))
        );
        assert!(regions.contains(&"#[test]\n    fn a() {}"));
        assert!(regions.contains(&"#[tokio::test]\n    async fn b() {}"));
        assert!(regions.iter().any(|r| r.contains("fn helper")));
        assert!(!regions.iter().any(|r| r.contains("fn prod")));
        let cfg = &func(&f, "prod").annotations[0];
        assert_eq!(cfg.name, "cfg");
        assert_eq!(show(&cfg.args[0].value), "not(test)");
        let a = func(&f, "a");
        assert_eq!(a.annotations[0].name, "test");
        assert_eq!(func(&f, "b").annotations[0].name, "test");
        // `#[cfg(test)]` is `cfg` with the single unnamed arg `test`.
        let src2 = "#[cfg(test)]\nfn t() {}";
        let f2 = parse(src2).facts;
        let ann = &f2.functions[0].annotations[0];
        assert_eq!((ann.name.as_str(), ann.args.len()), ("cfg", 1));
        assert!(ann.args[0].name.is_none());
        assert!(matches!(&ann.args[0].value.kind, ExprKind::Name(n) if n == "test"));
    }

    #[test]
    fn closures_and_async_blocks() {
        let src = r#"
fn charge(client: &Client) {
    retry(|| async move {
        let key = Uuid::new_v4();
        items.iter().map(|i| i.id).collect::<Vec<_>>();
        client.charge(key).await
    });
    let add = |a: u32, (b, c)| a + b;
}
"#;
        let f = parse(src).facts;
        let outer = f
            .functions
            .iter()
            .position(|x| x.name.as_deref() == Some("charge"))
            .unwrap();
        let lambdas: Vec<(usize, &Function)> = f
            .functions
            .iter()
            .enumerate()
            .filter(|(_, x)| x.kind == FnKind::Lambda)
            .collect();
        assert_eq!(lambdas.len(), 3);
        let (retry_id, retry_fn) = lambdas[0];
        assert_eq!(retry_fn.parent, Some(outer));
        assert_eq!(slice(src, retry_fn.name_span), "||");
        // The async block is the closure's body: one Block expression.
        assert_eq!(retry_fn.body.len(), 1);
        let Stmt::Expr(body) = &retry_fn.body[0] else {
            panic!()
        };
        let ExprKind::Block(stmts) = &body.kind else {
            panic!("async block -> Block")
        };
        assert_eq!(
            show_stmts(stmts),
            "let key = Uuid.new_v4(); items.iter().map(lambda#2).collect(); client.charge(key).await"
        );
        let (_, map_fn) = lambdas[1];
        assert_eq!(map_fn.parent, Some(retry_id));
        assert_eq!(map_fn.params[0].name, "i");
        assert_eq!(show_stmts(&map_fn.body), "i.id");
        let call = find_call(&f, "retry");
        let ExprKind::Call { args, .. } = &call.kind else {
            panic!()
        };
        assert!(matches!(args[0].value.kind, ExprKind::Lambda(id) if id == retry_id));
        let (_, add) = lambdas[2];
        let ps: Vec<_> = add
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.ty.as_deref()))
            .collect();
        assert_eq!(ps, [("a", Some("u32")), ("b", None), ("c", None)]);
        assert!(add.modifiers.is_empty());
        let src2 = "fn f() { spawn(async move || { work().await }); }";
        let f2 = parse(src2).facts;
        assert_eq!(f2.functions[1].modifiers, ["async", "move"]);
    }

    #[test]
    fn macro_spans_slice_the_source() {
        let src = "fn f() {\n    let k = format!(\"ключ-{}-{}\", Uuid::new_v4(),\n        uuid::Uuid::new_v4().simple());\n}";
        let p = parse(src);
        let m = find_macro(&p.facts, "format");
        assert_eq!(
            slice(src, m.span),
            &src[src.find("format!").unwrap()..src.find(");").unwrap() + 1]
        );
        let args = macro_args(m);
        assert_eq!(args.len(), 3);
        assert_eq!(slice(src, args[0].value.span), "\"ключ-{}-{}\"");
        assert!(matches!(&args[0].value.kind, ExprKind::Str(s) if s == "ключ-{}-{}"));
        assert_eq!(slice(src, args[1].value.span), "Uuid::new_v4()");
        let ExprKind::Call {
            receiver: Some(r),
            name,
            ..
        } = &args[1].value.kind
        else {
            panic!()
        };
        assert_eq!((name.as_str(), show(r).as_str()), ("new_v4", "Uuid"));
        assert_eq!(slice(src, r.span), "Uuid");
        // Qualified path receiver: Field chain uuid.Uuid, spans on the tokens.
        assert_eq!(
            slice(src, args[2].value.span),
            "uuid::Uuid::new_v4().simple()"
        );
        let ExprKind::Call {
            receiver: Some(inner),
            name,
            ..
        } = &args[2].value.kind
        else {
            panic!()
        };
        assert_eq!(name, "simple");
        let ExprKind::Call {
            receiver: Some(path),
            name,
            ..
        } = &inner.kind
        else {
            panic!()
        };
        assert_eq!(name, "new_v4");
        assert_eq!(path.path_text().as_deref(), Some("uuid.Uuid"));
        assert_eq!(slice(src, path.span), "uuid::Uuid");
        assert_eq!(slice(src, inner.span), "uuid::Uuid::new_v4()");
        // Nested macros: spans still map into the file.
        let src = "fn g() { log(&format!(\"{}\", vec![a.b(), Utc::now().timestamp_millis()])); }";
        let f = parse(src).facts;
        let v = find_macro(&f, "vec");
        assert_eq!(
            slice(src, v.span),
            "vec![a.b(), Utc::now().timestamp_millis()]"
        );
        let ts = find_call(&f, "timestamp_millis");
        assert_eq!(slice(src, ts.span), "Utc::now().timestamp_millis()");
        // CRLF, tabs, comments and multi-byte chars inside the body.
        let src = "fn f() {\r\n\tlet k = format!(\r\n\t\t\"{}-é\", // — x\r\n\t\tUuid::new_v4() /* 🔑 */, json!({\"k\": a.b()}));\r\n}";
        let f = parse(src).facts;
        assert_eq!(slice(src, find_call(&f, "new_v4").span), "Uuid::new_v4()");
        assert_eq!(slice(src, find_call(&f, "b").span), "a.b()");
        assert_eq!(
            slice(src, find_macro(&f, "json").span),
            "json!({\"k\": a.b()})"
        );
    }

    #[test]
    fn format_strings_capture_names() {
        let src = r#"fn f() {
    let a = format!("{key}-{n:>w$}-{{lit}}-{0}-\u{41}", n = 5);
    tracing::info!(amount = %charge.amount, key = ?key, "charging {customer_id}");
    println!("{}", "{not_a_capture}");
}"#;
        let f = parse(src).facts;
        let fm = find_macro(&f, "format");
        let args = macro_args(fm);
        let shown: Vec<_> = args
            .iter()
            .map(|a| match &a.name {
                Some(n) => format!("{n}={}", show(&a.value)),
                None => show(&a.value),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "\"{key}-{n:>w$}-{{lit}}-{0}-\\\\u{41}\"",
                "n=5",
                "key",
                "n",
                "w"
            ]
        );
        assert_eq!(
            slice(src, args[2].value.span),
            r#""{key}-{n:>w$}-{{lit}}-{0}-\u{41}""#
        );
        let info = find_macro(&f, "info");
        let shown: Vec<_> = macro_args(info)
            .iter()
            .map(|a| (a.name.clone(), show(&a.value)))
            .collect();
        assert_eq!(
            shown,
            [
                (Some("amount".to_string()), "charge.amount".to_string()),
                (Some("key".to_string()), "key".to_string()),
                (None, "\"charging {customer_id}\"".to_string()),
                (None, "customer_id".to_string()),
            ]
        );
        assert_eq!(macro_args(find_macro(&f, "println")).len(), 2);
    }

    #[test]
    fn json_objects_give_named_args() {
        let src = r#"fn f() {
    let body = serde_json::json!({
        "idempotency_key": Uuid::new_v4().to_string(),
        "amount": amount * 100,
        "meta": { "attempt": n, "tags": ["a", { "b": c }] },
    });
}"#;
        let f = parse(src).facts;
        let j = find_macro(&f, "json");
        let args = macro_args(j);
        let names: Vec<_> = args
            .iter()
            .map(|a| a.name.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(names, ["idempotency_key", "amount", "meta"]);
        assert_eq!(slice(src, args[0].value.span), "Uuid::new_v4().to_string()");
        assert_eq!(show(&args[1].value), "(amount * 100)");
        assert_eq!(
            show(&args[2].value),
            "json!(attempt: n, tags: json!(\"a\", json!(b: c)))"
        );
        assert!(slice(src, args[2].value.span).starts_with("{ \"attempt\""));
    }

    #[test]
    fn macro_bodies_that_are_not_expression_lists() {
        let src = r#"
lazy_static! { static ref CLIENT: Client = Client::new(); }
fn f() {
    tokio::select! {
        res = client.send(req) => { let k = Uuid::new_v4(); retry(k) }
        _ = tokio::time::sleep(d) => return Err(timeout()),
    }
    let v = vec![0u8; 32];
    custom!(a => b; c, @weird d);
}"#;
        let p = parse(src);
        let f = &p.facts;
        let sel = find_macro(f, "select");
        let shown: Vec<_> = macro_args(sel).iter().map(|a| show(&a.value)).collect();
        assert_eq!(
            shown,
            [
                "(res = client.send(req))",
                "{let k = Uuid.new_v4(); retry(k)}",
                "(_ = tokio.time.sleep(d))",
                "return Err(timeout())"
            ]
        );
        let k = find_call(f, "new_v4");
        assert_eq!(slice(src, k.span), "Uuid::new_v4()");
        assert_eq!(show(find_macro(f, "vec")), "vec!(0u8, 32)");
        assert_eq!(show(find_macro(f, "custom")), "custom!(a, b, c)");
        let lazy = find_macro(f, "lazy_static");
        let args = macro_args(lazy);
        assert_eq!(args[0].name.as_deref(), Some("CLIENT"));
        assert_eq!(show(&args[0].value), "Client.new()");
    }

    #[test]
    fn struct_literals_are_new_with_named_args() {
        let src = "fn f() { let c = stripe::CreateCharge::<'_> { idempotency_key: k, amount, ..Default::default() }; }";
        let f = parse(src).facts;
        let Stmt::Let(b) = &f.functions[0].body[0] else {
            panic!()
        };
        let e = b.init.as_ref().unwrap();
        let ExprKind::New { ty, args, body } = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(ty, "stripe::CreateCharge");
        assert!(body.is_none());
        assert_eq!(args[0].name.as_deref(), Some("idempotency_key"));
        assert!(matches!(&args[0].value.kind, ExprKind::Name(n) if n == "k"));
        assert_eq!(args[1].name.as_deref(), Some("amount"));
        assert!(matches!(&args[1].value.kind, ExprKind::Name(n) if n == "amount"));
        assert_eq!(slice(src, args[1].value.span), "amount");
        assert_eq!(args[2].name, None);
        assert_eq!(show(&args[2].value), "Default.default()");
    }

    #[test]
    fn match_arms_keep_pattern_text_and_guards() {
        let src = r#"fn f() {
    match client.send(req).await {
        Ok(resp) if resp.status().is_server_error() => retry(),
        Err(e) | Other { e, .. } => { log(e) }
        "literal" => 1,
        _ => 0,
    }
}"#;
        let f = parse(src).facts;
        let Stmt::Expr(m) = &f.functions[0].body[0] else {
            panic!()
        };
        let ExprKind::Match { subject, arms } = &m.kind else {
            panic!()
        };
        assert_eq!(show(subject.as_ref().unwrap()), "client.send(req).await");
        assert_eq!(arms.len(), 4);
        assert_eq!(
            arms[0].pattern_text,
            "Ok(resp) if resp.status().is_server_error()"
        );
        assert_eq!(
            show(arms[0].guard.as_ref().unwrap()),
            "resp.status().is_server_error()"
        );
        assert_eq!(show(&arms[0].patterns[0]), "other(resp)");
        assert_eq!(arms[1].patterns.len(), 2);
        assert_eq!(arms[1].pattern_text, "Err(e) | Other { e, .. }");
        assert_eq!(show(&arms[1].body), "{log(e)}");
        assert!(matches!(&arms[2].patterns[0].kind, ExprKind::Str(s) if s == "literal"));
        assert!(arms[3].patterns.is_empty());
        assert_eq!(arms[3].pattern_text, "_");
    }

    #[test]
    fn loops_labels_and_jumps() {
        let src = r#"fn f() {
    'retry: loop {
        for (i, item) in items.iter().enumerate() {
            if i > 3 { break 'retry charge(item); }
            continue 'retry;
        }
    }
    while let Some(job) = queue.pop() && ready { run(job); }
    let mut attempt = 0;
    while attempt < 3 { attempt += 1; }
}"#;
        let f = parse(src).facts;
        let body = &f.functions[0].body;
        let Stmt::Expr(l) = &body[0] else { panic!() };
        let ExprKind::Loop {
            kind,
            label,
            body: lb,
            ..
        } = &l.kind
        else {
            panic!()
        };
        assert_eq!((*kind, label.as_deref()), (LoopKind::Loop, Some("retry")));
        let ExprKind::Block(inner) = &lb.kind else {
            panic!()
        };
        let Stmt::Expr(fe) = &inner[0] else { panic!() };
        let ExprKind::Loop {
            kind, vars, header, ..
        } = &fe.kind
        else {
            panic!()
        };
        assert_eq!(*kind, LoopKind::ForEach);
        assert_eq!(&vars[..], ["i", "item"]);
        assert_eq!(show(&header[0]), "items.iter().enumerate()");
        assert_eq!(
            show(fe),
            "loop:ForEach[i,item](items.iter().enumerate()) {if (i > 3) {other(break retry, charge(item))}; continue retry}"
        );
        let Stmt::Expr(w) = &body[1] else { panic!() };
        assert_eq!(
            show(w),
            "loop:While[job](((other(job) let queue.pop()) && ready)) {run(job)}"
        );
        let Stmt::Expr(w2) = &body[3] else { panic!() };
        assert_eq!(show(w2), "loop:While[]((attempt < 3)) {(attempt += 1)}");
    }

    #[test]
    fn let_patterns_and_let_else() {
        let src = r#"fn f() {
    let (a, mut b): (u32, u32) = pair();
    let Charge { id, amount: ref mut amt, .. } = load()?;
    let Some(key) = headers.get("Idempotency-Key") else { return Err(missing()); };
    let _ = fire();
    let x: Vec<Option<String>> = Vec::new();
}"#;
        let f = parse(src).facts;
        let lets: Vec<&Binding> = f.functions[0]
            .body
            .iter()
            .filter_map(|s| match s {
                Stmt::Let(b) => Some(&**b),
                _ => None,
            })
            .collect();
        let names: Vec<_> = lets.iter().map(|b| (b.name.as_str(), b.mutable)).collect();
        assert_eq!(
            names,
            [
                ("a", false),
                ("b", true),
                ("id", false),
                ("amt", true),
                ("key", false),
                ("_", false),
                ("x", false)
            ]
        );
        assert_eq!(show(lets[0].init.as_ref().unwrap()), "pair()");
        assert_eq!(show(lets[1].init.as_ref().unwrap()), "pair()");
        assert_eq!(lets[0].ty.as_deref(), Some("(u32,u32)"));
        assert_eq!(slice(src, lets[1].name_span), "b");
        assert_eq!(show(lets[2].init.as_ref().unwrap()), "(? load())");
        assert_eq!(
            show(lets[4].init.as_ref().unwrap()),
            "other(headers.get(\"Idempotency-Key\"), {return Err(missing())})"
        );
        assert_eq!(show(lets[5].init.as_ref().unwrap()), "fire()");
        assert_eq!(lets[6].ty.as_deref(), Some("Vec"));
    }

    #[test]
    fn items_types_and_globals() {
        let src = r#"
pub static CLIENT: Lazy<Client> = Lazy::new(Client::new);
const RETRIES: u32 = 3;
pub trait Biller: Send + billing::Retry {
    fn charge(&self, amount: u64) -> Result<()>;
    fn key(&self) -> String { Uuid::new_v4().to_string() }
}
struct Pair(pub u8, String);
enum State { Pending = 1, Done }
impl<T: Clone> Wrapper<T> { pub(crate) const fn new() -> Self { Wrapper } }
impl reqwest_middleware::Middleware for &'static Dyn {}
fn outer() {
    const LOCAL: u8 = 1;
    fn helper() -> u8 { LOCAL }
    struct Local { v: u8 }
    helper();
}
"#;
        let f = parse(src).facts;
        let globals: Vec<_> = f
            .globals
            .iter()
            .map(|g| (g.name.as_str(), g.ty.as_deref(), g.modifiers.clone()))
            .collect();
        assert_eq!(
            globals[0],
            (
                "CLIENT",
                Some("Lazy"),
                vec!["pub".to_string(), "static".to_string()]
            )
        );
        assert_eq!(
            globals[1],
            ("RETRIES", Some("u32"), vec!["const".to_string()])
        );
        assert_eq!(
            show(f.globals[0].init.as_ref().unwrap()),
            "Lazy.new(Client.new)"
        );
        let tr = f
            .types
            .iter()
            .find(|t| t.kind == TypeKind::Interface)
            .unwrap();
        assert_eq!(tr.name.as_deref(), Some("Biller"));
        assert_eq!(tr.supertypes, ["Send", "billing::Retry"]);
        let ms: Vec<_> = tr
            .methods
            .iter()
            .map(|m| {
                (
                    f.functions[*m].name.as_deref().unwrap(),
                    f.functions[*m].has_body,
                )
            })
            .collect();
        assert_eq!(ms, [("charge", false), ("key", true)]);
        let pair = f
            .types
            .iter()
            .find(|t| t.name.as_deref() == Some("Pair"))
            .unwrap();
        let fields: Vec<_> = pair
            .fields
            .iter()
            .map(|b| (b.name.as_str(), b.ty.as_deref()))
            .collect();
        assert_eq!(fields, [("0", Some("u8")), ("1", Some("String"))]);
        let st = f.types.iter().find(|t| t.kind == TypeKind::Enum).unwrap();
        assert_eq!(
            st.fields
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>(),
            ["Pending", "Done"]
        );
        let inherent = f
            .types
            .iter()
            .find(|t| t.name.as_deref() == Some("Wrapper"))
            .unwrap();
        assert!(inherent.supertypes.is_empty());
        let new = func(&f, "new");
        assert_eq!(new.modifiers, ["pub", "pub(crate)", "const"]);
        assert_eq!(new.kind, FnKind::Method);
        let dynimpl = f
            .types
            .iter()
            .find(|t| t.name.as_deref() == Some("Dyn"))
            .unwrap();
        assert_eq!(dynimpl.supertypes, ["reqwest_middleware::Middleware"]);
        let outer_id = f
            .functions
            .iter()
            .position(|x| x.name.as_deref() == Some("outer"))
            .unwrap();
        let outer = &f.functions[outer_id];
        assert_eq!(
            show_stmts(&outer.body),
            format!(
                "let LOCAL: u8 = 1; fn#{}; type#{}; helper()",
                outer_id + 1,
                f.types.len() - 1
            )
        );
        assert_eq!(func(&f, "helper").parent, Some(outer_id));
        assert_eq!(func(&f, "helper").kind, FnKind::Function);
        assert_eq!(f.types.last().unwrap().parent_fn, Some(outer_id));
    }

    #[test]
    fn expression_forms() {
        let src = r#"fn f() {
    let a = rand::random::<u64>();
    let b = Ordering::SeqCst;
    let c = *counter.lock().unwrap() as i64;
    let d = &mut buf[idx..idx + 4];
    let e = !done && -x > 0;
    if let Some(k) = cache.get(&id) { k } else { SystemTime::now() }
    unsafe { ptr.read() }
    total += fee; self.count = 0;
    let g = (1, "two"); let h = [0; 4];
    let i = Foo::<T>::new().0;
    (make_fn())(arg);
}"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let shown = show_stmts(&p.facts.functions[0].body);
        assert_eq!(
            shown,
            "let a = rand.random(); let b = Ordering.SeqCst; let c = ((* counter.lock().unwrap()) as i64); \
             let d = (& buf[(idx .. (idx + 4))]); let e = ((! done) && ((- x) > 0)); \
             if (other(k) let cache.get((& id))) {k} else {SystemTime.now()}; {ptr.read()}; (total += fee); (self.count = 0); \
             let g = other(1, \"two\"); let h = other(0, 4); let i = Foo.new().0; make_fn().(arg)"
        );
    }

    #[test]
    fn string_literals() {
        let src = r####"fn f() { let a = "q\"b\\n\n\t\u{1F600}"; let b = r#"raw "x" \n"#; let c = b"by"; let d = 'c'; }"####;
        let f = parse(src).facts;
        let inits: Vec<_> = f.functions[0]
            .body
            .iter()
            .map(|s| match s {
                Stmt::Let(b) => b.init.clone().unwrap().kind,
                _ => panic!(),
            })
            .collect();
        assert!(matches!(&inits[0], ExprKind::Str(s) if s == "q\"b\\n\n\t\\u{1F600}"));
        assert!(matches!(&inits[1], ExprKind::Str(s) if s == "raw \"x\" \\n"));
        assert!(matches!(&inits[2], ExprKind::Str(s) if s == "by"));
        assert!(matches!(&inits[3], ExprKind::Lit(s) if s == "'c'"));
    }

    #[test]
    fn non_ascii_identifiers_and_strings() {
        let src = "fn платёж() {\n    let ключ = \"значение—🔑\";\n    отправить(ключ, format!(\"{}—{ключ}\", Uuid::new_v4()));\n}";
        let p = parse(src);
        let f = &p.facts;
        let fun = &f.functions[0];
        assert_eq!(fun.name.as_deref(), Some("платёж"));
        assert_eq!(slice(src, fun.name_span), "платёж");
        let Stmt::Let(b) = &fun.body[0] else { panic!() };
        assert_eq!(slice(src, b.name_span), "ключ");
        assert!(matches!(&b.init.as_ref().unwrap().kind, ExprKind::Str(s) if s == "значение—🔑"));
        let m = find_macro(f, "format");
        let args = macro_args(m);
        assert_eq!(slice(src, args[1].value.span), "Uuid::new_v4()");
        assert!(matches!(&args[2].value.kind, ExprKind::Name(n) if n == "ключ"));
        for e in all_exprs(f) {
            assert!(
                src.get(e.span.start..e.span.end).is_some(),
                "span {:?} splits a char",
                e.span
            );
        }
    }

    #[test]
    fn deeply_nested_macro_body_uses_helper_thread() {
        // Risk above the inline budget (nested blocks/closures) but well below the hard cap.
        let depth = 25;
        let src = format!(
            "fn f() {{ tokio::select! {{ r = fut => {}let k = Uuid::new_v4();{} }} }}",
            "{ if a { ".repeat(depth),
            " } }".repeat(depth)
        );
        let (call_text, too_deep) = on_small_stack(move || {
            let p = parse(&src);
            let c = find_call(&p.facts, "new_v4");
            (src[c.span.start..c.span.end].to_string(), p.too_deep)
        });
        assert_eq!(call_text, "Uuid::new_v4()");
        assert!(!too_deep);
    }

    #[test]
    fn oversized_macro_body_is_skipped() {
        let src = format!(
            "fn f() {{ let v = vec![{}]; let k = format!(\"{{}}\", x); }}",
            "1, ".repeat(30_000)
        );
        let p = parse(&src);
        assert!(macro_args(find_macro(&p.facts, "vec")).is_empty());
        assert_eq!(macro_args(find_macro(&p.facts, "format")).len(), 2);
    }

    #[test]
    fn empty_file() {
        let p = parse("");
        assert!(!p.has_errors);
        assert!(
            p.facts.functions.is_empty()
                && p.facts.types.is_empty()
                && p.facts.top_level.is_empty()
        );
    }

    #[test]
    fn garbage_and_broken_input_never_panics() {
        let broken = [
            "fn f( { let x = ; impl for {",
            "impl Middleware for { async fn handle(&self) -> { format!(\"{}\", Uuid::new_v4() }",
            "fn f() { format!(\"{\", ); json!({ \"a\": }); select! { => , } m!(\"unterminated) }",
            "\u{feff}fn f() { m!(\u{feff}x); }",
            "fn f() { let s = \"\\u{zz}\"; r#\"\" ; 'a: while let = { } }",
            "#[cfg(test)] mod m { #[test] fn",
        ];
        for src in broken {
            let p = parse(src);
            assert!(p.has_errors || src.starts_with('\u{feff}'), "{src}");
        }
        let p = parse("fn f() { let x = ; }");
        assert!(p.has_errors && !p.facts.syntax_errors.is_empty());
        // Deterministic pseudo-random bytes and mutations of real code.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = b"{}()[]<>|&!?:;,.=\"'#$@\\ \nafnletmatchimplformat!json!r#0123\x00\xff";
        for _ in 0..300 {
            let len = (next() % 200) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() as usize) % alphabet.len()])
                .collect();
            let s = String::from_utf8_lossy(&bytes);
            parse(&s);
            let mut m = MIDDLEWARE.as_bytes().to_vec();
            for _ in 0..3 {
                let at = (next() as usize) % m.len();
                match next() % 3 {
                    0 => {
                        m.remove(at);
                    }
                    1 => m.insert(at, alphabet[(next() as usize) % alphabet.len()]),
                    _ => m.truncate(at.max(1)),
                }
            }
            parse(&String::from_utf8_lossy(&m));
        }
    }
}
