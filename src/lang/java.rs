//! Java front end: lowers a tree-sitter-java (0.23) tree into the language-neutral
//! [`crate::facts`] model.
//!
//! One walk over the tree. Every recursive entry point (`lower_expr`, `lower_stmt_into`,
//! `lower_member`, `lower_type_decl`) is guarded by [`Lowerer::enter`]; left-deep chains
//! (`a + b + c`, `a.b().c().d()`) are walked iteratively, and expression dispatch goes through a
//! function-pointer table so that each nesting level costs only a few small stack frames.

use super::syntax::{Lowerer, clean_type, named_children, span};
use crate::facts::{
    Annotation, Arg, Binding, Catch, Expr, ExprKind, FnId, FnKind, Function, Lang, LoopKind,
    MatchArm, Param, Span, Stmt, Text, TypeDecl, TypeId, TypeKind, simple_name,
};
use std::sync::OnceLock;
use tree_sitter::Node;

/// Lowers a whole `program` node into `lw.facts`.
pub fn lower(lw: &mut Lowerer, root: Node) {
    let mut cx = Cx {
        lw,
        scopes: Vec::new(),
        record_params: Vec::new(),
    };
    for child in named_children(root) {
        cx.lower_member(child);
    }
}

/// The innermost lexical scopes, outermost first.
#[derive(Clone, Copy)]
enum Scope {
    Fn(FnId),
    Type(TypeId),
}

struct Cx<'a, 's> {
    lw: &'a mut Lowerer<'s>,
    scopes: Vec<Scope>,
    /// Record components of the records being lowered (for compact constructors); an empty
    /// entry for every other type.
    record_params: Vec<Vec<Param>>,
}

/// Field ids of the Java grammar, resolved once (looking fields up by name costs a string
/// scan per call).
struct Fields {
    alternative: u16,
    arguments: u16,
    array: u16,
    body: u16,
    condition: u16,
    consequence: u16,
    constructor: u16,
    declarator: u16,
    field: u16,
    index: u16,
    init: u16,
    key: u16,
    left: u16,
    name: u16,
    object: u16,
    operand: u16,
    operator: u16,
    parameters: u16,
    pattern: u16,
    resources: u16,
    right: u16,
    scope: u16,
    superclass: u16,
    template_argument: u16,
    type_: u16,
    update: u16,
    value: u16,
}

fn fields() -> &'static Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let lang = super::syntax::language(Lang::Java);
        let id = |name: &str| lang.field_id_for_name(name).map_or(0, |f| f.get());
        Fields {
            alternative: id("alternative"),
            arguments: id("arguments"),
            array: id("array"),
            body: id("body"),
            condition: id("condition"),
            consequence: id("consequence"),
            constructor: id("constructor"),
            declarator: id("declarator"),
            field: id("field"),
            index: id("index"),
            init: id("init"),
            key: id("key"),
            left: id("left"),
            name: id("name"),
            object: id("object"),
            operand: id("operand"),
            operator: id("operator"),
            parameters: id("parameters"),
            pattern: id("pattern"),
            resources: id("resources"),
            right: id("right"),
            scope: id("scope"),
            superclass: id("superclass"),
            template_argument: id("template_argument"),
            type_: id("type"),
            update: id("update"),
            value: id("value"),
        }
    })
}

/// Children of `n` under field `id`, in order.
fn children_with_field(n: Node, id: u16) -> Vec<Node> {
    let mut out = Vec::new();
    let mut c = n.walk();
    if c.goto_first_child() {
        loop {
            if c.field_id().map(|f| f.get()) == Some(id) {
                out.push(c.node());
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Expression lowering entry points, indexed by node kind id (see [`kind_table`]).
#[derive(Clone, Copy)]
enum H {
    Name,
    ScopedIdentifier,
    TypeExpr,
    Chain,
    New,
    CtorCall,
    String,
    TemplateExpr,
    Lit,
    Binary,
    Instanceof,
    Ternary,
    Lambda,
    MethodRef,
    Assign,
    Cast,
    Index,
    Paren,
    Unary,
    Update,
    Switch,
    ArrayCreation,
    ClassLiteral,
    AnnotationExpr,
    FirstChild,
    TypePattern,
    BlockOf,
    If,
    While,
    Do,
    For,
    Foreach,
    Labeled,
    Try,
    Return,
    Throw,
    Break,
    Continue,
    ChildrenNoError,
    StmtAsBlock,
    Other,
}

/// Which lowering function handles a node kind.
fn expr_handler(kind: &str) -> H {
    match kind {
        "identifier" | "this" | "super" | "type_identifier" | "underscore_pattern" => H::Name,
        "scoped_identifier" => H::ScopedIdentifier,
        "scoped_type_identifier"
        | "generic_type"
        | "array_type"
        | "integral_type"
        | "floating_point_type"
        | "boolean_type"
        | "void_type"
        | "annotated_type" => H::TypeExpr,
        "field_access" | "method_invocation" => H::Chain,
        "object_creation_expression" => H::New,
        "explicit_constructor_invocation" => H::CtorCall,
        "string_literal" => H::String,
        "template_expression" => H::TemplateExpr,
        "character_literal"
        | "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal"
        | "decimal_floating_point_literal"
        | "hex_floating_point_literal"
        | "true"
        | "false"
        | "null_literal" => H::Lit,
        "binary_expression" => H::Binary,
        "instanceof_expression" => H::Instanceof,
        "ternary_expression" => H::Ternary,
        "lambda_expression" => H::Lambda,
        "method_reference" => H::MethodRef,
        "assignment_expression" => H::Assign,
        "cast_expression" => H::Cast,
        "array_access" => H::Index,
        "parenthesized_expression" => H::Paren,
        "unary_expression" => H::Unary,
        "update_expression" => H::Update,
        "switch_expression" => H::Switch,
        "array_creation_expression" => H::ArrayCreation,
        "class_literal" => H::ClassLiteral,
        "annotation" | "marker_annotation" => H::AnnotationExpr,
        "pattern" | "guard" => H::FirstChild,
        "type_pattern" | "record_pattern_component" => H::TypePattern,
        "block" | "constructor_body" => H::BlockOf,
        "if_statement" => H::If,
        "while_statement" => H::While,
        "do_statement" => H::Do,
        "for_statement" => H::For,
        "enhanced_for_statement" => H::Foreach,
        "labeled_statement" => H::Labeled,
        "try_statement" | "try_with_resources_statement" => H::Try,
        "return_statement" => H::Return,
        "throw_statement" => H::Throw,
        "break_statement" => H::Break,
        "continue_statement" => H::Continue,
        "synchronized_statement" | "assert_statement" | "yield_statement" => H::ChildrenNoError,
        k if is_stmt_only(k) => H::StmtAsBlock,
        _ => H::Other,
    }
}

/// Handler per node kind id of the Java grammar, built once (dispatching on `kind_id` avoids
/// a C-string conversion and a string match per node).
fn kind_table() -> &'static [H] {
    static TABLE: OnceLock<Vec<H>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let lang = super::syntax::language(Lang::Java);
        (0..lang.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| lang.node_kind_for_id(id))
                    .map_or(H::Other, expr_handler)
            })
            .collect()
    })
}

type LowerFn<'a, 's> = for<'t> fn(&mut Cx<'a, 's>, Node<'t>) -> Expr;

fn is_comment(n: Node) -> bool {
    static IDS: OnceLock<[u16; 2]> = OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let lang = super::syntax::language(Lang::Java);
        [
            lang.id_for_node_kind("line_comment", true),
            lang.id_for_node_kind("block_comment", true),
        ]
    });
    ids.contains(&n.kind_id())
}

fn empty(sp: Span) -> Expr {
    Expr::new(sp, ExprKind::Other(Vec::new()))
}

fn is_type_decl(kind: &str) -> bool {
    matches!(
        kind,
        "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration"
            | "annotation_type_declaration"
    )
}

/// Kinds that [`Cx::lower_stmt_into`] handles itself (declarations and statement wrappers);
/// in expression position they become a `Block` of what they lower to.
fn is_stmt_only(kind: &str) -> bool {
    is_type_decl(kind)
        || matches!(
            kind,
            "local_variable_declaration"
                | "expression_statement"
                | "method_declaration"
                | "constructor_declaration"
                | "compact_constructor_declaration"
                | "annotation_type_element_declaration"
                | "field_declaration"
                | "constant_declaration"
                | "static_initializer"
                | "import_declaration"
                | "package_declaration"
                | "module_declaration"
                | "line_comment"
                | "block_comment"
        )
}

/// First named child that is neither a comment nor an ERROR node.
fn first_real_child(n: Node) -> Option<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .find(|ch| !is_comment(*ch) && !ch.is_error())
}

/// Decodes the simple escapes `\" \\ \n \t` (and drops a text block's `\<newline>`); every
/// other escape stays as written.
fn decode_escapes(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            // Text block line continuation.
            Some('\n') => {}
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Content of a text block between the `"""` delimiters: the opening line is dropped,
/// incidental indentation and trailing spaces are stripped (JLS 3.10.6), escapes decoded.
fn text_block(inner: &str) -> String {
    let Some(nl) = inner.find('\n') else {
        return decode_escapes(inner.trim());
    };
    let body = inner.get(nl + 1..).unwrap_or("");
    let lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let last = lines.len().saturating_sub(1);
    let indent = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| *i == last || !l.trim().is_empty())
        .map(|(_, l)| l.chars().take_while(|c| c.is_whitespace()).count())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(body.len());
    for (i, l) in lines.iter().enumerate() {
        let rest = l
            .char_indices()
            .nth(indent)
            .and_then(|(b, _)| l.get(b..))
            .unwrap_or("");
        out.push_str(rest.trim_end());
        if i != last {
            out.push('\n');
        }
    }
    decode_escapes(&out)
}

/// Content of a string literal or text block as written (with delimiters).
pub(crate) fn string_content(raw: &str) -> String {
    if let Some(inner) = raw.strip_prefix("\"\"\"") {
        let inner = inner.strip_suffix("\"\"\"").unwrap_or(inner);
        return text_block(inner);
    }
    let inner = raw.strip_prefix('"').unwrap_or(raw);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    decode_escapes(inner)
}

/// A `Field` chain for a dotted name (`a.b.C` -> `Field{Field{Name(a), b}, C}`). With
/// `at = Some(start)` the text is the source slice at `start` and each link gets its own span;
/// with `None` every link gets `whole`.
fn path_expr(text: &str, at: Option<usize>, whole: Span) -> Expr {
    let mut parts = text.split('.');
    let first = parts.next().unwrap_or("");
    let mut end = at.map_or(0, |s| s + first.len());
    let sp = |end: usize| at.map_or(whole, |s| Span::new(s, end));
    let mut e = Expr::new(sp(end), ExprKind::Name(first.into()));
    for p in parts {
        end += 1 + p.len();
        e = Expr::new(
            sp(end),
            ExprKind::Field {
                receiver: Box::new(e),
                name: p.into(),
            },
        );
    }
    e
}

/// Removes whitespace inside a name as written (`java.util . List` -> `java.util.List`).
pub(crate) fn squeeze(s: &str) -> String {
    if s.chars().any(char::is_whitespace) {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    } else {
        s.to_string()
    }
}

