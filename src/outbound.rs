//! Does a key stay inside the service? A fresh value that reaches an idempotency-key sink is
//! the key of an outbound request only if it, or an object or collection carrying it, reaches
//! something that can send it. This module answers the narrow opposite, from facts only: every
//! use of the value ends in a call that keeps it inside the service (stored through a
//! repository, compared with an incoming key, published as an event, logged: `sinks.toml`
//! `[local_uses]`), or nowhere at all. Anything else (a call it cannot classify, a field, a
//! return, a project function) counts as possibly going out, so a real key is never dropped
//! because its path was not understood.

use crate::catalog::Catalog;
use crate::facts::{Arg, Binding, Expr, ExprKind, FnKind, Lang, Stmt, simple_name};
use crate::flow::{Flow, KeyFlow};
use crate::hash::HashMap;
use crate::project::{FnRef, Project};

/// Where an expression sits.
#[derive(Clone, Copy)]
enum Parent<'p> {
    Expr(&'p Expr),
    /// The initialiser of a local.
    Let(&'p Binding),
    /// A statement of a function body; `last` when it is the body's last (a lambda's or an
    /// expression body's value).
    Stmt {
        last: bool,
    },
}

/// Most carriers (locals holding the key or an object with it) and uses followed before
/// giving up (and keeping the finding).
const MAX_CARRIERS: usize = 16;
const MAX_USES: usize = 256;

/// Project functions followed below the sink, at most (a key handed to a helper is judged by
/// what the helper does with its parameter).
const MAX_DEPTH: usize = 3;

/// Where a walk starts: the sink of a key flow, or a parameter of a helper the key is handed to.
enum Seed<'s> {
    Sink(crate::facts::Span),
    Param(&'s str),
}

/// Helpers' parameters already judged: (function, parameter) → stays local.
type Memo = HashMap<(FnRef, String), bool>;

/// True when the key of `fl` never leaves the service: every use of it (and of what carries
/// it) is a local use.
pub fn stays_local(p: &Project, flow: &Flow, cat: &Catalog, fl: &KeyFlow) -> bool {
    let mut memo = Memo::default();
    local_from(
        p,
        flow,
        cat,
        p.outermost(fl.sink_fn),
        Seed::Sink(fl.sink),
        0,
        &mut memo,
    )
}

fn local_from(
    p: &Project,
    flow: &Flow,
    cat: &Catalog,
    root: FnRef,
    seed: Seed,
    depth: usize,
    memo: &mut Memo,
) -> bool {
    let fns = p.with_nested(root);
    let mut parents: HashMap<usize, Parent> = HashMap::default();
    let mut lets: Vec<&Binding> = Vec::new();
    let mut all: Vec<(FnRef, &Expr)> = Vec::new();
    for &g in &fns {
        let body = &p.func(g).body;
        // A Kotlin or Rust body's last expression is its value, and so is a lambda's.
        let value_body = p.units[g.unit].lang != Lang::Java || p.func(g).kind == FnKind::Lambda;
        for (i, s) in body.iter().enumerate() {
            index_stmt(
                s,
                Parent::Stmt {
                    last: value_body && i + 1 == body.len(),
                },
                g,
                &mut Index {
                    parents: &mut parents,
                    lets: &mut lets,
                    all: &mut all,
                    value_blocks: value_body,
                },
            );
        }
    }
    let mut w = Walk {
        p,
        flow,
        cat,
        parents: &parents,
        fns: &fns,
        carriers: Vec::new(),
        depth,
        memo,
    };
    // The sink: a local's name (`String idempotencyKey = ..`), or the value handed to a call,
    // an assignment or a constructor; or a helper's parameter.
    let start = match seed {
        Seed::Param(name) => {
            w.carriers.push(name.to_string());
            None
        }
        Seed::Sink(sink) => {
            if let Some(b) = lets.iter().find(|b| b.name_span == sink) {
                w.carriers.push(b.name.clone());
                None
            } else {
                match all.iter().find(|(_, e)| e.span == sink) {
                    Some(x) => Some(*x),
                    None => return false,
                }
            }
        }
    };
    if let Some((g, e)) = start {
        // `x.idempotencyKey = v` / `key = v`: the sink is the assignment's target.
        let target_of = match w.parents.get(&id(e)) {
            Some(Parent::Expr(a)) => match &a.kind {
                ExprKind::Assign { target, .. } if std::ptr::eq(&**target, e) => Some(a),
                _ => None,
            },
            _ => None,
        };
        let ok = match target_of {
            Some(_) => w.assigned(e),
            None => w.up(g, e),
        };
        if !ok {
            return false;
        }
    }
    // Every use of every carrier.
    let mut done = 0;
    let mut uses = 0;
    while done < w.carriers.len() {
        if w.carriers.len() > MAX_CARRIERS {
            return false;
        }
        let c = w.carriers[done].clone();
        done += 1;
        for &(g, e) in &all {
            if matches!(&e.kind, ExprKind::Name(n) if *n == c) {
                uses += 1;
                if uses > MAX_USES || !w.up(g, e) {
                    return false;
                }
            }
        }
    }
    true
}

/// An expression's identity in the parent map: its address (every expression is borrowed
/// from the project's facts for the whole walk).
fn id(e: &Expr) -> usize {
    e as *const Expr as usize
}

struct Index<'i, 'p> {
    parents: &'i mut HashMap<usize, Parent<'p>>,
    lets: &'i mut Vec<&'p Binding>,
    all: &'i mut Vec<(FnRef, &'p Expr)>,
    /// Kotlin and Rust blocks have a value (their last expression); Java blocks do not.
    value_blocks: bool,
}

