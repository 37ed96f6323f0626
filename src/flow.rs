//! Value flow: which expressions are nondeterministic (a fresh random or time value each time
//! they are evaluated), and where such a value reaches an idempotency-key sink.
//!
//! The analysis is per function and flow-insensitive over locals (a local is fresh if any
//! assignment to it is), with lambdas seeing the locals of the function they are written in.
//! Calls to project functions use on-demand, memoised summaries: "returns a fresh value" and
//! "puts a fresh value into a key sink". Everything is bounded: evaluation depth, summary
//! recursion and cycles.

use crate::catalog::{Catalog, SourceKind, is_period_pattern};
use crate::facts::{Arg, Binding, Expr, ExprKind, FnKind, Lang, Span, Stmt, simple_name};
use crate::project::{FnRef, Project};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A nondeterministic value and where it was made.
#[derive(Clone, Debug)]
pub struct Taint {
    /// The expression that makes the value: the source call, or the call of a project helper
    /// that returns one.
    pub span: Span,
    /// The function (or lambda) in which that expression is evaluated.
    pub at: FnRef,
    pub kind: SourceKind,
    /// Source text of the expression, shortened (`UUID.randomUUID()`).
    pub what: String,
    /// When the value comes from a project helper: where the helper makes it.
    pub via: Option<Rc<Via>>,
}

#[derive(Clone, Debug)]
pub struct Via {
    pub callee: String,
    pub at: FnRef,
    pub span: Span,
    pub what: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// The fresh value is made in this function (or a lambda in it) and reaches a key sink.
    Direct,
    /// The call (in `taint.span`) is to a project helper that itself puts a fresh value into a
    /// key sink.
    HelperSetsKey,
}

/// A fresh value reaching an idempotency-key sink.
#[derive(Clone, Debug)]
pub struct KeyFlow {
    pub taint: Taint,
    /// Where the key is used: the value passed to the header call / setter / parameter, or
    /// the name of the key variable.
    pub sink: Span,
    /// The function whose body contains the sink.
    pub sink_fn: FnRef,
    pub kind: FlowKind,
}

#[derive(Clone, Debug, Default)]
struct Val {
    taint: Option<Taint>,
    /// A string constant the local holds (`String h = "Idempotency-Key"`).
    str_const: Option<String>,
    /// Declared or constructed type, simple name.
    ty: Option<String>,
}

/// Locals of one function: each name's bindings by source position, so that a shadowing
/// `let key = ..` later in the function does not mix with an earlier one. Flow-insensitive
/// otherwise: an assignment adds its value to the binding it assigns.
#[derive(Clone, Debug, Default)]
struct Env {
    vars: HashMap<String, Vec<(usize, Val)>>,
}

impl Env {
    /// The binding of `name` in force at byte offset `pos`.
    fn get(&self, name: &str, pos: usize) -> Option<&Val> {
        let v = self.vars.get(name)?;
        v.iter()
            .rev()
            .find(|(p, _)| *p <= pos)
            .or(v.first())
            .map(|(_, val)| val)
    }

    /// Declares a binding at `pos` (a second pass over the same declaration merges).
    fn bind(&mut self, name: String, pos: usize, val: Val) {
        let v = self.vars.entry(name).or_default();
        match v.iter_mut().find(|(p, _)| *p == pos) {
            Some((_, old)) => {
                if old.taint.is_none() {
                    old.taint = val.taint;
                }
                old.ty = val.ty.or(old.ty.take());
                old.str_const = val.str_const.or(old.str_const.take());
            }
            None => {
                v.push((pos, val));
                v.sort_by_key(|(p, _)| *p);
            }
        }
    }

    /// An assignment at `pos` adds its taint to the binding in force there.
    fn assign(&mut self, name: String, pos: usize, val: Val) {
        let slot = self.vars.get_mut(&name).and_then(|v| {
            let i = v.iter().rposition(|(p, _)| *p <= pos).unwrap_or(0);
            v.get_mut(i)
        });
        match slot {
            Some((_, old)) => {
                if old.taint.is_none() {
                    old.taint = val.taint;
                }
            }
            None => self.bind(name, 0, val),
        }
    }

    /// The declared or constructed type of any binding of `name`.
    fn any_type(&self, name: &str) -> Option<&String> {
        self.vars.get(name)?.iter().find_map(|(_, v)| v.ty.as_ref())
    }
}

const MAX_EVAL_DEPTH: usize = 200;

/// Calls whose lambda receives the receiver's value as its parameter.
const SCOPE_FNS: &[&str] = &[
    "let",
    "also",
    "map",
    "flatMap",
    "mapNotNull",
    "ifPresent",
    "thenApply",
    "thenAccept",
    "thenCompose",
    "doOnNext",
    "and_then",
    "map_or_else",
    "inspect",
    "takeIf",
    "takeUnless",
    "use",
    "then",
];
const MAX_SUMMARY_DEPTH: usize = 12;

/// Names too generic to resolve to a project function by name alone when called on an
/// arbitrary receiver.
const GENERIC_NAMES: &[&str] = &[
    "toString",
    "to_string",
    "build",
    "get",
    "apply",
    "invoke",
    "call",
    "run",
    "execute",
    "let",
    "also",
    "map",
    "equals",
    "hashCode",
    "proceed",
    "header",
    "add",
    "set",
    "put",
    "of",
    "from",
    "format",
    "copy",
    "newBuilder",
    "request",
    "body",
    "send",
    "clone",
    "into",
    "unwrap",
    "value",
    "next",
    "handle",
    "intercept",
    "process",
    "filter",
    "create",
    "key",
    "id",
];