impl<'a, 's> Cx<'a, 's> {
    fn text(&self, n: Node) -> &'s str {
        self.lw.text(n)
    }

    fn innermost_fn(&self) -> Option<FnId> {
        match self.scopes.last() {
            Some(Scope::Fn(f)) => Some(*f),
            _ => None,
        }
    }

    fn innermost_type(&self) -> Option<TypeId> {
        match self.scopes.last() {
            Some(Scope::Type(t)) => Some(*t),
            _ => None,
        }
    }

    /// A type as written minus generics and annotations (`@NonNull List<String>` -> `List`).
    fn type_text(&self, n: Node) -> String {
        let mut n = n;
        if n.kind() == "annotated_type" {
            let mut c = n.walk();
            let inner = n.named_children(&mut c).filter(|ch| {
                !matches!(ch.kind(), "annotation" | "marker_annotation") && !is_comment(*ch)
            });
            match inner.last() {
                Some(i) => n = i,
                None => return String::new(),
            }
        }
        squeeze(&clean_type(self.text(n)))
    }

    /// `None` for `var`.
    fn opt_type(&self, n: Option<Node>) -> Option<String> {
        let t = self.type_text(n?);
        if t == "var" || t.is_empty() {
            None
        } else {
            Some(t)
        }
    }

    // ------------------------------------------------------------------ declarations

    fn lower_import(&mut self, n: Node) {
        let mut s = String::new();
        for ch in named_children(n) {
            match ch.kind() {
                "scoped_identifier" | "identifier" => s.push_str(&squeeze(self.text(ch))),
                "asterisk" => s.push_str(".*"),
                _ => {}
            }
        }
        if !s.is_empty() {
            self.lw.facts.imports.push(s);
        }
    }

    fn lower_annotation(&mut self, n: Node) -> Annotation {
        let name = n
            .child_by_field_id(fields().name)
            .map(|x| simple_name(self.text(x)).to_string())
            .unwrap_or_default();
        let mut args = Vec::new();
        if let Some(al) = n.child_by_field_id(fields().arguments) {
            for c in named_children(al) {
                if is_comment(c) {
                    continue;
                }
                if c.kind() == "element_value_pair" {
                    let key = c
                        .child_by_field_id(fields().key)
                        .map(|k| self.text(k).to_string());
                    let value = match c.child_by_field_id(fields().value) {
                        Some(v) => self.lower_expr(v),
                        None => empty(span(c)),
                    };
                    args.push(Arg { name: key, value });
                } else {
                    args.push(Arg {
                        name: None,
                        value: self.lower_expr(c),
                    });
                }
            }
        }
        Annotation {
            name,
            args,
            span: span(n),
        }
    }

    fn read_modifiers(&mut self, m: Node, anns: &mut Vec<Annotation>, mods: &mut Vec<String>) {
        let mut c = m.walk();
        for ch in m.children(&mut c) {
            match ch.kind() {
                "annotation" | "marker_annotation" => anns.push(self.lower_annotation(ch)),
                _ if !ch.is_named() => mods.push(self.text(ch).to_lowercase()),
                _ => {}
            }
        }
    }

    /// Annotations and modifier keywords of a declaration (its `modifiers` child and any
    /// annotations standing directly in it).
    fn modifiers_of(&mut self, n: Node) -> (Vec<Annotation>, Vec<String>) {
        let mut anns = Vec::new();
        let mut mods = Vec::new();
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match ch.kind() {
                "modifiers" => self.read_modifiers(ch, &mut anns, &mut mods),
                "annotation" | "marker_annotation" => anns.push(self.lower_annotation(ch)),
                _ => {}
            }
        }
        (anns, mods)
    }

    /// Class-body / program-level item. Statements that turn up here (scripts, error recovery)
    /// go to `facts.top_level`.
    fn lower_member(&mut self, n: Node) {
        if !self.lw.enter() {
            return;
        }
        self.lower_member_inner(n);
        self.lw.leave();
    }

    fn lower_member_inner(&mut self, n: Node) {
        match n.kind() {
            "line_comment" | "block_comment" | "package_declaration" | "module_declaration" => {}
            "import_declaration" => self.lower_import(n),
            "field_declaration" | "constant_declaration" => self.member_fields(n),
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => {
                self.lower_function(n);
            }
            "static_initializer" => {
                self.lower_initializer(n, true);
            }
            "block" if self.innermost_type().is_some() => {
                self.lower_initializer(n, false);
            }
            k if is_type_decl(k) => {
                self.lower_type_decl(n);
            }
            "enum_body_declarations" | "ERROR" => self.lower_members_of(n),
            "enum_constant" => self.lower_enum_constant(n),
            _ => self.member_stmt(n),
        }
    }

    fn member_fields(&mut self, n: Node) {
        let bs = self.lower_var_decl(n);
        match self.innermost_type() {
            Some(t) => self.lw.facts.types[t].fields.extend(bs),
            None => self.lw.facts.globals.extend(bs),
        }
    }

    fn member_stmt(&mut self, n: Node) {
        let mut v = Vec::new();
        self.lower_stmt_into(n, &mut v);
        self.lw.facts.top_level.extend(v);
    }

    fn lower_type_decl(&mut self, n: Node) -> Option<TypeId> {
        if !self.lw.enter() {
            return None;
        }
        let t = self.lower_type_decl_inner(n);
        self.lw.leave();
        Some(t)
    }

    fn lower_type_decl_inner(&mut self, n: Node) -> TypeId {
        let id = self.type_header(n);
        let rparams = self.record_fields(n, id);
        self.scopes.push(Scope::Type(id));
        self.record_params.push(rparams);
        if let Some(body) = n.child_by_field_id(fields().body) {
            self.lower_members_of(body);
        }
        self.record_params.pop();
        self.scopes.pop();
        id
    }

    fn lower_members_of(&mut self, body: Node) {
        let mut c = body.walk();
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() {
                    self.lower_member(ch);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
    }

    /// Adds the `TypeDecl` (without members) and links it to its parent type.
    fn type_header(&mut self, n: Node) -> TypeId {
        let kind = match n.kind() {
            "interface_declaration" | "annotation_type_declaration" => TypeKind::Interface,
            "enum_declaration" => TypeKind::Enum,
            "record_declaration" => TypeKind::Record,
            _ => TypeKind::Class,
        };
        let name_node = n.child_by_field_id(fields().name);
        let name = name_node.map(|x| self.text(x).to_string());
        let (annotations, _mods) = self.modifiers_of(n);
        let supertypes = self.supertypes_of(n);
        let parent_type = self.innermost_type();
        let parent_fn = self.innermost_fn();
        let id = self.lw.add_type(TypeDecl {
            name,
            kind,
            supertypes,
            annotations,
            fields: Vec::new(),
            methods: Vec::new(),
            nested: Vec::new(),
            span: span(n),
            name_span: name_node.map(span).unwrap_or_else(|| span(n)),
            parent_type,
            parent_fn,
        });
        if let Some(p) = parent_type {
            self.lw.facts.types[p].nested.push(id);
        }
        id
    }

    /// Superclass, `implements` list and interface `extends` list, minus generics.
    fn supertypes_of(&self, n: Node) -> Vec<String> {
        let mut supertypes = Vec::new();
        if let Some(t) = n
            .child_by_field_id(fields().superclass)
            .and_then(first_real_child)
        {
            supertypes.push(self.type_text(t));
        }
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            if !matches!(ch.kind(), "super_interfaces" | "extends_interfaces") {
                continue;
            }
            for tl in named_children(ch) {
                if tl.kind() == "type_list" {
                    for t in named_children(tl) {
                        if !is_comment(t) {
                            supertypes.push(self.type_text(t));
                        }
                    }
                }
            }
        }
        supertypes
    }

    /// Record components become fields; returns them as parameters for a compact constructor.
    fn record_fields(&mut self, n: Node, id: TypeId) -> Vec<Param> {
        let mut rparams = Vec::new();
        if n.kind() != "record_declaration" {
            return rparams;
        }
        if let Some(ps) = n.child_by_field_id(fields().parameters) {
            for p in named_children(ps) {
                if let Some(b) = self.record_component(p) {
                    rparams.push(Param {
                        name: b.name.clone(),
                        ty: b.ty.clone(),
                        annotations: b.annotations.clone(),
                        span: b.span,
                        default: None,
                    });
                    self.lw.facts.types[id].fields.push(b);
                }
            }
        }
        rparams
    }

    fn record_component(&mut self, p: Node) -> Option<Binding> {
        let param = self.lower_param(p)?;
        let (annotations, modifiers) = self.modifiers_of(p);
        Some(Binding {
            name: param.name,
            ty: param.ty,
            init: None,
            annotations,
            modifiers,
            mutable: false,
            span: span(p),
            name_span: p
                .child_by_field_id(fields().name)
                .map(span)
                .unwrap_or(param.span),
        })
    }

    /// An enum constant is a field of the enum initialised with `new E(args) { body }`.
    fn lower_enum_constant(&mut self, n: Node) {
        let Some(owner) = self.innermost_type() else {
            return;
        };
        let enum_name = self.lw.facts.types[owner].name.clone().unwrap_or_default();
        let (annotations, modifiers) = self.modifiers_of(n);
        let name_node = n.child_by_field_id(fields().name);
        let name = name_node
            .map(|x| self.text(x).to_string())
            .unwrap_or_default();
        let name_span = name_node.map(span).unwrap_or_else(|| span(n));
        let args = match n.child_by_field_id(fields().arguments) {
            Some(a) => self.lower_args(a),
            None => Vec::new(),
        };
        let body = n
            .child_by_field_id(fields().body)
            .map(|b| self.lower_anon_type(b, enum_name.clone(), span(n), name_span));
        let init = Expr::new(
            span(n),
            ExprKind::New {
                ty: enum_name.as_str().into(),
                args,
                body,
            },
        );
        self.lw.facts.types[owner].fields.push(Binding {
            name,
            ty: Some(enum_name),
            init: Some(init),
            annotations,
            modifiers,
            mutable: false,
            span: span(n),
            name_span,
        });
    }

    /// An anonymous class body (`new X() { .. }`, enum constant body).
    fn lower_anon_type(&mut self, body: Node, sup: String, sp: Span, name_span: Span) -> TypeId {
        let id = self.anon_header(sup, sp, name_span);
        self.scopes.push(Scope::Type(id));
        self.record_params.push(Vec::new());
        self.lower_members_of(body);
        self.record_params.pop();
        self.scopes.pop();
        id
    }

    fn anon_header(&mut self, sup: String, sp: Span, name_span: Span) -> TypeId {
        let parent_type = self.innermost_type();
        let parent_fn = self.innermost_fn();
        let id = self.lw.add_type(TypeDecl {
            name: None,
            kind: TypeKind::Anonymous,
            supertypes: vec![sup],
            annotations: Vec::new(),
            fields: Vec::new(),
            methods: Vec::new(),
            nested: Vec::new(),
            span: sp,
            name_span,
            parent_type,
            parent_fn,
        });
        if let Some(p) = parent_type {
            self.lw.facts.types[p].nested.push(id);
        }
        id
    }

    /// `field_declaration`, `constant_declaration`, `local_variable_declaration`: one binding
    /// per declarator.
    fn lower_var_decl(&mut self, n: Node) -> Vec<Binding> {
        let head = self.decl_head(n);
        let decls: Vec<Node> = children_with_field(n, fields().declarator);
        let single = decls.len() == 1;
        let mut out = Vec::with_capacity(decls.len());
        for d in decls {
            let init = self.opt_field_expr(d, fields().value);
            let sp = if single { span(n) } else { span(d) };
            out.push(self.mk_binding(&head, d, init, sp));
        }
        out
    }

    fn decl_head(&mut self, n: Node) -> DeclHead {
        let (annotations, modifiers) = self.modifiers_of(n);
        let ty = self.opt_type(n.child_by_field_id(fields().type_));
        let mutable = n.kind() != "constant_declaration" && !modifiers.iter().any(|m| m == "final");
        DeclHead {
            annotations,
            modifiers,
            ty,
            mutable,
        }
    }

    fn mk_binding(&self, head: &DeclHead, d: Node, init: Option<Expr>, sp: Span) -> Binding {
        let name_node = d.child_by_field_id(fields().name);
        Binding {
            name: name_node
                .map(|x| self.text(x).to_string())
                .unwrap_or_default(),
            ty: head.ty.clone(),
            init,
            annotations: head.annotations.clone(),
            modifiers: head.modifiers.clone(),
            mutable: head.mutable,
            span: sp,
            name_span: name_node.map(span).unwrap_or_else(|| span(d)),
        }
    }

    fn lower_param(&mut self, p: Node) -> Option<Param> {
        match p.kind() {
            "formal_parameter" => {
                let (annotations, _) = self.modifiers_of(p);
                let name_node = p.child_by_field_id(fields().name);
                Some(Param {
                    name: name_node
                        .map(|x| self.text(x).to_string())
                        .unwrap_or_default(),
                    ty: self.opt_type(p.child_by_field_id(fields().type_)),
                    annotations,
                    span: span(p),
                    default: None,
                })
            }
            "spread_parameter" => {
                let (annotations, _) = self.modifiers_of(p);
                let mut name = String::new();
                let mut ty = None;
                for ch in named_children(p) {
                    match ch.kind() {
                        "modifiers" | "annotation" | "marker_annotation" | "line_comment"
                        | "block_comment" => {}
                        "variable_declarator" => {
                            if let Some(nm) = ch.child_by_field_id(fields().name) {
                                name = self.text(nm).to_string();
                            }
                        }
                        _ => ty = Some(format!("{}[]", self.type_text(ch))),
                    }
                }
                Some(Param {
                    name,
                    ty,
                    annotations,
                    span: span(p),
                    default: None,
                })
            }
            "identifier" => Some(Param {
                name: self.text(p).to_string(),
                ty: None,
                annotations: Vec::new(),
                span: span(p),
                default: None,
            }),
            _ => None,
        }
    }

    fn lower_params(&mut self, ps: Node) -> Vec<Param> {
        if ps.kind() == "identifier" {
            return self.lower_param(ps).into_iter().collect();
        }
        let mut out = Vec::new();
        for p in named_children(ps) {
            if let Some(x) = self.lower_param(p) {
                out.push(x);
            }
        }
        out
    }

    /// Statements of a `block` / `constructor_body`.
    fn lower_body(&mut self, b: Node) -> Vec<Stmt> {
        // Sized up front, like arguments (a statement may add more than one).
        let mut out = Vec::with_capacity(b.named_child_count());
        let mut c = b.walk();
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() {
                    self.lower_stmt_into(ch, &mut out);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        out
    }

    /// Methods, constructors, annotation elements; a `method_declaration` outside a type
    /// (error recovery, unnamed classes) becomes a free / local function.
    fn lower_function(&mut self, n: Node) -> FnId {
        let id = self.function_header(n);
        if let Some(b) = n.child_by_field_id(fields().body) {
            self.scopes.push(Scope::Fn(id));
            let body = self.lower_body(b);
            self.scopes.pop();
            self.lw.facts.functions[id].body = body;
        }
        id
    }

    /// Adds the `Function` (without body) and links it to its owner type.
    fn function_header(&mut self, n: Node) -> FnId {
        let owner = self.innermost_type();
        let is_ctor = matches!(
            n.kind(),
            "constructor_declaration" | "compact_constructor_declaration"
        );
        let kind = if is_ctor {
            FnKind::Constructor
        } else if owner.is_some() {
            FnKind::Method
        } else {
            FnKind::Function
        };
        let (annotations, modifiers) = self.modifiers_of(n);
        let name_node = n.child_by_field_id(fields().name);
        let params = if n.kind() == "compact_constructor_declaration" {
            self.record_params.last().cloned().unwrap_or_default()
        } else {
            match n.child_by_field_id(fields().parameters) {
                Some(ps) => self.lower_params(ps),
                None => Vec::new(),
            }
        };
        let return_type = if is_ctor {
            None
        } else {
            n.child_by_field_id(fields().type_)
                .map(|t| self.type_text(t))
        };
        let id = self.lw.add_fn(Function {
            name: name_node.map(|x| self.text(x).to_string()),
            kind,
            params,
            annotations,
            modifiers,
            return_type,
            owner,
            parent: if owner.is_none() {
                self.innermost_fn()
            } else {
                None
            },
            body: Vec::new(),
            has_body: n.child_by_field_id(fields().body).is_some(),
            span: span(n),
            name_span: name_node.map(span).unwrap_or_else(|| span(n)),
        });
        if let Some(t) = owner {
            self.lw.facts.types[t].methods.push(id);
        }
        id
    }

    /// `static { }` (`<clinit>`) and instance `{ }` (`<init>`) initializer blocks.
    fn lower_initializer(&mut self, n: Node, is_static: bool) -> FnId {
        let owner = self.innermost_type();
        let first = n.child(0).map(span).unwrap_or_else(|| span(n));
        let id = self.lw.add_fn(Function {
            name: Some(if is_static { "<clinit>" } else { "<init>" }.to_string()),
            kind: FnKind::Constructor,
            params: Vec::new(),
            annotations: Vec::new(),
            modifiers: if is_static {
                vec!["static".to_string()]
            } else {
                Vec::new()
            },
            return_type: None,
            owner,
            parent: None,
            body: Vec::new(),
            has_body: true,
            span: span(n),
            name_span: first,
        });
        if let Some(t) = owner {
            self.lw.facts.types[t].methods.push(id);
        }
        let block = if is_static {
            first_real_child(n)
        } else {
            Some(n)
        };
        if let Some(b) = block {
            self.scopes.push(Scope::Fn(id));
            let body = self.lower_body(b);
            self.scopes.pop();
            self.lw.facts.functions[id].body = body;
        }
        id
    }

    // ------------------------------------------------------------------ statements

    /// Lowers one statement (or anything standing in statement position) into `out`.
    fn lower_stmt_into(&mut self, n: Node, out: &mut Vec<Stmt>) {
        if !self.lw.enter() {
            return;
        }
        self.lower_stmt_inner(n, out);
        self.lw.leave();
    }

    fn lower_stmt_inner(&mut self, n: Node, out: &mut Vec<Stmt>) {
        match n.kind() {
            "line_comment" | "block_comment" | "package_declaration" | "module_declaration" => {
                return;
            }
            "import_declaration" => self.lower_import(n),
            "local_variable_declaration" | "field_declaration" | "constant_declaration" => {
                self.push_lets(n, out)
            }
            "expression_statement" | "static_initializer" => self.push_first_child(n, out),
            k if is_type_decl(k) => self.push_local_type(n, out),
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => self.push_local_fn(n, out),
            "ERROR" => return self.push_other(n, out),
            "block" => return self.push_expr(n, out),
            _ => self.push_expr(n, out),
        }
        if n.has_error() {
            self.push_error_children(n, out);
        }
    }

    fn push_expr(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let e = self.lower_expr(n);
        out.push(Stmt::Expr(e));
    }

    fn push_other(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let e = self.lower_other(n);
        out.push(Stmt::Expr(e));
    }

    fn push_first_child(&mut self, n: Node, out: &mut Vec<Stmt>) {
        if let Some(c) = first_real_child(n) {
            self.push_expr(c, out);
        }
    }

    fn push_lets(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let bs = self.lower_var_decl(n);
        out.extend(bs.into_iter().map(|b| Stmt::Let(Box::new(b))));
    }

    fn push_local_type(&mut self, n: Node, out: &mut Vec<Stmt>) {
        if let Some(t) = self.lower_type_decl(n) {
            out.push(Stmt::LocalType(t));
        }
    }

    fn push_local_fn(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let f = self.lower_function(n);
        if self.lw.facts.functions[f].owner.is_none() {
            out.push(Stmt::LocalFn(f));
        }
    }

    /// ERROR children sitting inside an otherwise structured statement.
    fn push_error_children(&mut self, n: Node, out: &mut Vec<Stmt>) {
        let mut c = n.walk();
        let errs: Vec<Node> = n.children(&mut c).filter(|ch| ch.is_error()).collect();
        for e in errs {
            self.push_other(e, out);
        }
    }

    fn block_of(&mut self, n: Node) -> Expr {
        let stmts = self.lower_body(n);
        Expr::new(span(n), ExprKind::Block(stmts))
    }

    /// A statement-only node in expression position: a block of what it lowers to.
    fn stmt_as_block(&mut self, n: Node) -> Expr {
        let mut v = Vec::new();
        self.lower_stmt_inner(n, &mut v);
        Expr::new(span(n), ExprKind::Block(v))
    }

    /// Condition of `if`/`while`/`do`/`switch`: the parenthesized expression's inside.
    fn cond_of(&mut self, n: Node, field: u16) -> Expr {
        match n.child_by_field_id(field) {
            Some(c) => self.lower_expr(c),
            None => empty(span(n)),
        }
    }

    fn opt_field_expr(&mut self, n: Node, field: u16) -> Option<Expr> {
        n.child_by_field_id(field).map(|c| self.lower_expr(c))
    }

    fn field_expr(&mut self, n: Node, field: u16) -> Expr {
        match n.child_by_field_id(field) {
            Some(c) => self.lower_expr(c),
            None => empty(span(n)),
        }
    }

    fn lower_if(&mut self, n: Node) -> Expr {
        let cond = self.cond_of(n, fields().condition);
        let then = self.field_expr(n, fields().consequence);
        let els = self.opt_field_expr(n, fields().alternative);
        mk_if(span(n), cond, then, els)
    }

    fn mk_loop(n: Node, kind: LoopKind, vars: Vec<String>, header: Vec<Expr>, body: Expr) -> Expr {
        Expr::new(
            span(n),
            ExprKind::Loop {
                kind,
                vars: vars.into(),
                header: header.into(),
                body: Box::new(body),
                label: None,
            },
        )
    }

    fn lower_while(&mut self, n: Node) -> Expr {
        let cond = self.cond_of(n, fields().condition);
        let body = self.field_expr(n, fields().body);
        Self::mk_loop(n, LoopKind::While, Vec::new(), vec![cond], body)
    }

    fn lower_do(&mut self, n: Node) -> Expr {
        let body = self.field_expr(n, fields().body);
        let cond = self.cond_of(n, fields().condition);
        Self::mk_loop(n, LoopKind::DoWhile, Vec::new(), vec![cond], body)
    }

    fn lower_for(&mut self, n: Node) -> Expr {
        let header = self.for_header(n);
        let body = self.field_expr(n, fields().body);
        Self::mk_loop(n, LoopKind::For, Vec::new(), header, body)
    }

    /// `for (init; cond; update)`: init declarations become a block of `Let`s.
    fn for_header(&mut self, n: Node) -> Vec<Expr> {
        let mut header = Vec::new();
        let inits: Vec<Node> = children_with_field(n, fields().init);
        for i in inits {
            if i.kind() == "local_variable_declaration" {
                let lets = self
                    .lower_var_decl(i)
                    .into_iter()
                    .map(|b| Stmt::Let(Box::new(b)))
                    .collect();
                header.push(Expr::new(span(i), ExprKind::Block(lets)));
            } else {
                header.push(self.lower_expr(i));
            }
        }
        if let Some(cond) = self.opt_field_expr(n, fields().condition) {
            header.push(cond);
        }
        let updates: Vec<Node> = children_with_field(n, fields().update);
        for u in updates {
            header.push(self.lower_expr(u));
        }
        header
    }

    fn lower_foreach(&mut self, n: Node) -> Expr {
        let vars = n
            .child_by_field_id(fields().name)
            .map(|x| vec![self.text(x).to_string()])
            .unwrap_or_default();
        let iter = self.field_expr(n, fields().value);
        let body = self.field_expr(n, fields().body);
        Self::mk_loop(n, LoopKind::ForEach, vars, vec![iter], body)
    }

    fn lower_labeled(&mut self, n: Node) -> Expr {
        let mut label = None;
        let mut inner = None;
        for ch in named_children(n) {
            if is_comment(ch) || ch.is_error() {
                continue;
            }
            if label.is_none() && ch.kind() == "identifier" {
                label = Some(self.text(ch).to_string());
            } else if inner.is_none() {
                inner = Some(ch);
            }
        }
        let Some(inner) = inner else {
            return empty(span(n));
        };
        let mut e = self.lower_expr(inner);
        if let ExprKind::Loop { label: l, .. } = &mut e.kind {
            *l = label.map(Into::into);
        }
        e
    }

    fn lower_try(&mut self, n: Node) -> Expr {
        let resources = self.try_resources(n);
        let body = self.field_expr(n, fields().body);
        let mut catches = Vec::new();
        let mut finally = None;
        self.try_handlers(n, &mut catches, &mut finally);
        Expr::new(
            span(n),
            ExprKind::Try {
                body: Box::new(body),
                catches,
                finally,
                resources,
            },
        )
    }

    fn try_resources(&mut self, n: Node) -> Vec<Binding> {
        let mut resources = Vec::new();
        if let Some(rs) = n.child_by_field_id(fields().resources) {
            for r in named_children(rs) {
                if r.kind() == "resource"
                    && let Some(b) = self.lower_resource(r)
                {
                    resources.push(b);
                }
            }
        }
        resources
    }

    fn try_handlers(&mut self, n: Node, catches: &mut Vec<Catch>, finally: &mut Option<Box<Expr>>) {
        for ch in named_children(n) {
            match ch.kind() {
                "catch_clause" => catches.push(self.lower_catch(ch)),
                "finally_clause" => {
                    if let Some(b) = first_real_child(ch) {
                        *finally = Some(Box::new(self.lower_expr(b)));
                    }
                }
                _ => {}
            }
        }
    }

    fn lower_resource(&mut self, r: Node) -> Option<Binding> {
        let (annotations, modifiers) = self.modifiers_of(r);
        if let Some(nm) = r.child_by_field_id(fields().name) {
            return Some(Binding {
                name: self.text(nm).to_string(),
                ty: self.opt_type(r.child_by_field_id(fields().type_)),
                init: self.opt_field_expr(r, fields().value),
                annotations,
                modifiers,
                mutable: false,
                span: span(r),
                name_span: span(nm),
            });
        }
        // `try (existing)` / `try (this.res)`.
        let e = first_real_child(r)?;
        Some(Binding {
            name: squeeze(self.text(e)),
            ty: None,
            init: Some(self.lower_expr(e)),
            annotations,
            modifiers,
            mutable: false,
            span: span(r),
            name_span: span(e),
        })
    }

    fn lower_catch(&mut self, n: Node) -> Catch {
        let mut types = Vec::new();
        let mut name = None;
        for ch in named_children(n) {
            if ch.kind() != "catch_formal_parameter" {
                continue;
            }
            if let Some(nm) = ch.child_by_field_id(fields().name) {
                name = Some(self.text(nm).to_string());
            }
            for ct in named_children(ch) {
                if ct.kind() == "catch_type" {
                    for t in named_children(ct) {
                        if !is_comment(t) {
                            types.push(self.type_text(t));
                        }
                    }
                }
            }
        }
        let body = self.field_expr(n, fields().body);
        Catch {
            types,
            name,
            body,
            span: span(n),
        }
    }

    fn lower_switch(&mut self, n: Node) -> Expr {
        let subject = self.opt_field_expr(n, fields().condition).map(Box::new);
        let mut arms = Vec::new();
        if let Some(b) = n.child_by_field_id(fields().body) {
            for ch in named_children(b) {
                match ch.kind() {
                    "switch_block_statement_group" | "switch_rule" => {
                        arms.push(self.lower_arm(ch));
                    }
                    "line_comment" | "block_comment" => {}
                    _ => {
                        // Error recovery: keep the contents in an arm without patterns.
                        let body = self.lower_expr(ch);
                        arms.push(MatchArm {
                            patterns: Vec::new(),
                            pattern_text: String::new(),
                            guard: None,
                            body,
                        });
                    }
                }
            }
        }
        Expr::new(span(n), ExprKind::Match { subject, arms })
    }

    fn lower_arm(&mut self, n: Node) -> MatchArm {
        let mut head = ArmHead::default();
        let mut stmts = Vec::new();
        let mut body_span: Option<Span> = None;
        let is_rule = n.kind() == "switch_rule";
        for ch in named_children(n) {
            if ch.kind() == "switch_label" {
                self.arm_label(ch, &mut head);
                continue;
            }
            if is_comment(ch) {
                continue;
            }
            let sp = span(ch);
            body_span = Some(body_span.map_or(sp, |s| Span::new(s.start, sp.end)));
            if is_rule && ch.kind() == "block" {
                self.push_expr(ch, &mut stmts);
            } else {
                self.lower_stmt_into(ch, &mut stmts);
            }
        }
        head.finish(body_span.unwrap_or_else(|| span(n)), stmts)
    }

    fn arm_label(&mut self, label: Node, head: &mut ArmHead) {
        let mut text_end = label.end_byte();
        for l in named_children(label) {
            match l.kind() {
                "line_comment" | "block_comment" => {}
                "guard" => {
                    text_end = l.start_byte();
                    if let Some(g) = first_real_child(l) {
                        head.guard = Some(self.lower_expr(g));
                    }
                }
                "identifier" if self.text(l) == "default" => {}
                _ => head.patterns.push(self.lower_expr(l)),
            }
        }
        let t = self
            .lw
            .src
            .get(label.start_byte()..text_end)
            .unwrap_or("")
            .trim();
        let t = t.strip_prefix("case").map(str::trim).unwrap_or(t);
        if !head.text.is_empty() {
            head.text.push_str(", ");
        }
        head.text.push_str(t);
    }

    fn first_child_expr(&mut self, n: Node) -> Option<Expr> {
        first_real_child(n).map(|c| self.lower_expr(c))
    }

    fn lower_return(&mut self, n: Node) -> Expr {
        let e = self.first_child_expr(n).map(Box::new);
        Expr::new(span(n), ExprKind::Return(e))
    }

    fn lower_throw(&mut self, n: Node) -> Expr {
        let e = self.first_child_expr(n).unwrap_or_else(|| empty(span(n)));
        Expr::new(span(n), ExprKind::Throw(Box::new(e)))
    }

    fn label_of(&self, n: Node) -> Option<String> {
        first_real_child(n)
            .filter(|c| c.kind() == "identifier")
            .map(|c| self.text(c).to_string())
    }

    fn lower_break(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Break(self.label_of(n)))
    }

    fn lower_continue(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Continue(self.label_of(n)))
    }

    /// `synchronized (lock) { .. }` -> `Other[lock, Block]`; also `assert`, `yield`.
    fn lower_children_no_error(&mut self, n: Node) -> Expr {
        let mut parts = Vec::new();
        for ch in named_children(n) {
            if !is_comment(ch) && !ch.is_error() {
                parts.push(self.lower_expr(ch));
            }
        }
        Expr::new(span(n), ExprKind::Other(parts))
    }

    // ------------------------------------------------------------------ expressions

    /// Lowers any node as an expression (statements become blocks, unknown kinds `Other`).
    fn lower_expr(&mut self, n: Node) -> Expr {
        if !self.lw.enter() {
            return empty(span(n));
        }
        let h = kind_table()
            .get(usize::from(n.kind_id()))
            .copied()
            .unwrap_or(H::Other);
        let f = Self::handler_fn(h);
        let e = f(self, n);
        self.lw.leave();
        e
    }

    fn handler_fn(h: H) -> LowerFn<'a, 's> {
        match h {
            H::Name => Self::lower_name,
            H::ScopedIdentifier => Self::lower_scoped_identifier,
            H::TypeExpr => Self::lower_type_expr,
            H::Chain => Self::lower_chain,
            H::New => Self::lower_new,
            H::CtorCall => Self::lower_ctor_call,
            H::String => Self::lower_string,
            H::TemplateExpr => Self::lower_template_expr,
            H::Lit => Self::lower_lit,
            H::Binary => Self::lower_binary,
            H::Instanceof => Self::lower_instanceof,
            H::Ternary => Self::lower_ternary,
            H::Lambda => Self::lower_lambda,
            H::MethodRef => Self::lower_method_ref,
            H::Assign => Self::lower_assign,
            H::Cast => Self::lower_cast,
            H::Index => Self::lower_index,
            H::Paren => Self::lower_paren,
            H::Unary => Self::lower_unary,
            H::Update => Self::lower_update,
            H::Switch => Self::lower_switch,
            H::ArrayCreation => Self::lower_array_creation,
            H::ClassLiteral => Self::lower_class_literal,
            H::AnnotationExpr => Self::lower_annotation_expr,
            H::FirstChild => Self::lower_first_child,
            H::TypePattern => Self::lower_type_pattern,
            H::BlockOf => Self::block_of,
            H::If => Self::lower_if,
            H::While => Self::lower_while,
            H::Do => Self::lower_do,
            H::For => Self::lower_for,
            H::Foreach => Self::lower_foreach,
            H::Labeled => Self::lower_labeled,
            H::Try => Self::lower_try,
            H::Return => Self::lower_return,
            H::Throw => Self::lower_throw,
            H::Break => Self::lower_break,
            H::Continue => Self::lower_continue,
            H::ChildrenNoError => Self::lower_children_no_error,
            H::StmtAsBlock => Self::stmt_as_block,
            H::Other => Self::lower_other,
        }
    }

    /// Unknown kinds and ERROR nodes: every named child lowered, in source order.
    fn lower_other(&mut self, n: Node) -> Expr {
        let parts = self.lower_named_children(n);
        Expr::new(span(n), ExprKind::Other(parts))
    }

    fn lower_named_children(&mut self, n: Node) -> Vec<Expr> {
        let mut parts = Vec::new();
        let mut c = n.walk();
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() && !is_comment(ch) {
                    let e = self.lower_expr(ch);
                    parts.push(e);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        parts
    }

    fn lower_first_child(&mut self, n: Node) -> Expr {
        self.first_child_expr(n).unwrap_or_else(|| empty(span(n)))
    }

    fn lower_name(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Name(self.text(n).into()))
    }

    fn lower_lit(&mut self, n: Node) -> Expr {
        Expr::new(span(n), ExprKind::Lit(self.text(n).into()))
    }

    fn lower_scoped_identifier(&mut self, n: Node) -> Expr {
        let name = n
            .child_by_field_id(fields().name)
            .map(|x| Text::from(self.text(x)))
            .unwrap_or_default();
        let receiver = self.field_expr(n, fields().scope);
        Expr::new(
            span(n),
            ExprKind::Field {
                receiver: Box::new(receiver),
                name,
            },
        )
    }

    /// A type in expression position (method reference / class literal receiver, patterns):
    /// a dotted `Field` chain of the type minus generics.
    fn lower_type_expr(&mut self, n: Node) -> Expr {
        let t = self.type_text(n);
        if !t.contains('.') || t.contains('[') {
            return Expr::new(span(n), ExprKind::Name(t.into()));
        }
        // Per-link spans only when the text is exactly the source at the node's start.
        let at = Some(n.start_byte()).filter(|&st| {
            n.kind() != "annotated_type"
                && self
                    .lw
                    .src
                    .get(st..st + t.len())
                    .is_some_and(|raw| raw == t)
        });
        path_expr(&t, at, span(n))
    }

    /// `String s` in a pattern / `int x` in a record pattern: the type.
    fn lower_type_pattern(&mut self, n: Node) -> Expr {
        match first_real_child(n) {
            Some(t) => self.lower_type_expr(t),
            None => empty(span(n)),
        }
    }

    fn lower_args(&mut self, al: Node) -> Vec<Arg> {
        // Sized up front: a `Vec` pushed to once keeps room for four (448 bytes for one
        // argument), and every file's facts live until the rules are done.
        let mut args = Vec::with_capacity(al.named_child_count());
        let mut c = al.walk();
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() && !is_comment(ch) {
                    let value = self.lower_expr(ch);
                    args.push(Arg { name: None, value });
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        args
    }

    fn args_of(&mut self, n: Node) -> Vec<Arg> {
        match n.child_by_field_id(fields().arguments) {
            Some(a) => self.lower_args(a),
            None => Vec::new(),
        }
    }

    /// `a.b().c.d()`: the receiver spine is walked iteratively (each link still counts
    /// against the depth guard, so the built tree stays within `MAX_DEPTH`). Kept small: it
    /// is on the stack once per nesting level of calls.
    fn lower_chain(&mut self, n: Node) -> Expr {
        let spine = self.chain_spine(n);
        let mut acc = self.chain_base(spine[spine.len() - 1]);
        let mut i = spine.len();
        while i > 0 {
            i -= 1;
            self.chain_link(spine[i], &mut acc);
        }
        for _ in 1..spine.len() {
            self.lw.leave();
        }
        acc.unwrap_or_else(|| empty(span(n)))
    }

    /// The chain's links, outermost first; enters one depth level per link after the first.
    fn chain_spine<'t>(&mut self, n: Node<'t>) -> Vec<Node<'t>> {
        let mut spine = vec![n];
        let mut base = n.child_by_field_id(fields().object);
        while let Some(b) = base {
            if !matches!(b.kind(), "field_access" | "method_invocation") || !self.lw.enter() {
                break;
            }
            spine.push(b);
            base = b.child_by_field_id(fields().object);
        }
        spine
    }

    /// The receiver of the innermost link, unless it is itself a link (cut by the guard).
    fn chain_base(&mut self, last: Node) -> Option<Expr> {
        let b = last.child_by_field_id(fields().object)?;
        if matches!(b.kind(), "field_access" | "method_invocation") {
            return None;
        }
        Some(self.lower_expr(b))
    }

    /// Wraps `acc` (the receiver so far) in one more call / field link.
    fn chain_link(&mut self, link: Node, acc: &mut Option<Expr>) {
        let receiver = self.super_receiver(link, acc.take());
        *acc = Some(if link.kind() == "method_invocation" {
            self.call_link(link, receiver)
        } else {
            self.mk_field(link, receiver)
        });
    }

    fn call_link(&mut self, link: Node, receiver: Option<Box<Expr>>) -> Expr {
        let args = self.args_of(link);
        self.mk_call(link, receiver, args)
    }

    /// `A.super.foo()` / `A.super.x`: the receiver is `A.super`.
    fn super_receiver(&self, link: Node, acc: Option<Expr>) -> Option<Box<Expr>> {
        let acc = acc?;
        let f = fields();
        let name = link
            .child_by_field_id(f.name)
            .or_else(|| link.child_by_field_id(f.field));
        let super_end = match (link.child_by_field_id(f.object), name) {
            (Some(o), Some(nm)) => self
                .lw
                .src
                .get(o.end_byte()..nm.start_byte())
                .and_then(|t| t.find("super"))
                .map(|i| o.end_byte() + i + "super".len()),
            _ => None,
        };
        let Some(end) = super_end else {
            return Some(Box::new(acc));
        };
        Some(Box::new(Expr::new(
            Span::new(acc.span.start, end),
            ExprKind::Field {
                receiver: Box::new(acc),
                name: "super".into(),
            },
        )))
    }

    fn mk_call(&self, link: Node, receiver: Option<Box<Expr>>, args: Vec<Arg>) -> Expr {
        let name = link
            .child_by_field_id(fields().name)
            .map(|x| Text::from(self.text(x)))
            .unwrap_or_default();
        Expr::new(
            span(link),
            ExprKind::Call {
                receiver,
                name,
                args,
            },
        )
    }

    fn mk_field(&self, link: Node, receiver: Option<Box<Expr>>) -> Expr {
        let name = link
            .child_by_field_id(fields().field)
            .map(|x| Text::from(self.text(x)))
            .unwrap_or_default();
        let receiver = receiver.unwrap_or_else(|| Box::new(empty(span(link))));
        Expr::new(span(link), ExprKind::Field { receiver, name })
    }

    fn lower_new(&mut self, n: Node) -> Expr {
        let ty_node = n.child_by_field_id(fields().type_);
        let ty = ty_node.map(|t| self.type_text(t)).unwrap_or_default();
        let args = self.args_of(n);
        let body = self.anon_body(n, ty_node, &ty);
        Expr::new(
            span(n),
            ExprKind::New {
                ty: ty.into(),
                args,
                body,
            },
        )
    }

    fn anon_body(&mut self, n: Node, ty_node: Option<Node>, ty: &str) -> Option<TypeId> {
        let mut c = n.walk();
        let cb = n.children(&mut c).find(|ch| ch.kind() == "class_body")?;
        let head_end = ty_node.map_or(n.start_byte(), |t| t.end_byte());
        let head = Span::new(n.start_byte(), head_end);
        Some(self.lower_anon_type(cb, ty.to_string(), span(n), head))
    }

    /// `super(..)` / `this(..)` / `outer.super(..)` in a constructor.
    fn lower_ctor_call(&mut self, n: Node) -> Expr {
        let name = n
            .child_by_field_id(fields().constructor)
            .map(|x| self.text(x).to_string())
            .unwrap_or_else(|| "super".to_string());
        let receiver = self.opt_field_expr(n, fields().object).map(Box::new);
        let args = self.args_of(n);
        Expr::new(
            span(n),
            ExprKind::Call {
                receiver,
                name: name.into(),
                args,
            },
        )
    }

    fn lower_string(&mut self, n: Node) -> Expr {
        let mut c = n.walk();
        let has_holes = n
            .children(&mut c)
            .any(|ch| ch.kind() == "string_interpolation");
        if !has_holes {
            return Expr::new(span(n), ExprKind::Str(string_content(self.text(n)).into()));
        }
        let mut parts = Vec::new();
        let mut buf = String::new();
        let mut buf_span: Option<Span> = None;
        for ch in named_children(n) {
            match ch.kind() {
                "string_interpolation" => {
                    if let Some(sp) = buf_span.take() {
                        parts.push(Expr::new(
                            sp,
                            ExprKind::Str(std::mem::take(&mut buf).into()),
                        ));
                    }
                    if let Some(e) = self.first_child_expr(ch) {
                        parts.push(e);
                    }
                }
                _ => {
                    buf.push_str(&decode_escapes(self.text(ch)));
                    let sp = span(ch);
                    buf_span = Some(match buf_span {
                        Some(s) => Span::new(s.start, sp.end),
                        None => sp,
                    });
                }
            }
        }
        if let Some(sp) = buf_span {
            parts.push(Expr::new(sp, ExprKind::Str(buf.into())));
        }
        Expr::new(span(n), ExprKind::Template(parts))
    }

    /// `STR."a \{b}"`: the template itself (the processor is dropped).
    fn lower_template_expr(&mut self, n: Node) -> Expr {
        let mut e = self.field_expr(n, fields().template_argument);
        e.span = span(n);
        e
    }

    /// `a + b + c`: the left spine is walked iteratively (each link counts against the guard).
    fn lower_binary(&mut self, n: Node) -> Expr {
        let mut spine = vec![n];
        let mut left = n.child_by_field_id(fields().left);
        while let Some(l) = left {
            if l.kind() != "binary_expression" {
                break;
            }
            if !self.lw.enter() {
                left = None;
                break;
            }
            spine.push(l);
            left = l.child_by_field_id(fields().left);
        }
        let mut acc = match left {
            Some(l) => self.lower_expr(l),
            None => empty(span(spine[spine.len() - 1])),
        };
        for b in spine.iter().rev() {
            acc = self.binary_link(*b, acc);
        }
        for _ in 1..spine.len() {
            self.lw.leave();
        }
        acc
    }

    fn binary_link(&mut self, b: Node, lhs: Expr) -> Expr {
        let rhs = self.field_expr(b, fields().right);
        let op = b
            .child_by_field_id(fields().operator)
            .map(|o| Text::from(self.text(o)))
            .unwrap_or_default();
        Expr::new(
            span(b),
            ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
        )
    }

    fn lower_instanceof(&mut self, n: Node) -> Expr {
        let lhs = self.field_expr(n, fields().left);
        let rhs = match n
            .child_by_field_id(fields().right)
            .or_else(|| n.child_by_field_id(fields().pattern))
        {
            Some(r) => self.lower_expr(r),
            None => empty(span(n)),
        };
        Expr::new(
            span(n),
            ExprKind::Binary {
                op: "instanceof".into(),
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
        )
    }

    fn lower_ternary(&mut self, n: Node) -> Expr {
        let cond = self.field_expr(n, fields().condition);
        let then = self.field_expr(n, fields().consequence);
        let els = self.field_expr(n, fields().alternative);
        mk_if(span(n), cond, then, Some(els))
    }

    fn lower_lambda(&mut self, n: Node) -> Expr {
        let id = self.lambda_fn(n);
        self.scopes.push(Scope::Fn(id));
        let body = match n.child_by_field_id(fields().body) {
            Some(b) if b.kind() == "block" => self.lower_body(b),
            Some(b) => self.expr_body(b),
            None => Vec::new(),
        };
        self.scopes.pop();
        self.lw.facts.functions[id].body = body;
        Expr::new(span(n), ExprKind::Lambda(id))
    }

    fn expr_body(&mut self, b: Node) -> Vec<Stmt> {
        let e = self.lower_expr(b);
        vec![Stmt::Expr(e)]
    }

    /// Reserves the lambda's `Function` (before its body is lowered).
    fn lambda_fn(&mut self, n: Node) -> FnId {
        let params = match n.child_by_field_id(fields().parameters) {
            Some(p) => self.lower_params(p),
            None => Vec::new(),
        };
        let mut c = n.walk();
        let arrow_end = n
            .children(&mut c)
            .find(|ch| ch.kind() == "->")
            .map_or(n.start_byte(), |a| a.end_byte());
        self.lw.add_fn(Function {
            name: None,
            kind: FnKind::Lambda,
            params,
            annotations: Vec::new(),
            modifiers: Vec::new(),
            return_type: None,
            owner: None,
            parent: self.innermost_fn(),
            body: Vec::new(),
            has_body: true,
            span: span(n),
            name_span: Span::new(n.start_byte(), arrow_end),
        })
    }

    /// `this::charge`, `Foo::new`, `String::valueOf`, `super::foo`, `int[]::new`.
    fn lower_method_ref(&mut self, n: Node) -> Expr {
        let mut receiver = None;
        let mut name = String::new();
        let mut seen_colons = false;
        let mut c = n.walk();
        let children: Vec<Node> = n.children(&mut c).collect();
        for ch in children {
            match ch.kind() {
                "::" => seen_colons = true,
                "new" if seen_colons => name = "new".to_string(),
                "identifier" if seen_colons => name = self.text(ch).to_string(),
                "type_arguments" | "line_comment" | "block_comment" => {}
                _ if !seen_colons && ch.is_named() && receiver.is_none() => {
                    receiver = Some(Box::new(self.lower_expr(ch)));
                }
                _ => {}
            }
        }
        Expr::new(
            span(n),
            ExprKind::MethodRef {
                receiver,
                name: name.into(),
            },
        )
    }

    fn lower_assign(&mut self, n: Node) -> Expr {
        let target = self.field_expr(n, fields().left);
        let op = n
            .child_by_field_id(fields().operator)
            .map(|o| Text::from(self.text(o)))
            .unwrap_or_else(|| "=".into());
        let value = self.field_expr(n, fields().right);
        Expr::new(
            span(n),
            ExprKind::Assign {
                target: Box::new(target),
                op,
                value: Box::new(value),
            },
        )
    }

    fn lower_cast(&mut self, n: Node) -> Expr {
        let ty = n
            .child_by_field_id(fields().type_)
            .map(|t| self.type_text(t))
            .unwrap_or_default();
        let e = self.field_expr(n, fields().value);
        Expr::new(
            span(n),
            ExprKind::Cast {
                expr: Box::new(e),
                ty: ty.into(),
            },
        )
    }

    fn lower_index(&mut self, n: Node) -> Expr {
        let receiver = self.field_expr(n, fields().array);
        let index = self.field_expr(n, fields().index);
        Expr::new(
            span(n),
            ExprKind::Index {
                receiver: Box::new(receiver),
                index: Box::new(index),
            },
        )
    }

    /// `((x))` -> `x` with the innermost expression's own span; nested parentheses are
    /// unwrapped in a loop.
    fn lower_paren(&mut self, n: Node) -> Expr {
        let mut cur = n;
        while cur.kind() == "parenthesized_expression" {
            match first_real_child(cur) {
                Some(inner) => cur = inner,
                None => return empty(span(cur)),
            }
        }
        self.lower_expr(cur)
    }

    fn lower_unary(&mut self, n: Node) -> Expr {
        let op = n
            .child_by_field_id(fields().operator)
            .map(|o| Text::from(self.text(o)))
            .unwrap_or_default();
        let operand = self.field_expr(n, fields().operand);
        Expr::new(
            span(n),
            ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
        )
    }

    /// `++x`, `x--`.
    fn lower_update(&mut self, n: Node) -> Expr {
        let mut op = String::new();
        let mut operand = None;
        for ch in named_children_all(n) {
            if !ch.is_named() {
                if matches!(ch.kind(), "++" | "--") {
                    op = ch.kind().to_string();
                }
            } else if !is_comment(ch) && operand.is_none() {
                operand = Some(self.lower_expr(ch));
            }
        }
        Expr::new(
            span(n),
            ExprKind::Unary {
                op: op.into(),
                operand: Box::new(operand.unwrap_or_else(|| empty(span(n)))),
            },
        )
    }

    /// `new int[n][m]`, `new int[]{1, 2}` -> `Other[dims.., elements..]`.
    fn lower_array_creation(&mut self, n: Node) -> Expr {
        let mut parts = Vec::new();
        for ch in named_children(n) {
            match ch.kind() {
                "dimensions_expr" => {
                    for d in named_children(ch) {
                        if !is_comment(d) && !matches!(d.kind(), "annotation" | "marker_annotation")
                        {
                            parts.push(self.lower_expr(d));
                        }
                    }
                }
                "array_initializer" => {
                    for d in named_children(ch) {
                        if !is_comment(d) {
                            parts.push(self.lower_expr(d));
                        }
                    }
                }
                _ => {}
            }
        }
        Expr::new(span(n), ExprKind::Other(parts))
    }

    /// `Foo.class` -> `Field{Name(Foo), "class"}`.
    fn lower_class_literal(&mut self, n: Node) -> Expr {
        let recv = match first_real_child(n) {
            Some(t) => self.lower_type_expr(t),
            None => empty(span(n)),
        };
        Expr::new(
            span(n),
            ExprKind::Field {
                receiver: Box::new(recv),
                name: "class".into(),
            },
        )
    }

    /// A nested annotation used as an annotation value: its argument values.
    fn lower_annotation_expr(&mut self, n: Node) -> Expr {
        let a = self.lower_annotation(n);
        Expr::new(
            span(n),
            ExprKind::Other(a.args.into_iter().map(|x| x.value).collect()),
        )
    }
}

