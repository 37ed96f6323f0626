//! Coordination analysis shared by IDEM004–IDEM007: where money moves (calls, SDKs, POSTs to
//! payment endpoints), what serialises replicas (distributed locks, atomic claims, leader
//! checks), and per-process schedulers.
//!
//! The central question is ordered: walking a job's code in source order, through lambdas and
//! project helpers in any file, is the first decisive thing a guard or money moving?

pub mod clients;
pub mod endpoint_reach;
pub mod endpoints;
pub mod events;
pub mod lockkeys;
pub mod money_callers;
pub mod money_gate;
pub mod reach;
pub mod sdk;
pub mod sdk_params;
pub mod syntax;
pub mod words;

use crate::catalog::Catalog;
use crate::facts::{Expr, ExprKind, Span};
use crate::flow::Flow;
use crate::hash::HashMap;
use crate::project::{FnRef, Project, Targets, walk_expr, walk_stmts};
use std::cell::RefCell;
use std::sync::Arc;

pub use reach::{Loc, Reach};
pub use syntax::{
    body_exprs, chain_links, field_binding, innermost_stmt, local_binding, named_fn, param_to_arg,
    peel, returned_exprs, short, stmt_exprs, stmt_span,
};

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
    /// Which functions may reach money (built on first use).
    money: std::sync::OnceLock<money_gate::MoneyGate>,
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
    pub fn new(
        p: &'p Project,
        cat: &'p Catalog,
        flows: &'p crate::flow::Caches,
        shared: Arc<Shared>,
    ) -> Coord<'p> {
        Coord {
            p,
            cat,
            flow: Flow::new(p, cat, flows),
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
        flows: &'p crate::flow::Caches,
        interceptors: &dyn Fn() -> Vec<(FnRef, &'static crate::catalog::InterceptorEntry)>,
    ) -> endpoints::Posts {
        endpoints::find(p, cat, &Flow::new(p, cat, flows), interceptors)
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