/// Evaluation state for one project. Not thread-safe (memo tables use `RefCell`); run one per
/// thread if parallelised.
pub struct Flow<'p> {
    pub p: &'p Project,
    pub cat: &'p Catalog,
    envs: RefCell<HashMap<FnRef, Rc<Env>>>,
    returns: RefCell<HashMap<FnRef, Option<Taint>>>,
    sets_key: RefCell<HashMap<FnRef, Option<Taint>>>,
    in_progress: RefCell<HashSet<(FnRef, u8)>>,
    summary_depth: RefCell<usize>,
}

impl<'p> Flow<'p> {
    pub fn new(p: &'p Project, cat: &'p Catalog) -> Self {
        Flow {
            p,
            cat,
            envs: RefCell::default(),
            returns: RefCell::default(),
            sets_key: RefCell::default(),
            in_progress: RefCell::default(),
            summary_depth: RefCell::new(0),
        }
    }

    /// Every fresh value reaching a key sink in function `f` (not in its lambdas; they are
    /// functions of their own), plus calls in `f` to helpers that set a fresh key.
    pub fn key_flows(&self, f: FnRef) -> Vec<KeyFlow> {
        let env = self.env_for(f);
        let mut out = Vec::new();
        let body = &self.p.func(f).body;
        let mut ev = Ev {
            flow: self,
            at: f,
            env: &env,
            depth: 0,
        };
        walk_body(body, &mut |v| match v {
            Visit::Let(b) => ev.let_sink(b, &mut out),
            Visit::Expr(e) => ev.expr_sinks(e, &mut out),
        });
        out
    }

    /// Key flows for top-level statements of a file (Kotlin scripts).
    pub fn top_level_flows(&self, _unit: usize) -> Vec<KeyFlow> {
        Vec::new()
    }

