//! Gives back the spare capacity of a file's facts once it is lowered.
//!
//! The lowering builds its lists by pushing, and a `Vec` that is pushed to once keeps room for
//! four: a call with one argument holds 448 bytes where 112 would do. The facts of every file
//! live until the rules are done, so on a large project that slack was over a third of the
//! heap (278 of 754 MB after parsing the 2.2 M-line bench corpus). The front ends size the
//! largest lists (arguments, statements) from the node's child count; this pass catches the
//! rest. On glibc, shrinking in place splits the block without copying, and the freed tails
//! serve the next file's allocations.
//!
//! Iterative, like every walk over expressions: nesting depth cannot overflow the stack.

use crate::facts::{Annotation, Arg, Binding, Expr, ExprKind, FileFacts, Stmt};

pub fn shrink(f: &mut FileFacts) {
    let mut stack: Vec<&mut Expr> = Vec::new();
    f.types.shrink_to_fit();
    for t in &mut f.types {
        shrink_opt(&mut t.name);
        strings(&mut t.supertypes);
        annotations(&mut t.annotations, &mut stack);
        bindings(&mut t.fields, &mut stack);
        t.methods.shrink_to_fit();
        t.nested.shrink_to_fit();
    }
    f.functions.shrink_to_fit();
    for func in &mut f.functions {
        shrink_opt(&mut func.name);
        func.params.shrink_to_fit();
        for p in &mut func.params {
            p.name.shrink_to_fit();
            shrink_opt(&mut p.ty);
            annotations(&mut p.annotations, &mut stack);
            if let Some(d) = &mut p.default {
                stack.push(d);
            }
        }
        annotations(&mut func.annotations, &mut stack);
        strings(&mut func.modifiers);
        shrink_opt(&mut func.return_type);
        stmts(&mut func.body, &mut stack);
    }
    stmts(&mut f.top_level, &mut stack);
    bindings(&mut f.globals, &mut stack);
    strings(&mut f.imports);
    f.test_regions.shrink_to_fit();
    f.syntax_errors.shrink_to_fit();
    while let Some(e) = stack.pop() {
        expr(e, &mut stack);
    }
}

fn shrink_opt(s: &mut Option<String>) {
    if let Some(s) = s {
        s.shrink_to_fit();
    }
}

fn strings(v: &mut Vec<String>) {
    v.shrink_to_fit();
    v.iter_mut().for_each(String::shrink_to_fit);
}

fn args<'a>(v: &'a mut Vec<Arg>, stack: &mut Vec<&'a mut Expr>) {
    v.shrink_to_fit();
    for a in v {
        shrink_opt(&mut a.name);
        stack.push(&mut a.value);
    }
}

fn annotations<'a>(v: &'a mut Vec<Annotation>, stack: &mut Vec<&'a mut Expr>) {
    v.shrink_to_fit();
    for a in v {
        a.name.shrink_to_fit();
        args(&mut a.args, stack);
    }
}

fn binding<'a>(b: &'a mut Binding, stack: &mut Vec<&'a mut Expr>) {
    b.name.shrink_to_fit();
    shrink_opt(&mut b.ty);
    annotations(&mut b.annotations, stack);
    strings(&mut b.modifiers);
    if let Some(i) = &mut b.init {
        stack.push(i);
    }
}

fn bindings<'a>(v: &'a mut Vec<Binding>, stack: &mut Vec<&'a mut Expr>) {
    v.shrink_to_fit();
    for b in v {
        binding(b, stack);
    }
}

fn stmts<'a>(v: &'a mut Vec<Stmt>, stack: &mut Vec<&'a mut Expr>) {
    v.shrink_to_fit();
    for s in v {
        match s {
            Stmt::Let(b) => binding(b, stack),
            Stmt::Expr(e) => stack.push(e),
            Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
        }
    }
}

