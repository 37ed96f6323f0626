//! Syntax helpers the coordination analyses share (bindings, statements, call chains, argument
//! positions). A module of its own, below `coord`'s analyses, so that they do not import the
//! module that runs them.

use crate::facts::{Binding, Expr, ExprKind, FnKind, Span, Stmt};
use crate::project::{FnRef, Project, walk_expr, walk_stmts};

/// The nearest named (non-lambda) function around `f`.
pub fn named_fn(p: &Project, f: FnRef) -> FnRef {
    p.ancestors(f)
        .find(|a| p.func(*a).kind != FnKind::Lambda)
        .unwrap_or(f)
}

/// Source text on one line, shortened.
pub fn short(t: &str) -> String {
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 60 {
        let mut s: String = t.chars().take(57).collect();
        s.push_str("...");
        s
    } else {
        t
    }
}

/// The local `name` of `at` (or of a function around it) declared before `pos`, nearest first.
pub fn local_binding<'p>(p: &'p Project, at: FnRef, name: &str, pos: usize) -> Option<&'p Binding> {
    for a in p.ancestors(at) {
        let mut found: Option<&'p Binding> = None;
        crate::flow::walk_lets(&p.func(a).body, &mut |b| {
            if b.name == name && b.span.start < pos {
                found = Some(b);
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The property a Java getter reads, as Kotlin and configuration binding name it:
/// `getPaymentsController` -> `paymentsController`; `None` for a name that is no getter.
pub fn getter_property(name: &str) -> Option<String> {
    let rest = name.strip_prefix("get")?;
    let mut c = rest.chars();
    let first = c.next().filter(|f| f.is_ascii_uppercase())?;
    Some(first.to_ascii_lowercase().to_string() + c.as_str())
}

/// A field or constant named `name` visible from `at` (enclosing types, the file), else the one
/// field/constant of that name in the project (`Paths.CHARGES` declared in another file).
pub fn field_binding<'p>(
    p: &'p Project,
    unit: usize,
    at: Option<FnRef>,
    owner_hint: Option<&str>,
    name: &str,
) -> Option<(usize, &'p Binding)> {
    let facts = &p.units[unit].facts();
    if owner_hint.is_none() {
        let mut ty = at.and_then(|f| p.enclosing_type(f));
        while let Some(t) = ty {
            let decl = &facts.types[t];
            let nested = decl
                .nested
                .iter()
                .flat_map(|&n| facts.types[n].fields.iter());
            if let Some(b) = decl.fields.iter().chain(nested).find(|b| b.name == name) {
                return Some((unit, b));
            }
            ty = decl.parent_type;
        }
        if let Some(b) = facts.globals.iter().find(|b| b.name == name) {
            return Some((unit, b));
        }
    }
    if let Some(owner) = owner_hint {
        for r in p.types_named(crate::facts::simple_name(owner)) {
            let f = &p.units[r.unit].facts();
            let decl = &f.types[r.t];
            let nested = decl.nested.iter().flat_map(|&n| f.types[n].fields.iter());
            if let Some(b) = decl.fields.iter().chain(nested).find(|b| b.name == name) {
                return Some((r.unit, b));
            }
        }
    }
    // The one declaration of that name in the project with an initialiser.
    p.only_initialised_field(name)
}

/// The innermost statement of `stmts` (at any block depth, not inside lambdas) that contains
/// `span`.
pub fn innermost_stmt(stmts: &[Stmt], span: Span) -> Option<&Stmt> {
    let s = stmts
        .iter()
        .find(|s| stmt_span(s).is_some_and(|ss| ss.contains(span)))?;
    let mut deeper: Option<&Stmt> = None;
    for e in stmt_exprs(s) {
        walk_expr(e, &mut |x| {
            if deeper.is_none()
                && let ExprKind::Block(b) = &x.kind
                && x.span.contains(span)
            {
                deeper = innermost_stmt(b, span);
            }
        });
    }
    deeper.or(Some(s))
}

pub fn stmt_span(s: &Stmt) -> Option<Span> {
    match s {
        Stmt::Let(b) => Some(b.span),
        Stmt::Expr(e) => Some(e.span),
        _ => None,
    }
}

/// The top-level expressions of function `f`'s body, each with `f` (to push onto a walk stack).
pub fn body_exprs(p: &Project, f: FnRef) -> impl Iterator<Item = (FnRef, &Expr)> {
    p.func(f)
        .body
        .iter()
        .flat_map(stmt_exprs)
        .map(move |x| (f, x))
}

/// Expressions of a statement.
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Let(b) => b.init.iter().collect(),
        Stmt::Expr(e) => vec![e],
        _ => Vec::new(),
    }
}

/// The values function `f` returns: its `return` expressions, else an expression body.
pub fn returned_exprs(func: &crate::facts::Function) -> Vec<&Expr> {
    let mut rets = Vec::new();
    walk_stmts(&func.body, &mut |e| {
        if let ExprKind::Return(Some(v)) = &e.kind {
            rets.push(&**v);
        }
    });
    if rets.is_empty()
        && let [Stmt::Expr(e)] = func.body.as_slice()
    {
        rets.push(e);
    }
    rets
}

/// A call chain from its last call down to where it starts, each link peeled:
/// `a.b(..).c(..)` gives `a.b(..).c(..)`, `a.b(..)`, `a`.
pub fn chain_links(e: &Expr) -> impl Iterator<Item = &Expr> {
    std::iter::successors(Some(peel(e)), |x| match &x.kind {
        ExprKind::Call {
            receiver: Some(r), ..
        } => Some(peel(r)),
        _ => None,
    })
}

/// Peels `x.await`, `x?`, `x!!` and parentheses.
pub fn peel(e: &Expr) -> &Expr {
    let mut e = e;
    loop {
        match &e.kind {
            ExprKind::Await(x) => e = x,
            ExprKind::Unary { op, operand }
                if matches!(op.as_str(), "?" | "!!" | "&" | "&mut" | "*") =>
            {
                e = operand
            }
            ExprKind::Other(v) if v.len() == 1 => e = &v[0],
            _ => return e,
        }
    }
}

/// The argument index a call passes for parameter `param` of `callee`: Rust methods declare
/// `self` as their first parameter, which a method call (`api.post(path)`) passes as the
/// receiver.
pub fn param_to_arg(
    p: &Project,
    callee: FnRef,
    receiver: Option<&Expr>,
    param: usize,
) -> Option<usize> {
    let f = p.func(callee);
    if f.params.first().is_some_and(|x| x.name == "self") {
        let type_path = receiver.is_some_and(|r| {
            r.path_text().is_some_and(|t| {
                crate::facts::simple_name(&t).starts_with(|c: char| c.is_uppercase())
            })
        });
        if receiver.is_some() && !type_path {
            return param.checked_sub(1);
        }
    }
    Some(param)
}