fn index_stmt<'p>(s: &'p Stmt, parent: Parent<'p>, g: FnRef, ix: &mut Index<'_, 'p>) {
    match s {
        Stmt::Let(b) => {
            ix.lets.push(b);
            if let Some(i) = &b.init {
                index_expr(i, Parent::Let(b), g, ix);
            }
        }
        Stmt::Expr(e) => index_expr(e, parent, g, ix),
        Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
    }
}

fn index_expr<'p>(e: &'p Expr, parent: Parent<'p>, g: FnRef, ix: &mut Index<'_, 'p>) {
    // An explicit stack: nesting depth is bounded by the front ends, but stay iterative.
    let mut stack: Vec<(&'p Expr, Parent<'p>)> = vec![(e, parent)];
    while let Some((e, parent)) = stack.pop() {
        ix.parents.insert(id(e), parent);
        ix.all.push((g, e));
        if let ExprKind::Block(stmts) = &e.kind {
            for (i, s) in stmts.iter().enumerate() {
                match s {
                    Stmt::Let(b) => {
                        ix.lets.push(b);
                        if let Some(init) = &b.init {
                            stack.push((init, Parent::Let(b)));
                        }
                    }
                    Stmt::Expr(x) => stack.push((
                        x,
                        if ix.value_blocks && i + 1 == stmts.len() {
                            Parent::Expr(e)
                        } else {
                            Parent::Stmt { last: false }
                        },
                    )),
                    Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
                }
            }
            continue;
        }
        e.for_each_child(|c| stack.push((c, Parent::Expr(e))));
    }
}

struct Walk<'a, 'p> {
    p: &'p Project,
    flow: &'a Flow<'p>,
    cat: &'p Catalog,
    parents: &'a HashMap<usize, Parent<'p>>,
    /// The function the walk is in and everything nested in it.
    fns: &'a [FnRef],
    carriers: Vec<String>,
    depth: usize,
    memo: &'a mut Memo,
}

