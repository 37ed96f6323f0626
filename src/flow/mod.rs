//! Value flow: which expressions are nondeterministic (a fresh random or time value each time
//! they are evaluated), and where such a value reaches an idempotency-key sink.
//!
//! The analysis is per function and flow-insensitive over locals (a local is fresh if any
//! assignment to it is), with lambdas seeing the locals of the function they are written in.
//! Calls to project functions use on-demand, memoised summaries: "returns a fresh value" and
//! "puts a fresh value into a key sink". Everything is bounded: evaluation depth, summary
//! recursion and cycles.

use crate::catalog::{Catalog, SourceKind, is_period_pattern};
use crate::facts::{Arg, Binding, Expr, ExprKind, FnId, Lang, Span, Stmt, Text, simple_name};
use crate::hash::{HashMap, HashSet};
use crate::project::{FnRef, Project, Targets};
use crate::walk::{Visit, walk_body};
pub use crate::walk::{constructed_type, declared_type, is_self_receiver, walk_lets};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

mod sinks;
mod sources;
mod types;

use sinks::{is_error_path, is_error_type, is_header_getter, is_header_setter, is_library_type};

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
    /// A Kotlin parameter default (`idempotencyKey: String = UUID..`): evaluated once per call
    /// that leaves the parameter out, at the call site.
    ParamDefault,
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
    pub sink_kind: SinkKind,
}

/// What a sink says, by itself, about where its key goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinkKind {
    /// Onto a request by its shape: a header, map key or JSON field named like a key, an SDK's
    /// key argument, a helper parameter that the helper puts under a key header.
    Request,
    /// Only named like a key: a local, field, setter, named argument, record component or
    /// parameter called `idempotencyKey`. It is the key of a request only when a use of it
    /// reaches one (`outbound::verdict`).
    Named,
}

#[derive(Clone, Debug, Default)]
struct Val {
    taint: Option<Taint>,
    /// A string constant the local holds (`String h = "Idempotency-Key"`).
    str_const: Option<String>,
    /// Declared or constructed type, simple name.
    ty: Option<String>,
}

/// Locals of one top-level function and every lambda / local function written in it. Each
/// binding is kept with its source position and the end of its scope, so that a shadowing
/// `let key = ..` later in the function, or a `key` in an inner block, does not mix with
/// another one. Flow-insensitive otherwise: an assignment adds its value to the binding it
/// assigns.
#[derive(Clone, Debug, Default)]
struct Env {
    vars: HashMap<String, Vec<Slot>>,
}

#[derive(Clone, Debug)]
struct Slot {
    pos: usize,
    end: usize,
    val: Val,
}

impl Env {
    /// The binding of `name` in scope at byte offset `pos`.
    fn get(&self, name: &str, pos: usize) -> Option<&Val> {
        self.vars
            .get(name)?
            .iter()
            .rev()
            .find(|s| s.pos <= pos && pos <= s.end)
            .map(|s| &s.val)
    }

    /// Declares a binding at `pos`, in scope until `end` (a second pass over the same
    /// declaration merges into it). Returns whether anything changed.
    fn bind(&mut self, name: &str, pos: usize, end: usize, val: Val) -> bool {
        let v = self.vars.entry(name.to_string()).or_default();
        match v.iter_mut().find(|s| s.pos == pos) {
            Some(slot) => {
                let old = &mut slot.val;
                let changed = old.taint.is_none() && val.taint.is_some();
                if old.taint.is_none() {
                    old.taint = val.taint;
                }
                if val.ty.is_some() {
                    old.ty = val.ty;
                }
                if val.str_const.is_some() {
                    old.str_const = val.str_const;
                }
                changed
            }
            None => {
                v.push(Slot { pos, end, val });
                v.sort_by_key(|s| s.pos);
                true
            }
        }
    }

    /// An assignment at `pos` adds its taint to the binding in scope there. Returns whether
    /// anything changed.
    fn assign(&mut self, name: &str, pos: usize, val: Val) -> bool {
        let Some(v) = self.vars.get_mut(name) else {
            return false;
        };
        match v.iter_mut().rev().find(|s| s.pos <= pos && pos <= s.end) {
            Some(slot) if slot.val.taint.is_none() && val.taint.is_some() => {
                slot.val.taint = val.taint;
                true
            }
            _ => false,
        }
    }

    /// The declared or constructed type of any binding of `name`.
    fn any_type(&self, name: &str) -> Option<&String> {
        self.vars.get(name)?.iter().find_map(|s| s.val.ty.as_ref())
    }
}

const MAX_EVAL_DEPTH: usize = 200;

/// Kinds of memoised results, for cycle tracking.
const RETURNS: u8 = 0;
const SETS_KEY: u8 = 1;
const ENV: u8 = 2;

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
const MAX_SUMMARY_DEPTH: usize = 40;

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

/// A method asked for on a type: (type simple name, method name, arity). Asked at every call
/// site, so the names are [`Text`]: no heap block for a name of up to 24 bytes.
type OnType = (Text, Text, usize);

