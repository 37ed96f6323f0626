//! Does a key leave the service? A fresh value that reaches an idempotency-key sink is the key
//! of an outbound request only if it, or an object or collection carrying it, reaches
//! something that can send it. Every use of the value (and of what carries it) is followed,
//! into project helpers too, and judged from facts only:
//!
//! - [`Verdict::Local`]: every use keeps it inside the service (stored through a repository,
//!   compared with an incoming key, published as an event, logged, thrown: `sinks.toml`
//!   `[local_uses]`), or there is none.
//! - [`Verdict::Out`]: a use may send it: a header or field call naming a key, an argument to
//!   a call of a library (an HTTP client, an SDK) or of a project interface, anything the walk
//!   cannot classify.
//! - [`Verdict::Unknown`]: no use was seen to send it, but some leave the walk's reach (it is
//!   returned, stored in a field of an object made elsewhere, set through an accessor the
//!   project does not declare, handed further than [`MAX_DEPTH`] helpers down).
//!
//! [`goes_out`] joins that with what the sink itself says: a header-shaped sink is on a
//! request unless every use stays local; a sink only *named* like a key (`String
//! idempotencyKey = ..`, `entity.setIdempotencyKey(..)`) is a request's key only when a use
//! was seen going out. A server that stores the keys of incoming requests, an outbox event id
//! and an audit row are not outbound keys (issue 15 item 4).

use crate::catalog::Catalog;
use crate::facts::{Arg, Binding, Expr, ExprKind, FnKind, Lang, Stmt, simple_name};
use crate::flow::{Flow, FlowKind, KeyFlow, SinkKind};
use crate::hash::HashMap;
use crate::project::{FnRef, Project};
use std::cell::{Cell, RefCell};

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
const MAX_DEPTH: usize = 4;

/// Where a key's uses take it, worst first in the order `Local < Unknown < Out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Local,
    Unknown,
    Out,
}

/// Where a walk starts: the sink of a key flow, a parameter of a helper the key is handed to,
/// or a call of a function that returns the key (or an object carrying it).
enum Seed<'s> {
    Sink(crate::facts::Span),
    Param(&'s str),
    Call(crate::facts::Span),
}

/// Call sites a returned key is followed to, at most; past that it counts as going out.
const MAX_CALLERS: usize = 16;

/// The memo's parameter name for "what callers do with the function's value".
const RETURNED: &str = "\0return";

/// Helpers' parameters already judged: (function, parameter) → verdict.
type Memo = HashMap<(FnRef, String), Verdict>;

/// Answers [`Judge::goes_out`] for the key flows of one file, remembering what each helper
/// that sets a key answered.
pub struct Judge<'a, 'p> {
    p: &'p Project,
    flow: &'a Flow<'p>,
    cat: &'p Catalog,
    helpers: RefCell<HashMap<FnRef, bool>>,
    /// Answers of [`Self::origin_out`] by where the value is made.
    origins: RefCell<HashMap<(FnRef, crate::facts::Span), Option<bool>>>,
    /// Key flows of the functions asked about.
    flows: RefCell<HashMap<FnRef, std::rc::Rc<Vec<KeyFlow>>>>,
    work: Cell<usize>,
}

/// Calls of a key's maker looked at, at most, to find its callers.
const MAX_SITES: usize = 256;

/// Helpers asked about per [`Judge`], at most; past that a helper's key counts as going out.
const MAX_HELPERS: usize = 64;

impl<'a, 'p> Judge<'a, 'p> {
    pub fn new(p: &'p Project, flow: &'a Flow<'p>, cat: &'p Catalog) -> Self {
        Judge {
            p,
            flow,
            cat,
            helpers: RefCell::default(),
            origins: RefCell::default(),
            flows: RefCell::default(),
            work: Cell::new(0),
        }
    }