/// Shared part of a multi-declarator declaration.
struct DeclHead {
    annotations: Vec<Annotation>,
    modifiers: Vec<String>,
    ty: Option<String>,
    mutable: bool,
}

/// Labels of a switch arm while it is being lowered.
#[derive(Default)]
struct ArmHead {
    patterns: Vec<Expr>,
    text: String,
    guard: Option<Expr>,
}

impl ArmHead {
    fn finish(self, body_span: Span, mut stmts: Vec<Stmt>) -> MatchArm {
        // A `case X -> { .. }` rule: the block itself is the body.
        let body = match stmts.pop() {
            Some(Stmt::Expr(b)) if stmts.is_empty() && matches!(b.kind, ExprKind::Block(_)) => b,
            Some(last) => {
                stmts.push(last);
                Expr::new(body_span, ExprKind::Block(stmts))
            }
            None => Expr::new(body_span, ExprKind::Block(stmts)),
        };
        MatchArm {
            patterns: self.patterns,
            pattern_text: self.text,
            guard: self.guard,
            body,
        }
    }
}

fn mk_if(sp: Span, cond: Expr, then: Expr, els: Option<Expr>) -> Expr {
    Expr::new(
        sp,
        ExprKind::If {
            cond: Box::new(cond),
            then: Box::new(then),
            els: els.map(Box::new),
        },
    )
}

