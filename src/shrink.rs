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
        Loop {
            vars, header, body, ..
        } => {
            vars.iter_mut().for_each(String::shrink_to_fit);
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
    //! The check below destructures every type of the facts model without `..` and matches
    //! every expression kind: a field added to the model does not compile here until the check
    //! looks at it, so the check cannot silently miss what `shrink` misses.
    use super::*;
    use crate::facts::{Catch, Function, Lang, MatchArm, Param, Text, TypeDecl};

    /// Every list and string of `f` with spare room, described.
    fn loose(f: &FileFacts) -> Vec<String> {
        let mut out = Vec::new();
        let mut s = |what: &str, x: &String| {
            if x.capacity() != x.len() {
                out.push(format!("{what} {x:?}"));
            }
        };
        let mut stack: Vec<&Expr> = Vec::new();
        let mut strs: Vec<(&str, &String)> = Vec::new();
        let mut texts: Vec<(&str, &Text)> = Vec::new();
        let mut vecs: Vec<(&str, usize, usize)> = Vec::new();
        macro_rules! v {
            ($what:expr, $v:expr) => {
                vecs.push(($what, $v.len(), $v.capacity()))
            };
        }
        let FileFacts {
            types,
            functions,
            top_level,
            globals,
            imports,
            test_regions,
            syntax_errors,
        } = f;
        v!("types", types);
        v!("functions", functions);
        v!("imports", imports);
        v!("test_regions", test_regions);
        v!("syntax_errors", syntax_errors);
        strs.extend(imports.iter().map(|x| ("import", x)));
        let mut anns: Vec<&Vec<Annotation>> = Vec::new();
        let mut binds: Vec<&Binding> = globals.iter().collect();
        let mut stmt_lists: Vec<&Vec<Stmt>> = vec![top_level];
        v!("globals", globals);
        for t in types {
            let TypeDecl {
                name,
                kind: _,
                supertypes,
                annotations,
                fields,
                methods,
                nested,
                span: _,
                name_span: _,
                parent_type: _,
                parent_fn: _,
            } = t;
            strs.extend(name.iter().map(|x| ("type name", x)));
            v!("supertypes", supertypes);
            strs.extend(supertypes.iter().map(|x| ("supertype", x)));
            anns.push(annotations);
            v!("fields", fields);
            binds.extend(fields);
            v!("methods", methods);
            v!("nested", nested);
        }
        for func in functions {
            let Function {
                name,
                kind: _,
                params,
                annotations,
                modifiers,
                return_type,
                owner: _,
                parent: _,
                body,
                has_body: _,
                span: _,
                name_span: _,
            } = func;
            strs.extend(name.iter().map(|x| ("function name", x)));
            v!("params", params);
            for p in params {
                let Param {
                    name,
                    ty,
                    annotations,
                    span: _,
                    default,
                } = p;
                strs.push(("param", name));
                strs.extend(ty.iter().map(|x| ("param type", x)));
                anns.push(annotations);
                stack.extend(default);
            }
            anns.push(annotations);
            v!("modifiers", modifiers);
            strs.extend(modifiers.iter().map(|x| ("modifier", x)));
            strs.extend(return_type.iter().map(|x| ("return type", x)));
            stmt_lists.push(body);
        }
        let mut args: Vec<&Vec<Arg>> = Vec::new();
        loop {
            if let Some(l) = stmt_lists.pop() {
                v!("stmts", l);
                for st in l {
                    match st {
                        Stmt::Let(b) => binds.push(b),
                        Stmt::Expr(e) => stack.push(e),
                        Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
                    }
                }
            } else if let Some(b) = binds.pop() {
                let Binding {
                    name,
                    ty,
                    init,
                    annotations,
                    modifiers,
                    mutable: _,
                    span: _,
                    name_span: _,
                } = b;
                strs.push(("binding", name));
                strs.extend(ty.iter().map(|x| ("binding type", x)));
                stack.extend(init);
                anns.push(annotations);
                v!("modifiers", modifiers);
                strs.extend(modifiers.iter().map(|x| ("modifier", x)));
            } else if let Some(a) = anns.pop() {
                v!("annotations", a);
                for x in a {
                    let Annotation {
                        name,
                        args: a,
                        span: _,
                    } = x;
                    strs.push(("annotation", name));
                    args.push(a);
                }
            } else if let Some(a) = args.pop() {
                v!("args", a);
                for x in a {
                    let Arg { name, value } = x;
                    strs.extend(name.iter().map(|x| ("arg name", x)));
                    stack.push(value);
                }
            } else if let Some(e) = stack.pop() {
                use ExprKind::*;
                match &e.kind {
                    Name(x) | Str(x) | Lit(x) => texts.push(("expr text", x)),
                    Lambda(_) | Object(_) => {}
                    Break(l) | Continue(l) => strs.extend(l.iter().map(|x| ("label", x))),
                    Field { receiver, name } => {
                        texts.push(("field", name));
                        stack.push(receiver);
                    }
                    Call {
                        receiver,
                        name,
                        args: a,
                    } => {
                        texts.push(("call", name));
                        stack.extend(receiver.as_deref());
                        args.push(a);
                    }
                    Macro { name, args: a } => {
                        texts.push(("macro", name));
                        args.push(a);
                    }
                    New {
                        ty,
                        args: a,
                        body: _,
                    } => {
                        texts.push(("new", ty));
                        args.push(a);
                    }
                    Template(p) | Other(p) => {
                        v!("parts", p);
                        stack.extend(p);
                    }
                    Binary { op, lhs, rhs } => {
                        texts.push(("op", op));
                        stack.push(lhs);
                        stack.push(rhs);
                    }
                    Unary { op, operand } => {
                        texts.push(("op", op));
                        stack.push(operand);
                    }
                    Cast { expr, ty } => {
                        texts.push(("cast", ty));
                        stack.push(expr);
                    }
                    Await(x) | Throw(x) => stack.push(x),
                    Index { receiver, index } => {
                        stack.push(receiver);
                        stack.push(index);
                    }
                    MethodRef { receiver, name } => {
                        texts.push(("method ref", name));
                        stack.extend(receiver.as_deref());
                    }
                    Assign { target, op, value } => {
                        texts.push(("op", op));
                        stack.push(target);
                        stack.push(value);
                    }
                    If { cond, then, els } => {
                        stack.push(cond);
                        stack.push(then);
                        stack.extend(els.as_deref());
                    }
                    Match { subject, arms } => {
                        stack.extend(subject.as_deref());
                        v!("arms", arms);
                        for a in arms {
                            let MatchArm {
                                patterns,
                                pattern_text,
                                guard,
                                body,
                            } = a;
                            v!("patterns", patterns);
                            stack.extend(patterns);
                            strs.push(("pattern", pattern_text));
                            stack.extend(guard);
                            stack.push(body);
                        }
                    }
                    Block(l) => stmt_lists.push(l),
                    Loop {
                        kind: _,
                        vars,
                        header,
                        body,
                        label: _,
                    } => {
                        strs.extend(vars.iter().map(|x| ("loop var", x)));
                        stack.extend(header.iter());
                        stack.push(body);
                    }
                    Try {
                        body,
                        catches,
                        finally,
                        resources,
                    } => {
                        stack.push(body);
                        v!("catches", catches);
                        for c in catches {
                            let Catch {
                                types,
                                name,
                                body,
                                span: _,
                            } = c;
                            v!("catch types", types);
                            strs.extend(types.iter().map(|x| ("catch type", x)));
                            strs.extend(name.iter().map(|x| ("catch name", x)));
                            stack.push(body);
                        }
                        stack.extend(finally.as_deref());
                        v!("resources", resources);
                        binds.extend(resources);
                    }
                    Return(x) => stack.extend(x.as_deref()),
                }
            } else {
                break;
            }
        }
        for (what, x) in strs {
            s(what, x);
        }
        for (what, x) in texts {
            // Short texts live inline, with a fixed capacity; compact_str never puts fewer
            // than 32 bytes on the heap.
            if x.is_heap_allocated() && x.capacity() > x.len().max(32) {
                out.push(format!("{what} {x:?}"));
            }
        }
        for (what, len, cap) in vecs {
            if len != cap {
                out.push(format!("{what} list {len}/{cap}"));
            }
        }
        out
    }

    #[test]
    fn shrinking_keeps_every_fact_and_leaves_no_spare_room() {
        let mut files: Vec<(Lang, String)> = crate::lang::fixture_sources()
            .into_iter()
            .map(|(lang, _, text)| (lang, text))
            .collect();
        assert!(files.len() > 100, "fixtures not found");
        // Loop variables parsed by syn inside a macro get spare room (found by review).
        files.push((
            Lang::Rust,
            "fn f() { println!(\"{}\", { for q in 0..1 {} 2 }); }\n".to_string(),
        ));
        let mut loose_before = 0;
        for (lang, text) in &files {
            let Some(parsed) = crate::lang::lower_unshrunk(*lang, text) else {
                continue;
            };
            let mut facts = parsed.facts;
            loose_before += loose(&facts).len();
            let before = format!("{facts:?}");
            shrink(&mut facts);
            assert_eq!(format!("{facts:?}"), before, "shrinking changed the facts");
            let left = loose(&facts);
            assert!(left.is_empty(), "spare room left after shrinking: {left:?}");
        }
        // The check can see spare room: the lowering leaves plenty.
        assert!(
            loose_before > 1000,
            "only {loose_before} loose lists before shrinking"
        );
    }
}
