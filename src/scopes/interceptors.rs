//! Which functions are HTTP interceptor / middleware / filter bodies, and of what kind.

use crate::catalog::{Catalog, InterceptorEntry};
use crate::coord::words::has;
use crate::facts::{Expr, ExprKind, FnId, FnKind, Lang, Span, Stmt, TypeId, simple_name};
use crate::finding::article;
use crate::hash::HashMap;
use crate::project::{FnRef, Project, TypeRef, walk_expr, walk_stmts};

/// Why a function counts as an interceptor body.
#[derive(Debug)]
pub struct InterceptorScope {
    pub entry: &'static InterceptorEntry,
    /// Where to point the secondary label: the class name or the lambda.
    pub anchor_unit: usize,
    pub anchor: Span,
    /// "`StripeKeys` is an OkHttp application interceptor".
    pub what: String,
    /// Set when the scope is inferred (a callback of a library not in the catalogue): what
    /// was inferred and why, for the finding.
    pub inferred: Option<String>,
}

/// Maps interceptor entry methods, their same-class helpers, and registered lambdas to their
/// scope. Lambdas nested inside these are found through [`Project::ancestors`].
pub fn find(
    p: &Project,
    cat: &'static Catalog,
) -> HashMap<FnRef, std::sync::Arc<InterceptorScope>> {
    let mut out = HashMap::default();
    let mut bases = Vec::new();
    let may_declare = may_declare(p, cat);
    for u in (0..p.units.len()).filter(|&u| may_declare[u]) {
        classes(p, cat, u, &mut out, &mut bases);
        lambdas(p, cat, u, &mut out);
    }
    // A callback is inferred only where a parameter's type is a request: its code writes
    // that type's name.
    let inf = &cat.inferred_interceptor;
    let may_infer = p.units_naming_any(|n| is_request_type(inf, n));
    for u in (0..p.units.len()).filter(|&u| may_infer[u]) {
        inferred_callbacks(p, cat, u, &mut out);
    }
    template_methods(p, &bases, &may_declare, &mut out);
    out
}

/// Per unit: may it declare an interceptor (a class, a registered or typed lambda, an
/// annotated filter, a subclass of one)? Each of those writes names the catalogue lists, as
/// [`classes`], [`lambdas`] and [`annotated`] match them: an entry's supertype, SAM
/// constructor or class annotation; or one of its registration calls together with a receiver
/// hint and a chain hint where the entry has them. A subclass of a project interceptor
/// class writes the name of a project type below such a supertype. A file that writes none of
/// these is not read.
fn may_declare(p: &Project, cat: &Catalog) -> Vec<bool> {
    let entries = &cat.interceptors;
    // Names that declare one alone.
    let mut alone: crate::hash::HashSet<&str> = entries
        .iter()
        .flat_map(|e| {
            e.supertypes
                .iter()
                .chain(&e.sam)
                .chain(&e.class_annotations)
        })
        .map(String::as_str)
        .collect();
    alone.extend(p.types_below(&cat.interceptor_supertypes()));
    let mut may = p.units_naming_any(|n| alone.contains(n));
    // A registration: its call, with a hint of each kind the entry asks for.
    let mut words: Vec<&str> = entries
        .iter()
        .flat_map(|e| {
            e.registrations
                .iter()
                .chain(&e.receiver_hints)
                .chain(&e.chain_hints)
        })
        .map(String::as_str)
        .collect();
    words.sort_unstable();
    words.dedup();
    if words.len() > 128 {
        // (A catalogue extended past what one mask holds: read every file.)
        return vec![true; p.units.len()];
    }
    let mask = |list: &[String]| -> u128 {
        list.iter()
            .filter_map(|w| words.binary_search(&w.as_str()).ok())
            .fold(0, |m, i| m | 1u128 << i)
    };
    // (registrations, receiver hints, chain hints) per entry that registers.
    let needs: Vec<(u128, u128, u128)> = entries
        .iter()
        .filter(|e| !e.registrations.is_empty())
        .map(|e| {
            (
                mask(&e.registrations),
                mask(&e.receiver_hints),
                mask(&e.chain_hints),
            )
        })
        .collect();
    let written = p.units_naming_which(&words);
    for (m, w) in may.iter_mut().zip(written) {
        let any = |bits: u128| bits == 0 || w & bits != 0;
        *m |= needs
            .iter()
            .any(|&(reg, rh, ch)| w & reg != 0 && any(rh) && any(ch));
    }
    may
}