    /// Is the key of `fl` the key of an outbound request? See the module's documentation.
    /// A helper that sets a fresh key itself is judged where it sets it.
    pub fn goes_out(&self, fl: &KeyFlow) -> bool {
        if fl.kind == FlowKind::HelperSetsKey {
            if let Some(v) = self.origin_out(fl) {
                return v;
            }
            let mut stack = Vec::new();
            let mut open = false;
            return self.helper_call_out(fl, &mut stack, &mut open);
        }
        verdict_ok(self.p, self.flow, self.cat, fl)
    }

    /// A helper's key judged where the value it sets is made: the flows of the function that
    /// makes it, and of its callers, that put a value from that very expression into a sink
    /// (a key generator's callers store its value, or send it). `None` when there are none to
    /// ask, or too many callers.
    fn origin_out(&self, fl: &KeyFlow) -> Option<bool> {
        let v = fl.taint.via.as_ref()?;
        let key = (v.at, v.span);
        if let Some(a) = self.origins.borrow().get(&key) {
            return *a;
        }
        let a = self.origin_out_of(v);
        self.origins.borrow_mut().insert(key, a);
        a
    }

    fn key_flows(&self, g: FnRef) -> std::rc::Rc<Vec<KeyFlow>> {
        if let Some(v) = self.flows.borrow().get(&g) {
            return v.clone();
        }
        let v = std::rc::Rc::new(self.flow.key_flows(g));
        self.flows.borrow_mut().insert(g, v.clone());
        v
    }

    fn origin_out_of(&self, v: &crate::flow::Via) -> Option<bool> {
        let p = self.p;
        let maker = p.outermost(v.at);
        let mut roots = vec![maker];
        if let Some(name) = p.func(maker).name.as_deref() {
            let sites = p.calls_named(name);
            if sites.len() > MAX_SITES {
                return None;
            }
            let production = !p.units[maker.unit].is_test;
            for &(caller, span) in sites.iter() {
                if production && p.units[caller.unit].is_test {
                    continue;
                }
                let r = p.outermost(caller);
                if calls(p, self.flow, caller, span, maker) && !roots.contains(&r) {
                    if roots.len() > MAX_CALLERS {
                        return None;
                    }
                    roots.push(r);
                }
            }
        }
        let from_origin = |h: &KeyFlow| {
            h.kind == FlowKind::Direct
                && ((h.taint.at == v.at && h.taint.span == v.span)
                    || h.taint
                        .via
                        .as_ref()
                        .is_some_and(|w| w.at == v.at && w.span == v.span))
        };
        let mut found = false;
        for r in roots {
            for g in p.with_nested(r) {
                for h in self.key_flows(g).iter() {
                    if from_origin(h) {
                        found = true;
                        if verdict_ok(p, self.flow, self.cat, h) {
                            return Some(true);
                        }
                    }
                }
            }
        }
        found.then_some(false)
    }

    /// A call of a helper that sets a fresh key (the helper, or one it calls, puts it into a
    /// sink): does a key it sets go out? True when the call cannot be resolved.
    fn helper_call_out(&self, fl: &KeyFlow, stack: &mut Vec<FnRef>, open: &mut bool) -> bool {
        let p = self.p;
        let Some(ExprKind::Call {
            receiver,
            name,
            args,
        }) = crate::project::find_call(p.func(fl.sink_fn), fl.sink).map(|e| &e.kind)
        else {
            return true;
        };
        let targets: Vec<FnRef> = self
            .flow
            .call_targets(fl.sink_fn, receiver.as_deref(), name, args)
            .into_iter()
            .filter(|t| p.func(*t).has_body)
            .collect();
        targets.is_empty() || targets.into_iter().any(|t| self.helper_out(t, stack, open))
    }

