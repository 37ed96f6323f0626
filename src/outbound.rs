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

/// True when the key of `fl` never leaves the service: every use of it (and of what carries
/// it) is a local use.
pub fn stays_local(p: &Project, flow: &Flow, cat: &Catalog, fl: &KeyFlow) -> bool {
    let root = p.outermost(fl.sink_fn);
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
        carriers: Vec::new(),
    };
    // The sink: a local's name (`String idempotencyKey = ..`), or the value handed to a call,
    // an assignment or a constructor.
    let start = if let Some(b) = lets.iter().find(|b| b.name_span == fl.sink) {
        w.carriers.push(b.name.clone());
        None
    } else {
        match all.iter().find(|(_, e)| e.span == fl.sink) {
            Some(x) => Some(*x),
            None => return false,
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
            Some(_) => w.assigned(g, e),
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
    carriers: Vec<String>,
}

impl<'p> Walk<'_, 'p> {
    fn carry(&mut self, name: &str) {
        if !self.carriers.iter().any(|c| c == name) {
            self.carriers.push(name.to_string());
        }
    }

    /// A value assigned to `target`: true when that is a local this function owns (which then
    /// carries it).
    fn assigned(&mut self, g: FnRef, target: &'p Expr) -> bool {
        let n = match &target.kind {
            ExprKind::Name(n) => n,
            // `event.idempotencyKey = key` on an object this function made.
            ExprKind::Field { receiver, .. } => match &receiver.kind {
                ExprKind::Name(n) => n,
                _ => return false,
            },
            _ => return false,
        };
        if !self.owns(g, n) {
            return false;
        }
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
                    match receiver.as_deref() {
                        Some(r) if self.local_receiver(g, r) => return true,
                        // `headers.set(NAME, key)`, `event.setIdempotencyKey(key)`,
                        // `list.add(key)`: the local now carries it.
                        Some(Expr {
                            kind: ExprKind::Name(n),
                            ..
                        }) if self.owns(g, n) => {
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
                        // `listOf(key)`, `mapOf(NAME to key)`: not a project function; a
                        // Kotlin constructor call `LedgerEntry(key, ..)`.
                        None if self.p.count_named(name) == 0
                            && local.value_calls.iter().any(|v| v == name.as_str())
                            || name.starts_with(char::is_uppercase)
                                && !self.p.types_named(name).is_empty() =>
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
                    return self.assigned(g, target);
                }
                // The target of an assignment, a condition, an index: not a value passed on.
                ExprKind::Assign { .. } | ExprKind::Index { .. } => return true,
                ExprKind::If { cond, .. } if std::ptr::eq(&**cond, e) => return true,
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_) => e = x,
                _ => return false,
            }
        }
    }

    /// A local of the function the walk is in that holds an object made there (`new
    /// HttpHeaders()`, `PaymentEvent()`, `HashMap::new()`, `mutableMapOf()`, a value computed
    /// from the key), not one handed in (a parameter, a loop variable, an element fetched from
    /// elsewhere), whose changes the caller would see.
    fn owns(&self, g: FnRef, n: &str) -> bool {
        if self.carriers.iter().any(|c| c == n) {
            return true;
        }
        let root = self.p.outermost(g);
        let local = &self.cat.sinks.local_uses;
        let mut made_here = false;
        let mut other = false;
        for f in self.p.with_nested(root) {
            let func = self.p.func(f);
            if func.params.iter().any(|q| q.name == n) {
                return false;
            }
            crate::flow::walk_lets(&func.body, &mut |b| {
                if b.name != n {
                    return;
                }
                let mut init = b.init.as_ref();
                // Down a builder chain to its root: `X.builder().a(..).b(..)`.
                while let Some(Expr {
                    kind:
                        ExprKind::Call {
                            receiver: Some(r), ..
                        },
                    ..
                }) = init
                {
                    if r.path_text().is_some() {
                        break;
                    }
                    init = Some(r);
                }
                let ok = match init.map(|e| &e.kind) {
                    Some(ExprKind::New { .. } | ExprKind::Str(_) | ExprKind::Template(_)) => true,
                    Some(ExprKind::Call { receiver, name, .. }) => match receiver.as_deref() {
                        None => {
                            name.starts_with(char::is_uppercase)
                                || local.value_calls.iter().any(|v| v == name.as_str())
                        }
                        Some(r) => r
                            .path_text()
                            .is_some_and(|t| simple_name(&t).starts_with(char::is_uppercase)),
                    },
                    Some(ExprKind::Macro { name, .. }) => {
                        local.value_calls.iter().any(|v| v == name.as_str())
                    }
                    _ => false,
                };
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
