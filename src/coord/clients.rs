//! Which client a request is sent with, and where an interceptor is registered: a keyed
//! interceptor covers the requests of the clients it is registered on, and no others.
//!
//! Both sides are answered as regions, spans of code that build a client: a builder chain
//! (`OkHttpClient.Builder()...build()`, `HttpClient(CIO) { .. }`), a project function that
//! returns one, the function a client local is declared in. A request's client is followed
//! from the receiver it is sent with, through locals, fields, constructor arguments and project
//! functions, to the regions that build it. An interceptor's registrations are the calls that
//! hand it to a client. The interceptor covers the request when one of its registrations lies
//! in one of the request's regions. Either side may be unknown (a client injected by a
//! framework, an interceptor instance kept in a bean); the caller then falls back to the client
//! family, as before.

use super::syntax::{local_binding, peel};
use crate::catalog::{Catalog, InterceptorEntry};
use crate::facts::{Binding, Expr, ExprKind, FnKind, Span, Stmt, TypeId, simple_name};
use crate::flow::Flow;
use crate::project::{FnRef, Project, walk_expr, walk_stmts};
use std::cell::Cell;

/// Code that builds a client, or that registers an interceptor on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub unit: usize,
    pub span: Span,
}

impl Region {
    fn contains(&self, other: &Region) -> bool {
        self.unit == other.unit && self.span.contains(other.span)
    }
}

/// Does one of the client's regions hold one of the interceptor's registrations?
pub fn registered_on(client: &[Region], registrations: &[Region]) -> bool {
    client
        .iter()
        .any(|c| registrations.iter().any(|r| c.contains(r)))
}

/// Steps of one question (locals, fields, callers), regions gathered, and callers followed.
const BUDGET: u32 = 256;
const MAX_DEPTH: u32 = 8;
const MAX_REGIONS: usize = 32;
const MAX_CALLERS: usize = 16;

pub struct Clients<'a, 'p> {
    p: &'p Project,
    flow: &'a Flow<'p>,
    cat: &'a Catalog,
    /// Does a call of this name make a request (`post`, `request`)? Its receiver is the client.
    makes_request: fn(&str) -> bool,
    budget: Cell<u32>,
    /// Functions annotated as making a bean (`@Bean`), found on first use.
    beans: std::cell::OnceCell<Vec<FnRef>>,
}

/// An expression that names a value (`http`, `this.client`, `clients.ktor`), not a type.
fn is_value(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(n) => {
            n != "this" && n != "self" && !n.starts_with(|c: char| c.is_uppercase())
        }
        ExprKind::Field { name, .. } => !name.starts_with(|c: char| c.is_uppercase()),
        _ => false,
    }
}

/// The innermost call of a chain (`a.b().c()` -> `a.b()`) and its receiver.
fn chain_root(e: &Expr) -> Option<&Expr> {
    let mut cur = e;
    while let ExprKind::Call {
        receiver: Some(r), ..
    } = &cur.kind
    {
        let r = peel(r);
        match &r.kind {
            ExprKind::Call { .. } => cur = r,
            _ => return Some(r),
        }
    }
    None
}

impl<'a, 'p> Clients<'a, 'p> {
    pub fn new(
        p: &'p Project,
        flow: &'a Flow<'p>,
        cat: &'a Catalog,
        makes_request: fn(&str) -> bool,
    ) -> Self {
        Clients {
            p,
            flow,
            cat,
            makes_request,
            budget: Cell::new(BUDGET),
            beans: Default::default(),
        }
    }

    /// The regions that build the client the request chain `top` (written in `at`) is sent
    /// with: `http.post(..)`, `webClient.post()..`, or a request built apart and handed to
    /// `client.newCall(request)`. `None` when any way the client may come from is unknown.
    pub fn of_request(&self, at: FnRef, top: &'p Expr) -> Option<Vec<Region>> {
        // The receiver of the call that makes the request is the client, when it is a value or
        // a project function returning one; else the request is built apart and sent later.
        let mut maker = None;
        let mut cur = top;
        while let ExprKind::Call {
            receiver: Some(r),
            name,
            ..
        } = &cur.kind
        {
            if (self.makes_request)(name) {
                maker = Some(peel(r));
            }
            cur = peel(r);
        }
        let client = match maker {
            Some(r) if is_value(r) || self.is_project_call(at, r) => r,
            _ => self.send_receiver(at, top)?,
        };
        self.budget.set(BUDGET);
        let mut out = Vec::new();
        self.value(at.unit, Some(at), client, 0, &mut out)
            .then_some(out)
    }

