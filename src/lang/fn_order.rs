//! Declared functions first: after lowering, a file's named functions (methods, constructors,
//! free and local functions, in source order) take the first ids, and lambdas follow.
//!
//! The lowering numbers functions as it meets them, so a method after a lambda used to get an
//! id that depends on how many lambdas came before it. With declared functions first, the
//! `i`-th function of the lexical outline ([`crate::outline::functions`]) is function `i` of the
//! facts, so project lookups can name a function of a file that has not been parsed.
//!
//! Iterative, like every walk over expressions: nesting depth cannot overflow the stack.

use crate::facts::{
    Annotation, Binding, Expr, ExprKind, FileFacts, FnId, FnKind, Function, Stmt, TypeId,
};

/// A function the outline lists: named, and not a lambda.
pub fn is_declared(f: &Function) -> bool {
    f.kind != FnKind::Lambda && f.name.is_some()
}

/// Renumbers `facts.functions` so that declared functions come first, each group in its
/// lowering order, and rewrites every id that points at a function.
pub fn declared_first(facts: &mut FileFacts) {
    let declared: Vec<FnId> = (0..facts.functions.len())
        .filter(|&i| is_declared(&facts.functions[i]))
        .collect();
    if declared.iter().enumerate().all(|(k, &i)| k == i) {
        return;
    }
    let mut new_id = vec![usize::MAX; facts.functions.len()];
    let mut next = 0;
    for &i in &declared {
        new_id[i] = next;
        next += 1;
    }
    for slot in new_id.iter_mut().filter(|s| **s == usize::MAX) {
        *slot = next;
        next += 1;
    }
    let mut old: Vec<Option<Function>> = std::mem::take(&mut facts.functions)
        .into_iter()
        .map(Some)
        .collect();
    let mut by_new: Vec<(FnId, usize)> = new_id.iter().enumerate().map(|(o, &n)| (n, o)).collect();
    by_new.sort_unstable();
    facts.functions = by_new
        .into_iter()
        .filter_map(|(_, o)| old[o].take())
        .collect();
    rewrite_ids(facts, &new_id, None);
}

/// Rewrites every id that points at a function (`fns[old]` is its new id) and, with `types`,
/// every id that points at a type.
pub(crate) fn rewrite_ids(facts: &mut FileFacts, fns: &[FnId], types: Option<&[TypeId]>) {
    let map = |id: &mut FnId| *id = fns[*id];
    let ty = |id: &mut TypeId| {
        if let Some(m) = types {
            *id = m[*id];
        }
    };
    let mut stack: Vec<&mut Expr> = Vec::new();
    for t in &mut facts.types {
        t.methods.iter_mut().for_each(map);
        t.parent_fn.as_mut().map(map);
        t.nested.iter_mut().for_each(ty);
        t.parent_type.as_mut().map(ty);
        annotations(&mut t.annotations, &mut stack);
        for b in &mut t.fields {
            binding(b, &mut stack);
        }
    }
    for f in &mut facts.functions {
        f.parent.as_mut().map(map);
        f.owner.as_mut().map(ty);
        annotations(&mut f.annotations, &mut stack);
        for p in &mut f.params {
            annotations(&mut p.annotations, &mut stack);
            stack.extend(p.default.as_mut());
        }
        stmts(&mut f.body, fns, types, &mut stack);
    }
    stmts(&mut facts.top_level, fns, types, &mut stack);
    for b in &mut facts.globals {
        binding(b, &mut stack);
    }
    while let Some(e) = stack.pop() {
        if !matches!(
            e.kind,
            ExprKind::Lambda(_)
                | ExprKind::Block(_)
                | ExprKind::Try { .. }
                | ExprKind::New { body: Some(_), .. }
                | ExprKind::Object(_)
        ) {
            e.for_each_child_mut(|c| stack.push(c));
            continue;
        }
        match &mut e.kind {
            ExprKind::Lambda(id) => map(id),
            ExprKind::Block(s) => stmts(s, fns, types, &mut stack),
            ExprKind::Try {
                body,
                catches,
                finally,
                resources,
            } => {
                for r in resources {
                    binding(r, &mut stack);
                }
                stack.push(body);
                stack.extend(catches.iter_mut().map(|c| &mut c.body));
                stack.extend(finally.as_deref_mut());
            }
            ExprKind::Object(t) => ty(t),
            ExprKind::New {
                body: Some(t),
                args,
                ..
            } => {
                ty(t);
                stack.extend(args.iter_mut().map(|a| &mut a.value));
            }
            _ => {}
        }
    }
}