    fn env_for(&self, f: FnRef) -> Rc<Env> {
        if let Some(e) = self.envs.borrow().get(&f) {
            return e.clone();
        }
        let func = self.p.func(f);
        let mut env: Env = match func.parent {
            Some(parent) if func.kind == FnKind::Lambda || func.kind == FnKind::Function => {
                let pe = self.env_for(FnRef {
                    unit: f.unit,
                    f: parent,
                });
                (*pe).clone()
            }
            _ => Env::default(),
        };
        for p in &func.params {
            env.bind(
                p.name.clone(),
                p.span.start,
                Val {
                    ty: p.ty.as_deref().map(|t| simple_name(t).to_string()),
                    ..Val::default()
                },
            );
        }
        // `fresh.let { key -> .. }`, `opt.map(k -> ..)`: the lambda's parameter is the receiver.
        if func.kind == FnKind::Lambda
            && let Some(parent) = func.parent
        {
            let parent = FnRef {
                unit: f.unit,
                f: parent,
            };
            let penv = self.env_for(parent);
            let param =
                func.params.first().map(|p| p.name.clone()).or_else(|| {
                    (self.p.units[f.unit].lang == Lang::Kotlin).then(|| "it".to_string())
                });
            if let Some(param) = param
                && let Some(t) = self.receiver_of_scope_call(parent, f.f, &penv)
            {
                let pos = func
                    .params
                    .first()
                    .map_or(func.span.start, |p| p.span.start);
                env.bind(
                    param,
                    pos,
                    Val {
                        taint: Some(t),
                        ..Val::default()
                    },
                );
            }
        }
        {
            // Two passes so that a local assigned after its first use in a loop is seen.
            for _ in 0..2 {
                let snapshot = env.clone();
                let mut ev = Ev {
                    flow: self,
                    at: f,
                    env: &snapshot,
                    depth: 0,
                };
                let mut updates: Vec<(String, usize, Val, bool)> = Vec::new();
                walk_body(&func.body, &mut |v| match v {
                    Visit::Let(b) => {
                        let val = ev.binding_val(b);
                        updates.push((b.name.clone(), b.span.start, val, true));
                    }
                    Visit::Expr(e) => match &e.kind {
                        ExprKind::Assign { target, op, value } => {
                            if let Some(name) = assigned_local(target) {
                                let mut val = Val {
                                    taint: ev.eval(value),
                                    ..Val::default()
                                };
                                if op == "=" {
                                    val.str_const = str_lit(value);
                                }
                                updates.push((name.to_string(), e.span.start, val, false));
                            } else if op == "let" {
                                // `if let Ok(v) = expr` (Rust front end)
                                let taint = ev.eval(value);
                                for n in pattern_names(target) {
                                    updates.push((
                                        n.to_string(),
                                        e.span.start,
                                        Val {
                                            taint: taint.clone(),
                                            ..Val::default()
                                        },
                                        true,
                                    ));
                                }
                            }
                        }
                        // Rust `match expr { Ok(v) => .. }`: arm bindings hold the subject's value.
                        ExprKind::Match {
                            subject: Some(subject),
                            arms,
                        } if ev.lang() == Lang::Rust => {
                            let taint = ev.eval(subject);
                            if taint.is_some() {
                                for a in arms {
                                    for p in &a.patterns {
                                        for n in pattern_names(p) {
                                            updates.push((
                                                n.to_string(),
                                                p.span.start,
                                                Val {
                                                    taint: taint.clone(),
                                                    ..Val::default()
                                                },
                                                true,
                                            ));
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    },
                });
                for (name, pos, val, is_let) in updates {
                    if is_let {
                        env.bind(name, pos, val);
                    } else {
                        env.assign(name, pos, val);
                    }
                }
            }
        }
        let env = Rc::new(env);
        self.envs.borrow_mut().insert(f, env.clone());
        env
    }

    /// For a lambda passed to a scope function (`recv.let { }`, `recv.map(x -> ..)`), the
    /// taint of `recv` in the enclosing function.
    fn receiver_of_scope_call(&self, parent: FnRef, lambda: usize, penv: &Env) -> Option<Taint> {
        let mut found: Option<&Expr> = None;
        crate::project::walk_stmts(&self.p.func(parent).body, &mut |e: &Expr| {
            if found.is_some() {
                return;
            }
            if let ExprKind::Call {
                receiver: Some(r),
                name,
                args,
            } = &e.kind
                && SCOPE_FNS.contains(&name.as_str())
                && args
                    .first()
                    .is_some_and(|a| matches!(a.value.kind, ExprKind::Lambda(id) if id == lambda))
            {
                found = Some(r);
            }
        });
        let mut ev = Ev {
            flow: self,
            at: parent,
            env: penv,
            depth: 0,
        };
        found.and_then(|r| ev.eval(r))
    }

    /// Does calling `f` return a fresh value? (memoised; cycles and deep chains give `None`)
    pub fn returns_fresh(&self, f: FnRef) -> Option<Taint> {
        self.summary(f, 0, |flow, f| {
            let env = flow.env_for(f);
            let ev = Ev {
                flow,
                at: f,
                env: &env,
                depth: 0,
            };
            ev.value_of_fn(f)
        })
    }

    /// Does calling `f` put a fresh value into a key sink (in `f` or in lambdas written in it)?
    pub fn sets_fresh_key(&self, f: FnRef) -> Option<Taint> {
        self.summary(f, 1, |flow, f| {
            flow.p
                .with_nested(f)
                .into_iter()
                .find_map(|g| flow.key_flows(g).into_iter().next().map(|k| k.taint))
        })
    }

    fn summary(
        &self,
        f: FnRef,
        which: u8,
        compute: impl FnOnce(&Self, FnRef) -> Option<Taint>,
    ) -> Option<Taint> {
        let table = if which == 0 {
            &self.returns
        } else {
            &self.sets_key
        };
        if let Some(t) = table.borrow().get(&f) {
            return t.clone();
        }
        if !self.p.func(f).has_body
            || *self.summary_depth.borrow() >= MAX_SUMMARY_DEPTH
            || !self.in_progress.borrow_mut().insert((f, which))
        {
            return None;
        }
        *self.summary_depth.borrow_mut() += 1;
        let t = compute(self, f);
        *self.summary_depth.borrow_mut() -= 1;
        self.in_progress.borrow_mut().remove(&(f, which));
        table.borrow_mut().insert(f, t.clone());
        t
    }

    /// Project functions a call may mean, narrowed by its receiver.
    fn callees(&self, at: FnRef, receiver: Option<&Expr>, name: &str, args: &[Arg]) -> Vec<FnRef> {
        let arity = args.len();
        let all: Vec<FnRef> = self.p.resolve(name, arity).collect();
        if all.is_empty() {
            return all;
        }
        let owner_name = |r: &FnRef| {
            self.p.func(*r).owner.and_then(|t| {
                let ty = &self.p.units[r.unit].facts.types[t];
                ty.name.clone().map(|n| {
                    (
                        n,
                        ty.parent_type
                            .and_then(|pt| self.p.units[r.unit].facts.types[pt].name.clone()),
                    )
                })
            })
        };
        match receiver.map(|r| &r.kind) {
            None | Some(ExprKind::Name(_)) if is_self_receiver(receiver) => {
                // Same type first, then same file, then anything.
                let my_owner = self
                    .p
                    .func(at)
                    .owner
                    .or_else(|| self.p.ancestors(at).find_map(|a| self.p.func(a).owner));
                let same: Vec<FnRef> = all
                    .iter()
                    .copied()
                    .filter(|r| r.unit == at.unit && self.p.func(*r).owner == my_owner)
                    .collect();
                if !same.is_empty() {
                    return same;
                }
                let same_file: Vec<FnRef> =
                    all.iter().copied().filter(|r| r.unit == at.unit).collect();
                if !same_file.is_empty() {
                    return same_file;
                }
                if GENERIC_NAMES.contains(&name) {
                    return Vec::new();
                }
                all
            }
            Some(_) => {
                let recv = receiver.and_then(|r| r.path_text());
                if let Some(recv) = recv {
                    let t = simple_name(&recv);
                    if t.starts_with(|c: char| c.is_uppercase()) {
                        let on_type: Vec<FnRef> = all
                            .iter()
                            .copied()
                            .filter(|r| {
                                owner_name(r).is_some_and(|(n, parent)| {
                                    simple_name(&n) == t
                                        || parent.as_deref().map(simple_name) == Some(t)
                                })
                            })
                            .collect();
                        return on_type;
                    }
                }
                if GENERIC_NAMES.contains(&name) {
                    return Vec::new();
                }
                all
            }
            None => all,
        }
    }
}

fn is_self_receiver(r: Option<&Expr>) -> bool {
    match r.map(|r| &r.kind) {
        None => true,
        Some(ExprKind::Name(n)) => n == "this" || n == "self" || n == "Self",
        _ => false,
    }
}

/// The local a plain assignment writes (`x = ..`, not `this.x = ..`).
fn assigned_local(target: &Expr) -> Option<&str> {
    match &target.kind {
        ExprKind::Name(n) => Some(n),
        _ => None,
    }
}

/// Names bound by a lowered pattern (`Other([Name(v), ..])` or a bare `Name`).
fn pattern_names(p: &Expr) -> Vec<&str> {
    match &p.kind {
        ExprKind::Name(n) => vec![n.as_str()],
        ExprKind::Other(parts) => parts
            .iter()
            .filter_map(|x| match &x.kind {
                ExprKind::Name(n) => Some(n.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn str_lit(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Str(s) => Some(s.clone()),
        _ => None,
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

enum Visit<'a> {
    Let(&'a Binding),
    Expr(&'a Expr),
}

/// Visits every binding and expression in `stmts` in source order, without entering lambda
/// bodies. Iterative.
fn walk_body<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(Visit<'a>)) {
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

/// One evaluation in one function.
struct Ev<'f, 'p> {
    flow: &'f Flow<'p>,
    at: FnRef,
    env: &'f Env,
    depth: usize,
}

impl<'p> Ev<'_, 'p> {
    fn lang(&self) -> Lang {
        self.flow.p.units[self.at.unit].lang
    }

    fn text(&self, span: Span) -> String {
        let t = self.flow.p.units[self.at.unit].src.slice(span);
        let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 60 {
            let mut s: String = t.chars().take(57).collect();
            s.push_str("...");
            s
        } else {
            t
        }
    }

    fn source(&self, e: &Expr, kind: SourceKind) -> Option<Taint> {
        Some(Taint {
            span: e.span,
            at: self.at,
            kind,
            what: self.text(e.span),
            via: None,
        })
    }

    fn binding_val(&mut self, b: &Binding) -> Val {
        let init = b.init.as_ref();
        let constructed = init.and_then(|i| match &i.kind {
            ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
            ExprKind::Call {
                name,
                receiver: None,
                ..
            } if name.starts_with(|c: char| c.is_uppercase()) => Some(name.clone()),
            _ => None,
        });
        Val {
            taint: init.and_then(|i| self.eval(i)),
            str_const: init.and_then(str_lit),
            ty: b
                .ty
                .as_deref()
                .map(|t| simple_name(t).to_string())
                .or(constructed),
        }
    }

    /// Is the value of `e` fresh on every evaluation?
    fn eval(&mut self, e: &Expr) -> Option<Taint> {
        if self.depth >= MAX_EVAL_DEPTH {
            return None;
        }
        self.depth += 1;
        let t = self.eval_inner(e);
        self.depth -= 1;
        t
    }

    fn eval_any<'a>(&mut self, es: impl IntoIterator<Item = &'a Expr>) -> Option<Taint> {
        for e in es {
            if let Some(t) = self.eval(e) {
                return Some(t);
            }
        }
        None
    }

    fn eval_inner(&mut self, e: &Expr) -> Option<Taint> {
        use ExprKind::*;
        match &e.kind {
            Name(n) => self.env.get(n, e.span.start).and_then(|v| v.taint.clone()),
            Str(_) | Lit(_) | MethodRef { .. } | Object(_) | Break(_) | Continue(_) => None,
            Lambda(_) => None,
            Field { receiver, name } => {
                if let Some(t) = self.eval(receiver) {
                    if t.kind == SourceKind::Time && self.is_period_conversion(name) {
                        return None;
                    }
                    return Some(t);
                }
                None
            }
            Call {
                receiver,
                name,
                args,
            } => self.eval_call(e, receiver.as_deref(), name, args),
            Macro { name, args } => {
                if self.flow.cat.macros.random.iter().any(|m| m == name) {
                    return self.source(e, SourceKind::Random);
                }
                self.eval_any(args.iter().map(|a| &a.value))
            }
            New { ty, args, .. } => {
                let t = simple_name(ty);
                if args.is_empty() {
                    if self.flow.cat.constructors.time.iter().any(|c| c == t) {
                        return self.source(e, SourceKind::Time);
                    }
                    if self.flow.cat.constructors.random.iter().any(|c| c == t) {
                        return self.source(e, SourceKind::Random);
                    }
                }
                if self.is_date_formatter_ctor(t) {
                    return None;
                }
                self.eval_args(args)
            }
            Template(parts) | Other(parts) => self.eval_any(parts.iter()),
            Binary { op, lhs, rhs } => {
                const BOOL_OPS: &[&str] = &[
                    "==",
                    "!=",
                    "<",
                    ">",
                    "<=",
                    ">=",
                    "&&",
                    "||",
                    "instanceof",
                    "is",
                    "!is",
                    "in",
                    "!in",
                    "===",
                    "!==",
                ];
                if BOOL_OPS.contains(&op.as_str()) {
                    None
                } else {
                    self.eval_any([lhs.as_ref(), rhs.as_ref()])
                }
            }
            Unary { op, operand } => {
                if op == "!" {
                    None
                } else {
                    self.eval(operand)
                }
            }
            Cast { expr, .. } | Await(expr) => self.eval(expr),
            Index { receiver, .. } => self.eval(receiver),
            Assign { .. } | Throw(_) | Loop { .. } => None,
            If { then, els, .. } => {
                let t = self.eval(then);
                if t.is_some() {
                    return t;
                }
                els.as_deref().and_then(|x| self.eval(x))
            }
            Match { arms, .. } => self.eval_any(arms.iter().map(|a| &a.body)),
            Block(stmts) => match stmts.last() {
                Some(Stmt::Expr(last)) => self.eval(last),
                _ => None,
            },
            Try { body, catches, .. } => {
                let t = self.eval(body);
                if t.is_some() {
                    return t;
                }
                self.eval_any(catches.iter().map(|c| &c.body))
            }
            Return(v) => v.as_deref().and_then(|x| self.eval(x)),
        }
    }

    fn eval_args(&mut self, args: &[Arg]) -> Option<Taint> {
        for a in args {
            let t = match &a.value.kind {
                ExprKind::Lambda(id) => self.lambda_value(*id),
                ExprKind::MethodRef { receiver, name } => {
                    self.method_ref_value(&a.value, receiver.as_deref(), name)
                }
                _ => self.eval(&a.value),
            };
            if t.is_some() {
                return t;
            }
        }
        None
    }

    /// A method reference used as a supplier (`orElseGet(Keys::fresh)`): fresh if the referenced
    /// project function returns a fresh value when called with no arguments.
    fn method_ref_value(&mut self, e: &Expr, receiver: Option<&Expr>, name: &str) -> Option<Taint> {
        for callee in self.flow.callees(self.at, receiver, name, &[]) {
            if let Some(inner) = self.flow.returns_fresh(callee) {
                return Some(Taint {
                    span: e.span,
                    at: self.at,
                    kind: inner.kind,
                    what: self.text(e.span),
                    via: Some(Rc::new(Via {
                        callee: name.to_string(),
                        at: inner.at,
                        span: inner.span,
                        what: inner.what.clone(),
                    })),
                });
            }
        }
        None
    }

    fn lambda_value(&mut self, id: usize) -> Option<Taint> {
        let r = FnRef {
            unit: self.at.unit,
            f: id,
        };
        self.flow.returns_fresh(r)
    }

    /// The value a function returns: its `return`s, or the last expression of its body.
    fn value_of_fn(&self, f: FnRef) -> Option<Taint> {
        let func = self.flow.p.func(f);
        let mut ev = Ev {
            flow: self.flow,
            at: f,
            env: self.env,
            depth: 0,
        };
        let mut found = None;
        walk_body(&func.body, &mut |v| {
            if found.is_some() {
                return;
            }
            if let Visit::Expr(Expr {
                kind: ExprKind::Return(Some(x)),
                ..
            }) = v
            {
                found = ev.eval(x);
            }
        });
        if found.is_some() {
            return found;
        }
        match func.body.last() {
            Some(Stmt::Expr(last)) if !matches!(last.kind, ExprKind::Return(_)) => ev.eval(last),
            _ => None,
        }
    }

    fn receiver_path(&self, r: Option<&Expr>) -> Option<String> {
        r.map(|r| r.path_text().unwrap_or_else(|| "<expr>".to_string()))
    }

    fn eval_call(
        &mut self,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
    ) -> Option<Taint> {
        let cat = self.flow.cat;
        if cat.is_special_call(name)
            && let Some(decided) = self.eval_special(e, receiver, name, args)
        {
            return decided;
        }
        // Project helpers that return a fresh value.
        for callee in self.flow.callees(self.at, receiver, name, args) {
            if let Some(inner) = self.flow.returns_fresh(callee) {
                let via = inner.via.clone().unwrap_or_else(|| {
                    Rc::new(Via {
                        callee: name.to_string(),
                        at: inner.at,
                        span: inner.span,
                        what: inner.what.clone(),
                    })
                });
                return Some(Taint {
                    span: e.span,
                    at: self.at,
                    kind: inner.kind,
                    what: self.text(e.span),
                    via: Some(Rc::new(Via {
                        callee: name.to_string(),
                        ..(*via).clone()
                    })),
                });
            }
        }
        // Setting some other header on a builder does not make the builder a key.
        if is_header_setter(name)
            && !args.is_empty()
            && let Some(n) = self.literal_name(&args[0].value)
            && !cat.is_key_name(&n)
        {
            return receiver.and_then(|r| self.eval(r));
        }
        if let Some(r) = receiver
            && let Some(t) = self.eval(r)
        {
            return Some(t);
        }
        self.eval_args(args)
    }

    /// Calls the catalogue knows by name: sources, random and clock reads, period
    /// conversions, memoisers. `Some(result)` when the call is decided here.
    fn eval_special(
        &mut self,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
    ) -> Option<Option<Taint>> {
        let cat = self.flow.cat;
        let lang = self.lang();
        let recv_path = self.receiver_path(receiver);
        if let Some(kind) = cat.source_call(lang, recv_path.as_deref(), name) {
            return Some(self.source(e, kind));
        }
        // `rng.sample(..)` on an rng that is itself a source: the source is where it was made.
        if let Some(t) = receiver.and_then(|r| match &r.kind {
            ExprKind::Name(_) => self.eval(r),
            _ => None,
        }) && t.kind == SourceKind::Random
            && self.is_random_method(receiver, name)
        {
            return Some(Some(t));
        }
        if self.is_random_method(receiver, name) {
            return Some(self.source(e, SourceKind::Random));
        }
        if self.is_clock_read(receiver, name) {
            return Some(self.source(e, SourceKind::Time));
        }
        if receiver.is_none() && args.is_empty() {
            if cat.constructors.time.iter().any(|c| c == name) {
                return Some(self.source(e, SourceKind::Time));
            }
            if cat.constructors.random.iter().any(|c| c == name) {
                return Some(self.source(e, SourceKind::Random));
            }
        }
        if cat.is_memoizer(name) {
            return Some(None);
        }
        // Calendar periods: `now.toLocalDate()`, `YearMonth.from(now)`, `now.format("yyyy-MM")`.
        if self.is_period_conversion(name) || self.is_period_ctor(receiver, name) {
            let t = receiver
                .and_then(|r| self.eval(r))
                .or_else(|| self.eval_args(args));
            return Some(t.filter(|t| t.kind != SourceKind::Time));
        }
        if cat.period.formatters.iter().any(|f| f == name)
            && let Some(p) = self.date_pattern_in(receiver, args)
        {
            let t = receiver
                .and_then(|r| self.eval(r))
                .or_else(|| self.eval_args(args));
            return Some(if is_period_pattern(&p) {
                t.filter(|t| t.kind != SourceKind::Time)
            } else {
                t
            });
        }
        None
    }

    fn is_period_conversion(&self, name: &str) -> bool {
        self.flow.cat.period.conversions.iter().any(|c| c == name)
    }

    fn is_period_ctor(&self, receiver: Option<&Expr>, name: &str) -> bool {
        let ctors = &self.flow.cat.period.constructors;
        match receiver.and_then(|r| r.path_text()) {
            Some(p) => {
                ctors.iter().any(|c| c == simple_name(&p))
                    && matches!(name, "from" | "of" | "ofInstant" | "parse")
            }
            None => ctors.iter().any(|c| c == name),
        }
    }

    fn is_date_formatter_ctor(&self, ty: &str) -> bool {
        matches!(
            ty,
            "SimpleDateFormat" | "DateTimeFormatter" | "FastDateFormat"
        )
    }

    /// A date/time pattern literal used to format: `ofPattern("yyyy-MM")`,
    /// `new SimpleDateFormat("yyyyMM")`, `now.format("%Y-%m")`, `ISO_LOCAL_DATE`.
    fn date_pattern_in(&self, receiver: Option<&Expr>, args: &[Arg]) -> Option<String> {
        let field_inits: Vec<&Expr> = args
            .iter()
            .map(|a| &a.value)
            .chain(receiver)
            .filter_map(|e| match &e.kind {
                ExprKind::Name(n) | ExprKind::Field { name: n, .. } => self.field_init(n),
                _ => None,
            })
            .collect();
        let mut found = None;
        let mut look = |e: &Expr| {
            crate::project::walk_expr(e, &mut |x| {
                if found.is_some() {
                    return;
                }
                match &x.kind {
                    ExprKind::Call { name, args, .. }
                        if name == "ofPattern" || name == "forPattern" =>
                    {
                        found = args.first().and_then(|a| str_lit(&a.value));
                    }
                    ExprKind::New { ty, args, .. }
                        if self.is_date_formatter_ctor(simple_name(ty)) =>
                    {
                        found = args.first().and_then(|a| str_lit(&a.value));
                    }
                    ExprKind::Field { name, .. } | ExprKind::Name(name)
                        if self
                            .flow
                            .cat
                            .period
                            .date_constants
                            .iter()
                            .any(|c| c == name) =>
                    {
                        found = Some("yyyy-MM-dd".to_string());
                    }
                    ExprKind::Name(n) => {
                        if let Some(Val {
                            str_const: Some(s), ..
                        }) = self.env.get(n, x.span.start)
                            && (s.contains('%') || s.contains("yy") || s.contains("uu"))
                        {
                            found = Some(s.clone());
                        }
                    }
                    _ => {}
                }
            });
        };
        for a in args {
            look(&a.value);
        }
        if let Some(r) = receiver {
            look(r);
        }
        // A formatter held in a field or constant: `PERIOD.format(now)`.
        for init in field_inits {
            look(init);
        }
        if found.is_none() {
            // `now.format("%Y-%m")`: a direct literal argument when the receiver is the time.
            let recv_is_time = receiver.is_some_and(|r| {
                let mut ev = Ev {
                    flow: self.flow,
                    at: self.at,
                    env: self.env,
                    depth: self.depth,
                };
                ev.eval(r).is_some_and(|t| t.kind == SourceKind::Time)
            });
            if recv_is_time {
                found = args.iter().find_map(|a| str_lit(&a.value));
            }
        }
        found
    }

    /// The initialiser of a field of the enclosing type, or of a file-level binding.
    fn field_init(&self, name: &str) -> Option<&'p Expr> {
        let p: &'p Project = self.flow.p;
        let unit = &p.units[self.at.unit];
        let owner = p.ancestors(self.at).find_map(|a| p.func(a).owner);
        let mut ty = owner;
        while let Some(t) = ty {
            let decl = &unit.facts.types[t];
            if let Some(b) = decl.fields.iter().find(|b| b.name == name) {
                return b.init.as_ref();
            }
            ty = decl.parent_type;
        }
        unit.facts
            .globals
            .iter()
            .find(|b| b.name == name)
            .and_then(|b| b.init.as_ref())
    }

    fn var_type(&self, name: &str) -> Option<String> {
        if let Some(t) = self.env.any_type(name) {
            return Some(t.clone());
        }
        // A field of the enclosing type.
        let unit = &self.flow.p.units[self.at.unit];
        let owner = self
            .flow
            .p
            .ancestors(self.at)
            .find_map(|a| self.flow.p.func(a).owner)?;
        unit.facts.types[owner]
            .fields
            .iter()
            .find(|b| b.name == name)
            .and_then(|b| {
                b.ty.as_deref()
                    .map(|t| simple_name(t).to_string())
                    .or_else(|| {
                        b.init.as_ref().and_then(|i| match &i.kind {
                            ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
                            ExprKind::Call { name, .. } => Some(name.clone()),
                            _ => None,
                        })
                    })
            })
    }

    /// `rng.nextLong()`, `new SecureRandom().nextInt()`, `thread_rng().gen::<u64>()`,
    /// `Alphanumeric.sample_string(&mut rng, 16)`.
    fn is_random_method(&mut self, receiver: Option<&Expr>, name: &str) -> bool {
        let ro = &self.flow.cat.random_objects;
        let methods = if self.lang() == Lang::Rust {
            &ro.methods_rust
        } else {
            &ro.methods_jvm
        };
        if !methods.iter().any(|m| m == name) {
            return false;
        }
        let Some(r) = receiver else {
            return false;
        };
        self.is_random_object(r)
    }

    fn is_random_object(&mut self, r: &Expr) -> bool {
        let ro = &self.flow.cat.random_objects;
        let is_type = |t: &str| ro.types.iter().any(|x| x == simple_name(t));
        match &r.kind {
            ExprKind::New { ty, .. } => is_type(ty),
            ExprKind::Call {
                name,
                receiver: None,
                ..
            } if is_type(name) => true,
            ExprKind::Call {
                receiver: Some(inner),
                ..
            } if inner.path_text().is_some_and(|p| is_type(&p)) => true,
            ExprKind::Call { .. } => self.eval(r).is_some_and(|t| t.kind == SourceKind::Random),
            ExprKind::Name(n) => {
                ro.names.iter().any(|x| x == n)
                    || ro.rust_distributions.iter().any(|x| x == n)
                    || self.var_type(n).is_some_and(|t| is_type(&t))
                    || self.env.get(n, r.span.start).is_some_and(|v| {
                        v.taint
                            .as_ref()
                            .is_some_and(|t| t.kind == SourceKind::Random)
                    })
            }
            ExprKind::Field { receiver, name } => {
                matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self")
                    && (ro.names.iter().any(|x| x == name)
                        || self.var_type(name).is_some_and(|t| is_type(&t)))
            }
            ExprKind::Unary { operand, .. } => self.is_random_object(operand),
            _ => false,
        }
    }

    fn is_clock_read(&self, receiver: Option<&Expr>, name: &str) -> bool {
        let c = &self.flow.cat.clocks;
        if !c.methods.iter().any(|m| m == name) {
            return false;
        }
        let Some(r) = receiver else { return false };
        let n = match &r.kind {
            ExprKind::Name(n) => n.as_str(),
            ExprKind::Field { receiver, name } if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") => {
                name.as_str()
            }
            _ => return false,
        };
        n.to_ascii_lowercase().ends_with("clock")
            || self.var_type(n).is_some_and(|t| c.types.contains(&t))
    }

    /// A literal name: a string literal, a local or project constant holding one, a
    /// `HeaderName::from_static("..")`, or an ALL_CAPS constant named like a key header.
    fn literal_name(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Str(s) => Some(s.clone()),
            ExprKind::Name(n) | ExprKind::Field { name: n, .. } => {
                if let Some(Val {
                    str_const: Some(s), ..
                }) = self.env.get(n.as_str(), e.span.start)
                {
                    return Some(s.clone());
                }
                let vals = self.flow.p.constant_values(n);
                if let Some(first) = vals.first() {
                    // Ambiguous constants count as a key name only if every value is one.
                    let cat = self.flow.cat;
                    if vals.iter().all(|v| cat.is_key_name(v)) || vals.len() == 1 {
                        return Some(first.clone());
                    }
                    return Some(String::new());
                }
                let is_const = n
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit());
                if is_const && self.flow.cat.is_key_name(n) {
                    return Some(n.clone());
                }
                if matches!(e.kind, ExprKind::Field { .. }) && is_const {
                    return Some(n.clone());
                }
                None
            }
            ExprKind::Call { name, args, .. } | ExprKind::New { ty: name, args, .. }
                if self
                    .flow
                    .cat
                    .sinks
                    .header_name_constructors
                    .iter()
                    .any(|c| c == simple_name(name))
                    && args.len() == 1 =>
            {
                self.literal_name(&args[0].value)
            }
            ExprKind::Unary { operand, .. } => self.literal_name(operand),
            _ => None,
        }
    }

    /// A header / attribute / map-key name that carries an idempotency key. Only name-like
    /// literals count (`"Idempotency-Key"`, `"stripe.idempotency_key"`), not log messages
    /// that mention one (`"missing Idempotency-Key for {}"`).
    fn is_key_name_expr(&self, e: &Expr) -> bool {
        self.literal_name(e).is_some_and(|n| {
            n.len() <= 64
                && n.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && self.flow.cat.is_key_name(&n)
        })
    }

    fn push_flow(&mut self, value: &Expr, sink: Span, out: &mut Vec<KeyFlow>) {
        let taint = match &value.kind {
            ExprKind::Lambda(id) => self.lambda_value(*id),
            _ => self.eval(value),
        };
        if let Some(taint) = taint {
            out.push(KeyFlow {
                taint,
                sink,
                sink_fn: self.at,
                kind: FlowKind::Direct,
            });
        }
    }

    fn let_sink(&mut self, b: &Binding, out: &mut Vec<KeyFlow>) {
        if let Some(init) = &b.init
            && self.flow.cat.is_key_variable(&b.name)
        {
            self.push_flow(init, b.name_span, out);
        }
    }

    /// Sinks in one expression (not its children; the walk visits those).
    fn expr_sinks(&mut self, e: &Expr, out: &mut Vec<KeyFlow>) {
        let cat = self.flow.cat;
        match &e.kind {
            ExprKind::Assign { target, value, .. } => {
                let is_sink = match &target.kind {
                    ExprKind::Name(n) | ExprKind::Field { name: n, .. } => cat.is_key_variable(n),
                    // `request.headers["Idempotency-Key"] = v`, `headers[IDEMPOTENCY_KEY] = v`
                    ExprKind::Index { index, .. } => self.is_key_name_expr(index),
                    _ => false,
                };
                if is_sink {
                    self.push_flow(value, target.span, out);
                }
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => {
                self.args_sinks(args, out);
                // Kotlin `"Idempotency-Key" to key`.
                if name == "to"
                    && receiver
                        .as_deref()
                        .is_some_and(|r| self.is_key_name_expr(r))
                    && let Some(a) = args.first()
                {
                    self.push_flow(&a.value, a.value.span, out);
                }
                // `headers.computeIfAbsent("Idempotency-Key") { .. }`,
                // `headers.entry("idempotency-key").or_insert_with(|| ..)`: a key invented when
                // the header is missing (a memoiser on a header, not a per-id cache).
                if cat.is_memoizer(name) {
                    let key_arg = match receiver.as_deref().map(|r| &r.kind) {
                        Some(ExprKind::Call {
                            name: n, args: a, ..
                        }) if n == "entry" => a.first(),
                        _ => args.first(),
                    };
                    if key_arg.is_some_and(|a| self.is_key_name_expr(&a.value))
                        && let Some(l) = args
                            .iter()
                            .find(|a| matches!(a.value.kind, ExprKind::Lambda(_)))
                    {
                        self.push_flow(&l.value, l.value.span, out);
                    }
                }
                if cat.is_key_setter(name)
                    && let Some(a) = args.iter().rfind(|a| a.name.is_none())
                {
                    self.push_flow(&a.value, a.value.span, out);
                }
                self.param_sinks(receiver.as_deref(), name, args, out);
                // Helpers that put a fresh key in a sink themselves.
                for callee in self.flow.callees(self.at, receiver.as_deref(), name, args) {
                    if callee == self.at {
                        continue;
                    }
                    if let Some(inner) = self.flow.sets_fresh_key(callee) {
                        out.push(KeyFlow {
                            taint: Taint {
                                span: e.span,
                                at: self.at,
                                kind: inner.kind,
                                what: self.text(e.span),
                                via: Some(Rc::new(Via {
                                    callee: name.clone(),
                                    at: inner.at,
                                    span: inner.span,
                                    what: inner.what.clone(),
                                })),
                            },
                            sink: e.span,
                            sink_fn: self.at,
                            kind: FlowKind::HelperSetsKey,
                        });
                        break;
                    }
                }
            }
            ExprKind::New { args, .. } | ExprKind::Macro { args, .. } => {
                self.args_sinks(args, out);
            }
            _ => {}
        }
    }

    /// `header("Idempotency-Key", v)`, `Map.of("idempotency_key", v)`, named arguments
    /// `idempotencyKey = v`, struct fields, `json!({"idempotency_key": v})`.
    fn args_sinks(&mut self, args: &[Arg], out: &mut Vec<KeyFlow>) {
        let cat = self.flow.cat;
        for (i, a) in args.iter().enumerate() {
            if let Some(n) = &a.name {
                if cat.is_key_variable(n) || cat.is_key_name(n) {
                    self.push_flow(&a.value, a.value.span, out);
                }
                continue;
            }
            if args.len() >= 2
                && self.is_key_name_expr(&a.value)
                && let Some(v) = args.get(i + 1)
                && !self.is_key_name_expr(&v.value)
            {
                self.push_flow(&v.value, v.value.span, out);
            }
        }
    }

    /// Positional arguments bound to a project function's key parameter
    /// (`createCharge(@Header("Idempotency-Key") String key, ..)`, `fun charge(idempotencyKey: String)`).
    fn param_sinks(
        &mut self,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
        out: &mut Vec<KeyFlow>,
    ) {
        if args.is_empty() || !self.flow.p.has_key_params(name) {
            return;
        }
        let _ = receiver;
        let cat = self.flow.cat;
        let candidates: Vec<FnRef> = self.flow.p.resolve(name, args.len()).collect();
        let mut key_idx: Option<usize> = None;
        for c in candidates {
            let f = self.flow.p.func(c);
            let params: Vec<_> = f.params.iter().filter(|p| p.name != "self").collect();
            for (i, p) in params.iter().enumerate() {
                let by_name = cat.is_key_variable(&p.name);
                let by_annotation = p.annotations.iter().any(|a| {
                    matches!(
                        a.name.as_str(),
                        "Header" | "RequestHeader" | "HeaderParam" | "Param"
                    ) && a.args.iter().any(|x| self.is_key_name_expr(&x.value))
                });
                if by_name || by_annotation {
                    key_idx = Some(i);
                    break;
                }
            }
            if key_idx.is_some() {
                break;
            }
        }
        if let Some(i) = key_idx
            && let Some(a) = args.get(i).filter(|a| a.name.is_none())
        {
            self.push_flow(&a.value, a.value.span, out);
        }
    }
}

fn is_header_setter(name: &str) -> bool {
    matches!(
        name,
        "header"
            | "addHeader"
            | "setHeader"
            | "putHeader"
            | "set"
            | "add"
            | "append"
            | "insert"
            | "put"
            | "attribute"
            | "setAttribute"
            | "tag"
            | "headers"
    )
}
