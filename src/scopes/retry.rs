//! Retry scopes: code that runs again on every attempt of an operation. A key computed there
//! is a new key per attempt.
//!
//! - function arguments of retry APIs (`rules/catalog/retry.toml`): resilience4j, Spring
//!   RetryTemplate, Failsafe, tokio-retry, backoff, the `retry` crate, backon-style
//!   `(|| async { .. }).retry(..)`;
//! - publisher bodies that a later `retry`/`retryWhen` resubscribes (`Mono.defer`,
//!   `Mono.fromCallable`, Kotlin `flow { }`);
//! - `@Retryable` / `@Retry` methods;
//! - async callbacks that send again (`Callback.onFailure` re-invoking the service method,
//!   `FutureCallback.failed` resubmitting) and `CompletableFuture.exceptionally/handle`;
//! - loops that go round again after an error (`catch` that does not leave, `Err(_)` arms,
//!   `continue`), and `repeat(n) { try .. catch .. }`; a loop over a collection is not one;
//! - lambdas passed to project functions that call their function parameter inside such a
//!   loop (inferred retry helpers, whatever their name), and to helpers named in the
//!   configuration's `retry-helpers`.

use crate::catalog::{Catalog, RetryApi};
use crate::coord::words::{has, words};
use crate::facts::{Expr, ExprKind, FnId, FnKind, Lang, LoopKind, Span, Stmt, TypeId, simple_name};
use crate::hash::{HashMap, HashSet};
use crate::project::{FnRef, Project, walk_expr, walk_stmts};
use std::sync::Arc;

/// Parameter index that stands for the receiver of an extension on a function type.
const RECEIVER: usize = usize::MAX;

/// Why some code is re-run per attempt.
#[derive(Debug)]
pub struct RetryScope {
    pub anchor_unit: usize,
    pub anchor: Span,
    /// "this lambda is retried by `Retry.decorateSupplier`".
    pub what: String,
    /// The framework's reason, one sentence.
    pub why: String,
    /// Set when the scope is inferred (a library call not in the catalogue): what was
    /// inferred and why, for the finding.
    pub inferred: Option<String>,
}

#[derive(Default)]
pub struct RetryScopes {
    fns: HashMap<FnRef, Arc<RetryScope>>,
    /// Loop bodies that retry, per function.
    loops: HashMap<FnRef, Vec<(Span, Arc<RetryScope>)>>,
}

impl RetryScopes {
    /// The retry scope code at `span` in function `f` runs in, if any.
    pub fn scope_of(&self, p: &Project, f: FnRef, span: Span) -> Option<&Arc<RetryScope>> {
        for a in p.ancestors(f) {
            if let Some(s) = self.loops.get(&a).and_then(|ls| {
                ls.iter()
                    .filter(|(body, _)| body.contains(span))
                    .min_by_key(|(body, _)| body.len())
                    .map(|(_, s)| s)
            }) {
                return Some(s);
            }
            if let Some(s) = self.fns.get(&a) {
                return Some(s);
            }
        }
        None
    }

    pub fn is_empty(&self) -> bool {
        self.fns.is_empty() && self.loops.is_empty()
    }
}

pub fn find(p: &Project, cat: &'static Catalog) -> RetryScopes {
    let mut out = RetryScopes::default();
    let helpers = inferred_helpers(p);
    for u in 0..p.units.len() {
        let facts = &p.units[u].facts();
        for (i, f) in facts.functions.iter().enumerate() {
            let me = FnRef { unit: u, f: i };
            // @Retryable methods (and JobRunr's `@Job`, in files that import JobRunr), unless
            // an argument turns the retry off (`maxAttempts = 1`).
            if let Some((a, why)) = retry_annotation(p, cat, u, f) {
                out.fns.entry(me).or_insert_with(|| {
                    Arc::new(RetryScope {
                        anchor_unit: u,
                        anchor: a.span,
                        what: format!(
                            "`{}` is annotated @{}",
                            f.name.as_deref().unwrap_or("this method"),
                            a.name
                        ),
                        why: format!("@{}: {}", a.name, why),
                        inferred: None,
                    })
                });
            }
            retry_loops(p, cat, me, &mut out);
            let owner = p.enclosing_type(me);
            walk_stmts(&f.body, &mut |e: &Expr| {
                calls(p, cat, &helpers, (u, owner, Some(me)), e, &mut out)
            });
        }
        for (ti, t) in facts.types.iter().enumerate() {
            for b in &t.fields {
                if let Some(init) = &b.init {
                    walk_expr(init, &mut |e: &Expr| {
                        calls(p, cat, &helpers, (u, Some(ti), None), e, &mut out)
                    });
                }
            }
        }
        walk_stmts(&facts.top_level, &mut |e: &Expr| {
            calls(p, cat, &helpers, (u, None, None), e, &mut out)
        });
        callbacks(p, cat, u, &mut out);
        trait_methods(p, cat, u, &mut out);
    }
    out
}