/// All children (named and anonymous) of a node.
fn named_children_all(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

#[cfg(test)]
mod tests {
    use crate::facts::*;
    use crate::lang::{Parsed, parse_and_lower};

    fn parse(src: &str) -> Parsed {
        parse_and_lower(Lang::Java, src).expect("parse")
    }

    fn func<'a>(f: &'a FileFacts, name: &str) -> &'a Function {
        f.functions
            .iter()
            .find(|x| x.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no function {name}"))
    }

    fn ty<'a>(f: &'a FileFacts, name: &str) -> &'a TypeDecl {
        f.types
            .iter()
            .find(|x| x.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no type {name}"))
    }

    fn txt(src: &str, sp: Span) -> &str {
        &src[sp.start..sp.end]
    }

    /// Every expression reachable from `stmts`, depth first (not into lambdas / classes).
    fn all_exprs<'a>(stmts: &'a [Stmt], out: &mut Vec<&'a Expr>) {
        fn go<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
            out.push(e);
            e.for_each_child(|c| go(c, out));
        }
        for s in stmts {
            match s {
                Stmt::Let(b) => {
                    if let Some(i) = &b.init {
                        go(i, out)
                    }
                }
                Stmt::Expr(e) => go(e, out),
                _ => {}
            }
        }
    }

    fn calls(stmts: &[Stmt]) -> Vec<&Expr> {
        let mut v = Vec::new();
        all_exprs(stmts, &mut v);
        v.into_iter()
            .filter(|e| matches!(e.kind, ExprKind::Call { .. }))
            .collect()
    }

    fn call_named<'a>(stmts: &'a [Stmt], name: &str) -> &'a Expr {
        calls(stmts)
            .into_iter()
            .find(|e| e.call_name() == Some(name))
            .unwrap_or_else(|| panic!("no call {name}"))
    }

    fn name_of(e: &Expr) -> &str {
        match &e.kind {
            ExprKind::Name(n) => n,
            other => panic!("not a name: {other:?}"),
        }
    }

    fn str_of(e: &Expr) -> &str {
        match &e.kind {
            ExprKind::Str(s) => s,
            other => panic!("not a string: {other:?}"),
        }
    }

    const INTERCEPTOR: &str = r#"package com.acme.pay;