/// Evaluation state for one project. Not thread-safe (memo tables use `RefCell`); run one per
/// thread if parallelised.
///
/// Recursion (a function whose summary depends on itself, directly or through others) is
/// answered with "not fresh" while in progress, which is the least fixpoint for the function
/// at the head of the cycle. Results computed inside a cycle, below its head, depend on where
/// the query started, so they are kept only until the top-level query ends: every answer
/// is the same whatever order functions are analysed in and whatever else was asked before.
/// Project-wide answers the value flow builds on first use, shared by every thread of a run
/// (each [`Flow`] keeps its own per-thread memo tables beside them).
#[derive(Default)]
pub struct Caches {
    /// Which functions may set an idempotency key.
    sink_gate: std::sync::OnceLock<crate::gate::SinkGate>,
    /// Constructions that hand a lambda to a constructor, by the simple name of the type
    /// built, found when first asked for.
    constructions: std::sync::Mutex<HashMap<String, std::sync::Arc<[crate::wiring::Construction]>>>,
    /// `--exhaustive`: the evidence gates are off (every function is looked at).
    exhaustive: bool,
}

impl Caches {
    /// Caches for a run; `exhaustive` turns the evidence gates off.
    pub fn new(exhaustive: bool) -> Caches {
        Caches {
            exhaustive,
            ..Caches::default()
        }
    }

    /// Are the evidence gates off?
    pub fn exhaustive(&self) -> bool {
        self.exhaustive
    }
}

pub struct Flow<'p> {
    pub p: &'p Project,
    pub cat: &'p Catalog,
    caches: &'p Caches,
    envs: RefCell<HashMap<FnRef, Rc<Env>>>,
    /// Types of locals only ([`Flow::types_for`]), by outermost function.
    types: RefCell<HashMap<FnRef, Rc<Env>>>,
    returns: RefCell<HashMap<FnRef, Option<Taint>>>,
    sets_key: RefCell<HashMap<FnRef, Option<Taint>>>,
    /// Summaries and environments computed inside a cycle, for the current top-level query.
    partial: RefCell<HashMap<(FnRef, u8), Option<Taint>>>,
    partial_envs: RefCell<HashMap<FnRef, Rc<Env>>>,
    /// What is being computed, with the summary depth it started at.
    in_progress: RefCell<HashMap<(FnRef, u8), usize>>,
    /// The lowest depth of an in-progress computation that the current one relied on.
    low: Cell<usize>,
    summary_depth: Cell<usize>,
    /// [`Project::resolve_on_type`] answers by (type, method name, arity): a lookup on a widely
    /// implemented type walks every implementation, and the same few are asked for again and
    /// again.
    on_type: RefCell<HashMap<OnType, Targets>>,
    /// [`Flow::typed_callees`] answers, by the same key.
    typed: RefCell<HashMap<OnType, (Targets, bool)>>,
    /// [`Flow::key_param_of`] answers.
    key_params: RefCell<HashMap<FnRef, Option<usize>>>,
}

impl<'p> Flow<'p> {
    pub fn new(p: &'p Project, cat: &'p Catalog, caches: &'p Caches) -> Self {
        Flow {
            p,
            cat,
            caches,
            envs: RefCell::default(),
            types: RefCell::default(),
            returns: RefCell::default(),
            sets_key: RefCell::default(),
            partial: RefCell::default(),
            partial_envs: RefCell::default(),
            in_progress: RefCell::default(),
            low: Cell::new(usize::MAX),
            summary_depth: Cell::new(0),
            on_type: RefCell::default(),
            typed: RefCell::default(),
            key_params: RefCell::default(),
        }
    }

    /// [`Project::resolve_on_type`], remembered.
    fn resolve_on_type(&self, ty: &str, name: &str, arity: usize) -> Targets {
        let key: OnType = (ty.into(), name.into(), arity);
        if let Some(v) = self.on_type.borrow().get(&key) {
            return v.clone();
        }
        let v: Targets = self.p.resolve_on_type(ty, name, arity).into();
        self.on_type.borrow_mut().insert(key, v.clone());
        v
    }