/// An interceptor class and the names its body calls on itself: a subclass that overrides
/// one of those (a template-method hook, `protected String newKey()`) runs inside it.
struct Base {
    ty: TypeRef,
    name: String,
    scope: std::sync::Arc<InterceptorScope>,
    hooks: Vec<String>,
}

/// Subclasses of interceptor classes (in the files [`may_declare`] lets through: a subclass
/// names its superclass, a type below an interceptor supertype).
fn template_methods(
    p: &Project,
    bases: &[Base],
    may_declare: &[bool],
    out: &mut HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
) {
    if bases.is_empty() {
        return;
    }
    for u in (0..p.units.len()).filter(|&u| may_declare[u]) {
        let facts = &p.units[u].facts();
        for (t, ty) in facts.types.iter().enumerate() {
            if ty.supertypes.is_empty() {
                continue;
            }
            let supers = p.all_supertypes(TypeRef { unit: u, t });
            for b in bases {
                if b.ty == (TypeRef { unit: u, t }) || !supers.iter().any(|s| *s == b.name) {
                    continue;
                }
                let e = b.scope.entry;
                let scope = std::sync::Arc::new(InterceptorScope {
                    entry: e,
                    anchor_unit: u,
                    anchor: ty.name_span,
                    what: format!(
                        "`{}` extends `{}`, {} {} {}",
                        ty.name.as_deref().unwrap_or("this class"),
                        b.name,
                        article(&e.framework),
                        e.framework,
                        e.kind
                    ),
                    inferred: None,
                });
                for &m in &ty.methods {
                    let f = &facts.functions[m];
                    if f.name
                        .as_deref()
                        .is_some_and(|n| b.hooks.iter().any(|h| h == n))
                    {
                        out.entry(FnRef { unit: u, f: m })
                            .or_insert_with(|| scope.clone());
                    }
                }
            }
        }
    }
}

/// The interceptor scope `f` runs in, if any (itself or an enclosing function).
pub fn scope_of<'a>(
    p: &Project,
    map: &'a HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
    f: FnRef,
) -> Option<&'a std::sync::Arc<InterceptorScope>> {
    p.ancestors(f).find_map(|a| map.get(&a))
}

fn imports_match(p: &Project, u: usize, e: &InterceptorEntry) -> bool {
    e.imports.is_empty() || p.imports_any(u, &e.imports)
}

/// The entries that may apply in file `u`: its language's, less those whose `not_imports` the
/// file imports (a server's filter).
fn entries_for<'c>(
    p: &Project,
    cat: &'c Catalog,
    u: usize,
) -> impl Iterator<Item = &'c InterceptorEntry> {
    cat.interceptors_for(p.units[u].lang)
        .filter(move |e| e.not_imports.is_empty() || !p.imports_any(u, &e.not_imports))
}

/// With `returns_handler`, the body of `f` is the handler it returns (`{ request -> .. }`,
/// `HttpHandler { request -> .. }`); `f` itself runs once, when the stack is built. Without a
/// handler it can see, `f` stands.
fn handler_body(p: &Project, u: usize, e: &InterceptorEntry, f: FnId) -> FnId {
    if !e.returns_handler {
        return f;
    }
    fn lambda_in(e: &Expr) -> Option<FnId> {
        match &e.kind {
            ExprKind::Lambda(id) => Some(*id),
            ExprKind::Return(Some(v)) => lambda_in(v),
            ExprKind::Call {
                receiver: None,
                name,
                args,
            } if name.starts_with(char::is_uppercase) && args.len() == 1 => {
                lambda_in(&args[0].value)
            }
            _ => None,
        }
    }
    match p.units[u].facts().functions[f].body.last() {
        Some(Stmt::Expr(e)) => lambda_in(e).unwrap_or(f),
        _ => f,
    }
}

