//! Walks over the facts of one function: its expressions and local bindings, in source order,
//! never entering lambda bodies (those are functions of their own). Iterative, so deep nesting
//! cannot overflow the stack. Facts-level syntax helpers that every analysis shares, with no
//! knowledge of any analysis.

use crate::facts::{Binding, Expr, ExprKind, FnId, Stmt, simple_name};

/// Calls `f` on every expression in `stmts`, depth first, without entering lambda bodies
/// (those are functions of their own). Iterative, so deep nesting cannot overflow the stack.
pub fn walk_stmts<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Expr)) {
    let mut stack: Vec<&'a Expr> = Vec::new();
    for s in stmts.iter().rev() {
        push_stmt(s, &mut stack);
    }
    while let Some(e) = stack.pop() {
        f(e);
        let start = stack.len();
        e.for_each_child(|c| stack.push(c));
        stack[start..].reverse();
    }
}

/// Calls `f` on every expression under `e` (including `e`), like [`walk_stmts`].
pub fn walk_expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    let mut stack: Vec<&'a Expr> = vec![e];
    while let Some(e) = stack.pop() {
        f(e);
        let start = stack.len();
        e.for_each_child(|c| stack.push(c));
        stack[start..].reverse();
    }
}

fn push_stmt<'a>(s: &'a Stmt, stack: &mut Vec<&'a Expr>) {
    match s {
        Stmt::Let(b) => {
            if let Some(i) = &b.init {
                stack.push(i);
            }
        }
        Stmt::Expr(e) => stack.push(e),
        Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
    }
}

/// The lambda an initialiser holds: `{ .. }`, or with `wrapped` also one inside a SAM
/// constructor or a cast (`Interceptor { .. }`, `{ .. } as Runnable`).
pub fn held_lambda(e: &Expr, wrapped: bool) -> Option<FnId> {
    match &e.kind {
        ExprKind::Lambda(id) => Some(*id),
        ExprKind::Call { args, .. } if wrapped && args.len() == 1 => match &args[0].value.kind {
            ExprKind::Lambda(id) => Some(*id),
            _ => None,
        },
        ExprKind::Cast { expr, .. } if wrapped => match &expr.kind {
            ExprKind::Lambda(id) => Some(*id),
            _ => None,
        },
        _ => None,
    }
}

/// A call on `this` / `self` or with no receiver.
pub fn is_self_receiver(r: Option<&Expr>) -> bool {
    match r.map(|r| &r.kind) {
        None => true,
        Some(ExprKind::Name(n)) => n == "this" || n == "self" || n == "Self",
        _ => false,
    }
}

/// Calls `f` on every local binding in `stmts` (not in lambdas).
pub fn walk_lets<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Binding)) {
    walk_body(stmts, &mut |v| {
        if let Visit::Let(b) = v {
            f(b)
        }
    });
}

pub enum Visit<'a> {
    Let(&'a Binding),
    Expr(&'a Expr),
}

/// A binding's declared type, or the type its initialiser constructs, simple name.
pub fn declared_type(b: &Binding) -> Option<String> {
    b.ty.as_deref()
        .map(|t| simple_name(t).to_string())
        .or_else(|| constructed_type(b.init.as_ref()?))
}

/// The type `e` constructs (`new Foo(..)`, Kotlin's `Foo(..)`), simple name.
pub fn constructed_type(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
        ExprKind::Call {
            name,
            receiver: None,
            ..
        } if name.starts_with(|c: char| c.is_uppercase()) => Some(name.to_string()),
        _ => None,
    }
}

/// Calls `f` on every local binding and expression in `stmts`, in order, without entering
/// lambda bodies (try-with-resources bindings included). Iterative.
pub fn walk_body<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(Visit<'a>)) {
    enum Item<'a> {
        S(&'a Stmt),
        E(&'a Expr),
    }
    let mut stack: Vec<Item<'a>> = stmts.iter().rev().map(Item::S).collect();
    while let Some(item) = stack.pop() {
        match item {
            Item::S(Stmt::Let(b)) => {
                if let Some(init) = &b.init {
                    stack.push(Item::E(init));
                }
                f(Visit::Let(b));
            }
            Item::S(Stmt::Expr(e)) => stack.push(Item::E(e)),
            Item::S(_) => {}
            Item::E(e) => {
                f(Visit::Expr(e));
                let start = stack.len();
                match &e.kind {
                    ExprKind::Block(stmts) => stack.extend(stmts.iter().map(Item::S)),
                    ExprKind::Try { resources, .. } => {
                        for r in resources {
                            f(Visit::Let(r));
                        }
                        e.for_each_child(|c| stack.push(Item::E(c)));
                    }
                    _ => e.for_each_child(|c| stack.push(Item::E(c))),
                }
                stack[start..].reverse();
            }
        }
    }
}