import okhttp3.Interceptor;
import okhttp3.Response;
import java.util.*;
import static java.util.UUID.randomUUID;

public class IdempotencyInterceptor implements okhttp3.Interceptor, Serializable {
    @Override
    public Response intercept(Interceptor.Chain chain) throws IOException {
        String key = UUID.randomUUID().toString();
        Request req = chain.request().newBuilder()
            .header("Idempotency-Key", key)
            .build();
        return chain.proceed(req);
    }
}
"#;

    #[test]
    fn interceptor_class_method_binding_and_header_call() {
        let p = parse(INTERCEPTOR);
        assert!(!p.has_errors);
        let f = &p.facts;
        let t = ty(f, "IdempotencyInterceptor");
        assert_eq!(t.kind, TypeKind::Class);
        assert_eq!(t.supertypes, vec!["okhttp3.Interceptor", "Serializable"]);
        assert_eq!(txt(INTERCEPTOR, t.name_span), "IdempotencyInterceptor");
        let m = func(f, "intercept");
        let tid = f.types.iter().position(|x| std::ptr::eq(x, t)).unwrap();
        assert_eq!(m.owner, Some(tid));
        assert_eq!(
            t.methods,
            vec![f.functions.iter().position(|x| std::ptr::eq(x, m)).unwrap()]
        );
        assert_eq!(m.kind, FnKind::Method);
        assert!(m.annotation("Override").is_some());
        assert!(m.has_modifier("public"));
        assert_eq!(m.return_type.as_deref(), Some("Response"));
        assert_eq!(m.params.len(), 1);
        assert_eq!(m.params[0].name, "chain");
        assert_eq!(m.params[0].ty.as_deref(), Some("Interceptor.Chain"));
        assert!(m.has_body);
        // String key = UUID.randomUUID().toString();
        let Stmt::Let(b) = &m.body[0] else {
            panic!("expected let, got {:?}", m.body[0])
        };
        assert_eq!(b.name, "key");
        assert_eq!(b.ty.as_deref(), Some("String"));
        assert!(b.mutable);
        let init = b.init.as_ref().unwrap();
        let ExprKind::Call {
            receiver: Some(r),
            name,
            args,
        } = &init.kind
        else {
            panic!("{init:?}")
        };
        assert_eq!(name, "toString");
        assert!(args.is_empty());
        let ExprKind::Call {
            receiver: Some(r2),
            name: n2,
            ..
        } = &r.kind
        else {
            panic!("{r:?}")
        };
        assert_eq!(n2, "randomUUID");
        assert_eq!(name_of(r2), "UUID");
        assert_eq!(txt(INTERCEPTOR, r.span), "UUID.randomUUID()");
        // .header("Idempotency-Key", key)
        let h = call_named(&m.body, "header");
        let ExprKind::Call {
            args,
            receiver: Some(hr),
            ..
        } = &h.kind
        else {
            unreachable!()
        };
        assert_eq!(args.len(), 2);
        assert_eq!(str_of(&args[0].value), "Idempotency-Key");
        assert_eq!(name_of(&args[1].value), "key");
        assert_eq!(hr.call_name(), Some("newBuilder"));
        // return chain.proceed(req);
        let Stmt::Expr(Expr {
            kind: ExprKind::Return(Some(rv)),
            ..
        }) = &m.body[2]
        else {
            panic!("{:?}", m.body[2])
        };
        assert_eq!(rv.call_name(), Some("proceed"));
    }

    #[test]
    fn imports_including_wildcard_and_static() {
        let p = parse(INTERCEPTOR);
        assert_eq!(
            p.facts.imports,
            vec![
                "okhttp3.Interceptor",
                "okhttp3.Response",
                "java.util.*",
                "java.util.UUID.randomUUID"
            ]
        );
    }

    #[test]
    fn lambdas_as_arguments_have_right_parents() {
        let src = r#"class Billing {
    private final Supplier<String> keys = () -> UUID.randomUUID().toString();
    void charge(RetryTemplate retry) {
        retry.execute(ctx -> {
            String key = UUID.randomUUID().toString();
            list.forEach((a, b) -> send(a, key));
            return client.charge(key);
        });
        Function<String, Integer> f = (String s) -> s.length();
    }
}"#;
        let p = parse(src);
        let f = &p.facts;
        let charge = f
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
        assert_eq!(lambdas.len(), 4);
        // field initializer lambda: no enclosing function
        let (field_l, fl) = lambdas[0];
        assert_eq!(fl.parent, None);
        assert_eq!(fl.owner, None);
        let keys = &ty(f, "Billing").fields[0];
        assert!(matches!(keys.init.as_ref().unwrap().kind, ExprKind::Lambda(id) if id == field_l));
        assert!(matches!(&fl.body[0], Stmt::Expr(e) if e.call_name() == Some("toString")));
        // retry lambda
        let (retry_id, retry) = lambdas[1];
        assert_eq!(retry.parent, Some(charge));
        assert_eq!(retry.params.len(), 1);
        assert_eq!(retry.params[0].name, "ctx");
        assert_eq!(retry.params[0].ty, None);
        assert_eq!(txt(src, retry.name_span), "ctx ->");
        let exec = call_named(&func(f, "charge").body, "execute");
        let ExprKind::Call { args, .. } = &exec.kind else {
            unreachable!()
        };
        assert!(matches!(args[0].value.kind, ExprKind::Lambda(id) if id == retry_id));
        assert!(matches!(&retry.body[0], Stmt::Let(b) if b.name == "key"));
        // nested lambda
        let (_, inner) = lambdas[2];
        assert_eq!(inner.parent, Some(retry_id));
        assert_eq!(
            inner
                .params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(matches!(&inner.body[0], Stmt::Expr(e) if e.call_name() == Some("send")));
        // typed params
        let (_, typed) = lambdas[3];
        assert_eq!(typed.parent, Some(charge));
        assert_eq!(typed.params[0].ty.as_deref(), Some("String"));
    }

    #[test]
    fn anonymous_class_is_a_type_with_methods() {
        let src = r#"class Config {
    OkHttpClient client() {
        return new OkHttpClient.Builder().addInterceptor(new Interceptor() {
            @Override public Response intercept(Chain chain) {
                return chain.proceed(chain.request().newBuilder()
                    .header("Idempotency-Key", java.util.UUID.randomUUID().toString()).build());
            }
        }).build();
    }
}"#;
        let p = parse(src);
        let f = &p.facts;
        let client = f
            .functions
            .iter()
            .position(|x| x.name.as_deref() == Some("client"))
            .unwrap();
        let (aid, anon) = f
            .types
            .iter()
            .enumerate()
            .find(|(_, t)| t.kind == TypeKind::Anonymous)
            .unwrap();
        assert_eq!(anon.name, None);
        assert_eq!(anon.supertypes, vec!["Interceptor"]);
        assert_eq!(anon.parent_fn, Some(client));
        assert_eq!(txt(src, anon.name_span), "new Interceptor");
        let m = func(f, "intercept");
        assert_eq!(m.owner, Some(aid));
        assert_eq!(anon.methods.len(), 1);
        let add = call_named(&func(f, "client").body, "addInterceptor");
        let ExprKind::Call { args, .. } = &add.kind else {
            unreachable!()
        };
        let ExprKind::New { ty, body, .. } = &args[0].value.kind else {
            panic!()
        };
        assert_eq!(ty, "Interceptor");
        assert_eq!(*body, Some(aid));
        let b = call_named(&func(f, "client").body, "addInterceptor");
        let ExprKind::Call {
            receiver: Some(r), ..
        } = &b.kind
        else {
            panic!()
        };
        assert!(
            matches!(&r.kind, ExprKind::New { ty, body: None, .. } if ty == "OkHttpClient.Builder")
        );
        // java.util.UUID.randomUUID(): receiver is Field{Field{Name(java), util}, UUID}
        let ru = call_named(&m.body, "randomUUID");
        let ExprKind::Call {
            receiver: Some(r), ..
        } = &ru.kind
        else {
            panic!()
        };
        assert_eq!(r.path_text().as_deref(), Some("java.util.UUID"));
        let ExprKind::Field { receiver: r1, name } = &r.kind else {
            panic!()
        };
        assert_eq!(name, "UUID");
        assert!(matches!(&r1.kind, ExprKind::Field { name, .. } if name == "util"));
    }

    #[test]
    fn try_catch_inside_loops() {
        let src = r#"class R {
    void pay() {
        outer:
        for (int i = 0, j = 1; i < 3; i++) {
            try (var in = open(); Out o = out()) {
                charge(UUID.randomUUID());
            } catch (IOException | TimeoutException e) {
                continue outer;
            } catch (final RuntimeException ex) {
                throw ex;
            } finally {
                close();
            }
        }
        while (attempts-- > 0) { break; }
        do { x(); } while (retry);
        for (final Payment p : payments) { p.go(); }
    }
}"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let m = func(&p.facts, "pay");
        let Stmt::Expr(lp) = &m.body[0] else { panic!() };
        let ExprKind::Loop {
            kind,
            label,
            header,
            body,
            ..
        } = &lp.kind
        else {
            panic!("{lp:?}")
        };
        assert_eq!(*kind, LoopKind::For);
        assert_eq!(label.as_deref(), Some("outer"));
        assert_eq!(header.len(), 3);
        let ExprKind::Block(init) = &header[0].kind else {
            panic!()
        };
        assert_eq!(init.len(), 2);
        assert!(matches!(&header[1].kind, ExprKind::Binary { op, .. } if op == "<"));
        assert!(matches!(&header[2].kind, ExprKind::Unary { op, .. } if op == "++"));
        let ExprKind::Block(stmts) = &body.kind else {
            panic!()
        };
        let Stmt::Expr(tr) = &stmts[0] else { panic!() };
        let ExprKind::Try {
            body,
            catches,
            finally,
            resources,
        } = &tr.kind
        else {
            panic!()
        };
        assert_eq!(resources.len(), 2);
        assert_eq!(resources[0].name, "in");
        assert_eq!(resources[0].ty, None);
        assert_eq!(resources[1].ty.as_deref(), Some("Out"));
        assert_eq!(resources[1].init.as_ref().unwrap().call_name(), Some("out"));
        assert!(matches!(&body.kind, ExprKind::Block(b) if b.len() == 1));
        assert_eq!(catches.len(), 2);
        assert_eq!(catches[0].types, vec!["IOException", "TimeoutException"]);
        assert_eq!(catches[0].name.as_deref(), Some("e"));
        assert!(matches!(&catches[0].body.kind, ExprKind::Block(b)
            if matches!(&b[0], Stmt::Expr(Expr { kind: ExprKind::Continue(Some(l)), .. }) if l == "outer")));
        assert_eq!(catches[1].types, vec!["RuntimeException"]);
        assert!(finally.is_some());
        let kinds: Vec<LoopKind> = m.body[1..]
            .iter()
            .map(|s| match s {
                Stmt::Expr(Expr {
                    kind: ExprKind::Loop { kind, .. },
                    ..
                }) => *kind,
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            vec![LoopKind::While, LoopKind::DoWhile, LoopKind::ForEach]
        );
        let Stmt::Expr(Expr {
            kind: ExprKind::Loop { vars, header, .. },
            ..
        }) = &m.body[3]
        else {
            panic!()
        };
        assert_eq!(&vars[..], ["p".to_string()]);
        assert_eq!(name_of(&header[0]), "payments");
    }

    #[test]
    fn annotations_with_named_args() {
        let src = r#"@Service
class Jobs {
    @org.springframework.retry.annotation.Retryable(value = IOException.class, maxAttempts = 3,
        backoff = @Backoff(delay = 100))
    @Scheduled(fixedRate = 5000)
    public void run(@Header("Idempotency-Key") String key, @RequestBody final Order... orders) {}
    @SuppressWarnings({"a", "b"}) int x;
}"#;
        let p = parse(src);
        let f = &p.facts;
        assert_eq!(ty(f, "Jobs").annotations[0].name, "Service");
        let m = func(f, "run");
        let r = m.annotation("Retryable").expect("Retryable");
        assert_eq!(r.args.len(), 3);
        assert_eq!(r.args[0].name.as_deref(), Some("value"));
        let ExprKind::Field { receiver, name } = &r.args[0].value.kind else {
            panic!()
        };
        assert_eq!(name, "class");
        assert_eq!(name_of(receiver), "IOException");
        assert_eq!(r.args[1].name.as_deref(), Some("maxAttempts"));
        assert!(matches!(&r.args[1].value.kind, ExprKind::Lit(l) if l == "3"));
        assert_eq!(r.args[2].name.as_deref(), Some("backoff"));
        let s = m.annotation("Scheduled").unwrap();
        assert_eq!(s.args[0].name.as_deref(), Some("fixedRate"));
        assert_eq!(m.params[0].annotations[0].name, "Header");
        assert_eq!(m.params[0].annotations[0].args[0].name, None);
        assert_eq!(
            str_of(&m.params[0].annotations[0].args[0].value),
            "Idempotency-Key"
        );
        assert_eq!(m.params[0].ty.as_deref(), Some("String"));
        assert_eq!(m.params[1].name, "orders");
        assert_eq!(m.params[1].ty.as_deref(), Some("Order[]"));
        assert_eq!(m.params[1].annotations[0].name, "RequestBody");
        let x = &ty(f, "Jobs").fields[0];
        assert_eq!(x.annotations[0].name, "SuppressWarnings");
        assert!(matches!(&x.annotations[0].args[0].value.kind, ExprKind::Other(v) if v.len() == 2));
    }

    #[test]
    fn spans_point_at_the_right_text() {
        let p = parse(INTERCEPTOR);
        let f = &p.facts;
        let m = func(f, "intercept");
        assert_eq!(txt(INTERCEPTOR, m.name_span), "intercept");
        assert!(txt(INTERCEPTOR, m.span).starts_with("@Override"));
        assert!(txt(INTERCEPTOR, m.span).ends_with('}'));
        let h = call_named(&m.body, "header");
        let ExprKind::Call { args, .. } = &h.kind else {
            panic!()
        };
        assert_eq!(txt(INTERCEPTOR, args[0].value.span), "\"Idempotency-Key\"");
        assert_eq!(txt(INTERCEPTOR, args[1].value.span), "key");
        let Stmt::Let(b) = &m.body[0] else { panic!() };
        assert_eq!(txt(INTERCEPTOR, b.name_span), "key");
        assert_eq!(
            txt(INTERCEPTOR, b.span),
            "String key = UUID.randomUUID().toString();"
        );
        assert_eq!(
            txt(INTERCEPTOR, m.params[0].span),
            "Interceptor.Chain chain"
        );
        assert_eq!(
            txt(
                INTERCEPTOR,
                f.types[0]
                    .annotations
                    .first()
                    .map_or(Span::default(), |a| a.span)
            ),
            ""
        );
    }

    fn on_small_stack<F: FnOnce() + Send + 'static>(f: F) {
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(f)
            .unwrap()
            .join()
            .expect("lowering overflowed a 2 MiB stack");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        on_small_stack(|| {
            let n = 100_000;
            // parentheses
            let src = format!(
                "class A {{ void m() {{ x = {}1{}; }} }}",
                "(".repeat(n),
                ")".repeat(n)
            );
            let p = parse(&src);
            let m = func(&p.facts, "m");
            let Stmt::Expr(Expr {
                kind: ExprKind::Assign { value, .. },
                ..
            }) = &m.body[0]
            else {
                panic!()
            };
            assert!(matches!(&value.kind, ExprKind::Lit(l) if l == "1"));
            assert_eq!(txt(&src, value.span), "1");
            // blocks
            let src = format!(
                "class A {{ void m() {{ {}f();{} }} }}",
                "{".repeat(n),
                "}".repeat(n)
            );
            let p = parse(&src);
            assert!(p.too_deep);
            assert!(func(&p.facts, "m").has_body);
            // calls, lambdas, binary chains, method chains, nested classes, ifs
            let srcs = [
                format!(
                    "class A {{ void m() {{ {}x{}; }} }}",
                    "f(".repeat(n),
                    ")".repeat(n)
                ),
                format!("class A {{ void m() {{ r = {}x; }} }}", "a -> ".repeat(n)),
                format!("class A {{ void m() {{ s = a{}; }} }}", " + a".repeat(n)),
                format!("class A {{ void m() {{ s = a{}; }} }}", ".b()".repeat(n)),
                format!("{}{}", "class A { ".repeat(n / 10), "}".repeat(n / 10)),
                format!("class A {{ void m() {{ {} f(); }} }}", "if (x) ".repeat(n)),
                format!("class A {{ void m() {{ x = {}1; }} }}", "-".repeat(n)),
                format!(
                    "class A {{ void m() {{ x = {}1{}; }} }}",
                    "new int[]{".repeat(n),
                    "}".repeat(n)
                ),
            ];
            for src in &srcs {
                let p = parse(src);
                assert!(p.too_deep, "{}", &src[..60]);
                assert!(!p.facts.types.is_empty());
            }
        });
    }

    #[test]
    fn garbage_and_half_typed_input_do_not_panic() {
        let p =
            parse("class A { void m() { foo(UUID.randomUUID(); int x = ; } void n() { bar(); }");
        assert!(p.has_errors);
        assert!(!p.facts.syntax_errors.is_empty());
        assert!(
            p.facts
                .functions
                .iter()
                .any(|f| f.name.as_deref() == Some("n"))
        );
        let m = func(&p.facts, "m");
        assert!(
            calls(&m.body)
                .iter()
                .any(|c| c.call_name() == Some("randomUUID"))
        );
        let inputs: Vec<String> = vec![
            "@@@ %%% }}}{{{ class".into(),
            "public class { int x = 1; void f() {} }\n@@@ class B { void g() { h(); } }".into(),
            "\u{0}\u{1}\u{2}\u{fffd}ÿþ class X { \u{7f}".into(),
            (0..2000u32)
                .map(|i| char::from_u32((i * 7919) % 0x2FFF + 1).unwrap_or('x'))
                .collect(),
            "class A { void m() { switch (x) { case -> ; default } try { } catch ( } }".into(),
            "class A { String s = \"unterminated; String t = \"\"\" ; }".into(),
            "x -> y -> ; new ; a::; (int) ; @A(b = ) class".into(),
        ];
        for src in &inputs {
            let p = parse(src);
            assert!(p.has_errors, "{src:?}");
        }
        let p = parse("@@@ %%% class B { void g() { h(); } }");
        assert!(p.has_errors);
        assert!(
            calls(&func(&p.facts, "g").body)
                .iter()
                .any(|c| c.call_name() == Some("h"))
        );
    }

    #[test]
    fn empty_and_comment_only_files() {
        for src in ["", "   \n\t", "// nothing\n/* here */"] {
            let p = parse(src);
            assert!(!p.has_errors);
            assert!(p.facts.types.is_empty());
            assert!(p.facts.functions.is_empty());
            assert!(p.facts.top_level.is_empty());
            assert!(p.facts.imports.is_empty());
        }
    }

    #[test]
    fn non_ascii_identifiers_and_strings() {
        let src = "class Zahlung { void zählen() { String schlüssel = \"Idempotenz-Schlüssel ✓ \\\"q\\\"\\n\"; Ω(schlüssel); } }";
        let p = parse(src);
        assert!(!p.has_errors);
        let m = func(&p.facts, "zählen");
        assert_eq!(txt(src, m.name_span), "zählen");
        let Stmt::Let(b) = &m.body[0] else { panic!() };
        assert_eq!(b.name, "schlüssel");
        assert_eq!(txt(src, b.name_span), "schlüssel");
        let init = b.init.as_ref().unwrap();
        assert_eq!(str_of(init), "Idempotenz-Schlüssel ✓ \"q\"\n");
        assert!(src.is_char_boundary(init.span.start) && src.is_char_boundary(init.span.end));
        let c = call_named(&m.body, "Ω");
        let ExprKind::Call { args, receiver, .. } = &c.kind else {
            panic!()
        };
        assert!(receiver.is_none());
        assert_eq!(name_of(&args[0].value), "schlüssel");
        assert_eq!(txt(src, args[0].value.span), "schlüssel");
    }

    #[test]
    fn string_templates_text_blocks_and_escapes() {
        let src = "class T { void m() {\n  a(STR.\"key-\\{id}-\\{n + 1}!\");\n  b(\"\"\"\n      {\"k\": \"v\"}\n        x\\ty\n      \"\"\");\n  c(\"a\\u0041\\\\\");\n  d('x', 1_000L, 0x1F, true, null, 2.5e3);\n  e(\"\"\"\n    a \\\n    b\"\"\");\n} }";
        let p = parse(src);
        assert!(!p.has_errors, "{src}");
        let m = func(&p.facts, "m");
        let a = call_named(&m.body, "a");
        let ExprKind::Call { args, .. } = &a.kind else {
            panic!()
        };
        let ExprKind::Template(parts) = &args[0].value.kind else {
            panic!("{:?}", args[0].value)
        };
        assert_eq!(parts.len(), 5);
        assert_eq!(str_of(&parts[0]), "key-");
        assert_eq!(name_of(&parts[1]), "id");
        assert_eq!(str_of(&parts[2]), "-");
        assert!(matches!(&parts[3].kind, ExprKind::Binary { op, .. } if op == "+"));
        assert_eq!(str_of(&parts[4]), "!");
        assert_eq!(txt(src, parts[0].span), "key-");
        let b = call_named(&m.body, "b");
        let ExprKind::Call { args, .. } = &b.kind else {
            panic!()
        };
        assert_eq!(str_of(&args[0].value), "{\"k\": \"v\"}\n  x\ty\n");
        let c = call_named(&m.body, "c");
        let ExprKind::Call { args, .. } = &c.kind else {
            panic!()
        };
        assert_eq!(str_of(&args[0].value), "a\\u0041\\");
        let d = call_named(&m.body, "d");
        let ExprKind::Call { args, .. } = &d.kind else {
            panic!()
        };
        let lits: Vec<&str> = args
            .iter()
            .map(|a| match &a.value.kind {
                ExprKind::Lit(l) => l.as_str(),
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(lits, ["'x'", "1_000L", "0x1F", "true", "null", "2.5e3"]);
        let e = call_named(&m.body, "e");
        let ExprKind::Call { args, .. } = &e.kind else {
            panic!()
        };
        assert_eq!(str_of(&args[0].value), "a b");
    }

    #[test]
    fn switch_statements_and_expressions_become_match() {
        let src = r#"class S {
    int m(Object o, int x) {
        switch (x) {
            case 1, 2: foo(); break;
            default: bar();
        }
        return switch (o) {
            case String s when s.isEmpty() -> 0;
            case Point(int a, var b) -> { yield a; }
            case null, default -> throw new IllegalStateException();
        };
    }
}"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let m = func(&p.facts, "m");
        let Stmt::Expr(Expr {
            kind: ExprKind::Match { subject, arms },
            ..
        }) = &m.body[0]
        else {
            panic!("{:?}", m.body[0])
        };
        assert_eq!(name_of(subject.as_ref().unwrap()), "x");
        assert_eq!(arms.len(), 2);
        assert_eq!(arms[0].patterns.len(), 2);
        assert_eq!(arms[0].pattern_text, "1, 2");
        assert!(matches!(&arms[0].body.kind, ExprKind::Block(b) if b.len() == 2));
        assert!(arms[1].patterns.is_empty());
        assert_eq!(arms[1].pattern_text, "default");
        let Stmt::Expr(Expr {
            kind: ExprKind::Return(Some(sw)),
            ..
        }) = &m.body[1]
        else {
            panic!()
        };
        let ExprKind::Match { arms, .. } = &sw.kind else {
            panic!()
        };
        assert_eq!(arms.len(), 3);
        assert_eq!(arms[0].pattern_text, "String s");
        assert_eq!(name_of(&arms[0].patterns[0]), "String");
        assert_eq!(arms[0].guard.as_ref().unwrap().call_name(), Some("isEmpty"));
        assert!(
            matches!(&arms[0].body.kind, ExprKind::Block(b) if matches!(&b[0], Stmt::Expr(Expr { kind: ExprKind::Lit(l), .. }) if l == "0"))
        );
        assert_eq!(arms[1].pattern_text, "Point(int a, var b)");
        assert!(
            matches!(&arms[2].body.kind, ExprKind::Block(b) if matches!(&b[0], Stmt::Expr(Expr { kind: ExprKind::Throw(_), .. })))
        );
        assert_eq!(arms[2].patterns.len(), 1);
    }

    #[test]
    fn enums_records_interfaces_and_annotation_types() {
        let src = r#"enum Mode implements Supplier<String> {
    FRESH(1) { public String get() { return UUID.randomUUID().toString(); } },
    FIXED;
    private final int v;
    Mode(int v) { this.v = v; }
    Mode() { this(0); }
}
record Charge(String id, @NotNull long amount) implements Payable {
    Charge { if (amount < 0) throw new IllegalArgumentException(); }
    static Charge of(long a) { return new Charge(UUID.randomUUID().toString(), a); }
}
interface Gateway extends Closeable, Client<Req> {
    String KEY = "Idempotency-Key";
    Response pay(Request r);
    default Response payTwice(Request r) { return pay(r); }
}
@interface Idem { String value() default "x"; }"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let f = &p.facts;
        let e = ty(f, "Mode");
        let eid = f
            .types
            .iter()
            .position(|t| t.name.as_deref() == Some("Mode"))
            .unwrap();
        assert_eq!(e.kind, TypeKind::Enum);
        assert_eq!(e.supertypes, vec!["Supplier"]);
        assert_eq!(
            e.fields.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(),
            ["FRESH", "FIXED", "v"]
        );
        let ExprKind::New {
            ty: nt,
            args,
            body: Some(aid),
        } = &e.fields[0].init.as_ref().unwrap().kind
        else {
            panic!()
        };
        assert_eq!(nt, "Mode");
        assert_eq!(args.len(), 1);
        let anon = &f.types[*aid];
        assert_eq!(anon.kind, TypeKind::Anonymous);
        assert_eq!(anon.supertypes, vec!["Mode"]);
        assert_eq!(anon.parent_type, Some(eid));
        assert!(e.nested.contains(aid));
        assert_eq!(func(f, "get").owner, Some(*aid));
        assert!(!e.fields[2].mutable);
        let ctors: Vec<&Function> = f
            .functions
            .iter()
            .filter(|x| x.kind == FnKind::Constructor && x.owner == Some(eid))
            .collect();
        assert_eq!(ctors.len(), 2);
        let Stmt::Expr(c) = &ctors[1].body[0] else {
            panic!()
        };
        assert!(
            matches!(&c.kind, ExprKind::Call { receiver: None, name, args } if name == "this" && args.len() == 1)
        );
        let r = ty(f, "Charge");
        assert_eq!(r.kind, TypeKind::Record);
        assert_eq!(r.supertypes, vec!["Payable"]);
        assert_eq!(r.fields.len(), 2);
        assert_eq!(r.fields[1].annotations[0].name, "NotNull");
        let compact = f
            .functions
            .iter()
            .find(|x| x.kind == FnKind::Constructor && x.name.as_deref() == Some("Charge"))
            .unwrap();
        assert_eq!(compact.params.len(), 2);
        assert!(func(f, "of").has_modifier("static"));
        let g = ty(f, "Gateway");
        assert_eq!(g.kind, TypeKind::Interface);
        assert_eq!(g.supertypes, vec!["Closeable", "Client"]);
        assert_eq!(g.fields[0].name, "KEY");
        assert!(!g.fields[0].mutable);
        assert!(!func(f, "pay").has_body);
        let pt = func(f, "payTwice");
        assert!(pt.has_body && pt.has_modifier("default"));
        let idem = ty(f, "Idem");
        assert_eq!(idem.kind, TypeKind::Interface);
        assert!(!func(f, "value").has_body);
    }

    #[test]
    fn fields_modifiers_and_declarators() {
        let src = r#"class F {
    @Inject private static final String A = "a", B;
    protected volatile int[] counts = {1, 2};
    List<String> names = new ArrayList<>();
    void m() { final var k = UUID.randomUUID(); int i, j = 2; }
}"#;
        let p = parse(src);
        let t = ty(&p.facts, "F");
        assert_eq!(t.fields.len(), 4);
        let a = &t.fields[0];
        assert_eq!(a.name, "A");
        assert_eq!(a.modifiers, vec!["private", "static", "final"]);
        assert_eq!(a.annotations[0].name, "Inject");
        assert!(!a.mutable);
        assert_eq!(str_of(a.init.as_ref().unwrap()), "a");
        assert_eq!(t.fields[1].name, "B");
        assert!(t.fields[1].init.is_none());
        assert_eq!(txt(src, t.fields[1].span), "B");
        assert_eq!(t.fields[2].ty.as_deref(), Some("int[]"));
        assert!(t.fields[2].mutable);
        assert!(
            matches!(&t.fields[2].init.as_ref().unwrap().kind, ExprKind::Other(v) if v.len() == 2)
        );
        assert_eq!(t.fields[3].ty.as_deref(), Some("List"));
        assert!(
            matches!(&t.fields[3].init.as_ref().unwrap().kind, ExprKind::New { ty, .. } if ty == "ArrayList")
        );
        let m = func(&p.facts, "m");
        let Stmt::Let(k) = &m.body[0] else { panic!() };
        assert_eq!(k.ty, None);
        assert!(!k.mutable);
        assert_eq!(k.modifiers, vec!["final"]);
        assert!(matches!(&m.body[1], Stmt::Let(b) if b.name == "i" && b.init.is_none()));
        assert!(
            matches!(&m.body[2], Stmt::Let(b) if b.name == "j" && b.ty.as_deref() == Some("int"))
        );
    }

    #[test]
    fn method_refs_qualified_calls_super_and_class_literals() {
        let src = r#"class C extends Base {
    C(int x) { super(x); }
    void m() {
        a(this::charge, Foo::new, String::valueOf, super::go, int[]::new, Map.Entry::getKey);
        super.foo();
        Outer.super.bar();
        b(Foo.class, this.x, Outer.this.y);
        this.<String>gen();
    }
}"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let f = &p.facts;
        assert_eq!(ty(f, "C").supertypes, vec!["Base"]);
        let ctor = f
            .functions
            .iter()
            .find(|x| x.kind == FnKind::Constructor)
            .unwrap();
        assert!(matches!(&ctor.body[0], Stmt::Expr(e) if e.call_name() == Some("super")));
        let m = func(f, "m");
        let ExprKind::Call { args, .. } = &call_named(&m.body, "a").kind else {
            panic!()
        };
        let refs: Vec<(Option<String>, &str)> = args
            .iter()
            .map(|a| match &a.value.kind {
                ExprKind::MethodRef { receiver, name } => {
                    (receiver.as_ref().and_then(|r| r.path_text()), name.as_str())
                }
                o => panic!("{o:?}"),
            })
            .collect();
        assert_eq!(
            refs,
            vec![
                (Some("this".into()), "charge"),
                (Some("Foo".into()), "new"),
                (Some("String".into()), "valueOf"),
                (Some("super".into()), "go"),
                (Some("int[]".into()), "new"),
                (Some("Map.Entry".into()), "getKey"),
            ]
        );
        let ExprKind::Call {
            receiver: Some(r), ..
        } = &call_named(&m.body, "foo").kind
        else {
            panic!()
        };
        assert_eq!(name_of(r), "super");
        let ExprKind::Call {
            receiver: Some(r), ..
        } = &call_named(&m.body, "bar").kind
        else {
            panic!()
        };
        assert_eq!(r.path_text().as_deref(), Some("Outer.super"));
        assert_eq!(txt(src, r.span), "Outer.super");
        let ExprKind::MethodRef {
            receiver: Some(me), ..
        } = &args[5].value.kind
        else {
            panic!()
        };
        assert_eq!(txt(src, me.span), "Map.Entry");
        let ExprKind::Field { receiver: map, .. } = &me.kind else {
            panic!()
        };
        assert_eq!(txt(src, map.span), "Map");
        let ExprKind::Call { args, .. } = &call_named(&m.body, "b").kind else {
            panic!()
        };
        assert_eq!(args[0].value.path_text().as_deref(), Some("Foo.class"));
        assert_eq!(args[1].value.path_text().as_deref(), Some("this.x"));
        assert_eq!(args[2].value.path_text().as_deref(), Some("Outer.this.y"));
        let ExprKind::Call {
            receiver: Some(r), ..
        } = &call_named(&m.body, "gen").kind
        else {
            panic!()
        };
        assert_eq!(name_of(r), "this");
    }

    #[test]
    fn other_statements_and_expressions() {
        let src = r#"class E {
    void m(Object o) {
        if (o instanceof String s && !s.isEmpty()) { x = (String) o; } else if (b) y += a[i]; else { z = c ? d : e; }
        synchronized (lock) { pay(); }
        assert n > 0 : "msg";
        k = ((UUID.randomUUID()));
        i++; --j;
        int[][] g = new int[3][n];
        label: { break label; }
        throw new PaymentException("x");
    }
}"#;
        let p = parse(src);
        assert!(!p.has_errors);
        let m = func(&p.facts, "m");
        let Stmt::Expr(Expr {
            kind:
                ExprKind::If {
                    cond,
                    then,
                    els: Some(els),
                },
            ..
        }) = &m.body[0]
        else {
            panic!()
        };
        let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
            panic!()
        };
        assert_eq!(op, "&&");
        assert!(
            matches!(&lhs.kind, ExprKind::Binary { op, rhs, .. } if op == "instanceof" && name_of(rhs) == "String")
        );
        assert!(matches!(&rhs.kind, ExprKind::Unary { op, .. } if op == "!"));
        let ExprKind::Block(tb) = &then.kind else {
            panic!()
        };
        assert!(
            matches!(&tb[0], Stmt::Expr(Expr { kind: ExprKind::Assign { value, op, .. }, .. })
            if op == "=" && matches!(&value.kind, ExprKind::Cast { ty, .. } if ty == "String"))
        );
        let ExprKind::If {
            then: t2,
            els: Some(e2),
            ..
        } = &els.kind
        else {
            panic!()
        };
        assert!(matches!(&t2.kind, ExprKind::Block(b) if matches!(&b[0],
            Stmt::Expr(Expr { kind: ExprKind::Assign { op, value, .. }, .. }) if op == "+=" && matches!(value.kind, ExprKind::Index { .. }))));
        assert!(matches!(&e2.kind, ExprKind::Block(b) if matches!(&b[0],
            Stmt::Expr(Expr { kind: ExprKind::Assign { value, .. }, .. }) if matches!(value.kind, ExprKind::If { .. }))));
        let Stmt::Expr(Expr {
            kind: ExprKind::Other(sy),
            ..
        }) = &m.body[1]
        else {
            panic!()
        };
        assert_eq!(name_of(&sy[0]), "lock");
        assert!(matches!(&sy[1].kind, ExprKind::Block(b) if b.len() == 1));
        assert!(
            matches!(&m.body[2], Stmt::Expr(Expr { kind: ExprKind::Other(v), .. }) if v.len() == 2)
        );
        let Stmt::Expr(Expr {
            kind: ExprKind::Assign { value, .. },
            ..
        }) = &m.body[3]
        else {
            panic!()
        };
        assert_eq!(value.call_name(), Some("randomUUID"));
        assert_eq!(txt(src, value.span), "UUID.randomUUID()");
        assert!(
            matches!(&m.body[4], Stmt::Expr(Expr { kind: ExprKind::Unary { op, .. }, .. }) if op == "++")
        );
        assert!(
            matches!(&m.body[5], Stmt::Expr(Expr { kind: ExprKind::Unary { op, .. }, .. }) if op == "--")
        );
        let Stmt::Let(g) = &m.body[6] else { panic!() };
        assert!(matches!(&g.init.as_ref().unwrap().kind, ExprKind::Other(v) if v.len() == 2));
        assert!(
            matches!(&m.body[7], Stmt::Expr(Expr { kind: ExprKind::Block(b), .. })
            if matches!(&b[0], Stmt::Expr(Expr { kind: ExprKind::Break(Some(l)), .. }) if l == "label"))
        );
        assert!(
            matches!(&m.body[8], Stmt::Expr(Expr { kind: ExprKind::Throw(e), .. })
            if matches!(&e.kind, ExprKind::New { ty, .. } if ty == "PaymentException"))
        );
    }

    #[test]
    fn initializers_nested_and_local_types() {
        let src = r#"class Outer {
    static final String K;
    static { K = UUID.randomUUID().toString(); }
    { init(); }
    static class Inner implements Runnable { public void run() {} }
    void m() {
        class Local extends Thread { public void run() { go(); } }
        new Local().start();
    }
}"#;
        let p = parse(src);
        let f = &p.facts;
        let oid = f
            .types
            .iter()
            .position(|t| t.name.as_deref() == Some("Outer"))
            .unwrap();
        let cl = func(f, "<clinit>");
        assert_eq!(cl.kind, FnKind::Constructor);
        assert!(cl.has_modifier("static"));
        assert_eq!(cl.owner, Some(oid));
        assert!(matches!(
            &cl.body[0],
            Stmt::Expr(Expr {
                kind: ExprKind::Assign { .. },
                ..
            })
        ));
        let init = func(f, "<init>");
        assert_eq!(init.owner, Some(oid));
        assert!(matches!(&init.body[0], Stmt::Expr(e) if e.call_name() == Some("init")));
        assert_eq!(f.types[oid].methods.len(), 3);
        let inner = ty(f, "Inner");
        let iid = f
            .types
            .iter()
            .position(|t| t.name.as_deref() == Some("Inner"))
            .unwrap();
        assert_eq!(inner.parent_type, Some(oid));
        assert_eq!(inner.parent_fn, None);
        assert_eq!(f.types[oid].nested, vec![iid]);
        let mid = f
            .functions
            .iter()
            .position(|x| x.name.as_deref() == Some("m"))
            .unwrap();
        let local = ty(f, "Local");
        let lid = f
            .types
            .iter()
            .position(|t| t.name.as_deref() == Some("Local"))
            .unwrap();
        assert_eq!(local.parent_fn, Some(mid));
        assert_eq!(local.parent_type, None);
        assert_eq!(local.supertypes, vec!["Thread"]);
        assert!(matches!(f.functions[mid].body[0], Stmt::LocalType(t) if t == lid));
        let runs: Vec<&Function> = f
            .functions
            .iter()
            .filter(|x| x.name.as_deref() == Some("run"))
            .collect();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].owner, Some(lid));
    }

    #[test]
    fn top_level_statements_and_methods() {
        let src = "import a.B;\nvoid main() { run(); }\nx.y(1);\n";
        let p = parse(src);
        let f = &p.facts;
        assert_eq!(f.imports, vec!["a.B"]);
        let m = func(f, "main");
        assert_eq!(m.kind, FnKind::Function);
        assert_eq!(m.owner, None);
        assert_eq!(f.top_level.len(), 1);
        assert!(matches!(&f.top_level[0], Stmt::Expr(e) if e.call_name() == Some("y")));
    }
}