    /// Does a key that `t` (or a lambda in it, or a helper it calls) puts into a sink go out?
    /// True when none of its flows can be found. A helper already on `stack` (a call cycle)
    /// answers no for now and sets `open`: answers that depended on it are not remembered.
    fn helper_out(&self, t: FnRef, stack: &mut Vec<FnRef>, open: &mut bool) -> bool {
        if let Some(v) = self.helpers.borrow().get(&t) {
            return *v;
        }
        if stack.contains(&t) {
            *open = true;
            return false;
        }
        if self.work.get() >= MAX_HELPERS {
            return true;
        }
        self.work.set(self.work.get() + 1);
        stack.push(t);
        let mut mine = false;
        let mut found = false;
        let mut out = false;
        'all: for g in self.p.with_nested(t) {
            for h in self.key_flows(g).iter() {
                if h.kind == FlowKind::ParamDefault {
                    continue;
                }
                found = true;
                let o = if h.kind == FlowKind::HelperSetsKey {
                    self.helper_call_out(h, stack, &mut mine)
                } else {
                    verdict_ok(self.p, self.flow, self.cat, h)
                };
                if o {
                    out = true;
                    break 'all;
                }
            }
        }
        stack.pop();
        let v = out || !found;
        if v || !mine {
            self.helpers.borrow_mut().insert(t, v);
        }
        *open |= mine;
        v
    }
}

fn verdict_ok(p: &Project, flow: &Flow, cat: &Catalog, fl: &KeyFlow) -> bool {
    let v = verdict(p, flow, cat, fl);
    match fl.sink_kind {
        SinkKind::Request => v != Verdict::Local,
        SinkKind::Named => v == Verdict::Out,
    }
}

/// Where every use of the key of `fl` (and of what carries it) takes it.
pub fn verdict(p: &Project, flow: &Flow, cat: &Catalog, fl: &KeyFlow) -> Verdict {
    let mut memo = Memo::default();
    verdict_from(
        p,
        flow,
        cat,
        p.outermost(fl.sink_fn),
        Seed::Sink(fl.sink),
        0,
        &mut memo,
    )
}

fn verdict_from(
    p: &Project,
    flow: &Flow,
    cat: &Catalog,
    root: FnRef,
    seed: Seed,
    depth: usize,
    memo: &mut Memo,
) -> Verdict {
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
        all: &all,
        root,
        carriers: Vec::new(),
        depth,
        memo,
    };
    let mut worst = Verdict::Local;
    // The sink: a local's name (`String idempotencyKey = ..`), or the value handed to a call,
    // an assignment or a constructor; or a helper's parameter.
    let start = match seed {
        Seed::Param(name) => {
            w.carriers.push(name.to_string());
            None
        }
        // A call of the function (the caller checked it may run it).
        Seed::Call(span) => {
            let call = all.iter().find(|(_, e)| {
                e.span == span
                    && matches!(e.kind, ExprKind::Call { .. } | ExprKind::MethodRef { .. })
            });
            match call {
                Some(&(g, e)) if matches!(e.kind, ExprKind::Call { .. }) => Some((g, e)),
                // `this::newCommand` handed on: whoever calls it gets the key.
                _ => return Verdict::Out,
            }
        }
        Seed::Sink(sink) => {
            if let Some(b) = lets.iter().find(|b| b.name_span == sink) {
                w.carriers.push(b.name.clone());
                None
            } else {
                match all.iter().find(|(_, e)| e.span == sink) {
                    Some(x) => Some(*x),
                    None => return Verdict::Out,
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
        let v = match target_of {
            Some(_) => w.assigned(g, e),
            None => w.up(g, e),
        };
        if v == Verdict::Out {
            return v;
        }
        worst = v;
    }
    // Every use of every carrier.
    let mut done = 0;
    let mut uses = 0;
    while done < w.carriers.len() {
        if w.carriers.len() > MAX_CARRIERS {
            return Verdict::Out;
        }
        let c = w.carriers[done].clone();
        done += 1;
        for &(g, e) in &all {
            if matches!(&e.kind, ExprKind::Name(n) if *n == c) {
                uses += 1;
                if uses > MAX_USES {
                    return Verdict::Out;
                }
                worst = worst.max(w.up(g, e));
                if worst == Verdict::Out {
                    return worst;
                }
            }
        }
    }
    worst
}

/// Is the call (or method reference) at `span` in `caller` one that may run `callee`?
fn calls(p: &Project, flow: &Flow, caller: FnRef, span: crate::facts::Span, callee: FnRef) -> bool {
    match crate::project::find_call(p.func(caller), span).map(|e| &e.kind) {
        Some(ExprKind::Call {
            receiver,
            name,
            args,
        }) => flow
            .call_targets(caller, receiver.as_deref(), name, args)
            .contains(&callee),
        _ => true,
    }
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
    /// The function the walk is in and everything nested in it, and their expressions.
    fns: &'a [FnRef],
    all: &'a [(FnRef, &'p Expr)],
    root: FnRef,
    carriers: Vec<String>,
    depth: usize,
    memo: &'a mut Memo,
}