impl<'p> Walk<'_, 'p> {
    /// The key handed to a project function as argument `e` of `call`: true when every
    /// function the call may run keeps that parameter inside the service; `None` when the
    /// call runs no project function with a body.
    fn helper_keeps(&mut self, g: FnRef, call: &'p Expr, e: &'p Expr) -> Option<bool> {
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &call.kind
        else {
            return None;
        };
        let targets: Vec<FnRef> = self
            .flow
            .call_targets(g, receiver.as_deref(), name, args)
            .into_iter()
            .filter(|t| self.p.func(*t).has_body)
            .collect();
        if targets.is_empty() {
            return None;
        }
        let at = args.iter().position(|a| std::ptr::eq(&a.value, e))?;
        let arg = &args[at];
        for t in targets {
            let params = &self.p.func(t).params;
            let param = match &arg.name {
                Some(n) => params.iter().find(|q| q.name == *n),
                None => {
                    // A Rust method's `self` is its receiver, not an argument.
                    let skip = usize::from(
                        receiver.is_some() && params.first().is_some_and(|q| q.name == "self"),
                    );
                    params.get(at + skip)
                }
            };
            let Some(param) = param else {
                return Some(false);
            };
            if self.depth >= MAX_DEPTH {
                return Some(false);
            }
            let key = (t, param.name.clone());
            let ok = match self.memo.get(&key) {
                Some(v) => *v,
                None => {
                    // A cycle back here is not evidence of staying local.
                    self.memo.insert(key.clone(), false);
                    let v = local_from(
                        self.p,
                        self.flow,
                        self.cat,
                        t,
                        Seed::Param(&param.name),
                        self.depth + 1,
                        self.memo,
                    );
                    self.memo.insert(key, v);
                    v
                }
            };
            if !ok {
                return Some(false);
            }
        }
        Some(true)
    }

    fn carry(&mut self, name: &str) {
        if !self.carriers.iter().any(|c| c == name) {
            self.carriers.push(name.to_string());
        }
    }

    /// A value assigned to `target`: true when that is a local this function owns (which then
    /// carries it).
    fn assigned(&mut self, target: &'p Expr) -> bool {
        let n = match &target.kind {
            // A local (not a field): it now holds the value.
            ExprKind::Name(n) if self.is_local(n) => n,
            // `event.idempotencyKey = key` on an object this function made.
            ExprKind::Field { receiver, .. } => match &receiver.kind {
                ExprKind::Name(n) if self.owns(n) => n,
                _ => return false,
            },
            _ => return false,
        };
        let n = n.clone();
        self.carry(&n);
        true
    }

    /// A header or field call naming a key (`headers.put("Idempotency-Key", v)`,
    /// `request.header(IDEMPOTENCY_KEY, v)`): what it builds is a request.
    fn names_key(&self, args: &[Arg]) -> bool {
        args.iter().any(|a| match &a.value.kind {
            ExprKind::Str(s) => self.cat.is_key_name(s),
            _ => self
                .p
                .const_str(&a.value, self.cat)
                .is_some_and(|s| self.cat.is_key_name(&s)),
        })
    }

    /// Follows the value of `e` up to where it is used: false when it may leave the service.
    fn up(&mut self, g: FnRef, mut e: &'p Expr) -> bool {
        let local = &self.cat.sinks.local_uses;
        loop {
            let Some(parent) = self.parents.get(&id(e)).copied() else {
                return false;
            };
            let x = match parent {
                Parent::Let(b) => {
                    self.carry(&b.name);
                    return true;
                }
                // A statement's value is dropped; a Kotlin or Rust body's last value is
                // returned.
                Parent::Stmt { last } => return !last,
                Parent::Expr(x) => x,
            };
            match &x.kind {
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } => {
                    let is_receiver = receiver.as_deref().is_some_and(|r| std::ptr::eq(r, e));
                    if !is_receiver && self.names_key(args) {
                        return false;
                    }
                    if local.methods.iter().any(|m| m == name.as_str())
                        || local
                            .method_prefixes
                            .iter()
                            .any(|m| name.starts_with(m.as_str()))
                    {
                        return true;
                    }
                    if is_receiver {
                        // `key.toString()`, `builder.build()`: a value made from it.
                        e = x;
                        continue;
                    }
                    // A Kotlin constructor call `RefundCommand(key, ..)`: the object carries it.
                    if receiver.is_none()
                        && name.starts_with(char::is_uppercase)
                        && !self.p.types_named(name).is_empty()
                    {
                        e = x;
                        continue;
                    }
                    // Handed to a project function (not a setter on an object made here, which
                    // then carries it): what it does with its parameter decides.
                    let on_owned = matches!(
                        receiver.as_deref().map(|r| &r.kind),
                        Some(ExprKind::Name(n)) if self.owns(n)
                    );
                    if !on_owned && let Some(keeps) = self.helper_keeps(g, x, e) {
                        return keeps;
                    }
                    match receiver.as_deref() {
                        Some(r) if self.local_receiver(g, r) => return true,
                        // `headers.set(NAME, key)`, `event.setIdempotencyKey(key)`,
                        // `list.add(key)`: the local now carries it.
                        Some(Expr {
                            kind: ExprKind::Name(n),
                            ..
                        }) if self.owns(n) => {
                            let n = n.clone();
                            self.carry(&n);
                            e = x;
                        }
                        // `Map.of(NAME, key)`, `String.format(..)`.
                        Some(r)
                            if r.path_text().is_some_and(|t| {
                                simple_name(&t).starts_with(char::is_uppercase)
                            }) && local.value_calls.iter().any(|v| v == name.as_str()) =>
                        {
                            e = x;
                        }
                        // `Command.builder().idempotencyKey(key)`, `new Event().withKey(key)`: a
                        // builder made here carries it.
                        Some(r) if made_here(r) => e = x,
                        // `listOf(key)`, `mapOf(NAME to key)`: not a project function.
                        None if self.p.count_named(name) == 0
                            && local.value_calls.iter().any(|v| v == name.as_str()) =>
                        {
                            e = x;
                        }
                        _ => return false,
                    }
                }
                ExprKind::Macro { name, args } => {
                    if self.names_key(args) {
                        return false;
                    }
                    if local.macros.iter().any(|m| m == name.as_str()) {
                        return true;
                    }
                    if local.value_calls.iter().any(|v| v == name.as_str()) {
                        e = x;
                        continue;
                    }
                    return false;
                }
                // A record or event built with it, a pair, a string made from it.
                ExprKind::New { .. }
                | ExprKind::Other(_)
                | ExprKind::Template(_)
                | ExprKind::Cast { .. }
                | ExprKind::Await(_)
                | ExprKind::Unary { .. }
                | ExprKind::Field { .. } => e = x,
                ExprKind::Binary { op, .. } => {
                    if matches!(&**op, "==" | "!=" | "===" | "!==" | "<" | ">" | "<=" | ">=") {
                        return true;
                    }
                    e = x;
                }
                ExprKind::Assign { target, value, .. } if std::ptr::eq(&**value, e) => {
                    return self.assigned(target);
                }
                // An exception: it unwinds this service's own stack (at most it becomes a
                // response to the caller), it is not a request.
                ExprKind::Throw(_) => return true,
                // The target of an assignment, a condition, an index: not a value passed on.
                ExprKind::Assign { .. } | ExprKind::Index { .. } => return true,
                ExprKind::If { cond, .. } if std::ptr::eq(&**cond, e) => return true,
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_) => e = x,
                _ => return false,
            }
        }
    }

    /// A local or parameter of the function the walk is in (not a field).
    fn is_local(&self, n: &str) -> bool {
        self.fns.iter().any(|f| {
            let func = self.p.func(*f);
            func.params.iter().any(|q| q.name == n) || {
                let mut yes = false;
                crate::flow::walk_lets(&func.body, &mut |b| yes |= b.name == n);
                yes
            }
        })
    }

    /// A local of the function the walk is in that holds an object made there (`new
    /// HttpHeaders()`, `PaymentEvent()`, `HashMap::new()`, `mutableMapOf()`, a value computed
    /// from the key), not one handed in (a parameter, a loop variable, an element fetched from
    /// elsewhere), whose changes the caller would see.
    fn owns(&self, n: &str) -> bool {
        if self.carriers.iter().any(|c| c == n) {
            return true;
        }
        let local = &self.cat.sinks.local_uses;
        let builds_value = |name: &str| local.value_calls.iter().any(|v| v == name);
        let mut made_here = false;
        let mut other = false;
        for &f in self.fns {
            let func = self.p.func(f);
            if func.params.iter().any(|q| q.name == n) {
                return false;
            }
            crate::flow::walk_lets(&func.body, &mut |b| {
                if b.name != n {
                    return;
                }
                let root = b.init.as_ref().map(fluent_root);
                let ok = root.is_some_and(|r| {
                    constructs(r)
                        || match &r.kind {
                            ExprKind::Str(_) | ExprKind::Template(_) => true,
                            ExprKind::Call {
                                receiver: None,
                                name,
                                ..
                            }
                            | ExprKind::Macro { name, .. } => builds_value(name),
                            _ => false,
                        }
                });
                if ok {
                    made_here = true;
                } else {
                    other = true;
                }
            });
        }
        made_here && !other
    }

    /// A receiver whose declared type keeps values inside the service (a repository, a JDBC
    /// template, an event publisher, a logger).
    fn local_receiver(&self, g: FnRef, r: &Expr) -> bool {
        let Some(t) = self.flow.type_in(g, r) else {
            return false;
        };
        let t = simple_name(&t);
        self.cat
            .sinks
            .local_uses
            .receiver_types
            .iter()
            .any(|s| t.ends_with(s.as_str()))
    }
}

/// A fluent chain rooted at an object made right there: `X.builder()..`, `new X(..)..`,
/// Kotlin `X(..)..`.
fn made_here(e: &Expr) -> bool {
    constructs(fluent_root(e))
}

/// Down a fluent chain to the call it starts from: `X.builder().a(..).b(..)` is `X.builder()`,
/// `new X(..).a(..)` is `new X(..)`.
fn fluent_root(mut e: &Expr) -> &Expr {
    while let ExprKind::Call {
        receiver: Some(r), ..
    } = &e.kind
    {
        if r.path_text().is_some() {
            break;
        }
        e = r;
    }
    e
}

/// `new X(..)`, a static call on a type (`X.builder()`, `HashMap::new()`), a Kotlin
/// constructor call `X(..)`.
fn constructs(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::New { .. } => true,
        ExprKind::Call { receiver, name, .. } => match receiver.as_deref() {
            None => name.starts_with(char::is_uppercase),
            Some(r) => r
                .path_text()
                .is_some_and(|t| simple_name(&t).starts_with(char::is_uppercase)),
        },
        _ => false,
    }
}