    /// The index of `f`'s parameter that `f` puts into a key sink as it is
    /// (`fun post(path: String, key: String) = ..header("Idempotency-Key", key)`), whatever
    /// its name: a positional argument bound to it is a key. Remembered per function.
    pub fn key_param_of(&self, f: FnRef) -> Option<usize> {
        if let Some(v) = self.key_params.borrow().get(&f) {
            return *v;
        }
        // A helper that calls itself, or two that call each other, is settled as "none"
        // while it is being looked at.
        self.key_params.borrow_mut().insert(f, None);
        let func = self.p.func(f);
        // Only calls that hand a parameter on after a first argument can put it into a key
        // sink as it is: those alone are evaluated.
        let params: Vec<&str> = func
            .params
            .iter()
            .filter(|p| p.name != "self")
            .map(|p| p.name.as_str())
            .collect();
        let mut calls: Vec<&Expr> = Vec::new();
        let passes_param = |args: &[crate::facts::Arg]| {
            args.iter()
                .any(|a| matches!(&a.value.kind, ExprKind::Name(n) if params.contains(&n.as_str())))
        };
        crate::project::walk_stmts(&func.body, &mut |e: &Expr| {
            let ExprKind::Call { name, args, .. } = &e.kind else {
                return;
            };
            let after_key_name = args.len() >= 2
                && match &args[0].value.kind {
                    ExprKind::Str(s) => self.cat.is_key_name(s),
                    ExprKind::Name(n) | ExprKind::Field { name: n, .. } => self.cat.is_key_name(n),
                    _ => false,
                }
                && passes_param(&args[1..]);
            // A key setter or option given the parameter (`setIdempotencyKey(key)`), or a
            // helper that may take a key given it (`options(key)`).
            let to_key_call = !after_key_name
                && (crate::catalog::contains_ignore_ascii_case(name, "idem")
                    || self.p.passes_to_idem_call(name))
                && passes_param(args);
            if after_key_name || to_key_call {
                calls.push(e);
            }
        });
        let v = if func.has_body && !calls.is_empty() {
            let env = self.env_for(f);
            let mut ev = Ev::new(self, f, &env);
            ev.sink_names = Some(Vec::new());
            let mut sinks = Vec::new();
            for c in calls {
                ev.expr_sinks(c, &mut sinks);
            }
            let names = ev.sink_names.take().unwrap_or_default();
            params.iter().position(|p| names.iter().any(|n| n == p))
        } else {
            None
        };
        self.key_params.borrow_mut().insert(f, v);
        v
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
            sink_names: None,
        };
        walk_body(body, &mut |v| match v {
            Visit::Let(b) => ev.let_sink(b, &mut out),
            Visit::Expr(e) => ev.expr_sinks(e, &mut out),
        });
        for p in &self.p.func(f).params {
            if let Some(d) = &p.default
                && self.cat.is_key_variable(&p.name)
                && let Some(taint) = ev.eval(d)
            {
                out.push(KeyFlow {
                    taint,
                    sink: p.span,
                    sink_fn: f,
                    kind: FlowKind::ParamDefault,
                    sink_kind: SinkKind::Named,
                });
            }
        }
        // A host name or pid is the same on every retry in this process: not a fresh key.
        out.retain(|k| k.taint.kind != SourceKind::Process);
        out
    }

    /// The fresh (random, time) or per-process value `e`, evaluated in `at`, carries.
    pub fn value_in(&self, at: FnRef, e: &Expr) -> Option<Taint> {
        let env = self.env_for(at);
        let mut ev = Ev::new(self, at, &env);
        ev.eval(e)
    }

    /// The project functions a call in `at` may run (see `callees`); method references are
    /// calls with unknown arity and give every function of that name on the receiver's type.
    pub fn call_targets(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
    ) -> Vec<FnRef> {
        if self.p.count_named(name) == 0 {
            return Vec::new();
        }
        self.call_targets_agree(at, receiver, name, args).0
    }

    /// [`Self::call_targets`], and whether all of them must agree for a conclusion: a call
    /// through an interface, whose implementations are all possible and only one runs.
    pub fn call_targets_agree(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        args: &[Arg],
    ) -> (Vec<FnRef>, bool) {
        if self.p.count_named(name) == 0 {
            return (Vec::new(), false);
        }
        let rt = receiver.and_then(|r| self.type_in(at, r));
        self.callees(at, receiver, rt.as_deref(), name, args)
    }

    /// The declared or constructed type of a receiver expression in `at`, simple name.
    pub fn type_in(&self, at: FnRef, r: &Expr) -> Option<String> {
        let env = self.types_for(at);
        let ev = Ev::new(self, at, &env);
        ev.receiver_type(r)
    }

    /// The declared and constructed types of the locals of `f`'s outermost function and
    /// everything written in it, without their values: what [`Ev::receiver_type`] reads of
    /// an environment (each binding's type is written at its declaration), for a fraction of
    /// the cost of [`Self::env_for`].
    fn types_for(&self, f: FnRef) -> Rc<Env> {
        let root = self.p.outermost(f);
        if let Some(e) = self.types.borrow().get(&root) {
            return e.clone();
        }
        let mut items: Vec<Scoped> = Vec::new();
        walk_scoped(self.p, root, &mut items);
        let mut env = Env::default();
        for item in &items {
            let (name, pos, end, ty) = match *item {
                Scoped::Param { f, param, end } => {
                    let p = &self.p.func(FnRef { unit: root.unit, f }).params[param];
                    let ty = p.ty.as_deref().map(|t| simple_name(t).to_string());
                    (&p.name, p.span.start, end, ty)
                }
                Scoped::Let { b, end, .. } => (&b.name, b.span.start, end, declared_type(b)),
                Scoped::Expr { .. } => continue,
            };
            if ty.is_some() {
                env.bind(
                    name,
                    pos,
                    end,
                    Val {
                        ty,
                        ..Val::default()
                    },
                );
            }
        }
        let env = Rc::new(env);
        self.types.borrow_mut().insert(root, env.clone());
        env
    }

    /// The environment of `f`: that of its outermost enclosing function, which also binds
    /// the parameters and locals of every lambda and local function inside it.
    fn env_for(&self, f: FnRef) -> Rc<Env> {
        let root = self.p.outermost(f);
        if let Some(e) = self.envs.borrow().get(&root) {
            return e.clone();
        }
        if let Some(e) = self.partial_envs.borrow().get(&root) {
            return e.clone();
        }
        let mut answer = None;
        let env = self.tracked((root, ENV), &mut answer, || {
            Some(Rc::new(self.build_env(root)))
        });
        match (env, answer) {
            (Some(env), Some(complete)) => {
                let table = if complete {
                    &self.envs
                } else {
                    &self.partial_envs
                };
                table.borrow_mut().insert(root, env.clone());
                env
            }
            // Asked for while it is being built (a call back into the function from one of
            // its own lambdas): nothing is known yet.
            _ => Rc::new(Env::default()),
        }
    }

    /// Runs `compute` for `key` with cycle tracking. Returns `None` without computing when
    /// `key` is already in progress or the depth limit is reached; `complete` says whether
    /// the result may be cached for good.
    fn tracked<T>(
        &self,
        key: (FnRef, u8),
        complete: &mut Option<bool>,
        compute: impl FnOnce() -> Option<T>,
    ) -> Option<T> {
        if let Some(&d) = self.in_progress.borrow().get(&key) {
            self.low.set(self.low.get().min(d));
            return None;
        }
        let depth = self.summary_depth.get();
        if depth >= MAX_SUMMARY_DEPTH {
            self.low.set(0);
            return None;
        }
        self.in_progress.borrow_mut().insert(key, depth);
        let saved_low = self.low.replace(usize::MAX);
        self.summary_depth.set(depth + 1);
        let t = compute();
        self.summary_depth.set(depth);
        self.in_progress.borrow_mut().remove(&key);
        let my_low = self.low.get();
        self.low.set(saved_low.min(my_low));
        *complete = Some(my_low >= depth);
        if depth == 0 {
            self.partial.borrow_mut().clear();
            self.partial_envs.borrow_mut().clear();
            self.low.set(usize::MAX);
        }
        t
    }

    fn build_env(&self, root: FnRef) -> Env {
        let mut env = Env::default();
        let mut items: Vec<Scoped> = Vec::new();
        walk_scoped(self.p, root, &mut items);
        // Source order binds chains of locals in one pass; the later passes pick up values
        // that reach a local from later in a loop body, and lambda locals used before the
        // lambda's body is reached.
        for _ in 0..3 {
            let mut changed = false;
            for item in &items {
                changed |= self.apply(&mut env, root.unit, item);
            }
            if !changed {
                break;
            }
        }
        env
    }

    /// Applies one binding-relevant item of a walk to `env`.
    fn apply(&self, env: &mut Env, unit: usize, item: &Scoped) -> bool {
        let at = |f: FnId| FnRef { unit, f };
        match *item {
            Scoped::Param { f, param, end } => {
                let func = self.p.func(at(f));
                let p = &func.params[param];
                env.bind(
                    &p.name,
                    p.span.start,
                    end,
                    Val {
                        ty: p.ty.as_deref().map(|t| simple_name(t).to_string()),
                        ..Val::default()
                    },
                )
            }
            Scoped::Let { f, b, end } => {
                let val = Ev::new(self, at(f), env).binding_val(b);
                env.bind(&b.name, b.span.start, end, val)
            }
            Scoped::Expr { f, e, end } => {
                let mut ev = Ev::new(self, at(f), env);
                match &e.kind {
                    ExprKind::Assign { target, op, value } => {
                        if let Some(name) = assigned_local(target) {
                            let mut val = Val {
                                taint: ev.eval(value),
                                ..Val::default()
                            };
                            if op == "=" {
                                val.str_const = str_lit(value);
                            }
                            env.assign(name, e.span.start, val)
                        } else if op == "let" {
                            // `if let Ok(v) = expr` (Rust front end)
                            let taint = ev.eval(value);
                            let mut changed = false;
                            for n in pattern_names(target) {
                                let val = Val {
                                    taint: taint.clone(),
                                    ..Val::default()
                                };
                                changed |= env.bind(n, e.span.start, end, val);
                            }
                            changed
                        } else {
                            false
                        }
                    }
                    // Rust `match expr { Ok(v) => .. }`: arm bindings hold the subject's value.
                    ExprKind::Match {
                        subject: Some(subject),
                        arms,
                    } if self.p.units[unit].lang == Lang::Rust => {
                        let Some(taint) = ev.eval(subject) else {
                            return false;
                        };
                        let mut changed = false;
                        for a in arms {
                            for p in &a.patterns {
                                for n in pattern_names(p) {
                                    let val = Val {
                                        taint: Some(taint.clone()),
                                        ..Val::default()
                                    };
                                    changed |= env.bind(n, p.span.start, a.body.span.end, val);
                                }
                            }
                        }
                        changed
                    }
                    // `fresh.let { key -> .. }`, `opt.map(k -> ..)`: the lambda's parameter is
                    // the receiver's value.
                    ExprKind::Call {
                        receiver: Some(r),
                        name,
                        args,
                    } if SCOPE_FNS.contains(&name.as_str()) => {
                        let Some(ExprKind::Lambda(id)) = args.first().map(|a| &a.value.kind) else {
                            return false;
                        };
                        let Some(taint) = ev.eval(r) else {
                            return false;
                        };
                        let lambda = self.p.func(at(*id));
                        let lang = self.p.units[unit].lang;
                        let (name, pos) = match lambda.params.first() {
                            Some(p) => (p.name.as_str(), p.span.start),
                            None if lang == Lang::Kotlin => ("it", lambda.span.start),
                            None => return false,
                        };
                        let val = Val {
                            taint: Some(taint),
                            ..Val::default()
                        };
                        env.bind(name, pos, lambda.span.end, val)
                    }
                    _ => false,
                }
            }
        }
    }

    /// The lambda a local of `at` (or of an enclosing function), a field or a file-level
    /// value is initialised with.
    fn local_lambda(&self, at: FnRef, name: &str) -> Option<FnRef> {
        self.p
            .lambda_bound_to(at.unit, Some(at), name, false)
            .map(|f| FnRef { unit: at.unit, f })
    }

    /// Does calling `f` return a fresh value? (memoised; cycles and deep chains give `None`)
    pub fn returns_fresh(&self, f: FnRef) -> Option<Taint> {
        self.summary(f, RETURNS, |flow, f| {
            let env = flow.env_for(f);
            Ev::new(flow, f, &env).value_of_fn()
        })
    }

    /// The project's [`crate::gate::SinkGate`].
    pub fn sink_gate(&self) -> &'p crate::gate::SinkGate {
        let (p, caches): (&'p Project, &'p Caches) = (self.p, self.caches);
        caches.sink_gate.get_or_init(|| {
            if caches.exhaustive {
                crate::gate::SinkGate::open()
            } else {
                crate::gate::SinkGate::compute(p, self.cat)
            }
        })
    }

    /// The project-wide answers this analysis shares with the others of its run.
    pub fn caches(&self) -> &'p Caches {
        self.caches
    }

    /// The project's constructions of a type of simple name `type_name` that hand a lambda to
    /// its constructor.
    pub fn constructions_of(
        &self,
        type_name: &str,
    ) -> std::sync::Arc<[crate::wiring::Construction]> {
        let table = &self.caches.constructions;
        if let Some(c) = table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(type_name)
        {
            return c.clone();
        }
        // Found outside the lock (two threads may both find them; the answers are the same).
        let found: std::sync::Arc<[crate::wiring::Construction]> =
            crate::wiring::constructions_of(self.p, type_name).into();
        table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(type_name.to_string())
            .or_insert(found)
            .clone()
    }

    /// Does calling `f` put a fresh value into a key sink (in `f` or in lambdas written in it)?
    pub fn sets_fresh_key(&self, f: FnRef) -> Option<Taint> {
        self.summary(f, SETS_KEY, |flow, f| {
            flow.p.with_nested(f).into_iter().find_map(|g| {
                flow.key_flows(g)
                    .into_iter()
                    .find(|k| k.kind != FlowKind::ParamDefault)
                    .map(|k| k.taint)
            })
        })
    }

    fn summary(
        &self,
        f: FnRef,
        which: u8,
        compute: impl FnOnce(&Self, FnRef) -> Option<Taint>,
    ) -> Option<Taint> {
        let table = if which == RETURNS {
            &self.returns
        } else {
            &self.sets_key
        };
        if let Some(t) = table.borrow().get(&f) {
            return t.clone();
        }
        if let Some(t) = self.partial.borrow().get(&(f, which)) {
            return t.clone();
        }
        if !self.p.func(f).has_body {
            return None;
        }
        let mut complete = None;
        let t = self.tracked((f, which), &mut complete, || Some(compute(self, f)));
        let t = t?;
        if complete == Some(true) {
            table.borrow_mut().insert(f, t.clone());
        } else if self.summary_depth.get() > 0 {
            self.partial.borrow_mut().insert((f, which), t.clone());
        }
        t
    }

    /// Project functions a call may mean, narrowed by its receiver.
    ///
    /// `recv_type` is the receiver's declared or constructed type when known; with it, only
    /// methods of that type (or of types implementing it) are candidates. Without it, a call
    /// on an arbitrary receiver resolves only to a unique, non-generic project function.
    ///
    /// The flag says every candidate must agree: the receiver is typed as an interface or base
    /// type whose implementations differ (an injected `KeyGenerator` may be the random one or
    /// the digest one), so only what they all do is known.
    fn callees(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        recv_type: Option<&str>,
        name: &str,
        args: &[Arg],
    ) -> (Vec<FnRef>, bool) {
        let arity = args.len();
        if self.p.count_named(name) == 0 {
            return (Vec::new(), false);
        }
        if is_self_receiver(receiver) {
            // Same type (and overrides in its subclasses: template methods), then same file.
            let my_owner = self.p.enclosing_type(at);
            let my_name = my_owner
                .and_then(|o| self.p.units[at.unit].facts().types[o].name.as_deref())
                .map(simple_name);
            if let Some(n) = my_name {
                let on_type = self.resolve_on_type(n, name, arity);
                if !on_type.is_empty() {
                    return (on_type.to_vec(), false);
                }
            }
            let same_file = self.p.resolve_in_unit(at.unit, name, arity);
            if !same_file.is_empty() {
                return (same_file, false);
            }
            return (self.unique(at, name, arity), false);
        }
        let path_type = receiver
            .and_then(|r| r.path_text())
            .map(|p| simple_name(&p).to_string())
            .filter(|t| t.starts_with(|c: char| c.is_uppercase()));
        // A call on a builder chain or other expression of unknown type is a library call,
        // unless the project declares a unique extension function of that name.
        if recv_type.is_none()
            && path_type.is_none()
            && receiver.is_some_and(|r| r.path_text().is_none())
        {
            let ext: Vec<FnRef> = self
                .unique(at, name, arity)
                .into_iter()
                .filter(|r| {
                    self.p
                        .func(*r)
                        .modifiers
                        .iter()
                        .any(|m| m.starts_with("receiver:"))
                })
                .collect();
            return (ext, false);
        }
        if let Some(t) = path_type.as_deref().or(recv_type) {
            let (fns, all_must_agree) = self.typed_callees(t, name, arity);
            return (fns.to_vec(), all_must_agree);
        }
        // Rust `settlement::run(..)`, `crate::jobs::sweep(..)`: the function of that module
        // (even when the name is common: `run`, `new`).
        if self.p.units[at.unit].lang == Lang::Rust
            && let Some(module) = receiver.and_then(|r| r.path_text())
            && let Some(f) = self.p.in_module(at.unit, &module, name)
            && self.p.arity_ok(f, arity)
        {
            return (vec![f], false);
        }
        (self.unique(at, name, arity), false)
    }

    /// Callees of `name` on a receiver of type `t`: the type's own implementation when it has
    /// one, else every implementation at or below it, which must then agree. Remembered: on a
    /// widely implemented type (`Runnable.run`) this walks every implementation, and each call
    /// on that type asks again.
    fn typed_callees(&self, t: &str, name: &str, arity: usize) -> (Targets, bool) {
        let key: OnType = (t.into(), name.into(), arity);
        if let Some(v) = self.typed.borrow().get(&key) {
            return v.clone();
        }
        let all = self.resolve_on_type(t, name, arity);
        // The type's own implementation, when it has one, is what runs.
        let own: Targets = all
            .iter()
            .copied()
            .filter(|r| {
                let (has_body, owner) = self.p.body_and_owner(*r);
                has_body
                    && owner
                        .and_then(|o| self.p.type_name(r.unit, o))
                        .map(simple_name)
                        == Some(t)
            })
            .collect();
        let v = if own.is_empty() {
            (all, true)
        } else {
            (own, false)
        };
        self.typed.borrow_mut().insert(key, v.clone());
        v
    }

    /// A summary of what calling `name` does, over its possible callees: any of them for a
    /// call on this type or a unique function, all of them for a call through an interface.
    fn callee_summary(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        recv_type: Option<&str>,
        name: &str,
        args: &[Arg],
        summary: impl Fn(&Self, FnRef) -> Option<Taint>,
    ) -> Option<Taint> {
        let (fns, all_must_agree) = self.callees(at, receiver, recv_type, name, args);
        let mut with_body = fns
            .into_iter()
            .filter(|r| *r != at && self.p.func(*r).has_body);
        if all_must_agree {
            let mut first = None;
            for r in with_body {
                let t = summary(self, r)?;
                first.get_or_insert(t);
            }
            first
        } else {
            with_body.find_map(|r| summary(self, r))
        }
    }

    /// The one project function called `name`, when there is exactly one and the name is not
    /// a generic one.
    fn unique(&self, at: FnRef, name: &str, arity: usize) -> Vec<FnRef> {
        if GENERIC_NAMES.contains(&name) {
            return Vec::new();
        }
        match self.p.count_named(name) {
            0 => Vec::new(),
            1 => self.p.resolve(name, arity).collect(),
            _ => self
                .p
                .declared_for(at.unit, name)
                .filter(|r| self.p.arity_ok(*r, arity))
                .into_iter()
                .collect(),
        }
    }
}