    fn is_project_call(&self, at: FnRef, e: &'p Expr) -> bool {
        matches!(&e.kind, ExprKind::Call { receiver, name, args }
            if !self.flow.call_targets(at, receiver.as_deref(), name, args).is_empty())
    }

    /// The client a request built in `at` is handed to: the receiver of a send call
    /// (catalogue `[clients] send_calls`) given the request, or the local it is bound to.
    fn send_receiver(&self, at: FnRef, top: &'p Expr) -> Option<&'p Expr> {
        let body = &self.p.func(self.p.outermost(at)).body;
        let mut bound: Option<&str> = None;
        crate::flow::walk_lets(body, &mut |b| {
            if b.init.as_ref().is_some_and(|i| peel(i).span == top.span) {
                bound = Some(b.name.as_str());
            }
        });
        let mut found = None;
        let mut scan = |e: &'p Expr| {
            if found.is_some() {
                return;
            }
            if let ExprKind::Call {
                receiver: Some(r),
                name,
                args,
            } = &e.kind
                && self
                    .cat
                    .clients
                    .send_calls
                    .iter()
                    .any(|s| s == name.as_str())
                && args.iter().any(|a| {
                    let v = peel(&a.value);
                    v.span.contains(top.span)
                        || bound.is_some_and(|n| {
                            matches!(&v.kind, ExprKind::Name(x) if x == n)
                                || chain_root(v)
                                    .is_some_and(|r| matches!(&r.kind, ExprKind::Name(x) if x == n))
                        })
                })
            {
                found = Some(peel(r));
            }
        };
        for f in self.p.with_nested(self.p.outermost(at)) {
            walk_stmts(&self.p.func(f).body, &mut scan);
        }
        found.filter(|r| is_value(r))
    }

    /// The units whose code writes `name`: only they can construct, call or assign it.
    fn mentioning(&self, name: &str) -> impl Iterator<Item = usize> + use<> {
        self.p.units_writing_name(name).into_iter()
    }

    fn spend(&self, depth: u32, out: &[Region]) -> bool {
        if depth > MAX_DEPTH || out.len() > MAX_REGIONS || self.budget.get() == 0 {
            return false;
        }
        self.budget.set(self.budget.get() - 1);
        true
    }