fn stmts<'a>(
    v: &'a mut [Stmt],
    fns: &[FnId],
    types: Option<&[TypeId]>,
    stack: &mut Vec<&'a mut Expr>,
) {
    for s in v {
        match s {
            Stmt::LocalFn(id) => *id = fns[*id],
            Stmt::Let(b) => binding(b, stack),
            Stmt::Expr(e) => stack.push(e),
            Stmt::LocalType(t) => {
                if let Some(m) = types {
                    *t = m[*t];
                }
            }
        }
    }
}

fn binding<'a>(b: &'a mut Binding, stack: &mut Vec<&'a mut Expr>) {
    annotations(&mut b.annotations, stack);
    stack.extend(b.init.as_mut());
}

fn annotations<'a>(v: &'a mut [Annotation], stack: &mut Vec<&'a mut Expr>) {
    for a in v {
        stack.extend(a.args.iter_mut().map(|a| &mut a.value));
    }
}

#[cfg(test)]
/// Every id that points at a function points at the function it pointed at before: a
/// lambda expression at the lambda starting where it stands, a type's method at a function
/// it owns, a local function statement and a function's parent at a function around it.
pub(crate) fn ids_agree(facts: &FileFacts) -> Result<(), String> {
    let fns = &facts.functions;
    for (t, ty) in facts.types.iter().enumerate() {
        for &m in &ty.methods {
            if fns[m].owner != Some(t) {
                return Err(format!(
                    "type {t}'s method {m} has owner {:?}",
                    fns[m].owner
                ));
            }
        }
        if let Some(p) = ty.parent_fn
            && !within(fns[p].span, ty.span)
        {
            return Err(format!("type {t} is not inside its function {p}"));
        }
        for &n in &ty.nested {
            if facts.types[n].parent_type != Some(t) {
                return Err(format!("type {t}'s nested type {n} has another parent"));
            }
        }
    }
    for (i, f) in fns.iter().enumerate() {
        if let Some(t) = f.owner
            && !facts.types[t].methods.contains(&i)
        {
            return Err(format!("function {i} is not among its owner {t}'s methods"));
        }
        if let Some(p) = f.parent
            && !within(fns[p].span, f.span)
        {
            return Err(format!("function {i} is not inside its parent {p}"));
        }
        let local_fn = |s: &Stmt| match s {
            Stmt::LocalFn(id) if fns[*id].parent != Some(i) => {
                Some(format!("local function {id} is not in {i}"))
            }
            _ => None,
        };
        let mut bad = f.body.iter().find_map(local_fn);
        crate::walk::walk_stmts(&f.body, &mut |e| {
            if let ExprKind::Lambda(id) = e.kind
                && (fns[id].kind != FnKind::Lambda || !within(e.span, fns[id].span))
            {
                bad = Some(format!("lambda {id} in function {i} is elsewhere"));
            }
            if let ExprKind::Block(s) = &e.kind
                && let Some(b) = s.iter().find_map(local_fn)
            {
                bad = Some(b);
            }
        });
        if let Some(b) = bad {
            return Err(b);
        }
    }
    Ok(())
}

#[cfg(test)]
fn within(outer: crate::facts::Span, inner: crate::facts::Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_functions_come_first_and_every_id_follows() {
        let files = crate::lang::fixture_sources();
        assert!(files.len() > 1000, "fixtures not found");
        let mut moved = 0;
        for (lang, path, text) in &files {
            let Some(parsed) = crate::lang::lower_unshrunk(*lang, text) else {
                continue;
            };
            let facts = parsed.facts;
            let first_lambda = facts.functions.iter().position(|f| !is_declared(f));
            let declared = facts.functions.iter().filter(|f| is_declared(f)).count();
            if let Some(k) = first_lambda {
                assert_eq!(
                    k,
                    declared,
                    "{}: a declared function after a lambda",
                    path.display()
                );
            }
            if let Err(e) = ids_agree(&facts) {
                panic!("{}: {e}", path.display());
            }
            moved += usize::from(first_lambda.is_some_and(|k| k < facts.functions.len()));
        }
        assert!(moved > 100, "only {moved} files have lambdas to move");
    }
}