/// Methods that call a function value: `Supplier.get`, `Function.apply`, `Callable.call`,
/// Kotlin's `invoke` (what `keyGen()` on a function value lowers to).
const FUNCTION_VALUE_CALLS: &[&str] = &["get", "apply", "call", "invoke", "getAsLong"];

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
        ExprKind::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

/// One item of a [`walk_scoped`] walk: something that may bind a local, with the function
/// it is in and the end of its scope.
enum Scoped<'a> {
    Param { f: FnId, param: usize, end: usize },
    Let { f: FnId, b: &'a Binding, end: usize },
    Expr { f: FnId, e: &'a Expr, end: usize },
}

/// Walks `root` and every lambda, local function and anonymous-class method written in it,
/// in source order, listing parameters, bindings and expressions with their scope ends.
/// Iterative.
fn walk_scoped<'a>(p: &'a Project, root: FnRef, out: &mut Vec<Scoped<'a>>) {
    enum W<'a> {
        F(FnId),
        S(FnId, &'a Stmt, usize),
        E(FnId, &'a Expr, usize),
    }
    let facts = &p.units[root.unit].facts();
    let mut stack = vec![W::F(root.f)];
    let mut seen_fns: HashSet<FnId> = HashSet::default();
    while let Some(w) = stack.pop() {
        match w {
            W::F(f) => {
                if !seen_fns.insert(f) {
                    continue;
                }
                let Some(func) = facts.functions.get(f) else {
                    continue;
                };
                let end = func.span.end;
                for param in 0..func.params.len() {
                    out.push(Scoped::Param { f, param, end });
                }
                stack.extend(func.body.iter().rev().map(|s| W::S(f, s, end)));
            }
            W::S(f, Stmt::Let(b), end) => {
                out.push(Scoped::Let { f, b, end });
                if let Some(init) = &b.init {
                    stack.push(W::E(f, init, end));
                }
            }
            W::S(f, Stmt::Expr(e), end) => stack.push(W::E(f, e, end)),
            W::S(_, Stmt::LocalFn(id), _) => stack.push(W::F(*id)),
            W::S(_, Stmt::LocalType(t), _) => {
                if let Some(ty) = facts.types.get(*t) {
                    stack.extend(ty.methods.iter().rev().map(|&m| W::F(m)));
                }
            }
            W::E(f, e, end) => {
                out.push(Scoped::Expr { f, e, end });
                let start = stack.len();
                match &e.kind {
                    ExprKind::Block(stmts) => {
                        stack.extend(stmts.iter().map(|s| W::S(f, s, e.span.end)));
                    }
                    ExprKind::Lambda(id) => stack.push(W::F(*id)),
                    ExprKind::New { body: Some(t), .. } | ExprKind::Object(t) => {
                        e.for_each_child(|c| stack.push(W::E(f, c, end)));
                        if let Some(ty) = facts.types.get(*t) {
                            stack.extend(ty.methods.iter().map(|&m| W::F(m)));
                        }
                    }
                    ExprKind::Try { resources, .. } => {
                        for r in resources {
                            out.push(Scoped::Let {
                                f,
                                b: r,
                                end: e.span.end,
                            });
                        }
                        e.for_each_child(|c| stack.push(W::E(f, c, end)));
                    }
                    _ => e.for_each_child(|c| stack.push(W::E(f, c, end))),
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
    /// When set, the plain names put into a key sink are collected here
    /// ([`Flow::key_param_of`]).
    sink_names: Option<Vec<String>>,
}

impl<'f, 'p> Ev<'f, 'p> {
    fn new(flow: &'f Flow<'p>, at: FnRef, env: &'f Env) -> Self {
        Ev {
            flow,
            at,
            env,
            depth: 0,
            sink_names: None,
        }
    }

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

    fn binding_val(&mut self, b: &Binding) -> Val {
        let init = b.init.as_ref();
        Val {
            taint: init.and_then(|i| self.eval(i)),
            str_const: init.and_then(str_lit),
            ty: declared_type(b),
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
        // A fresh value wins over a per-process one (`host + "-" + UUID.randomUUID()`).
        let mut process = None;
        for e in es {
            match self.eval(e) {
                Some(t) if t.kind == SourceKind::Process => {
                    process.get_or_insert(t);
                }
                Some(t) => return Some(t),
                None => {}
            }
        }
        process
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
                self.property_getter(e, name)
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
                if self.is_date_formatter_ctor(t) || is_error_type(t) {
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

    /// The value of a call expression `e` to `callee`, whose summary says it makes the fresh
    /// value `inner`: the call is where it appears here, the deepest helper source is where it
    /// is made.
    fn through_call(&self, e: &Expr, callee: &str, inner: Taint) -> Taint {
        let (at, span, what) = match &inner.via {
            Some(v) => (v.at, v.span, v.what.clone()),
            None => (inner.at, inner.span, inner.what.clone()),
        };
        Taint {
            span: e.span,
            at: self.at,
            kind: inner.kind,
            what: self.text(e.span),
            via: Some(Rc::new(Via {
                callee: callee.to_string(),
                at,
                span,
                what,
            })),
        }
    }

    /// A method reference used as a supplier (`orElseGet(Keys::fresh)`): fresh if the referenced
    /// project function returns a fresh value when called with no arguments.
    fn method_ref_value(&mut self, e: &Expr, receiver: Option<&Expr>, name: &str) -> Option<Taint> {
        let rt = receiver.and_then(|r| self.receiver_type(r));
        let inner =
            self.flow
                .callee_summary(self.at, receiver, rt.as_deref(), name, &[], |f, c| {
                    f.returns_fresh(c)
                })?;
        Some(self.through_call(e, name, inner))
    }

    /// A Kotlin property with a getter (`val Request.keyOrNew: String get() = ..`): reading
    /// it runs the getter.
    fn property_getter(&mut self, e: &Expr, name: &str) -> Option<Taint> {
        let getter = format!("<get-{name}>");
        if self.flow.p.count_named(&getter) == 0 {
            return None;
        }
        let inner = self
            .flow
            .callee_summary(self.at, None, None, &getter, &[], |f, c| f.returns_fresh(c))?;
        Some(self.through_call(e, name, inner))
    }

    /// Calling a function value that this object keeps in a field, handed to its constructor
    /// where the object is built (`crate::wiring`): `(self.key_gen)()` in Rust, `keyGen.get()`
    /// or `this.keyGen.apply(..)` in Java, `keyGen()` in Kotlin. Fresh if a lambda handed
    /// over returns a fresh value.
    fn wired_field_value(
        &mut self,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &str,
    ) -> Option<Taint> {
        let (field, pos) = match receiver.map(|r| (&r.kind, r.span.start)) {
            Some((
                ExprKind::Field {
                    receiver: r,
                    name: f,
                },
                pos,
            )) if matches!(&r.kind, ExprKind::Name(s) if s == "self" || s == "this")
                && (name.is_empty() || FUNCTION_VALUE_CALLS.contains(&name)) =>
            {
                (f.as_str(), pos)
            }
            Some((ExprKind::Name(f), pos)) if FUNCTION_VALUE_CALLS.contains(&name) => {
                (f.as_str(), pos)
            }
            // Kotlin `newKey()` on a property of function type.
            None if self.lang() == Lang::Kotlin => (name, e.span.start),
            _ => return None,
        };
        let p = self.flow.p;
        let owner_id = p.enclosing_type(self.at)?;
        let owner_decl = &p.units[self.at.unit].facts().types[owner_id];
        let owner = simple_name(owner_decl.name.as_deref()?);
        // Kotlin `newKey()` where the class also declares a function `newKey`: the function.
        if receiver.is_none()
            && owner_decl
                .methods
                .iter()
                .any(|m| p.units[self.at.unit].facts().functions[*m].name.as_deref() == Some(name))
        {
            return None;
        }
        // A field of this type (in Rust, declared on the struct, not on the impl), not a local.
        if self.env.get(field, pos).is_some() || !p.type_has_field(owner, field) {
            return None;
        }
        crate::wiring::field_lambdas(
            p,
            &|t| self.flow.constructions_of(t),
            self.at.unit,
            owner,
            field,
        )
        .into_iter()
        .find_map(|l| self.flow.returns_fresh(l))
    }

    /// The value a lambda written in this function returns, evaluated in the same
    /// environment (it shares the enclosing function's locals).
    fn lambda_value(&mut self, id: FnId) -> Option<Taint> {
        let saved = self.at;
        self.at = FnRef {
            unit: saved.unit,
            f: id,
        };
        let t = self.value_of_fn();
        self.at = saved;
        t
    }

    /// The value the current function (`self.at`) returns: its `return`s, or the last
    /// expression of its body.
    fn value_of_fn(&mut self) -> Option<Taint> {
        let func = self.flow.p.func(self.at);
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
                found = self.eval(x);
            }
        });
        if found.is_some() {
            return found;
        }
        match func.body.last() {
            Some(Stmt::Expr(last)) if !matches!(last.kind, ExprKind::Return(_)) => self.eval(last),
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
        let rt = receiver.and_then(|r| self.receiver_type(r));
        if let Some(inner) =
            self.flow
                .callee_summary(self.at, receiver, rt.as_deref(), name, args, |f, c| {
                    f.returns_fresh(c)
                })
        {
            return Some(self.through_call(e, name, inner));
        }
        if let Some(inner) = self.wired_field_value(e, receiver, name) {
            return Some(self.through_call(e, name, inner));
        }
        // Setting a header or attribute returns the builder (or the previous value), not
        // the value set; sinks look at the arguments themselves.
        if is_header_setter(name) && args.len() >= 2 {
            return receiver.and_then(|r| self.eval(r));
        }
        // Reading the incoming key (`request.header("Idempotency-Key")`) gives the caller's key.
        if args.len() == 1 && is_header_getter(name) && self.is_key_name_expr(&args[0].value) {
            return None;
        }
        // `cache.get(orderId, id -> UUID.randomUUID())` (Caffeine, Guava, Spring Cache): a
        // value made once per id.
        if name == "get"
            && args.len() == 2
            && matches!(
                args[1].value.kind,
                ExprKind::Lambda(_) | ExprKind::MethodRef { .. }
            )
        {
            return None;
        }
        // `opt.orElseThrow(() -> new IllegalStateException(..))`: the lambda makes an error,
        // not the value.
        if is_error_path(name) {
            return receiver.and_then(|r| self.eval(r));
        }
        if receiver.is_none() && is_error_type(name) {
            return None;
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
        // `System.getenv("HOSTNAME")`, `std::env::var("POD_NAME")`.
        if cat.coord.locks.env_calls.iter().any(|c| c == name)
            && let Some(v) = args
                .first()
                .and_then(|a| self.flow.p.const_str(&a.value, cat))
            && cat.coord.locks.host_env_vars.contains(&v)
        {
            return Some(self.source(e, SourceKind::Process));
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
}