impl<'p> Walk<'_, 'p> {
    /// The key handed to a project function as argument `e` of `call`: the worst of what
    /// every function the call may run does with that parameter; `None` when the call runs no
    /// project function with a body.
    fn helper_verdict(&mut self, g: FnRef, call: &'p Expr, e: &'p Expr) -> Option<Verdict> {
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
        let mut worst = Verdict::Local;
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
                return Some(Verdict::Out);
            };
            if self.depth >= MAX_DEPTH {
                // Not seen going out, not seen staying.
                worst = worst.max(Verdict::Unknown);
                continue;
            }
            let key = (t, param.name.clone());
            let v = match self.memo.get(&key) {
                Some(v) => *v,
                None => {
                    // A cycle back here is neither evidence of staying local nor of going out.
                    self.memo.insert(key.clone(), Verdict::Unknown);
                    let v = verdict_from(
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
            worst = worst.max(v);
            if worst == Verdict::Out {
                break;
            }
        }
        Some(worst)
    }

    /// A value returned from `g`. From a lambda, it is the lambda's value where the lambda is
    /// written (`Err` with that expression, to follow on). From the function the walk is in,
    /// it goes where its callers take it: each call site is followed, up to [`MAX_CALLERS`]
    /// of them and [`MAX_DEPTH`] functions away; with none, it is unknown.
    fn returned(&mut self, g: FnRef) -> Result<Verdict, &'p Expr> {
        if g != self.root {
            return match self.lambda_expr(g) {
                Some((_, x)) => Err(x),
                // A local function's value.
                None => Ok(Verdict::Unknown),
            };
        }
        let Some(name) = self.p.func(g).name.as_deref() else {
            return Ok(Verdict::Unknown);
        };
        if self.depth >= MAX_DEPTH {
            return Ok(Verdict::Unknown);
        }
        let key = (g, RETURNED.to_string());
        if let Some(v) = self.memo.get(&key) {
            return Ok(*v);
        }
        // Test code calls production code to check what it returns, and hands it to assertion
        // and mocking libraries: that is not where a production key goes.
        let production = !self.p.units[g.unit].is_test;
        let sites: Vec<(FnRef, crate::facts::Span)> = self
            .p
            .calls_named(name)
            .iter()
            .copied()
            .filter(|&(caller, span)| {
                !(production && self.p.units[caller.unit].is_test)
                    && calls(self.p, self.flow, caller, span, g)
            })
            .take(MAX_CALLERS + 1)
            .collect();
        if sites.len() > MAX_CALLERS {
            return Ok(Verdict::Out);
        }
        if sites.is_empty() {
            return Ok(Verdict::Unknown);
        }
        self.memo.insert(key.clone(), Verdict::Unknown);
        let mut worst = Verdict::Local;
        for (caller, span) in sites {
            let v = verdict_from(
                self.p,
                self.flow,
                self.cat,
                self.p.outermost(caller),
                Seed::Call(span),
                self.depth + 1,
                self.memo,
            );
            worst = worst.max(v);
            if worst == Verdict::Out {
                break;
            }
        }
        self.memo.insert(key, worst);
        Ok(worst)
    }

    fn carry(&mut self, name: &str) {
        if !self.carriers.iter().any(|c| c == name) {
            self.carriers.push(name.to_string());
        }
    }

    /// A value assigned to `target`: local when that is a local this function owns (which
    /// then carries it); out when it is a field of a library object (`request.idempotencyKey
    /// = key` on an SDK's request); unknown for a field of this object or of a project object
    /// made elsewhere.
    fn assigned(&mut self, g: FnRef, target: &'p Expr) -> Verdict {
        let n = match &target.kind {
            // A local (not a field): it now holds the value.
            ExprKind::Name(n) if self.is_local(n) => n,
            // `event.idempotencyKey = key` on an object this function made.
            ExprKind::Field { receiver, .. } => match &receiver.kind {
                ExprKind::Name(n) if self.owns(n) => n,
                ExprKind::Name(n) if n == "this" || self.is_lambda_param(g, n) => {
                    return self.scope_object(g, n);
                }
                _ if self.library_receiver(g, receiver) => return Verdict::Out,
                _ => return Verdict::Unknown,
            },
            ExprKind::Name(_) => return self.scope_object(g, "this"),
            _ => return Verdict::Out,
        };
        let n = n.clone();
        self.carry(&n);
        Verdict::Local
    }

    /// `it` or a parameter of the lambda `g`.
    fn is_lambda_param(&self, g: FnRef, n: &str) -> bool {
        let func = self.p.func(g);
        func.kind == FnKind::Lambda && (n == "it" || func.params.iter().any(|q| q.name == n))
    }

    /// A key stored in a property of the object a Kotlin scope function hands its lambda
    /// (`X(..).apply { idempotencyKey = k }`, `X(..).also { it.idempotencyKey = k }`): the
    /// scope function's value is that object, and it carries the key on. Any other property
    /// assignment is of an object made elsewhere: unknown.
    fn scope_object(&mut self, g: FnRef, receiver: &str) -> Verdict {
        let wanted = if receiver == "this" { "apply" } else { "also" };
        if g == self.root || self.p.units[g.unit].lang != Lang::Kotlin {
            return Verdict::Unknown;
        }
        let Some((outer, lambda)) = self.lambda_expr(g) else {
            return Verdict::Unknown;
        };
        match self.parents.get(&id(lambda)) {
            Some(Parent::Expr(call)) if matches!(&call.kind, ExprKind::Call { name, receiver: Some(_), .. } if name == wanted) => {
                self.up(outer, call)
            }
            _ => Verdict::Unknown,
        }
    }

    /// Where the lambda `g` is written: the function holding it and its expression.
    fn lambda_expr(&self, g: FnRef) -> Option<(FnRef, &'p Expr)> {
        self.all
            .iter()
            .find(|(_, x)| matches!(x.kind, ExprKind::Lambda(id) if id == g.f))
            .copied()
    }

    /// A receiver whose type is known and is not a project type: a library's object.
    fn library_receiver(&self, g: FnRef, r: &Expr) -> bool {
        self.flow
            .type_in(g, r)
            .is_some_and(|t| self.p.types_named(simple_name(&t)).is_empty())
    }

    /// A call the walk does not follow, with the key as an argument: a call of a library (an
    /// HTTP client, an SDK, a free function from a crate) or of a project interface may send
    /// it; an accessor the project's type does not declare (Lombok, a Kotlin property, a
    /// generated builder) only stores it in that object.
    fn unfollowed_call(&self, g: FnRef, receiver: Option<&Expr>, name: &str) -> Verdict {
        let project_type = |r: &Expr| {
            let t = self.flow.type_in(g, r).or_else(|| match &r.kind {
                ExprKind::Name(n) if matches!(n.as_str(), "this" | "self") => None,
                _ => r.path_text(),
            });
            t.is_some_and(|t| !self.p.types_named(simple_name(&t)).is_empty())
        };
        match receiver {
            Some(r) if self.p.count_named(name) == 0 && project_type(r) => Verdict::Unknown,
            _ => Verdict::Out,
        }
    }

    /// A header or field call naming a key (`headers.put("Idempotency-Key", v)`,
    /// `request.header(IDEMPOTENCY_KEY, v)`): what it builds is a request.
    fn names_key(&self, args: &[Arg]) -> bool {
        args.iter().any(|a| match &a.value.kind {
            ExprKind::Str(s) => self.cat.is_key_name_literal(s),
            _ => self
                .p
                .const_str(&a.value, self.cat)
                .is_some_and(|s| self.cat.is_key_name(&s)),
        })
    }

    /// A call given a SQL statement as a literal, or a chain started by one, or a call on a local
    /// holding one (JDBC `ps.setString(1, key)` on `ps = conn.prepareStatement("INSERT ..")`): a
    /// call of our own database (`sinks.toml` `sql_statements`).
    fn talks_sql(&self, g: FnRef, call: &'p Expr) -> bool {
        let words = &self.cat.sinks.local_uses.sql_statements;
        let is_sql = |a: &Arg| match &a.value.kind {
            ExprKind::Str(t) => {
                let first = t.split_whitespace().next().unwrap_or("");
                words.iter().any(|w| first.eq_ignore_ascii_case(w))
                    && t.trim().contains(char::is_whitespace)
            }
            _ => false,
        };
        let mut e = call;
        let mut followed = false;
        loop {
            let ExprKind::Call { receiver, args, .. } = &e.kind else {
                return false;
            };
            if args.iter().any(is_sql) {
                return true;
            }
            match receiver.as_deref() {
                Some(r) if matches!(r.kind, ExprKind::Call { .. }) => e = r,
                Some(Expr {
                    kind: ExprKind::Name(n),
                    ..
                }) if !followed => {
                    followed = true;
                    let binding =
                        crate::coord::syntax::local_binding(self.p, g, n, call.span.start);
                    match binding.and_then(|b| b.init.as_ref()) {
                        Some(i) if matches!(i.kind, ExprKind::Call { .. }) => e = i,
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
    }

    /// Follows the value of `e` up to where it is used.
    fn up(&mut self, g: FnRef, mut e: &'p Expr) -> Verdict {
        use Verdict::{Local, Out};
        let local = &self.cat.sinks.local_uses;
        loop {
            let Some(parent) = self.parents.get(&id(e)).copied() else {
                return Out;
            };
            let x = match parent {
                Parent::Let(b) => {
                    self.carry(&b.name);
                    return Local;
                }
                // A statement's value is dropped; a Kotlin or Rust body's last value is
                // returned.
                Parent::Stmt { last: false } => return Local,
                Parent::Stmt { last: true } => match self.returned(g) {
                    Ok(v) => return v,
                    Err(lambda) => {
                        e = lambda;
                        continue;
                    }
                },
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
                        return Out;
                    }
                    if !is_receiver && self.talks_sql(g, x) {
                        return Local;
                    }
                    if local.methods.iter().any(|m| m == name.as_str())
                        || local
                            .method_prefixes
                            .iter()
                            .any(|m| name.starts_with(m.as_str()))
                    {
                        return Local;
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
                    if !on_owned && let Some(v) = self.helper_verdict(g, x, e) {
                        return v;
                    }
                    match receiver.as_deref() {
                        Some(r) if self.local_receiver(g, r) => return Local,
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
                        r => return self.unfollowed_call(g, r, name),
                    }
                }
                ExprKind::Macro { name, args } => {
                    if self.names_key(args) {
                        return Out;
                    }
                    // `info!`, `log::info!`, `tracing::warn!`.
                    let last = name.rsplit("::").next().unwrap_or(name);
                    if local.macros.iter().any(|m| m == last) {
                        return Local;
                    }
                    if local.value_calls.iter().any(|v| v == name.as_str()) {
                        e = x;
                        continue;
                    }
                    return Out;
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
                        return Local;
                    }
                    e = x;
                }
                ExprKind::Assign { target, value, .. } if std::ptr::eq(&**value, e) => {
                    return self.assigned(g, target);
                }
                // An exception: it unwinds this service's own stack (at most it becomes a
                // response to the caller), it is not a request.
                ExprKind::Throw(_) => return Local,
                // The target of an assignment, a condition, an index: not a value passed on.
                ExprKind::Assign { .. } | ExprKind::Index { .. } => return Local,
                ExprKind::If { cond, .. } if std::ptr::eq(&**cond, e) => return Local,
                ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_) => e = x,
                ExprKind::Return(_) => match self.returned(g) {
                    Ok(v) => return v,
                    Err(lambda) => e = lambda,
                },
                _ => return Out,
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