fn classes(
    p: &Project,
    cat: &'static Catalog,
    u: usize,
    out: &mut HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
    bases: &mut Vec<Base>,
) {
    let unit = &p.units[u];
    for (t, ty) in unit.facts().types.iter().enumerate() {
        annotated(p, cat, u, t, out);
        if ty.supertypes.is_empty() {
            continue;
        }
        let supers = p.supertype_origins(TypeRef { unit: u, t });
        // An entry applies when the file declaring the supertype imports the framework (or
        // names it fully): a MyBatis `Interceptor` is not OkHttp's.
        let candidates: Vec<&'static InterceptorEntry> = entries_for(p, cat, u)
            .filter(|e| {
                supers.iter().any(|(s, written, origin)| {
                    e.supertypes.contains(s)
                        && (e.imports.is_empty()
                            || imports_match(p, *origin, e)
                            || e.imports
                                .iter()
                                .any(|pre| written.starts_with(pre.as_str())))
                })
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let registered = ty
            .name
            .as_deref()
            .map(|n| p.registrations_of(simple_name(n), cat))
            .unwrap_or(&[]);
        let entry = candidates
            .iter()
            .find(|e| e.registrations.iter().any(|r| registered.contains(r)))
            .or_else(|| {
                candidates
                    .iter()
                    .find(|e| imports_match(p, u, e) && !e.imports.is_empty())
            })
            .or_else(|| candidates.first())
            .copied();
        let Some(entry) = entry else { continue };
        let entries: Vec<FnId> = ty
            .methods
            .iter()
            .copied()
            .filter(|&m| {
                let f = &unit.facts().functions[m];
                f.has_body
                    && f.name
                        .as_deref()
                        .is_some_and(|n| entry.methods.iter().any(|x| x == n))
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let what = match &ty.name {
            Some(n) => format!(
                "`{}` is {} {} {}",
                n,
                article(&entry.framework),
                entry.framework,
                entry.kind
            ),
            None => format!(
                "this anonymous `{}` is {} {} {}",
                ty.supertypes
                    .first()
                    .map(|s| simple_name(s))
                    .unwrap_or("class"),
                article(&entry.framework),
                entry.framework,
                entry.kind
            ),
        };
        let scope = std::sync::Arc::new(InterceptorScope {
            entry,
            anchor_unit: u,
            anchor: ty.name_span,
            what,
            inferred: None,
        });
        let (body, hooks) = with_same_type_helpers(p, u, t, &entries);
        for f in body {
            out.entry(FnRef {
                unit: u,
                f: handler_body(p, u, entry, f),
            })
            .or_insert_with(|| scope.clone());
        }
        if let Some(name) = &ty.name {
            bases.push(Base {
                ty: TypeRef { unit: u, t },
                name: simple_name(name).to_string(),
                scope: scope.clone(),
                hooks,
            });
        }
    }
}

/// Annotation-declared filters (`@ClientFilter class .. { @RequestFilter fun stamp(..) }`).
fn annotated(
    p: &Project,
    cat: &'static Catalog,
    u: usize,
    t: TypeId,
    out: &mut HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
) {
    let unit = &p.units[u];
    let ty = &unit.facts().types[t];
    if ty.annotations.is_empty() {
        return;
    }
    for e in entries_for(p, cat, u) {
        if e.class_annotations.is_empty()
            || !ty
                .annotations
                .iter()
                .any(|a| e.class_annotations.contains(&a.name))
            || !imports_match(p, u, e)
        {
            continue;
        }
        let entries: Vec<FnId> = ty
            .methods
            .iter()
            .copied()
            .filter(|&m| {
                let f = &unit.facts().functions[m];
                f.has_body
                    && f.annotations
                        .iter()
                        .any(|a| e.method_annotations.contains(&a.name))
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        let scope = std::sync::Arc::new(InterceptorScope {
            entry: e,
            anchor_unit: u,
            anchor: ty.name_span,
            what: format!(
                "`{}` is {} {} {}",
                ty.name.as_deref().unwrap_or("this class"),
                article(&e.framework),
                e.framework,
                e.kind
            ),
            inferred: None,
        });
        for f in with_same_type_helpers(p, u, t, &entries).0 {
            out.entry(FnRef { unit: u, f })
                .or_insert_with(|| scope.clone());
        }
    }
}

/// The entry methods plus methods of the same type they call (transitively) on `this`/`self`,
/// and the names of every method they call on `this`/`self` (declared here or not).
fn with_same_type_helpers(
    p: &Project,
    u: usize,
    t: TypeId,
    entries: &[FnId],
) -> (Vec<FnId>, Vec<String>) {
    let mut called: Vec<String> = Vec::new();
    let facts = &p.units[u].facts();
    let ty = &facts.types[t];
    // Rust: methods of every `impl` block of the same type in this file.
    let mut methods: Vec<FnId> = ty.methods.clone();
    if ty.kind == crate::facts::TypeKind::Impl {
        for other in &facts.types {
            if other.kind == crate::facts::TypeKind::Impl && other.name == ty.name {
                methods.extend(
                    other
                        .methods
                        .iter()
                        .copied()
                        .filter(|m| !methods.contains(m))
                        .collect::<Vec<_>>(),
                );
            }
        }
    }
    let mut out: Vec<FnId> = entries.to_vec();
    let mut i = 0;
    while i < out.len() && out.len() < 64 {
        let f = out[i];
        i += 1;
        for g in p.with_nested(FnRef { unit: u, f }) {
            walk_stmts(&facts.functions[g.f].body, &mut |e: &Expr| {
                let (recv, name) = match &e.kind {
                    ExprKind::Call { receiver, name, .. } => (receiver.as_deref(), name),
                    ExprKind::MethodRef { receiver, name } => (receiver.as_deref(), name),
                    _ => return,
                };
                if !crate::flow::is_self_receiver(recv) {
                    return;
                }
                if !has(&called, name) {
                    called.push(name.to_string());
                }
                for &m in &methods {
                    if facts.functions[m].name.as_deref() == Some(name.as_str())
                        && !out.contains(&m)
                    {
                        out.push(m);
                    }
                }
            });
        }
    }
    (out, called)
}

/// Lambdas and method references registered as interceptors, SAM-constructed, assigned to an
/// interceptor-typed variable/field, or returned from a method declared to return one.
fn lambdas(
    p: &Project,
    cat: &'static Catalog,
    u: usize,
    out: &mut HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
) {
    let unit = &p.units[u];
    let facts = &unit.facts();
    let entries: Vec<&'static InterceptorEntry> = entries_for(p, cat, u).collect();
    let mut found: Vec<(FnId, &'static InterceptorEntry, String)> = Vec::new();
    let mut typed_found: Vec<(FnId, &'static InterceptorEntry, String)> = Vec::new();

    let lambda_params = |id: FnId| facts.functions.get(id).map(|f| f.params.len());
    let mut on_expr = |e: &Expr, enclosing: Option<FnRef>| match &e.kind {
        ExprKind::Call {
            receiver,
            name,
            args,
        } => {
            // `setInterceptors(List.of((req, body, ex) -> ..))`: look into list literals.
            let mut values: Vec<&Expr> = Vec::new();
            for a in args {
                match &a.value.kind {
                    ExprKind::Call {
                        name: list,
                        args: items,
                        ..
                    } if matches!(
                        list.as_str(),
                        "of" | "listOf"
                            | "asList"
                            | "mutableListOf"
                            | "arrayListOf"
                            | "setOf"
                            | "copyOf"
                    ) =>
                    {
                        values.extend(items.iter().map(|i| &i.value));
                    }
                    _ => values.push(&a.value),
                }
            }
            for value in values {
                // `(HttpRequestInterceptor) (request, context) -> ..`
                let (value, cast_ty) = match &value.kind {
                    ExprKind::Cast { expr, ty } => (expr.as_ref(), Some(simple_name(ty))),
                    _ => (value, None),
                };
                let target = match &value.kind {
                    ExprKind::Lambda(id) => Target::Lambda(*id),
                    ExprKind::Name(n) => match p.lambda_bound_to(u, enclosing, n, true) {
                        Some(id) => Target::Lambda(id),
                        // Rust: a function of this file handed over by name
                        // (`.middleware(add_key)`).
                        None if unit.lang == Lang::Rust
                            && facts.functions.iter().any(|f| is_free_fn(f, n)) =>
                        {
                            Target::Function(n.to_string())
                        }
                        None => continue,
                    },
                    ExprKind::MethodRef { name: m, .. } => Target::Method(m.to_string()),
                    // A SAM constructor passed to a registration:
                    // `addInterceptorLast(HttpRequestInterceptor { request, _ -> .. })`.
                    ExprKind::Call {
                        name: sam_name,
                        args: sam_args,
                        ..
                    } if is_sam_name(&entries, sam_name) => {
                        match sam_args.last().map(|a| &a.value.kind) {
                            Some(ExprKind::Lambda(id)) => Target::Lambda(*id),
                            _ => continue,
                        }
                    }
                    _ => continue,
                };
                if let (Some(ty), Target::Lambda(id)) = (cast_ty, &target) {
                    let by_cast = entries.iter().copied().find(|en| {
                        en.supertypes.iter().any(|s| s == ty)
                            && en.registrations.iter().any(|r| r == name)
                    });
                    if let Some(en) = by_cast {
                        found.push((
                            *id,
                            en,
                            format!(
                                "this lambda is passed to `{name}`, which makes it {} {} {}",
                                article(&en.framework),
                                en.framework,
                                en.kind
                            ),
                        ));
                        continue;
                    }
                }
                let n_params = match &target {
                    Target::Lambda(id) => lambda_params(*id),
                    // The referenced method's parameter count, when it is in this file.
                    Target::Method(m) | Target::Function(m) => facts
                        .functions
                        .iter()
                        .find(|f| f.name.as_deref() == Some(m.as_str()) && f.kind != FnKind::Lambda)
                        .map(|f| f.params.iter().filter(|p| p.name != "self").count()),
                };
                // Entries whose imports match this file come first, so `HttpRequestInterceptor`
                // picks HttpClient 4 or 5 by what the file imports.
                let mut ordered: Vec<&'static InterceptorEntry> = entries
                    .iter()
                    .copied()
                    .filter(|en| !en.imports.is_empty() && imports_match(p, u, en))
                    .collect();
                let rest: Vec<&'static InterceptorEntry> = entries
                    .iter()
                    .copied()
                    .filter(|en| !ordered.iter().any(|o| std::ptr::eq(*o, *en)))
                    .collect();
                ordered.extend(rest);
                let entry = ordered.iter().copied().find(|en| {
                    let registered = en.registrations.iter().any(|r| r == name)
                        && (en.receiver_hints.is_empty()
                            || receiver
                                .as_deref()
                                .is_some_and(|r| mentions(r, &en.receiver_hints)))
                        && (en.chain_hints.is_empty()
                            || receiver
                                .as_deref()
                                .is_some_and(|r| mentions_in_chain(r, &en.chain_hints)))
                        && (en.lambda_params.is_none()
                            || n_params.is_none()
                            || en.lambda_params == n_params)
                        && (en.imports.is_empty()
                            || imports_match(p, u, en)
                            || en.lambda_params.is_some()
                            || !en.receiver_hints.is_empty());
                    let sam = (en.sam.iter().any(|s| s == name)
                        || en.supertypes.iter().any(|s| s == name))
                        && imports_match(p, u, en)
                        && receiver.as_deref().is_none_or(|r| {
                            r.path_text().is_some_and(|t| {
                                en.supertypes.iter().any(|s| *s == simple_name(&t))
                            })
                        });
                    registered || sam
                });
                let Some(entry) = entry else { continue };
                let how = if entry.sam.iter().any(|s| s == name)
                    || entry.supertypes.iter().any(|s| s == name)
                {
                    format!(
                        "this lambda is {} {} {}",
                        article(&entry.framework),
                        entry.framework,
                        entry.kind
                    )
                } else {
                    format!(
                        "this {} is passed to `{}`, which makes it {} {} {}",
                        match target {
                            Target::Lambda(_) => "lambda",
                            Target::Method(_) => "method",
                            Target::Function(_) => "function",
                        },
                        name,
                        article(&entry.framework),
                        entry.framework,
                        entry.kind
                    )
                };
                match target {
                    Target::Lambda(id) => found.push((id, entry, how)),
                    Target::Function(n) => {
                        for (mid, f) in facts.functions.iter().enumerate() {
                            if is_free_fn(f, &n) {
                                found.push((mid, entry, how.clone()));
                            }
                        }
                    }
                    Target::Method(m) => {
                        let owner =
                            enclosing.and_then(|f| p.ancestors(f).find_map(|a| p.func(a).owner));
                        let candidates: Vec<FnId> = match owner {
                            Some(owner) => facts.types[owner].methods.clone(),
                            // Kotlin `addInterceptor(::stampKey)` on a top-level function.
                            None => (0..facts.functions.len())
                                .filter(|&i| facts.functions[i].kind == FnKind::Function)
                                .collect(),
                        };
                        for mid in candidates {
                            if facts.functions[mid].name.as_deref() == Some(m.as_str()) {
                                found.push((mid, entry, how.clone()));
                            }
                        }
                    }
                }
            }
        }
        // `(ClientRequestFilter) ctx -> ..` anywhere: the cast names the interface.
        ExprKind::Cast { expr, ty } => {
            if let ExprKind::Lambda(id) = &expr.kind {
                typed(p, u, &entries, simple_name(ty), *id, &mut found);
            }
        }
        ExprKind::Return(Some(v)) => {
            if let (ExprKind::Lambda(id), Some(f)) = (&v.kind, enclosing) {
                let ret = p
                    .func(f)
                    .return_type
                    .as_deref()
                    .map(simple_name)
                    .unwrap_or("");
                typed(p, u, &entries, ret, *id, &mut found);
            }
        }
        _ => {}
    };

    for (i, f) in facts.functions.iter().enumerate() {
        let me = Some(FnRef { unit: u, f: i });
        walk_stmts(&f.body, &mut |e: &Expr| on_expr(e, me));
        // `fun interceptor(): Interceptor = Interceptor { .. }` / expression-bodied returns.
        if f.kind != FnKind::Lambda
            && let (
                Some(Stmt::Expr(Expr {
                    kind: ExprKind::Lambda(id),
                    ..
                })),
                Some(ret),
            ) = (f.body.last(), f.return_type.as_deref())
        {
            typed(p, u, &entries, simple_name(ret), *id, &mut typed_found);
        }
        for s in &f.body {
            if let Stmt::Let(b) = s
                && let (
                    Some(Expr {
                        kind: ExprKind::Lambda(id),
                        ..
                    }),
                    Some(ty),
                ) = (&b.init, &b.ty)
            {
                typed(p, u, &entries, simple_name(ty), *id, &mut typed_found);
            }
        }
    }
    // Field and global initialisers: `private final Interceptor keys = chain -> ..`,
    // `val client = OkHttpClient.Builder().addInterceptor { .. }.build()`.
    let mut inits: Vec<&crate::facts::Binding> = facts.globals.iter().collect();
    for t in &facts.types {
        inits.extend(t.fields.iter());
    }
    for b in inits {
        if let Some(init) = &b.init {
            if let (ExprKind::Lambda(id), Some(ty)) = (&init.kind, &b.ty) {
                typed(p, u, &entries, simple_name(ty), *id, &mut typed_found);
            }
            walk_expr(init, &mut |e: &Expr| on_expr(e, None));
        }
    }
    walk_stmts(&facts.top_level, &mut |e: &Expr| on_expr(e, None));

    for (id, entry, what) in found.into_iter().chain(typed_found) {
        let anchor = facts.functions[id].name_span;
        let body = handler_body(p, u, entry, id);
        out.entry(FnRef { unit: u, f: body }).or_insert_with(|| {
            std::sync::Arc::new(InterceptorScope {
                entry,
                anchor_unit: u,
                anchor,
                what,
                inferred: None,
            })
        });
    }
}

enum Target {
    Lambda(FnId),
    Method(String),
    /// A free function named by a path (Rust).
    Function(String),
}

/// A function of the file (not a method, not a lambda) named `name`.
fn is_free_fn(f: &crate::facts::Function, name: &str) -> bool {
    f.is_free_fn() && f.name.as_deref() == Some(name)
}

/// A call that constructs an interceptor from a lambda: `Interceptor { .. }`,
/// `ExchangeFilterFunction.ofRequestProcessor { .. }`.
fn is_sam_name(entries: &[&'static InterceptorEntry], name: &str) -> bool {
    entries
        .iter()
        .any(|e| e.sam.iter().any(|s| s == name) || e.supertypes.iter().any(|s| s == name))
}

fn typed(
    p: &Project,
    u: usize,
    entries: &[&'static InterceptorEntry],
    ty: &str,
    id: FnId,
    found: &mut Vec<(FnId, &'static InterceptorEntry, String)>,
) {
    if ty.is_empty() {
        return;
    }
    let mut matching = entries
        .iter()
        .copied()
        .filter(|e| e.supertypes.iter().any(|s| s == ty));
    let first = matching.clone().next();
    let entry = matching
        .find(|e| !e.imports.is_empty() && imports_match(p, u, e))
        .or(first);
    if let Some(entry) = entry {
        found.push((
            id,
            entry,
            format!(
                "this lambda is {} {} {}",
                article(&entry.framework),
                entry.framework,
                entry.kind
            ),
        ));
    }
}

/// Does the receiver chain mention one of `hints` anywhere (`WebClient.builder()...`)?
fn mentions_in_chain(r: &Expr, hints: &[String]) -> bool {
    let mut hit = false;
    walk_expr(r, &mut |e: &Expr| {
        if let ExprKind::Call { name, .. } | ExprKind::Field { name, .. } | ExprKind::Name(name) =
            &e.kind
            && hints.iter().any(|h| h == name)
        {
            hit = true;
        }
    });
    hit
}

/// Is the receiver itself one of `hints` (`getInterceptors()`, `.interceptors`,
/// `networkInterceptors()`)?
fn mentions(r: &Expr, hints: &[String]) -> bool {
    let n = match &r.kind {
        ExprKind::Call { name, .. } | ExprKind::Field { name, .. } | ExprKind::Name(name) => name,
        _ => return false,
    };
    hints.iter().any(|h| h == n)
}

/// Inference (`[inferred]` in interceptors.toml): a method overriding a callback of a type the
/// project does not declare, that takes a request and sets a header on it, is an interceptor
/// body of an unlisted client library. Types already known as interceptors are left alone.
fn inferred_callbacks(
    p: &Project,
    cat: &'static Catalog,
    u: usize,
    out: &mut HashMap<FnRef, std::sync::Arc<InterceptorScope>>,
) {
    let inf = &cat.inferred_interceptor;
    let unit = &p.units[u];
    let facts = &unit.facts();
    for (t, ty) in facts.types.iter().enumerate() {
        let Some(library) = ty
            .supertypes
            .iter()
            .map(|s| simple_name(s))
            .find(|s| p.types_named(s).is_empty())
            .filter(|s| !has(&inf.not_supertypes, s))
        else {
            continue;
        };
        if facts.imports.iter().any(|i| {
            i.contains(library)
                && inf
                    .server_imports
                    .iter()
                    .any(|pre| i.starts_with(pre.as_str()))
        }) {
            continue;
        }
        if ty
            .methods
            .iter()
            .any(|&m| out.contains_key(&FnRef { unit: u, f: m }))
        {
            continue;
        }
        for &m in &ty.methods {
            let f = &facts.functions[m];
            let overrides = f
                .annotations
                .iter()
                .any(|a| has(&inf.override_annotations, &a.name))
                || f.has_modifier("override")
                || unit.lang == crate::facts::Lang::Rust;
            if !f.has_body || !overrides {
                continue;
            }
            let Some(req) = f
                .params
                .iter()
                .find(|prm| prm.ty.as_deref().is_some_and(|t| is_request_type(inf, t)))
            else {
                continue;
            };
            let mut sets = false;
            walk_stmts(&f.body, &mut |e: &Expr| {
                if let ExprKind::Call {
                    receiver: Some(r),
                    name,
                    args,
                } = &e.kind
                    && args.len() >= 2
                    && has(&inf.header_calls, name)
                    && matches!(&crate::coord::endpoints::chain_root_expr(r).kind,
                        ExprKind::Name(n) if *n == req.name)
                {
                    sets = true;
                }
            });
            if !sets {
                continue;
            }
            let method = f.name.as_deref().unwrap_or("this method");
            let owner = ty.name.as_deref().map(simple_name).unwrap_or("this class");
            let scope = std::sync::Arc::new(InterceptorScope {
                entry: &inf.entry,
                anchor_unit: u,
                anchor: f.name_span,
                what: format!(
                    "`{owner}.{method}` overrides a callback of `{library}` and sets headers on the request (inferred)"
                ),
                inferred: Some(format!(
                    "`{library}` is not an interceptor API idemlint knows; `{method}` overrides it, takes the request `{}` and sets headers on it, so it is taken to run for every request the client sends",
                    req.name
                )),
            });
            let (body, _) = with_same_type_helpers(p, u, t, &[m]);
            for g in body {
                out.entry(FnRef { unit: u, f: g })
                    .or_insert_with(|| scope.clone());
            }
        }
    }
}

/// Is a parameter of type `ty` a request? (`HttpRequest`, `&mut http::Request<Body>`,
/// `ClientRequest`, `RequestBuilder`, `RequestContext`; not `RequestOptions` or `RequestId`.)
fn is_request_type(inf: &crate::catalog::InferredInterceptor, ty: &str) -> bool {
    let ws = crate::coord::words::words(simple_name(&crate::lang::clean_type(ty)));
    ws.iter().any(|w| has(&inf.request_words, w))
        && ws
            .last()
            .is_some_and(|l| has(&inf.request_words, l) || has(&inf.request_suffixes, l))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files read are those that write what declares an interceptor: a supertype, a
    /// registration with its hint, a project type below an interceptor (a subclass that
    /// overrides a hook). A file that adds to some other list is not read.
    #[test]
    fn only_files_that_may_declare_an_interceptor_are_read() {
        let p = crate::project::parsed(&[
            (
                "Keys.java",
                "import okhttp3.Interceptor;\nclass Keys implements Interceptor {\n  public Response intercept(Chain c) { return c.proceed(c.request()); }\n}",
            ),
            (
                "Base.java",
                "import okhttp3.Interceptor;\nabstract class Base implements Interceptor {\n  public Response intercept(Chain c) { return c.proceed(stamp(c.request())); }\n  abstract Request stamp(Request r);\n}",
            ),
            (
                "Sub.java",
                "class Sub extends Base {\n  Request stamp(Request r) { return r; }\n}",
            ),
            (
                "Wiring.java",
                "class Wiring {\n  void wire(OkHttpClient.Builder b) { b.interceptors().add(chain -> chain.proceed(chain.request())); }\n}",
            ),
            (
                "Plain.java",
                "class Plain {\n  void go(java.util.List<String> xs) { xs.add(\"interceptor\"); }\n}",
            ),
        ]);
        let found = find(&p, Catalog::builtin());
        let mut units: Vec<usize> = found.keys().map(|f| f.unit).collect();
        units.sort_unstable();
        units.dedup();
        assert_eq!(units, [0, 1, 2, 3]);
        assert!(p.units[4].parse_if_done().is_none(), "Plain.java was read");
    }
}
