//! Coordination analysis shared by IDEM004–IDEM007: where money moves (calls, SDKs, POSTs to
//! payment endpoints), what serialises replicas (distributed locks, atomic claims, leader
//! checks), and per-process schedulers.
//!
//! The central question is ordered: walking a job's code in source order, through lambdas and
//! project helpers in any file, is the first decisive thing a guard or money moving?

pub mod clients;
pub mod endpoints;
pub mod events;
pub mod guards;
pub mod jobs;
pub mod lockkeys;
pub mod sdk;
pub mod sdk_params;
pub mod words;

use crate::catalog::Catalog;
use crate::facts::{Binding, Expr, ExprKind, FnKind, Span, Stmt};
use crate::flow::Flow;
use crate::hash::HashMap;
use crate::project::{FnRef, Project, Targets, walk_expr, walk_stmts};
use std::cell::RefCell;
use std::sync::Arc;

pub use events::Reach;

/// A constant by (unit it is read in, owner type as written, name).
type ConstKey = (usize, Option<String>, String);

/// Answers of [`Coord::reach_fn`], each with the functions of the part it was answered in.
type Answers = HashMap<FnRef, (Reach, Arc<[FnRef]>)>;

/// What the analyses of one run share across threads: the POST sites, and every answer of
/// [`Coord::reach_fn`] with the call cycle (strongly connected part) it was answered in.
///
/// An answer depends on the function alone, not on which query reached it first (see
/// `Coord::answer_part`), so an analysis may take another's answers instead of walking the
/// same functions again. It takes a part's answers only as a whole, and only if its own search
/// has not visited one of the part's functions yet: the parts it then finds are the same as
/// if the taken part had been answered before it started.
#[derive(Default)]
pub struct Shared {
    pub posts: endpoints::Posts,
    answers: std::sync::RwLock<Answers>,
}

impl Shared {
    pub fn new(posts: endpoints::Posts) -> Shared {
        Shared {
            posts,
            ..Shared::default()
        }
    }
}

/// One analysis, used on one thread (summaries are memoised in place); a run may build several
/// over one [`Shared`].
pub struct Coord<'p> {
    pub p: &'p Project,
    pub cat: &'p Catalog,
    pub flow: Flow<'p>,
    /// The POST sites, and the answers of [`Coord::reach_fn`] shared with the run's other
    /// analyses over the same POST sites.
    pub shared: Arc<Shared>,
    /// Final answers of [`Coord::reach_fn`] (this analysis's own, and those it took from
    /// `shared`).
    reach: RefCell<HashMap<FnRef, Reach>>,
    /// Answers so far for the functions of the call cycle being answered.
    solving: RefCell<HashMap<FnRef, Reach>>,
    /// While finding what a function calls: the project functions its walk asked about.
    recording: RefCell<Option<Vec<FnRef>>>,
    /// A function is being walked to answer it (calls are then looked up, never solved).
    walking: std::cell::Cell<bool>,
    /// Answering a call cycle's functions each from the start: the functions on the current
    /// path, and how many more walks the cycle may take.
    from_start: std::cell::Cell<bool>,
    path: RefCell<Vec<FnRef>>,
    budget: std::cell::Cell<usize>,
    /// Literal text of constants, by (unit, owner, name).
    const_texts: RefCell<HashMap<ConstKey, Option<String>>>,
    checked: RefCell<HashMap<FnRef, std::rc::Rc<Vec<Span>>>>,
    /// Methods a method reference on a type may run, by (name, type).
    methods_on: RefCell<HashMap<(String, String), Targets>>,
}