fn expr<'a>(e: &'a mut Expr, stack: &mut Vec<&'a mut Expr>) {
    use ExprKind::*;
    match &mut e.kind {
        Name(s) | Str(s) | Lit(s) => s.shrink_to_fit(),
        Lambda(_) | Object(_) => {}
        Break(l) | Continue(l) => shrink_opt(l),
        Field { receiver, name } => {
            name.shrink_to_fit();
            stack.push(receiver);
        }
        Call {
            receiver,
            name,
            args: a,
        } => {
            name.shrink_to_fit();
            if let Some(r) = receiver {
                stack.push(r);
            }
            args(a, stack);
        }
        Macro { name, args: a } => {
            name.shrink_to_fit();
            args(a, stack);
        }
        New { ty, args: a, .. } => {
            ty.shrink_to_fit();
            args(a, stack);
        }
        Template(parts) | Other(parts) => {
            parts.shrink_to_fit();
            stack.extend(parts.iter_mut());
        }
        Binary { op, lhs, rhs } => {
            op.shrink_to_fit();
            stack.push(lhs);
            stack.push(rhs);
        }
        Unary { op, operand } => {
            op.shrink_to_fit();
            stack.push(operand);
        }
        Cast { expr, ty } => {
            ty.shrink_to_fit();
            stack.push(expr);
        }
        Await(x) | Throw(x) => stack.push(x),
        Index { receiver, index } => {
            stack.push(receiver);
            stack.push(index);
        }
        MethodRef { receiver, name } => {
            name.shrink_to_fit();
            if let Some(r) = receiver {
                stack.push(r);
            }
        }
        Assign { target, op, value } => {
            op.shrink_to_fit();
            stack.push(target);
            stack.push(value);
        }
        If { cond, then, els } => {
            stack.push(cond);
            stack.push(then);
            if let Some(x) = els {
                stack.push(x);
            }
        }
        Match { subject, arms } => {
            if let Some(s) = subject {
                stack.push(s);
            }
            arms.shrink_to_fit();
            for a in arms {
                a.patterns.shrink_to_fit();
                a.pattern_text.shrink_to_fit();
                stack.extend(a.patterns.iter_mut());
                if let Some(g) = &mut a.guard {
                    stack.push(g);
                }
                stack.push(&mut a.body);
            }
        }
        Block(s) => stmts(s, stack),
        Loop { header, body, .. } => {
            stack.extend(header.iter_mut());
            stack.push(body);
        }
        Try {
            body,
            catches,
            finally,
            resources,
        } => {
            bindings(resources, stack);
            stack.push(body);
            catches.shrink_to_fit();
            for c in catches {
                strings(&mut c.types);
                shrink_opt(&mut c.name);
                stack.push(&mut c.body);
            }
            if let Some(x) = finally {
                stack.push(x);
            }
        }
        Return(x) => {
            if let Some(x) = x {
                stack.push(x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Lang;
    use crate::project::walk_stmts;

    /// Every list the rules read most (functions, bodies, call arguments) has no spare room.
    fn tight(f: &FileFacts) -> bool {
        let mut ok = f.functions.capacity() == f.functions.len();
        for func in &f.functions {
            ok &= func.body.capacity() == func.body.len();
            walk_stmts(&func.body, &mut |e| match &e.kind {
                ExprKind::Call { args, .. } | ExprKind::New { args, .. } => {
                    ok &= args.capacity() == args.len()
                }
                ExprKind::Block(s) => ok &= s.capacity() == s.len(),
                ExprKind::Other(p) => ok &= p.capacity() == p.len(),
                _ => {}
            });
        }
        ok
    }

    #[test]
    fn shrinking_keeps_every_fact_and_leaves_no_spare_room() {
        let files = [
            (
                Lang::Java,
                include_str!("../fixtures/java/retry/AsyncRetries.java"),
            ),
            (
                Lang::Kotlin,
                include_str!("../fixtures/kotlin/retry/CallbackRetries.kt"),
            ),
            (
                Lang::Rust,
                include_str!("../fixtures/projects6/p6-rust-payouts/src/store.rs"),
            ),
        ];
        for (lang, text) in files {
            let mut facts = crate::lang::lower_unshrunk(lang, text).unwrap().facts;
            assert!(
                !tight(&facts),
                "{lang:?}: the lowering left no room to give back"
            );
            let before = format!("{facts:?}");
            shrink(&mut facts);
            assert_eq!(
                format!("{facts:?}"),
                before,
                "{lang:?}: shrinking changed the facts"
            );
            assert!(tight(&facts), "{lang:?}: spare room left after shrinking");
        }
    }
}