    /// Gathers the regions that build the value of `e` (in `at`, or in a field initialiser of
    /// `unit` when `at` is `None`); false when a way it may come from is unknown.
    fn value(
        &self,
        unit: usize,
        at: Option<FnRef>,
        e: &'p Expr,
        depth: u32,
        out: &mut Vec<Region>,
    ) -> bool {
        if !self.spend(depth, out) {
            return false;
        }
        let e = peel(e);
        match &e.kind {
            ExprKind::Name(n) if n == "this" || n == "self" => false,
            ExprKind::Name(n) => {
                if let Some(at) = at {
                    if let Some(b) = local_binding(self.p, at, n, e.span.start) {
                        return self.local(at, b, depth, out);
                    }
                    if let Some((f, i)) = self.param_of(at, n) {
                        return self.args_for(f, i, depth, out);
                    }
                }
                let owner = self.owner_at(unit, at, e.span);
                match owner.and_then(|(u, t)| self.field_of(u, t, n)) {
                    Some((u, t)) => self.field(u, t, n, depth, out),
                    None => false,
                }
            }
            ExprKind::Field { receiver, name } => {
                let r = peel(receiver);
                let owner = match &r.kind {
                    ExprKind::Name(s) if s == "this" || s == "self" => {
                        self.owner_at(unit, at, e.span)
                    }
                    _ => {
                        let ty = match &r.kind {
                            ExprKind::Name(t) if t.starts_with(|c: char| c.is_uppercase()) => {
                                Some(t.to_string())
                            }
                            _ => at.and_then(|f| self.flow.type_in(f, r)),
                        };
                        ty.and_then(|t| self.unique_type(&t, name))
                    }
                };
                match owner.and_then(|(u, t)| self.field_of(u, t, name)) {
                    Some((u, t)) => self.field(u, t, name, depth, out),
                    None => false,
                }
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => {
                let targets = match at {
                    Some(at) => self.flow.call_targets(at, receiver.as_deref(), name, args),
                    // A field initialiser: a function of this file, or of a project type
                    // named as the receiver (`Hooks.walletClient(..)`).
                    None => match receiver.as_deref().map(peel) {
                        None => {
                            let local = self.p.resolve_in_unit(unit, name, args.len());
                            if local.is_empty() {
                                self.p.resolve(name, args.len()).collect()
                            } else {
                                local
                            }
                        }
                        Some(r) => match r.path_text() {
                            Some(t) if simple_name(&t).starts_with(|c: char| c.is_uppercase()) => {
                                self.p.resolve_on_type(simple_name(&t), name, args.len())
                            }
                            _ => Vec::new(),
                        },
                    },
                };
                if !targets.is_empty() {
                    // A project function returns it: whatever it builds is in its body. A
                    // project constructor makes a wrapper, whose client is not followed.
                    for t in targets.iter().take(8) {
                        let f = self.p.func(*t);
                        if !f.has_body || f.kind == FnKind::Constructor {
                            return false;
                        }
                        out.push(Region {
                            unit: t.unit,
                            span: f.span,
                        });
                        // What it returns from elsewhere (`return stripe;`, a field).
                        for r in super::syntax::returned_exprs(f).into_iter().map(peel) {
                            let follow = is_value(r) || matches!(r.kind, ExprKind::Call { .. });
                            if follow && !self.value(t.unit, Some(*t), r, depth + 1, out) {
                                return false;
                            }
                        }
                    }
                    return targets.len() <= 8;
                }
                if receiver.is_none()
                    && name.starts_with(|c: char| c.is_uppercase())
                    && !self.p.types_named(name).is_empty()
                {
                    return false;
                }
                // A library call builds it here; one derived from another client
                // (`base.newBuilder()..`) has that client's interceptors too.
                out.push(Region { unit, span: e.span });
                match chain_root(e) {
                    Some(r) if is_value(r) => self.value(unit, at, r, depth + 1, out),
                    _ => true,
                }
            }
            ExprKind::New { ty, .. } => {
                if !self.p.types_named(simple_name(ty)).is_empty() {
                    return false;
                }
                out.push(Region { unit, span: e.span });
                true
            }
            ExprKind::If {
                then,
                els: Some(els),
                ..
            } => {
                self.value(unit, at, then, depth + 1, out)
                    && self.value(unit, at, els, depth + 1, out)
            }
            ExprKind::Binary { op, lhs, rhs } if op == "?:" => {
                self.value(unit, at, lhs, depth + 1, out)
                    && self.value(unit, at, rhs, depth + 1, out)
            }
            ExprKind::Cast { expr, .. } => self.value(unit, at, expr, depth + 1, out),
            ExprKind::Block(stmts) => match stmts.last() {
                Some(Stmt::Expr(x)) => self.value(unit, at, x, depth + 1, out),
                _ => false,
            },
            _ => false,
        }
    }

    /// A local client: its initialiser and assignments, and the function it is declared in
    /// (where later steps on it, `builder.addInterceptor(k)`, are written).
    fn local(&self, at: FnRef, b: &'p Binding, depth: u32, out: &mut Vec<Region>) -> bool {
        let Some(decl) = self
            .p
            .ancestors(at)
            .find(|a| self.p.func(*a).span.contains(b.span))
        else {
            return false;
        };
        out.push(Region {
            unit: at.unit,
            span: self.p.func(decl).span,
        });
        let mut ok = true;
        let mut any = false;
        if let Some(i) = &b.init {
            any = true;
            ok &= self.value(at.unit, Some(decl), i, depth + 1, out);
        }
        for (f, v) in self.assignments(&[decl], &b.name) {
            any = true;
            ok &= self.value(at.unit, Some(f), v, depth + 1, out);
        }
        ok && any
    }

    /// Values assigned to `name` (or `this.name`) in `fns` and what is written in them.
    fn assignments(&self, fns: &[FnRef], name: &str) -> Vec<(FnRef, &'p Expr)> {
        let mut out = Vec::new();
        for &root in fns {
            for f in self.p.with_nested(root) {
                walk_stmts(&self.p.func(f).body, &mut |e| {
                    if let ExprKind::Assign { target, op, value } = &e.kind
                        && op == "="
                    {
                        let hit = match &peel(target).kind {
                            ExprKind::Name(n) => n == name,
                            ExprKind::Field { receiver, name: m } => {
                                m == name
                                    && matches!(&peel(receiver).kind,
                                        ExprKind::Name(s) if s == "this" || s == "self")
                            }
                            _ => false,
                        };
                        if hit {
                            out.push((f, &**value));
                        }
                    }
                });
            }
        }
        out
    }

    /// The function around `at` (not a lambda) with a parameter `name`, and its index.
    fn param_of(&self, at: FnRef, name: &str) -> Option<(FnRef, usize)> {
        for a in self.p.ancestors(at) {
            let f = self.p.func(a);
            if let Some(i) = f.params.iter().position(|x| x.name == name) {
                return (f.kind != FnKind::Lambda).then_some((a, i));
            }
        }
        None
    }

    /// The type `at` is a member of, or for a field initialiser (`at` is `None`) the innermost
    /// type of `unit` around `span`.
    fn owner_at(&self, unit: usize, at: Option<FnRef>, span: Span) -> Option<(usize, TypeId)> {
        if let Some(f) = at {
            return self.p.enclosing_type(f).map(|t| (f.unit, t));
        }
        let types = &self.p.units[unit].facts().types;
        (0..types.len())
            .filter(|&t| types[t].span.contains(span))
            .min_by_key(|&t| types[t].span.len())
            .map(|t| (unit, t))
    }

    /// The type `t` of unit `u` or one it is nested in that declares field `name` (for a Rust
    /// impl block, the struct of that name in the file).
    fn field_of(&self, u: usize, t: TypeId, name: &str) -> Option<(usize, TypeId)> {
        let types = &self.p.units[u].facts().types;
        let mut cur = Some(t);
        let mut steps = 0;
        while let Some(t) = cur {
            steps += 1;
            if steps > 16 {
                return None;
            }
            let same_name = (0..types.len())
                .filter(|&x| x == t || (types[t].name.is_some() && types[x].name == types[t].name));
            for x in same_name {
                if types[x].fields.iter().any(|b| b.name == name) {
                    return Some((u, x));
                }
            }
            cur = types[t].parent_type;
        }
        None
    }

    /// The one project type named `ty` that declares field `name`.
    fn unique_type(&self, ty: &str, name: &str) -> Option<(usize, TypeId)> {
        let mut hits = self.p.types_named(simple_name(ty)).iter().filter(|r| {
            self.p.units[r.unit].facts().types[r.t]
                .fields
                .iter()
                .any(|b| b.name == name)
        });
        let first = hits.next()?;
        hits.next().is_none().then_some((first.unit, first.t))
    }

    /// Field `name` of type `t`: its initialiser, assignments in the type's methods, and the
    /// constructor arguments or struct-literal fields it is given.
    fn field(&self, u: usize, t: TypeId, name: &str, depth: u32, out: &mut Vec<Region>) -> bool {
        let decl = &self.p.units[u].facts().types[t];
        let Some(b) = decl.fields.iter().find(|b| b.name == name) else {
            return false;
        };
        let mut ok = true;
        let mut any = false;
        if let Some(i) = &b.init {
            any = true;
            ok &= self.value(u, None, i, depth + 1, out);
        }
        let methods: Vec<FnRef> = self.methods_of(u, t);
        for (f, v) in self.assignments(&methods, name) {
            any = true;
            ok &= self.value(u, Some(f), v, depth + 1, out);
        }
        // A constructor property (Kotlin `class Psp(private val http: HttpClient)`) without an
        // assignment: what its callers pass.
        if !any {
            for &c in &methods {
                let f = self.p.func(c);
                if f.kind == FnKind::Constructor
                    && let Some(i) = f.params.iter().position(|x| x.name == name)
                {
                    any = true;
                    ok &= self.args_for(c, i, depth, out);
                }
            }
        }
        // Set from outside: `psp.http = c`, `Payouts(..).apply { http = c }`.
        if !any && let Some(ty) = decl.name.as_deref() {
            for (u2, at, v) in self.outside_assignments(ty, name) {
                any = true;
                ok &= self.value(u2, Some(at), v, depth + 1, out);
            }
        }
        // Injected by the framework.
        if !any && let Some(r) = self.injected(&b.annotations, b.ty.as_deref(), depth, out) {
            any = true;
            ok &= r;
        }
        // A Rust struct: the struct literals that set it (`Self { client }`).
        if !any && let Some(ty) = decl.name.as_deref() {
            for (at, v) in self.struct_fields(ty, name) {
                any = true;
                ok &= self.value(at.unit, Some(at), v, depth + 1, out);
            }
        }
        ok && any
    }

    /// Values assigned to field `field` of type `ty` from outside it: `x.field = v` with `x` of
    /// that type, and `field = v` in an `apply { }` on a construction of it.
    fn outside_assignments(&self, ty: &str, field: &str) -> Vec<(usize, FnRef, &'p Expr)> {
        let mut out = Vec::new();
        for u in self.mentioning(ty) {
            each_expr_in(self.p, u, &mut |at, e| match &e.kind {
                ExprKind::Assign { target, op, value } if op == "=" => {
                    if let Some(at) = at
                        && let ExprKind::Field { receiver, name } = &peel(target).kind
                        && name == field
                        && is_value(peel(receiver))
                        && self.flow.type_in(at, peel(receiver)).as_deref() == Some(ty)
                    {
                        out.push((u, at, &**value));
                    }
                }
                ExprKind::Call {
                    receiver: Some(r),
                    name,
                    args,
                } if self
                    .cat
                    .clients
                    .scope_calls
                    .iter()
                    .any(|c| c == name.as_str())
                    && crate::flow::constructed_type(peel(r)).as_deref() == Some(ty) =>
                {
                    for a in args {
                        if let ExprKind::Lambda(l) = peel(&a.value).kind {
                            let lf = FnRef { unit: u, f: l };
                            for (f, v) in self.assignments(&[lf], field) {
                                out.push((u, f, v));
                            }
                        }
                    }
                }
                _ => {}
            });
        }
        out
    }

    fn methods_of(&self, u: usize, t: TypeId) -> Vec<FnRef> {
        let facts = &self.p.units[u].facts();
        let name = facts.types[t].name.as_deref();
        // A Rust type's methods are in its impl blocks, each a type of its own.
        (0..facts.types.len())
            .filter(|&x| x == t || (name.is_some() && facts.types[x].name.as_deref() == name))
            .flat_map(|x| facts.types[x].methods.iter())
            .map(|&f| FnRef { unit: u, f })
            .collect()
    }

    /// Values given to field `field` by struct literals of `ty` (`Psp { client: c }`, or
    /// `Self { client }` in its impl).
    fn struct_fields(&self, ty: &str, field: &str) -> Vec<(FnRef, &'p Expr)> {
        let mut out = Vec::new();
        for u in self.mentioning(ty) {
            let unit = &self.p.units[u];
            for (f, func) in unit.facts().functions.iter().enumerate() {
                let at = FnRef { unit: u, f };
                walk_stmts(&func.body, &mut |e| {
                    if let ExprKind::New { ty: t, args, .. } = &e.kind
                        && (simple_name(t) == ty
                            || (t == "Self"
                                && self.p.enclosing_type(at).is_some_and(|x| {
                                    unit.facts().types[x].name.as_deref() == Some(ty)
                                })))
                        && let Some(a) = args.iter().find(|a| a.name.as_deref() == Some(field))
                    {
                        out.push((at, &a.value));
                    }
                });
            }
        }
        out
    }

    /// What the callers of `f` pass for its parameter `i` (constructions, for a constructor),
    /// in function bodies and field initialisers; for a parameter the framework injects, the
    /// bean it names.
    fn args_for(&self, f: FnRef, i: usize, depth: u32, out: &mut Vec<Region>) -> bool {
        let func = self.p.func(f);
        let param = &func.params[i];
        let Some(name) = func.name.as_deref() else {
            return false;
        };
        let ctor = func.kind == FnKind::Constructor;
        let mut sites: Vec<(usize, Option<FnRef>, &'p Expr)> = Vec::new();
        for u in self.mentioning(name) {
            each_expr_in(self.p, u, &mut |at, e| {
                let hit = match &e.kind {
                    ExprKind::New { ty, .. } => ctor && simple_name(ty) == name,
                    ExprKind::Call {
                        receiver,
                        name: n,
                        args,
                    } if n == name => match at {
                        _ if ctor => receiver.is_none(),
                        Some(at) => self
                            .flow
                            .call_targets(at, receiver.as_deref(), n, args)
                            .contains(&f),
                        None => receiver.is_none(),
                    },
                    _ => false,
                };
                if hit {
                    sites.push((u, at, e));
                }
            });
        }
        if sites.is_empty() {
            return ctor
                && self
                    .injected(&param.annotations, param.ty.as_deref(), depth, out)
                    .unwrap_or(false);
        }
        if sites.len() > MAX_CALLERS {
            return false;
        }
        for (u, at, e) in sites {
            let (args, recv) = match &e.kind {
                ExprKind::Call { args, receiver, .. } => (args, receiver.as_deref()),
                ExprKind::New { args, .. } => (args, None),
                _ => return false,
            };
            let named = args
                .iter()
                .find(|a| a.name.as_deref() == Some(param.name.as_str()));
            let positional = || {
                let k = super::syntax::param_to_arg(self.p, f, recv, i)?;
                args.get(k).filter(|a| a.name.is_none())
            };
            let Some(a) = named.or_else(positional) else {
                return false;
            };
            if !self.value(u, at, &a.value, depth + 1, out) {
                return false;
            }
        }
        true
    }

    /// A value the framework injects (`@Qualifier("stripe") RestTemplate rest`): the bean
    /// method the qualifier names, or the one bean method of the type (the `@Primary` one among
    /// several). `None` when nothing says it is injected or no bean is found.
    fn injected(
        &self,
        annotations: &[crate::facts::Annotation],
        ty: Option<&str>,
        depth: u32,
        out: &mut Vec<Region>,
    ) -> Option<bool> {
        let di = &self.cat.clients;
        let qualifier = annotations
            .iter()
            .find(|a| di.qualifiers.contains(&a.name))
            .and_then(|a| a.args.first())
            .and_then(|a| match &a.value.kind {
                ExprKind::Str(s) => Some(s.to_string()),
                _ => None,
            });
        let ty = simple_name(ty?).to_string();
        let beans: Vec<FnRef> = self
            .beans
            .get_or_init(|| {
                (0..self.p.units.len())
                    .flat_map(|u| {
                        let fs = &self.p.units[u].facts().functions;
                        (0..fs.len()).map(move |f| FnRef { unit: u, f })
                    })
                    .filter(|r| {
                        self.p
                            .func(*r)
                            .annotations
                            .iter()
                            .any(|a| di.bean_annotations.contains(&a.name))
                    })
                    .collect()
            })
            .iter()
            .copied()
            .filter(|r| {
                self.p.func(*r).return_type.as_deref().map(simple_name) == Some(ty.as_str())
            })
            .collect();
        let named = |r: &FnRef| {
            let f = self.p.func(*r);
            let q = qualifier.as_deref();
            f.name.as_deref() == q
                || f.annotations.iter().any(|a| {
                    a.args
                        .iter()
                        .any(|x| matches!(&x.value.kind, ExprKind::Str(s) if Some(s.as_str()) == q))
                })
        };
        let primary = |r: &FnRef| {
            self.p
                .func(*r)
                .annotations
                .iter()
                .any(|a| di.primary_annotations.contains(&a.name))
        };
        let chosen: Vec<FnRef> = match qualifier {
            Some(_) => beans.iter().copied().filter(named).collect(),
            None if beans.len() == 1 => beans.clone(),
            None => beans.iter().copied().filter(primary).collect(),
        };
        let [bean] = chosen.as_slice() else {
            return None;
        };
        let f = self.p.func(*bean);
        out.push(Region {
            unit: bean.unit,
            span: f.span,
        });
        Some(
            super::syntax::returned_exprs(f)
                .into_iter()
                .map(peel)
                .all(|r| !is_value(r) || self.value(bean.unit, Some(*bean), r, depth + 1, out)),
        )
    }

    /// Where the keyed interceptor `f` is registered: the call a registered lambda is handed to,
    /// or the calls given an instance of the interceptor type. `None` when an instance is kept
    /// where it cannot be followed (`val keys = StripeKeys()`), or none is found.
    pub fn registrations(&self, f: FnRef, entry: &InterceptorEntry) -> Option<Vec<Region>> {
        let func = self.p.func(f);
        if func.kind == FnKind::Lambda {
            return self.lambda_registrations(f, entry);
        }
        let owner = func.owner?;
        let ty = self.p.units[f.unit].facts().types[owner].name.clone()?;
        self.instance_registrations(&ty)
    }

    fn lambda_registrations(&self, f: FnRef, entry: &InterceptorEntry) -> Option<Vec<Region>> {
        let u = f.unit;
        let call = self.holder_of(u, f.f)?;
        let ExprKind::Call { name, .. } = &call.kind else {
            return None;
        };
        if entry.registrations.iter().any(|r| r == name.as_str()) {
            // Inside a plugin definition: the plugin is registered where it is installed.
            if let Some(parent) = self.p.func(f).parent
                && let Some(def) = self.holder_of(u, parent)
                && let ExprKind::Call { name: d, .. } = &def.kind
                && entry.defined_in.iter().any(|x| x == d.as_str())
            {
                return self
                    .bound_name(u, def.span)
                    .and_then(|n| self.named_registrations(&n));
            }
            return Some(vec![Region {
                unit: u,
                span: call.span,
            }]);
        }
        // A SAM wrapper (`Interceptor { chain -> .. }`) kept in a value, then handed to calls.
        if let Some(name) = self.bound_name(u, call.span) {
            return self.named_registrations(&name);
        }
        // ..or handed to a call.
        let mut outer: Option<&'p Expr> = None;
        each_expr(self.p, u, &mut |e| {
            if outer.is_none()
                && e.span != call.span
                && let ExprKind::Call { args, .. } = &e.kind
                && args.iter().any(|a| peel(&a.value).span == call.span)
            {
                outer = Some(e);
            }
        });
        let outer = outer?;
        let ExprKind::Call { name, .. } = &outer.kind else {
            return None;
        };
        (!self.is_collection(name)).then_some(vec![Region {
            unit: u,
            span: outer.span,
        }])
    }

    /// The call lambda `l` of unit `u` is handed to.
    fn holder_of(&self, u: usize, l: crate::facts::FnId) -> Option<&'p Expr> {
        let mut found: Option<&'p Expr> = None;
        each_expr(self.p, u, &mut |e| {
            if found.is_none()
                && let ExprKind::Call { args, .. } = &e.kind
                && args
                    .iter()
                    .any(|a| matches!(peel(&a.value).kind, ExprKind::Lambda(x) if x == l))
            {
                found = Some(e);
            }
        });
        found
    }

    /// The name of the field, file-level value or local whose initialiser is at `span`.
    fn bound_name(&self, u: usize, span: Span) -> Option<String> {
        let facts = &self.p.units[u].facts();
        let at = |b: &Binding| b.init.as_ref().is_some_and(|i| peel(i).span == span);
        if let Some(b) = facts
            .types
            .iter()
            .flat_map(|t| t.fields.iter())
            .chain(&facts.globals)
            .find(|b| at(b))
        {
            return Some(b.name.clone());
        }
        let mut found = None;
        for f in &facts.functions {
            crate::flow::walk_lets(&f.body, &mut |b| {
                if found.is_none() && at(b) {
                    found = Some(b.name.clone());
                }
            });
        }
        found
    }

    fn is_collection(&self, name: &str) -> bool {
        self.cat.clients.collection_calls.iter().any(|c| c == name)
    }

    /// Calls handed an instance of type `ty` (`addInterceptor(StripeKeys())`, `.with(IdemKey)`,
    /// `additionalInterceptors(keys)` with `keys: StripeKeys`). Every construction must be such
    /// an argument, else the instance may be registered where it is not followed.
    fn instance_registrations(&self, ty: &str) -> Option<Vec<Region>> {
        let makes = |e: &Expr| -> bool {
            match &e.kind {
                ExprKind::New { ty: t, .. } => simple_name(t) == ty,
                ExprKind::Call {
                    receiver: None,
                    name,
                    ..
                } => name == ty,
                ExprKind::Call {
                    receiver: Some(r), ..
                } => matches!(&peel(r).kind, ExprKind::Name(n) if n == ty),
                ExprKind::Name(n) => n == ty,
                _ => false,
            }
        };
        let is_it = |at: Option<FnRef>, v: &Expr| {
            makes(v)
                || (is_value(v) && at.and_then(|f| self.flow.type_in(f, v)).as_deref() == Some(ty))
        };
        self.handed_to(ty, &is_it, &makes)
    }

    /// Calls handed the interceptor held by the field, file-level value or local `name`
    /// (`val keys = Interceptor { .. }` .. `addInterceptor(keys)`).
    fn named_registrations(&self, name: &str) -> Option<Vec<Region>> {
        let is_it = |_: Option<FnRef>, v: &Expr| match &v.kind {
            ExprKind::Name(n) => n == name,
            ExprKind::Field { name: n, .. } => n == name,
            _ => false,
        };
        self.handed_to(name, &is_it, &|_| false)
    }

    /// The calls given an argument that `is_it` (in a file that mentions `needle`); `None` when
    /// one of the values `makes` builds is not such an argument, when a collection of them is
    /// kept in a local, or when there is none.
    fn handed_to(
        &self,
        needle: &str,
        is_it: &dyn Fn(Option<FnRef>, &Expr) -> bool,
        makes: &dyn Fn(&Expr) -> bool,
    ) -> Option<Vec<Region>> {
        let mut made: Vec<(usize, Span)> = Vec::new();
        let mut handed: Vec<(usize, Span)> = Vec::new();
        let mut regions: Vec<Region> = Vec::new();
        let mut escapes = false;
        for u in self.mentioning(needle) {
            let facts = &self.p.units[u].facts();
            let in_type = |e: &Expr| {
                facts
                    .types
                    .iter()
                    .any(|t| t.name.as_deref() == Some(needle) && t.span.contains(e.span))
            };
            let mut visit = |at: Option<FnRef>, e: &'p Expr| {
                if makes(e) && !in_type(e) && !matches!(e.kind, ExprKind::Name(_)) {
                    made.push((u, e.span));
                }
                let ExprKind::Call { name, args, .. } = &e.kind else {
                    return;
                };
                for a in args {
                    let v = peel(&a.value);
                    if !is_it(at, v) {
                        continue;
                    }
                    handed.push((u, v.span));
                    if !self.is_collection(name) {
                        regions.push(Region {
                            unit: u,
                            span: e.span,
                        });
                        continue;
                    }
                    // Gathered first: the statement it is in registers them, unless the
                    // collection is kept in a local or field.
                    match at
                        .and_then(|f| super::syntax::innermost_stmt(&self.p.func(f).body, e.span))
                    {
                        Some(Stmt::Expr(s)) => regions.push(Region {
                            unit: u,
                            span: s.span,
                        }),
                        _ => escapes = true,
                    }
                }
            };
            each_expr_in(self.p, u, &mut visit);
        }
        if escapes || made.iter().any(|m| !handed.contains(m)) || regions.is_empty() {
            return None;
        }
        Some(regions)
    }
}

/// Every expression of unit `u` with the function it is written in (`None` in a field or
/// file-level initialiser).
fn each_expr_in<'p>(p: &'p Project, u: usize, f: &mut impl FnMut(Option<FnRef>, &'p Expr)) {
    let facts = &p.units[u].facts();
    for (g, func) in facts.functions.iter().enumerate() {
        let at = FnRef { unit: u, f: g };
        walk_stmts(&func.body, &mut |e| f(Some(at), e));
    }
    for b in facts
        .types
        .iter()
        .flat_map(|t| t.fields.iter())
        .chain(&facts.globals)
    {
        if let Some(i) = &b.init {
            walk_expr(i, &mut |e| f(None, e));
        }
    }
}

/// Every expression of unit `u`: function bodies (lambdas are functions of their own), field
/// and file-level initialisers, script statements.
fn each_expr<'p>(p: &'p Project, u: usize, f: &mut impl FnMut(&'p Expr)) {
    each_expr_in(p, u, &mut |_, e| f(e));
    walk_stmts(&p.units[u].facts().top_level, f);
}