/// The annotation that makes `f` a retried method, with why: a listed one, or a framework's
/// in a file importing it; none when an argument turns the retry off (`maxAttempts = 1`).
fn retry_annotation<'a>(
    p: &Project,
    cat: &'static Catalog,
    u: usize,
    f: &'a crate::facts::Function,
) -> Option<(&'a crate::facts::Annotation, &'static str)> {
    let ann = &cat.retry.annotations;
    let (a, why) = f.annotations.iter().find_map(|a| {
        if ann.names.contains(&a.name) {
            return Some((a, ann.why.as_str()));
        }
        ann.scoped
            .iter()
            .find(|s| s.names.contains(&a.name) && p.imports_any(u, &s.imports))
            .map(|s| (a, s.why.as_str()))
    })?;
    let src = &p.units[u].src;
    let off = a.args.iter().any(|arg| {
        arg.name.as_deref().is_some_and(|n| {
            ann.off_when
                .iter()
                .any(|(k, v)| k == n && src.slice(arg.value.span).trim() == v)
        })
    });
    (!off).then_some((a, why))
}

fn lambda_of(e: &Expr) -> Option<FnId> {
    match &e.kind {
        ExprKind::Lambda(id) => Some(*id),
        ExprKind::Cast { expr, .. } | ExprKind::Unary { operand: expr, .. } => lambda_of(expr),
        // A SAM conversion around it: `get(CheckedSupplier { .. })`.
        ExprKind::Call {
            receiver: None,
            name,
            args,
        } if (name.starts_with(|c: char| c.is_uppercase()) || name == "suspend")
            && args.len() == 1 =>
        {
            lambda_of(&args[0].value)
        }
        _ => None,
    }
}