impl<'p> Coord<'p> {
    /// An analysis that knows the project's POSTs to money endpoints (`shared.posts`, from
    /// [`Coord::find_posts`]; empty when the rules that run need none). Analyses built on the
    /// same `shared` (on any threads) reuse each other's answers.
    pub fn new(p: &'p Project, cat: &'p Catalog, shared: Arc<Shared>) -> Coord<'p> {
        Coord {
            p,
            cat,
            flow: Flow::new(p, cat),
            shared,
            reach: RefCell::default(),
            solving: RefCell::default(),
            recording: RefCell::default(),
            walking: std::cell::Cell::new(false),
            from_start: std::cell::Cell::new(false),
            path: RefCell::default(),
            budget: std::cell::Cell::new(0),
            const_texts: RefCell::default(),
            checked: RefCell::default(),
            methods_on: RefCell::default(),
        }
    }

    /// Every POST to a money endpoint in the project (`interceptors` is asked for only if
    /// there is one), found once and shared by the analyses that need it.
    pub fn find_posts(
        p: &'p Project,
        cat: &'p Catalog,
        interceptors: &dyn Fn() -> Vec<(FnRef, &'static crate::catalog::InterceptorEntry)>,
    ) -> endpoints::Posts {
        endpoints::find(p, cat, &Flow::new(p, cat), interceptors)
    }

    pub fn text(&self, unit: usize, span: Span) -> String {
        short(self.p.units[unit].src.slice(span))
    }

    /// Spans of calls in `f` whose result is tested: calls inside an `if`/`while` condition
    /// or a `when`/`match` subject, and initialisers of locals that such a condition reads.
    pub fn checked_calls(&self, f: FnRef) -> std::rc::Rc<Vec<Span>> {
        if let Some(v) = self.checked.borrow().get(&f) {
            return v.clone();
        }
        let root = self.p.outermost(f);
        let mut conds: Vec<&Expr> = Vec::new();
        for g in self.p.with_nested(root) {
            walk_stmts(&self.p.func(g).body, &mut |e| match &e.kind {
                ExprKind::If { cond, .. } => conds.push(cond),
                ExprKind::Loop { header, .. } => conds.extend(header.iter()),
                ExprKind::Match {
                    subject: Some(s), ..
                } => conds.push(s),
                ExprKind::Return(Some(v)) => conds.push(v),
                ExprKind::Binary { op, lhs, rhs }
                    if matches!(
                        op.as_str(),
                        "==" | "!=" | ">" | "<" | ">=" | "<=" | "&&" | "||" | "?:"
                    ) =>
                {
                    conds.push(lhs);
                    conds.push(rhs);
                }
                _ => {}
            });
        }
        let mut out = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for c in &conds {
            walk_expr(c, &mut |x| match &x.kind {
                ExprKind::Call { .. } | ExprKind::Macro { .. } => out.push(x.span),
                ExprKind::Name(n) => names.push(n.to_string()),
                _ => {}
            });
        }
        for g in self.p.with_nested(root) {
            crate::flow::walk_lets(&self.p.func(g).body, &mut |b| {
                if names.contains(&b.name)
                    && let Some(i) = &b.init
                {
                    out.push(i.span);
                }
                // Rust `let Some(guard) = try_lock(..).await? else { return .. };`: the
                // pattern tests the value (let-else lowers to the value and the else block).
                if let Some(Expr {
                    kind: ExprKind::Other(parts),
                    ..
                }) = &b.init
                    && let [value, else_block] = &parts[..]
                    && matches!(else_block.kind, ExprKind::Block(_))
                {
                    walk_expr(value, &mut |x| {
                        if matches!(x.kind, ExprKind::Call { .. } | ExprKind::Macro { .. }) {
                            out.push(x.span);
                        }
                    });
                }
            });
        }
        let rc = std::rc::Rc::new(out);
        self.checked.borrow_mut().insert(f, rc.clone());
        rc
    }

    /// Is the expression at `span` in `f` (a claim: `INSERT .. ON CONFLICT DO NOTHING`,
    /// `setIfAbsent`) tested before the code goes on?
    pub fn is_checked(&self, f: FnRef, span: Span) -> bool {
        self.checked_calls(f)
            .iter()
            .any(|c| c.contains(span) || span.contains(*c))
    }
}

/// The nearest named (non-lambda) function around `f`.
pub fn named_fn(p: &Project, f: FnRef) -> FnRef {
    p.ancestors(f)
        .find(|a| p.func(*a).kind != FnKind::Lambda)
        .unwrap_or(f)
}

/// Source text on one line, shortened.
pub fn short(t: &str) -> String {
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 60 {
        let mut s: String = t.chars().take(57).collect();
        s.push_str("...");
        s
    } else {
        t
    }
}