/// The functions a function value stands for: a lambda, a local or field holding one
/// (`Callable<String> call = () -> ..`), a method reference (`this::charge`, `Billing::charge`,
/// `gateway::charge` on a variable of a project type, `::charge`), or in Rust a function named
/// by its name or path (`charge`, `pay::charge`) when that names one project function. `owner`
/// is the type the value is written in (for `this::`), `enclosing` the function.
fn fn_values(
    p: &Project,
    (u, owner, enclosing): (usize, Option<TypeId>, Option<FnRef>),
    e: &Expr,
) -> Vec<FnRef> {
    if let Some(id) = lambda_of(e) {
        return vec![FnRef { unit: u, f: id }];
    }
    if let ExprKind::Name(n) = &e.kind
        && let Some(id) = p.lambda_bound_to(u, enclosing, n, true)
    {
        return vec![FnRef { unit: u, f: id }];
    }
    let facts = &p.units[u].facts();
    let of_type = |t: TypeId, name: &str| -> Vec<FnRef> {
        facts.types[t]
            .methods
            .iter()
            .filter(|&&m| facts.functions[m].name.as_deref() == Some(name))
            .map(|&m| FnRef { unit: u, f: m })
            .collect()
    };
    // A top-level function of this file, else the one the file's module or imports name.
    let free_fns = |name: &str| -> Vec<FnRef> {
        let here: Vec<FnRef> = p
            .fns_named_in(u, name)
            .iter()
            .copied()
            .filter(|r| p.func(*r).is_free_fn())
            .collect();
        if here.is_empty() {
            p.declared_for(u, name).into_iter().collect()
        } else {
            here
        }
    };
    match &e.kind {
        ExprKind::MethodRef { receiver, name } => match receiver.as_deref().map(|r| &r.kind) {
            Some(ExprKind::Name(t)) if t == "this" => {
                owner.map(|t| of_type(t, name)).unwrap_or_default()
            }
            Some(ExprKind::Name(ty)) if ty.starts_with(char::is_uppercase) => p
                .fns_named(name)
                .iter()
                .copied()
                .filter(|r| {
                    p.func(*r).owner.is_some_and(|t| {
                        p.units[r.unit].facts().types[t].name.as_deref() == Some(ty.as_str())
                    })
                })
                .collect(),
            // `gateway::charge`: a method of the variable's declared project type.
            Some(ExprKind::Name(v)) => declared_type(p, u, owner, enclosing, v)
                .map(|ty| {
                    p.types_named(simple_name(&ty))
                        .iter()
                        .flat_map(|t| {
                            let facts = &p.units[t.unit].facts();
                            facts.types[t.t]
                                .methods
                                .iter()
                                .filter(|&&m| facts.functions[m].name.as_deref() == Some(name))
                                .map(|&m| FnRef { unit: t.unit, f: m })
                        })
                        .collect()
                })
                .unwrap_or_default(),
            // Kotlin `::charge`: a top-level function, or a method of the type it is written in.
            None => {
                let own = owner.map(|t| of_type(t, name)).unwrap_or_default();
                if own.is_empty() { free_fns(name) } else { own }
            }
            _ => Vec::new(),
        },
        ExprKind::Name(n) if p.units[u].lang == Lang::Rust => free_fns(n),
        ExprKind::Field { receiver, name } if p.units[u].lang == Lang::Rust => receiver
            .path_text()
            .and_then(|m| p.in_module(u, &m.replace('.', "::"), name))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The project method a stored job lambda calls (`() -> billing.charge(id, key)`): a method of
/// the declared type of the field, local or lambda parameter it is called on, else the one
/// project function of that name and arity. Its arguments were evaluated when the job was
/// stored, so only the method runs again.
fn stored_call(p: &Project, owner: Option<TypeId>, lambda: FnRef) -> Vec<FnRef> {
    let func = p.func(lambda);
    let [Stmt::Expr(e)] = func.body.as_slice() else {
        return Vec::new();
    };
    let ExprKind::Call {
        receiver,
        name,
        args,
    } = &crate::coord::peel(e).kind
    else {
        return Vec::new();
    };
    let facts = &p.units[lambda.unit].facts();
    let declared = |n: &str| -> Option<&str> {
        let field = owner.and_then(|t| facts.types[t].fields.iter().find(|b| b.name == n));
        let param = func.params.iter().find(|x| x.name == n);
        field
            .and_then(|b| b.ty.as_deref())
            .or(param.and_then(|x| x.ty.as_deref()))
    };
    let ty = match receiver.as_deref().map(|r| &r.kind) {
        Some(ExprKind::Name(n)) => declared(n),
        Some(ExprKind::Field {
            receiver: r,
            name: n,
        }) if matches!(&r.kind, ExprKind::Name(t) if t == "this") => declared(n),
        _ => None,
    };
    if let Some(t) = ty {
        let on_type = p.resolve_on_type(simple_name(t), name, args.len());
        if !on_type.is_empty() {
            return on_type;
        }
    }
    let named: Vec<FnRef> = p
        .resolve(name, args.len())
        .filter(|r| p.func(*r).has_body)
        .collect();
    if named.len() == 1 { named } else { Vec::new() }
}

/// The declared type of `name` where a function value names it: a parameter or local of
/// `enclosing` (or a function around it), else a field of the type `owner`.
fn declared_type(
    p: &Project,
    u: usize,
    owner: Option<TypeId>,
    enclosing: Option<FnRef>,
    name: &str,
) -> Option<String> {
    if let Some(f) = enclosing {
        for a in p.ancestors(f) {
            let func = p.func(a);
            if let Some(t) = func.params.iter().find(|q| q.name == name) {
                return t.ty.clone();
            }
            let mut found = None;
            crate::flow::walk_lets(&func.body, &mut |b| {
                if found.is_none() && b.name == name {
                    found = Some(b.ty.clone());
                }
            });
            if let Some(t) = found {
                return t;
            }
        }
    }
    let owner = owner.or_else(|| enclosing.and_then(|f| p.enclosing_type(f)))?;
    p.units[u].facts().types[owner]
        .fields
        .iter()
        .find(|b| b.name == name)
        .and_then(|b| b.ty.clone())
}

fn add_lambda(out: &mut RetryScopes, p: &Project, u: usize, id: FnId, what: String, why: String) {
    add_lambda_scope(out, p, u, id, what, why, None);
}

/// [`add_lambda`], for a scope that may be inferred.
fn add_lambda_scope(
    out: &mut RetryScopes,
    p: &Project,
    u: usize,
    id: FnId,
    what: String,
    why: String,
    inferred: Option<String>,
) {
    let anchor = p.units[u].facts().functions[id].name_span;
    out.fns.entry(FnRef { unit: u, f: id }).or_insert_with(|| {
        Arc::new(RetryScope {
            anchor_unit: u,
            anchor,
            what,
            why,
            inferred,
        })
    });
}

fn receiver_text(r: Option<&Expr>) -> Option<String> {
    r.and_then(|r| r.path_text())
}

fn api_matches(api: &RetryApi, lang: Lang, receiver: Option<&Expr>, name: &str) -> bool {
    if !api.langs.iter().any(|l| l == lang.name()) || !api.calls.iter().any(|c| c == name) {
        return false;
    }
    let recv = receiver_text(receiver);
    if let Some(rs) = &api.receivers {
        let last = recv.as_deref().map(simple_name);
        let ok = rs.iter().any(|r| match (r.as_str(), last) {
            ("", None) => true,
            (r, Some(l)) => r == l,
            _ => false,
        });
        if !ok {
            return false;
        }
    }
    if !api.receiver_contains.is_empty() {
        let Some(text) = recv else { return false };
        let lower = text.to_ascii_lowercase();
        if !api
            .receiver_contains
            .iter()
            .any(|c| lower.contains(c.as_str()))
        {
            return false;
        }
    }
    if !api.chain_contains.is_empty() {
        let Some(r) = receiver else { return false };
        let mut hit = false;
        walk_expr(r, &mut |x: &Expr| {
            let named = match &x.kind {
                ExprKind::Call { name, .. }
                | ExprKind::Name(name)
                | ExprKind::Field { name, .. } => name.as_str(),
                // `new CallExecutorBuilder<String>()`
                ExprKind::New { ty, .. } => simple_name(ty.split('<').next().unwrap_or("")),
                _ => return,
            };
            if api.chain_contains.iter().any(|c| c == named) {
                hit = true;
            }
        });
        if !hit {
            return false;
        }
    }
    true
}

/// Retry API calls, publisher chains with retry operators, inferred helpers, handlers.
fn calls(
    p: &Project,
    cat: &'static Catalog,
    helpers: &HashMap<String, (usize, String)>,
    (u, owner, enclosing): (usize, Option<TypeId>, Option<FnRef>),
    e: &Expr,
    out: &mut RetryScopes,
) {
    let ExprKind::Call {
        receiver,
        name,
        args,
    } = &e.kind
    else {
        return;
    };
    let lang = p.units[u].lang;
    // Retry APIs.
    // Whether a catalogued retry API matches (those that need a later call too count: the
    // inference below leaves them alone).
    let mut listed = false;
    for api in &cat.retry.api {
        if !api_matches(api, lang, receiver.as_deref(), name)
            || !(api.imports.is_empty() || p.imports_any(u, &api.imports))
        {
            continue;
        }
        // backon: `charge.retry(ExponentialBuilder::default())`, the receiver is the body.
        let bodies: Vec<FnRef> = if api.receiver_is_body {
            let r = receiver.as_deref();
            r.map(|r| fn_values(p, (u, owner, enclosing), r))
                .unwrap_or_default()
        } else {
            args.iter()
                .enumerate()
                .filter(|(i, _)| api.arg.is_none_or(|k| k == *i))
                .flat_map(|(_, a)| fn_values(p, (u, owner, enclosing), &a.value))
                .collect()
        };
        let bodies = if api.stored_call {
            bodies
                .into_iter()
                .flat_map(|b| {
                    if p.func(b).kind == FnKind::Lambda {
                        stored_call(p, owner, b)
                    } else {
                        vec![b]
                    }
                })
                .collect()
        } else {
            bodies
        };
        if api.receiver_is_body && bodies.is_empty() {
            continue;
        }
        listed = true;
        if !api.requires_later.is_empty() {
            continue;
        }
        for f in bodies {
            add_lambda(
                out,
                p,
                f.unit,
                f.f,
                format!(
                    "this function is retried by `{}`",
                    call_label(lang, receiver.as_deref(), name)
                ),
                format!("{}.", api.why),
            );
        }
    }
    if let Some(how) = inferred_retry_call(p, cat, lang, listed, receiver.as_deref(), name) {
        for a in args {
            if let Some(id) = lambda_of(&a.value) {
                let label = call_label(lang, receiver.as_deref(), name);
                add_lambda_scope(
                    out,
                    p,
                    u,
                    id,
                    format!("this function is retried by `{label}` (inferred)"),
                    format!("{}.", cat.retry.inferred.why),
                    Some(format!(
                        "`{label}` is not a retry API idemlint knows; {how}, so the function passed to it is taken to run again on every attempt"
                    )),
                );
            }
        }
    }
    // A retry operator later in a chain: find the publisher factory it resubscribes, and
    // resilience4j `Decorators.ofSupplier(..).withRetry(..)`.
    let is_operator = has(&cat.retry.publishers.retry_operators, name);
    let decorator_retry = name == "withRetry";
    if (is_operator || decorator_retry)
        && let Some(r) = receiver.as_deref()
    {
        let mut chain = Some(r);
        let mut depth = 0;
        while let Some(c) = chain {
            depth += 1;
            if depth > 64 {
                break;
            }
            let ExprKind::Call {
                receiver: inner,
                name: n,
                args: inner_args,
            } = &c.kind
            else {
                break;
            };
            let factory = if is_operator {
                has(&cat.retry.publishers.factories, n)
            } else {
                cat.retry
                    .api
                    .iter()
                    .any(|a| a.requires_later.iter().any(|x| x == name) && has(&a.calls, n))
            };
            if factory {
                for f in inner_args
                    .iter()
                    .flat_map(|a| fn_values(p, (u, owner, enclosing), &a.value))
                {
                    let (what, why) = if is_operator {
                        (
                            format!(
                                "`{n}` re-runs this body on every subscription, and `.{name}` subscribes again after a failure"
                            ),
                            format!(
                                "`{n}` defers the body to subscription time and `.{name}` resubscribes on error, so the body runs once per attempt."
                            ),
                        )
                    } else {
                        (
                            "this supplier is decorated `.withRetry(..)`".to_string(),
                            "A resilience4j decorator chain with withRetry calls the supplier again on every attempt.".to_string(),
                        )
                    };
                    add_lambda(out, p, f.unit, f.f, what, why);
                }
            }
            chain = inner.as_deref();
        }
    }
    // CompletableFuture / Reactor error handlers that send again.
    if has(&cat.retry.callbacks.handlers, name) {
        for a in args {
            if let Some(id) = lambda_of(&a.value) {
                add_lambda(
                    out,
                    p,
                    u,
                    id,
                    format!("this `{name}` handler runs after a failure and sends again"),
                    format!(
                        "`{name}` runs its function after the first attempt failed, so a request sent from it is a second attempt."
                    ),
                );
            }
        }
    }
    // Kotlin `repeat(n) { try { .. } catch .. }`.
    if name == "repeat"
        && receiver.is_none()
        && let Some(id) = args.last().and_then(|a| lambda_of(&a.value))
        && body_retries(&p.units[u].facts().functions[id].body, &[], false)
    {
        add_lambda(
            out,
            p,
            u,
            id,
            "this `repeat` block tries again after an error".into(),
            "The block runs again for every iteration after a caught failure.".into(),
        );
    }
    // Inferred and configured retry helpers.
    let configured = cat.retry_helpers.iter().any(|h| h == name);
    let helper = helpers
        .get(name.as_str())
        .map(|(i, at)| (Some(*i), at.clone()))
        .or_else(|| configured.then(|| (None, "configuration".to_string())));
    // `suspend { .. }.retrying(3)`: the receiver is the retried function.
    if let Some((Some(RECEIVER), at)) = &helper
        && let Some(id) = receiver.as_deref().and_then(lambda_of)
    {
        add_lambda(
            out,
            p,
            u,
            id,
            format!("this function is retried by `.{name}`"),
            format!("`{name}` ({at}) calls its receiver again inside a loop that catches errors."),
        );
        return;
    }
    if let Some((index, at)) = helper {
        for (i, a) in args.iter().enumerate() {
            // The function parameter's position, or a trailing lambda.
            let trailing = i + 1 == args.len() && matches!(a.value.kind, ExprKind::Lambda(_));
            if index.is_some_and(|k| k != i) && !trailing {
                continue;
            }
            if let Some(id) = lambda_of(&a.value) {
                let what = format!(
                    "this function is passed to `{name}`, which calls it again after a failure"
                );
                let why = if at == "configuration" {
                    format!("`{name}` is declared a retry helper in the configuration.")
                } else {
                    format!(
                        "`{name}` ({at}) calls its function argument again inside a loop that catches errors."
                    )
                };
                add_lambda(out, p, u, id, what, why);
            }
        }
    }
}

/// Inference: is `receiver.name(..)` an unlisted library call that retries the function it is
/// given? Returns why (for the finding), from the catalogue's `[inferred]` words: the method's
/// name says it retries (`withBackoff`, `retrying`, `executeWithRetry`), or its receiver is a
/// retrier (`retrier.run`, `paymentRetryer.call`), not data about retries (`retryCount.let`).
/// `listed`: a catalogued retry API matched the call.
fn inferred_retry_call(
    p: &Project,
    cat: &'static Catalog,
    lang: Lang,
    listed: bool,
    receiver: Option<&Expr>,
    name: &str,
) -> Option<String> {
    let inf = &cat.retry.inferred;
    let listed = listed
        || has(&cat.retry.publishers.retry_operators, name)
        || has(&cat.retry.callbacks.handlers, name)
        || (lang == Lang::Rust && matches!(name, "retry" | "retry_with"));
    // A project function of that name is the call, unless the receiver is a field declared
    // with a type the project does not declare (`private final Backoff backoff`, beside a
    // Quartz job's own `execute`).
    let library_receiver = match receiver.map(|r| &r.kind) {
        Some(ExprKind::Name(n)) | Some(ExprKind::Field { name: n, .. }) => {
            let mut decls = p.fields_named(n).peekable();
            decls.peek().is_some()
                && decls.all(|(_, b)| {
                    b.ty.as_deref()
                        .is_some_and(|t| p.types_named(simple_name(t)).is_empty())
                })
        }
        _ => false,
    };
    if listed || (!library_receiver && p.fns_named(name).iter().any(|f| p.func(*f).has_body)) {
        return None;
    }
    let method = words(name);
    if method.iter().any(|w| has(&inf.not_words, w)) {
        return None;
    }
    if method.iter().any(|w| has(&inf.words, w)) {
        return Some(format!("its name `{name}` says it retries"));
    }
    if has(&inf.scope_calls, name) {
        return None;
    }
    // The receiver's names: the variable, field or type, and the calls of its chain.
    let mut names: Vec<&str> = Vec::new();
    if let Some(r) = receiver {
        walk_expr(r, &mut |x: &Expr| {
            if let ExprKind::Call { name, .. }
            | ExprKind::Name(name)
            | ExprKind::Field { name, .. } = &x.kind
            {
                names.push(name.as_str());
            }
        });
    }
    names.into_iter().find_map(|n| {
        let ws = words(simple_name(n));
        let retrier = ws.iter().any(|w| has(&inf.words, w))
            && ws.last().is_some_and(|l| !has(&inf.data_words, l))
            && !ws
                .iter()
                .any(|w| has(&inf.not_words, w) && w != "policy" && w != "config");
        retrier.then(|| format!("its receiver `{n}` is named as a retrier"))
    })
}

/// `retry.executeSupplier`, `Retry::spawn` (a Rust type's associated function), `charge.retry`.
fn call_label(lang: Lang, receiver: Option<&Expr>, name: &str) -> String {
    match receiver.and_then(|r| r.path_text()) {
        Some(r) => {
            let r = simple_name(&r);
            let sep = if lang == Lang::Rust && r.starts_with(char::is_uppercase) {
                "::"
            } else {
                "."
            };
            format!("{r}{sep}{name}")
        }
        None => name.to_string(),
    }
}

/// Does a loop body (or repeat block) go round again after an error? A `catch` that does not
/// always leave, an `Err(..)` arm that does not return, or a `continue` (when `allow_continue`).
///
/// It must also stop on success (a `return` or `break` somewhere in it, or an attempt counter
/// in view): a consumer's `while (running) { try { poll() } catch { log } }` goes round
/// after errors too, but it is not retrying anything.
fn body_retries(body: &[Stmt], header: &[Expr], allow_continue: bool) -> bool {
    let mut exits = false;
    let mut look = |e: &Expr| match &e.kind {
        ExprKind::Return(_) | ExprKind::Break(_) => exits = true,
        ExprKind::Name(n) | ExprKind::Field { name: n, .. } if is_attempt_name(n) => exits = true,
        _ => {}
    };
    walk_stmts(body, &mut look);
    for h in header {
        walk_expr(h, &mut look);
    }
    if !exits {
        return false;
    }
    let mut hit = false;
    walk_stmts(body, &mut |e: &Expr| {
        if hit {
            return;
        }
        match &e.kind {
            ExprKind::Try { catches, .. } if catches.iter().any(|c| !always_leaves(&c.body)) => {
                hit = true;
            }
            ExprKind::Match { arms, .. }
                if arms.iter().any(|a| {
                    let t = a.pattern_text.trim_start();
                    (t.starts_with("Err") || t.starts_with("Err(")) && !always_leaves(&a.body)
                }) =>
            {
                hit = true;
            }
            ExprKind::Continue(_) if allow_continue => hit = true,
            ExprKind::Call { name, .. } | ExprKind::Field { name, .. }
                if matches!(
                    name.as_str(),
                    "is_err"
                        | "is_ok"
                        | "isFailure"
                        | "isSuccess"
                        | "onFailure"
                        | "exceptionOrNull"
                        | "isSuccessful"
                ) =>
            {
                hit = true;
            }
            _ => {}
        }
    });
    hit
}

/// `attempt`, `retries`, `tries`, `retryCount`, `remaining_attempts`.
fn is_attempt_name(n: &str) -> bool {
    let l = n.to_ascii_lowercase();
    l.contains("attempt") || l.contains("retr") || l.contains("tries")
}

/// Does a block end by leaving (throw, return, break)?
fn always_leaves(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Throw(_) | ExprKind::Return(_) | ExprKind::Break(_) => true,
        ExprKind::Block(stmts) => match stmts.last() {
            Some(Stmt::Expr(last)) => always_leaves(last),
            _ => false,
        },
        ExprKind::Call { name, .. } => {
            matches!(name.as_str(), "panic" | "error" | "bail" | "unreachable")
        }
        ExprKind::Macro { name, .. } => matches!(name.as_str(), "panic" | "bail" | "unreachable"),
        _ => false,
    }
}

/// Is a loop header a count (`1..3`, `0 until n`, `IntStream.range`), not a collection?
fn counted(header: &[Expr]) -> bool {
    header.iter().any(|h| match &h.kind {
        ExprKind::Binary { op, .. } => op.starts_with(".."),
        ExprKind::Call { name, .. } => {
            matches!(
                name.as_str(),
                "until" | "downTo" | "range" | "rangeClosed" | "step" | "indices"
            )
        }
        ExprKind::Lit(_) => true,
        _ => false,
    })
}

/// Does a for-each loop's header iterate a retrier (`&backoff`, `policy.delays()`,
/// `retry_schedule.iter()`): a name with a retry word whose last word is not data about
/// retries (`retries`, `retry_count`)?
fn over_retrier(cat: &Catalog, header: &[Expr]) -> bool {
    let inf = &cat.retry.inferred;
    header.iter().any(|h| {
        let mut hit = false;
        walk_expr(h, &mut |x: &Expr| {
            if let ExprKind::Name(n) | ExprKind::Field { name: n, .. } = &x.kind {
                let ws = words(n);
                hit |= ws.iter().any(|w| has(&inf.words, w))
                    && ws.last().is_some_and(|l| !has(&inf.data_words, l));
            }
        });
        hit
    })
}

/// Loops in `f` that go round again after an error.
fn retry_loops(p: &Project, cat: &Catalog, f: FnRef, out: &mut RetryScopes) {
    let func = p.func(f);
    walk_stmts(&func.body, &mut |e: &Expr| {
        let ExprKind::Loop {
            kind, header, body, ..
        } = &e.kind
        else {
            return;
        };
        // `for pause in &backoff { .. }` (the exponential-backoff crate, a backoff iterator):
        // a loop over a retrier's delays is a counted retry loop.
        let counted = counted(header) || over_retrier(cat, header);
        let candidate = match kind {
            LoopKind::ForEach => counted,
            _ => true,
        };
        if !candidate {
            return;
        }
        let head_text = p.units[f.unit]
            .src
            .slice(Span::new(e.span.start, body.span.start.max(e.span.start)));
        let mentions_attempts = |x: &Expr| {
            let mut hit = false;
            walk_expr(x, &mut |y: &Expr| {
                if let ExprKind::Name(n) | ExprKind::Field { name: n, .. } = &y.kind
                    && is_attempt_name(n)
                {
                    hit = true;
                }
            });
            hit
        };
        let counted_attempts = *kind != LoopKind::ForEach
            && (mentions_attempts(body)
                || header.iter().any(|h| {
                    let mut hit = false;
                    walk_expr(h, &mut |x: &Expr| {
                        if let ExprKind::Name(n) | ExprKind::Field { name: n, .. } = &x.kind
                            && is_attempt_name(n)
                        {
                            hit = true;
                        }
                    });
                    hit
                }));
        let err_head = head_text.contains("Err(") || head_text.contains("is_err");
        let retries = counted_attempts
            || err_head
            || match &body.kind {
                ExprKind::Block(s) => {
                    body_retries(s, header, *kind != LoopKind::ForEach || counted)
                }
                _ => false,
            };
        if retries {
            let head = Span::new(e.span.start, body.span.start.max(e.span.start));
            out.loops.entry(f).or_default().push((
                body.span,
                Arc::new(RetryScope {
                    anchor_unit: f.unit,
                    anchor: head,
                    what: "this loop tries again after an error".into(),
                    why: "The loop body runs again for every attempt.".into(),
                    inferred: None,
                }),
            ));
        }
    });
}

/// Project functions that call one of their function parameters inside a retrying loop (or
/// recursively after a failure): name -> (parameter index, "File.kt:12").
fn inferred_helpers(p: &Project) -> HashMap<String, (usize, String)> {
    let mut out = HashMap::default();
    for (u, unit) in p.units.iter().enumerate() {
        for (i, f) in unit.facts().functions.iter().enumerate() {
            if f.kind == FnKind::Lambda || !f.has_body || f.params.is_empty() {
                continue;
            }
            let Some(name) = &f.name else { continue };
            let params: Vec<&str> = f
                .params
                .iter()
                .filter(|x| x.name != "self")
                .map(|x| x.name.as_str())
                .collect();
            let mut fn_params: HashSet<&str> = f
                .params
                .iter()
                .filter(|x| x.name != "self" && is_function_type(x.ty.as_deref()))
                .map(|x| x.name.as_str())
                .collect();
            // A Kotlin extension on a function type: `fun <T> (suspend () -> T).retrying(..)`
            // calls its receiver as `this()` / `invoke()`.
            let fn_receiver = f.modifiers.iter().any(|m| {
                m.strip_prefix("receiver:")
                    .is_some_and(|t| t.contains("->"))
            });
            if fn_receiver {
                fn_params.insert("this");
                fn_params.insert("invoke");
            }
            if fn_params.is_empty() {
                continue;
            }
            let me = FnRef { unit: u, f: i };
            if let Some(param) = invoked_in_retry(p, me, &fn_params, name) {
                let idx = if param == "this" || param == "invoke" {
                    RECEIVER
                } else {
                    params.iter().position(|x| *x == param).unwrap_or(0)
                };
                let line = unit.src.line_col(f.name_span.start).line;
                let file = unit
                    .src
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.entry(name.clone())
                    .or_insert((idx, format!("{file}:{line}")));
            }
        }
    }
    out
}

fn is_function_type(ty: Option<&str>) -> bool {
    let Some(t) = ty else { return false };
    let t = t.trim();
    t.contains("->")
        || t.starts_with("Fn")
        || t.starts_with("impl Fn")
        || t.starts_with("impl FnMut")
        || matches!(
            simple_name(t),
            "Supplier"
                | "Callable"
                | "Runnable"
                | "Function"
                | "BiFunction"
                | "CheckedSupplier"
                | "CheckedRunnable"
                | "CheckedFunction"
                | "ThrowingSupplier"
                | "Action"
                | "Func0"
                | "Func"
                | "F"
                | "Op"
                | "Fut"
                | "Block"
        )
        || t.len() == 1 && t.chars().all(|c| c.is_ascii_uppercase())
}

/// The function parameter `f` invokes inside a retrying loop / repeat block, or calls after a
/// failure by recursing.
fn invoked_in_retry<'a>(
    p: &Project,
    f: FnRef,
    params: &HashSet<&'a str>,
    own_name: &str,
) -> Option<&'a str> {
    let invoked = |e: &Expr| -> Option<&'a str> {
        match &e.kind {
            ExprKind::Call {
                receiver: None,
                name,
                ..
            } => params.get(name.as_str()).copied(),
            ExprKind::Call {
                receiver: Some(r),
                name,
                ..
            } if matches!(
                name.as_str(),
                "invoke" | "get" | "call" | "apply" | "run" | "execute" | "accept" | ""
            ) =>
            {
                match &r.kind {
                    ExprKind::Name(n) => params.get(n.as_str()).copied(),
                    _ => None,
                }
            }
            _ => None,
        }
    };
    let mut found: Option<&'a str> = None;
    for g in p.with_nested(f) {
        let func = p.func(g);
        // Loops that retry.
        walk_stmts(&func.body, &mut |e: &Expr| {
            if found.is_some() {
                return;
            }
            let retry_body: Option<&Expr> = match &e.kind {
                ExprKind::Loop {
                    kind, header, body, ..
                } => {
                    let ok = *kind != LoopKind::ForEach || counted(header);
                    match (&body.kind, ok) {
                        (ExprKind::Block(s), true) if body_retries(s, header, true) => Some(body),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(b) = retry_body {
                walk_expr(b, &mut |x: &Expr| {
                    if found.is_none() {
                        found = invoked(x);
                    }
                });
            }
        });
        // `repeat(n) { try { return block() } catch .. }`: the lambda body retries.
        if func.kind == FnKind::Lambda && g != f && body_retries(&func.body, &[], false) {
            walk_stmts(&func.body, &mut |x: &Expr| {
                if found.is_none() {
                    found = invoked(x);
                }
            });
        }
        // Recursion after a failure: `catch (..) { return withRetry(op, n - 1) }`.
        walk_stmts(&func.body, &mut |e: &Expr| {
            if found.is_some() {
                return;
            }
            let recursive = |b: &Expr| {
                let mut rec = false;
                walk_expr(b, &mut |x: &Expr| {
                    if x.call_name() == Some(own_name) {
                        rec = true;
                    }
                });
                rec
            };
            let on_failure = match &e.kind {
                ExprKind::Try { catches, .. } => catches.iter().any(|c| recursive(&c.body)),
                ExprKind::Match { arms, .. } => arms
                    .iter()
                    .any(|a| a.pattern_text.trim_start().starts_with("Err") && recursive(&a.body)),
                _ => false,
            };
            if on_failure {
                walk_stmts(&func.body, &mut |x: &Expr| {
                    if found.is_none() {
                        found = invoked(x);
                    }
                });
            }
        });
        if found.is_some() {
            break;
        }
    }
    found
}

/// Retrofit `Callback.onFailure/onResponse` and HC5 `FutureCallback.failed` bodies that send
/// again.
fn callbacks(p: &Project, cat: &'static Catalog, u: usize, out: &mut RetryScopes) {
    let facts = &p.units[u].facts();
    for (t, ty) in facts.types.iter().enumerate() {
        let supers = p.all_supertypes(crate::project::TypeRef { unit: u, t });
        for (sup, methods) in &cat.retry.callbacks.types {
            if !supers.iter().any(|s| s == sup) {
                continue;
            }
            let methods: Vec<&str> = methods.split(',').map(str::trim).collect();
            // The function the callback object is created in: calling it again is a resend.
            let creator = ty.parent_fn.and_then(|pf| {
                p.ancestors(FnRef { unit: u, f: pf })
                    .find(|a| p.func(*a).kind != FnKind::Lambda)
                    .and_then(|a| p.func(a).name.clone())
            });
            for &m in &ty.methods {
                let f = &facts.functions[m];
                if !f.name.as_deref().is_some_and(|n| methods.contains(&n)) {
                    continue;
                }
                let mut resends = false;
                for g in p.with_nested(FnRef { unit: u, f: m }) {
                    walk_stmts(&p.func(g).body, &mut |e: &Expr| {
                        if let Some(n) = e.call_name()
                            && (cat.retry.callbacks.resend_calls.iter().any(|r| r == n)
                                || creator.as_deref() == Some(n))
                        {
                            resends = true;
                        }
                    });
                }
                if resends {
                    out.fns.entry(FnRef { unit: u, f: m }).or_insert_with(|| {
                        Arc::new(RetryScope {
                            anchor_unit: u,
                            anchor: f.name_span,
                            what: format!(
                                "`{}` of this `{sup}` sends the request again",
                                f.name.as_deref().unwrap_or("")
                            ),
                            why: format!(
                                "`{}` runs after an attempt failed and sends again, so everything it evaluates is evaluated once per attempt.",
                                f.name.as_deref().unwrap_or("")
                            ),
                            inferred: None,
                        })
                    });
                }
            }
        }
    }
}

/// Methods of a type implementing a retry mechanism's trait that it calls on every attempt
/// (tower `impl Policy<..> for P { fn clone_request(..) }`).
fn trait_methods(p: &Project, cat: &'static Catalog, u: usize, out: &mut RetryScopes) {
    let unit = &p.units[u];
    let facts = &unit.facts();
    for m in &cat.retry.method {
        if !m.langs.iter().any(|l| l == unit.lang.name()) || !p.imports_any(u, &m.imports) {
            continue;
        }
        for ty in &facts.types {
            let Some(sup) = ty.supertypes.iter().find(|s| {
                let s = crate::facts::simple_name(s);
                let s = s.split('<').next().unwrap_or(s);
                m.supertypes.iter().any(|x| x == s)
            }) else {
                continue;
            };
            for &f in &ty.methods {
                let func = &facts.functions[f];
                let Some(name) = func.name.as_deref() else {
                    continue;
                };
                if !m.methods.iter().any(|x| x == name) {
                    continue;
                }
                out.fns.entry(FnRef { unit: u, f }).or_insert_with(|| {
                    Arc::new(RetryScope {
                        anchor_unit: u,
                        anchor: func.name_span,
                        what: format!(
                            "`{name}` of a {} `{}` is called on every attempt",
                            m.framework,
                            crate::facts::simple_name(sup)
                        ),
                        why: m.why.clone(),
                        inferred: None,
                    })
                });
            }
        }
    }
}