/// The local `name` of `at` (or of a function around it) declared before `pos`, nearest first.
pub fn local_binding<'p>(p: &'p Project, at: FnRef, name: &str, pos: usize) -> Option<&'p Binding> {
    for a in p.ancestors(at) {
        let mut found: Option<&'p Binding> = None;
        crate::flow::walk_lets(&p.func(a).body, &mut |b| {
            if b.name == name && b.span.start < pos {
                found = Some(b);
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// A field or constant named `name` visible from `at` (enclosing types, the file), else the one
/// field/constant of that name in the project (`Paths.CHARGES` declared in another file).
pub fn field_binding<'p>(
    p: &'p Project,
    unit: usize,
    at: Option<FnRef>,
    owner_hint: Option<&str>,
    name: &str,
) -> Option<(usize, &'p Binding)> {
    let facts = &p.units[unit].facts;
    if owner_hint.is_none() {
        let mut ty = at.and_then(|f| p.enclosing_type(f));
        while let Some(t) = ty {
            let decl = &facts.types[t];
            let nested = decl
                .nested
                .iter()
                .flat_map(|&n| facts.types[n].fields.iter());
            if let Some(b) = decl.fields.iter().chain(nested).find(|b| b.name == name) {
                return Some((unit, b));
            }
            ty = decl.parent_type;
        }
        if let Some(b) = facts.globals.iter().find(|b| b.name == name) {
            return Some((unit, b));
        }
    }
    if let Some(owner) = owner_hint {
        for r in p.types_named(crate::facts::simple_name(owner)) {
            let f = &p.units[r.unit].facts;
            let decl = &f.types[r.t];
            let nested = decl.nested.iter().flat_map(|&n| f.types[n].fields.iter());
            if let Some(b) = decl.fields.iter().chain(nested).find(|b| b.name == name) {
                return Some((r.unit, b));
            }
        }
    }
    // The one declaration of that name in the project.
    let mut found = None;
    for (u, b) in p.fields_named(name) {
        if b.init.is_some() {
            if found.is_some() {
                return None;
            }
            found = Some((u, b));
        }
    }
    found
}

/// The innermost statement of `stmts` (at any block depth, not inside lambdas) that contains
/// `span`.
pub fn innermost_stmt(stmts: &[Stmt], span: Span) -> Option<&Stmt> {
    let s = stmts
        .iter()
        .find(|s| stmt_span(s).is_some_and(|ss| ss.contains(span)))?;
    let mut deeper: Option<&Stmt> = None;
    for e in stmt_exprs(s) {
        walk_expr(e, &mut |x| {
            if deeper.is_none()
                && let ExprKind::Block(b) = &x.kind
                && x.span.contains(span)
            {
                deeper = innermost_stmt(b, span);
            }
        });
    }
    deeper.or(Some(s))
}

pub fn stmt_span(s: &Stmt) -> Option<Span> {
    match s {
        Stmt::Let(b) => Some(b.span),
        Stmt::Expr(e) => Some(e.span),
        _ => None,
    }
}

/// The top-level expressions of function `f`'s body, each with `f` (to push onto a walk stack).
pub fn body_exprs(p: &Project, f: FnRef) -> impl Iterator<Item = (FnRef, &Expr)> {
    p.func(f)
        .body
        .iter()
        .flat_map(stmt_exprs)
        .map(move |x| (f, x))
}

/// Expressions of a statement.
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Let(b) => b.init.iter().collect(),
        Stmt::Expr(e) => vec![e],
        _ => Vec::new(),
    }
}

/// The values function `f` returns: its `return` expressions, else an expression body.
pub fn returned_exprs(func: &crate::facts::Function) -> Vec<&Expr> {
    let mut rets = Vec::new();
    walk_stmts(&func.body, &mut |e| {
        if let ExprKind::Return(Some(v)) = &e.kind {
            rets.push(&**v);
        }
    });
    if rets.is_empty()
        && let [Stmt::Expr(e)] = func.body.as_slice()
    {
        rets.push(e);
    }
    rets
}

/// A call chain from its last call down to where it starts, each link peeled:
/// `a.b(..).c(..)` gives `a.b(..).c(..)`, `a.b(..)`, `a`.
pub fn chain_links(e: &Expr) -> impl Iterator<Item = &Expr> {
    std::iter::successors(Some(peel(e)), |x| match &x.kind {
        ExprKind::Call {
            receiver: Some(r), ..
        } => Some(peel(r)),
        _ => None,
    })
}

/// Peels `x.await`, `x?`, `x!!` and parentheses.
pub fn peel(e: &Expr) -> &Expr {
    let mut e = e;
    loop {
        match &e.kind {
            ExprKind::Await(x) => e = x,
            ExprKind::Unary { op, operand }
                if matches!(op.as_str(), "?" | "!!" | "&" | "&mut" | "*") =>
            {
                e = operand
            }
            ExprKind::Other(v) if v.len() == 1 => e = &v[0],
            _ => return e,
        }
    }
}

/// The argument index a call passes for parameter `param` of `callee`: Rust methods declare
/// `self` as their first parameter, which a method call (`api.post(path)`) passes as the
/// receiver.
pub fn param_to_arg(
    p: &Project,
    callee: FnRef,
    receiver: Option<&Expr>,
    param: usize,
) -> Option<usize> {
    let f = p.func(callee);
    if f.params.first().is_some_and(|x| x.name == "self") {
        let type_path = receiver.is_some_and(|r| {
            r.path_text().is_some_and(|t| {
                crate::facts::simple_name(&t).starts_with(|c: char| c.is_uppercase())
            })
        });
        if receiver.is_some() && !type_path {
            return param.checked_sub(1);
        }
    }
    Some(param)
}
