//! Check-then-act: `if (alreadyDone(period)) return; charge(..); markDone(period);` with no
//! lock or atomic claim around it (IDEM005).

use crate::coord::Coord;
use crate::coord::reach::Loc;
use crate::coord::reach::Reach;
use crate::coord::syntax::{named_fn, peel};
use crate::coord::words::{has, is_lock_name, is_money_name, is_write_name};
use crate::facts::{Expr, ExprKind, Stmt};
use crate::hash::{HashMap, HashSet};
use crate::project::{FnRef, walk_expr, walk_stmts};

pub struct CheckThenAct {
    /// The guard's read call.
    pub read: Loc,
    pub read_what: String,
    pub money: Reach,
    /// The write that marks it done.
    pub write: Loc,
}

/// Calls that only unwrap or test the read's result.
const WRAPPERS: &[&str] = &[
    "map_err",
    "context",
    "with_context",
    "ok",
    "ok_or",
    "ok_or_else",
    "unwrap_or_else",
    "into",
    "orElseThrow",
    "getOrNull",
    "getOrElse",
    "firstOrNull",
    "singleOrNull",
    "equals",
    "isPresent",
    "isEmpty",
    "isNotEmpty",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap",
    "expect",
    "orElse",
    "booleanValue",
    "get",
    "contains",
    "containsKey",
    "not",
    "await",
    "block",
    "blockingGet",
    "join",
    "isTrue",
    "getOrDefault",
    "orElseGet",
    "map",
    "any",
    "all",
    "none",
    "size",
    "count",
    "len",
    "is_empty",
    "isNullOrEmpty",
    "awaitSingle",
    "awaitSingleOrNull",
    "fetch_optional",
    "fetch_one",
];

impl<'p> Coord<'p> {
    /// The check-then-act guards in the functions of `units`.
    pub fn check_then_act(&self, units: std::ops::Range<usize>) -> Vec<CheckThenAct> {
        let mut out = Vec::new();
        let mut writes_memo: HashMap<(FnRef, u32), Vec<usize>> = HashMap::default();
        let gate = self.money_gate();
        for (u, unit) in self
            .p
            .units
            .iter()
            .enumerate()
            .take(units.end)
            .skip(units.start)
        {
            // (A file none of whose functions may reach money is not read.)
            if !gate.may_reach_in(u) {
                continue;
            }
            for (f, func) in unit.facts().functions.iter().enumerate() {
                if !func.has_body {
                    continue;
                }
                let at = FnRef { unit: u, f };
                // A guard is reported only when money moves after it, in code written here.
                if !gate.may_reach(at) {
                    continue;
                }
                let mut lists: Vec<&'p [Stmt]> = vec![&func.body];
                walk_stmts(&func.body, &mut |e| {
                    if let ExprKind::Block(b) = &e.kind {
                        lists.push(b);
                    }
                });
                // Bounded work per function: real code has a handful of such guards; generated
                // validation code can have thousands.
                let mut candidates = 0;
                for list in lists {
                    for (i, s) in list.iter().enumerate() {
                        let Stmt::Expr(e) = s else { continue };
                        let ExprKind::If { cond, then, els } = &e.kind else {
                            continue;
                        };
                        if els.is_some() {
                            continue;
                        }
                        // "Already done? leave": the exit is taken when the read says yes. An
                        // exit on a negated read (`if (!auth.isSuccess()) throw ..`) is
                        // validation, not a done-check.
                        let (rest, negated_form): (Vec<&'p Stmt>, bool) = if is_exit(then) {
                            if negated(cond).is_some() {
                                continue;
                            }
                            (list[i + 1..].iter().collect(), false)
                        } else if let Some(_inner) = negated(cond) {
                            match &then.kind {
                                ExprKind::Block(b) => (b.iter().collect(), true),
                                _ => continue,
                            }
                        } else {
                            continue;
                        };
                        let cond_e = if negated_form {
                            negated(cond).unwrap_or(cond)
                        } else {
                            cond
                        };
                        let Some(read) = self
                            .guard_read(at, cond_e)
                            .filter(|r| negated_form || !under_not(cond_e, r.span, self, at))
                        else {
                            continue;
                        };
                        if !negated_form && exits_when_absent(cond_e) {
                            continue;
                        }
                        candidates += 1;
                        if candidates > 64 {
                            break;
                        }
                        let rwords = read_words(read, cond_e);
                        if let Some(g) = self.check_one(at, read, rwords, &rest, &mut writes_memo) {
                            out.push(g);
                        }
                    }
                }
            }
        }
        out
    }

    fn check_one(
        &self,
        at: FnRef,
        read: &'p Expr,
        rwords: Vec<String>,
        rest: &[&'p Stmt],
        memo: &mut HashMap<(FnRef, u32), Vec<usize>>,
    ) -> Option<CheckThenAct> {
        let mut atoms = read_atoms(read);
        // An entity loaded by id stands for that id: `invoice = repo.get(invoiceId)`, then
        // `invoice.isPaid()` .. `repo.markPaid(invoiceId)`; also through an unwrap
        // (`repo.findById(invoiceId).orElse(null)`, `.orElseThrow()`, `?`).
        for a in atoms.clone() {
            if let Some(b) = crate::coord::syntax::local_binding(self.p, at, &a, read.span.start)
                && let Some(init) = &b.init
                && let ExprKind::Call { args, .. } = &unwrapped(peel(init)).kind
            {
                for x in args {
                    atoms.extend(atoms_of(&x.value));
                }
            }
        }
        for infra in INFRA_NAMES {
            atoms.remove(*infra);
        }
        if atoms.is_empty() {
            return None;
        }
        let items: Vec<(FnRef, &'p Expr)> = rest
            .iter()
            .flat_map(|s| crate::coord::syntax::stmt_exprs(s))
            .map(|e| (at, e))
            .collect();
        let money = self.reach_exprs(items.clone(), None);
        let (money_pos, money_span) = match &money {
            Reach::Money { at: m, path, .. } => {
                let s = path.first().map(|p| p.span).unwrap_or(m.span);
                (s.start, s)
            }
            _ => return None,
        };
        // Marked (claimed) before the money moves: not check-then-act, whatever its atomicity.
        // A mark that says the work has started counts whatever its words
        // (`is_settled` .. `mark_in_progress(id)` .. transfer).
        let claim_words: Vec<String> = rwords
            .iter()
            .chain(&self.cat.coord.guards.in_progress_words)
            .cloned()
            .collect();
        if self
            .find_mark(&items, &atoms, &claim_words, read.span.end, false, memo)
            .is_some_and(|w| w.span.start < money_pos)
        {
            return None;
        }
        // The write must be its own step, not the charging call itself.
        let helper_charges = matches!(&money, Reach::Money { path, .. } if !path.is_empty());
        let write = self
            .find_mark(&items, &atoms, &rwords, money_span.end, true, memo)
            .or_else(|| {
                // The project helper that charges also marks it done afterwards
                // (`runBilling(period)` charging every customer, then `markCompleted(period)`).
                self.find_mark(&items, &atoms, &rwords, money_span.start, true, memo)
                    .filter(|w| helper_charges && w.span == money_span)
            })?;
        // The write must follow the money on one path: a write in another branch of an `if` or
        // `match` than the money (`approve` charges, `reject` saves) records nothing it did.
        if write.at == at && exclusive_branches(&self.p.func(at).body, money_span, write.span) {
            return None;
        }
        // A lock or claim before the read, here or in every caller.
        if self.guarded_before(at, read.span.start) || self.callers_guarded(at, 0) {
            return None;
        }
        Some(CheckThenAct {
            read: Loc {
                at,
                span: read.span,
                what: self.text(at.unit, read.span),
            },
            read_what: self.text(at.unit, read.span),
            money,
            write,
        })
    }

    /// The read call a condition tests: `repo.isBilled(p)`, `!repo.exists(id)`,
    /// `repo.findByPeriod(p).isPresent()`, a local holding one.
    fn guard_read(&self, at: FnRef, cond: &'p Expr) -> Option<&'p Expr> {
        let mut found: Option<&'p Expr> = None;
        let mut names: Vec<(&'p str, usize)> = Vec::new();
        walk_expr(cond, &mut |x| {
            if found.is_some() {
                return;
            }
            match &x.kind {
                ExprKind::Call { name, .. } if !WRAPPERS.contains(&name.as_str()) => {
                    found = Some(x)
                }
                ExprKind::Name(n) => names.push((n, x.span.start)),
                _ => {}
            }
        });
        // `if (invoice.paid) return`, `if invoice.status == Status::Paid { continue }`: a field
        // of the entity itself.
        if found.is_none() {
            walk_expr(cond, &mut |x| {
                if found.is_none()
                    && let ExprKind::Field { receiver, name } = &x.kind
                    && !name.starts_with(|c: char| c.is_uppercase())
                    && root_name(receiver).is_some()
                    && !matches!(&receiver.kind, ExprKind::Name(r) if r.starts_with(|c: char| c.is_uppercase()))
                {
                    found = Some(x);
                }
            });
            if let Some(x) = found {
                return (!self.of_locked_row(at, x)).then_some(x);
            }
        }
        if found.is_none()
            && let Some((n, pos)) = names.first()
            && let Some(b) = crate::coord::syntax::local_binding(self.p, at, n, *pos)
            && let Some(init) = &b.init
        {
            walk_expr(init, &mut |x| {
                if found.is_none()
                    && let ExprKind::Call { name, .. } = &x.kind
                    && !WRAPPERS.contains(&name.as_str())
                {
                    found = Some(x);
                }
            });
        }
        let read = found?;
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &read.kind
        else {
            return None;
        };
        let cat = self.cat;
        if is_money_name(cat, name)
            || is_lock_name(cat, name)
            || is_write_name(name)
            || has(&cat.coord.locks.checked_calls, name)
            || name.starts_with(|c: char| c.is_uppercase())
        {
            return None;
        }
        if args.is_empty() && receiver.is_none() {
            return None;
        }
        if self.of_locked_row(at, read) {
            return None;
        }
        // `amount.doubleValue()`: a number at hand, not stored state.
        if let Some(r) = receiver.as_deref()
            && let Some(t) = self.flow.type_in(at, r)
            && has(&cat.coord.guards.value_types, crate::facts::simple_name(&t))
        {
            return None;
        }
        if self.locking_read(at, read.span, receiver.as_deref(), name, args) {
            return None;
        }
        Some(read)
    }

    /// A read that takes a row lock: named so (`findByIdForUpdate`, `select_for_update`, a lock
    /// name), or SQL with a row lock or a lock-annotated repository method behind it.
    fn locking_read(
        &self,
        at: FnRef,
        span: crate::facts::Span,
        receiver: Option<&'p Expr>,
        name: &str,
        args: &'p [crate::facts::Arg],
    ) -> bool {
        name.contains("ForUpdate")
            || name.contains("for_update")
            || is_lock_name(self.cat, name)
            || self
                .flow
                .call_targets(at, receiver, name, args)
                .into_iter()
                .any(|t| matches!(self.through(at, span, &[t]), Some(Reach::Guarded(_))))
    }

    /// `invoice.settled()` / `invoice.paid` where `invoice` is a local read with a row lock
    /// (`val invoice = invoices.findByIdForUpdate(id)`, a `FOR UPDATE` query, a lock-annotated
    /// repository method): the check reads a row no one else can change until the transaction
    /// ends.
    fn of_locked_row(&self, at: FnRef, read: &'p Expr) -> bool {
        let (ExprKind::Call {
            receiver: Some(r), ..
        }
        | ExprKind::Field { receiver: r, .. }) = &read.kind
        else {
            return false;
        };
        let Some(root) = root_name(r) else {
            return false;
        };
        let Some(init) = crate::coord::syntax::local_binding(self.p, at, &root, read.span.start)
            .and_then(|b| b.init.as_ref())
        else {
            return false;
        };
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &peel(init).kind
        else {
            return false;
        };
        self.locking_read(at, init.span, receiver.as_deref(), name, args)
    }

    /// A write after the money that marks the read's subject done.
    fn find_mark(
        &self,
        items: &[(FnRef, &'p Expr)],
        atoms: &HashSet<String>,
        read_words: &[String],
        after: usize,
        via_helpers: bool,
        memo: &mut HashMap<(FnRef, u32), Vec<usize>>,
    ) -> Option<Loc> {
        let mut stack: Vec<(FnRef, &'p Expr)> = items.to_vec();
        let mut best: Option<Loc> = None;
        while let Some((f, e)) = stack.pop() {
            let mut found: Option<Loc> = None;
            let mut lambdas: Vec<(FnRef, &'p Expr)> = Vec::new();
            walk_expr(e, &mut |x| {
                if found.is_some() || x.span.start < after {
                    if let ExprKind::Lambda(id) = &x.kind {
                        push_lambda(self, f, *id, &mut lambdas);
                    }
                    return;
                }
                match &x.kind {
                    ExprKind::Call {
                        receiver,
                        name,
                        args,
                    } => {
                        if is_write_name(name)
                            && !is_money_name(self.cat, name)
                            && related(read_words, name)
                            && !is_request_building(self, f, receiver.as_deref(), name)
                        {
                            let mut w: HashSet<String> = HashSet::default();
                            for a in args {
                                w.extend(atoms_of(&a.value));
                            }
                            if let Some(r) = receiver
                                && let Some(root) = root_name(r)
                            {
                                w.insert(root);
                            }
                            if !w.is_disjoint(atoms) {
                                found = Some(self_loc(self, f, x));
                                return;
                            }
                        }
                        // A project helper that writes the argument it is given.
                        let targets = if via_helpers {
                            self.flow.call_targets(f, receiver.as_deref(), name, args)
                        } else {
                            Vec::new()
                        };
                        for t in targets {
                            let named_write = is_write_name(name) && related(read_words, name);
                            if !named_write && !self.writes_related(t, read_words) {
                                continue;
                            }
                            let params = self.writes_params(t, 0, memo);
                            if params.iter().any(|&j| {
                                crate::coord::syntax::param_to_arg(
                                    self.p,
                                    t,
                                    receiver.as_deref(),
                                    j,
                                )
                                .and_then(|j| args.get(j))
                                .is_some_and(|a| !atoms_of(&a.value).is_disjoint(atoms))
                            }) {
                                found = Some(self_loc(self, f, x));
                                return;
                            }
                        }
                    }
                    ExprKind::Assign { target, .. } => {
                        if let ExprKind::Field { name, .. } = &target.kind
                            && root_name(target).is_some_and(|r| atoms.contains(&r))
                            && related(read_words, &format!("set_{name}"))
                        {
                            found = Some(self_loc(self, f, x));
                        }
                    }
                    ExprKind::Lambda(id) => push_lambda(self, f, *id, &mut lambdas),
                    _ => {}
                }
            });
            if let Some(w) = found
                && best.as_ref().is_none_or(|b| w.span.start < b.span.start)
            {
                best = Some(w);
            }
            stack.extend(lambdas);
        }
        best
    }

    /// Does `f` contain a write whose name records what the read tests?
    fn writes_related(&self, f: FnRef, read_words: &[String]) -> bool {
        let mut yes = false;
        for g in self.p.with_nested(f) {
            walk_stmts(&self.p.func(g).body, &mut |x| {
                // Inside a helper only a write named after the read counts (`markPaid` for
                // `isPaid`), not any `save` it happens to make.
                if let ExprKind::Call { name, .. } = &x.kind
                    && is_write_name(name)
                    && related_by_words(read_words, name)
                {
                    yes = true;
                }
            });
        }
        yes
    }

    /// Parameters of `f` that a write in `f` (or a helper it calls) records.
    fn writes_params(
        &self,
        f: FnRef,
        depth: u32,
        memo: &mut HashMap<(FnRef, u32), Vec<usize>>,
    ) -> Vec<usize> {
        // Keyed by depth: the answer depends only on (f, depth), so it is the same whichever
        // query asks first (the depth bound also ends recursion).
        if let Some(v) = memo.get(&(f, depth)) {
            return v.clone();
        }
        let func = self.p.func(f);
        let params: Vec<&str> = func.params.iter().map(|p| p.name.as_str()).collect();
        let mut out: Vec<usize> = Vec::new();
        for g in self.p.with_nested(f) {
            let mut calls: Vec<&'p Expr> = Vec::new();
            walk_stmts(&self.p.func(g).body, &mut |x| {
                if matches!(x.kind, ExprKind::Call { .. } | ExprKind::Assign { .. }) {
                    calls.push(x);
                }
            });
            for x in calls {
                match &x.kind {
                    ExprKind::Call {
                        receiver,
                        name,
                        args,
                    } => {
                        let mut named: HashSet<String> = HashSet::default();
                        if is_write_name(name) && !is_money_name(self.cat, name) {
                            for a in args {
                                named.extend(atoms_of(&a.value));
                            }
                            if let Some(r) = receiver.as_deref().and_then(root_name) {
                                named.insert(r);
                            }
                        } else if depth < 2 {
                            for t in self.flow.call_targets(g, receiver.as_deref(), name, args) {
                                if t == f {
                                    continue;
                                }
                                for j in self.writes_params(t, depth + 1, memo) {
                                    if let Some(a) = crate::coord::syntax::param_to_arg(
                                        self.p,
                                        t,
                                        receiver.as_deref(),
                                        j,
                                    )
                                    .and_then(|j| args.get(j))
                                    {
                                        named.extend(atoms_of(&a.value));
                                    }
                                }
                            }
                        }
                        for (i, p) in params.iter().enumerate() {
                            if named.contains(*p) && !out.contains(&i) {
                                out.push(i);
                            }
                        }
                    }
                    ExprKind::Assign { target, .. } => {
                        if let Some(r) = root_name(target)
                            && let Some(i) = params.iter().position(|p| *p == r)
                            && matches!(target.kind, ExprKind::Field { .. })
                            && !out.contains(&i)
                        {
                            out.push(i);
                        }
                    }
                    _ => {}
                }
            }
        }
        memo.insert((f, depth), out.clone());
        out
    }

    /// Is there a guard in `at`'s function before `pos`, or a lock annotation on it?
    fn guarded_before(&self, at: FnRef, pos: usize) -> bool {
        let named = named_fn(self.p, at);
        if self
            .p
            .func(named)
            .annotations
            .iter()
            .any(|a| self.cat.coord.locks.annotations.contains(&a.name))
        {
            return true;
        }
        let root = self.p.outermost(at);
        let guards = self.guards_before(root, pos);
        if guards.is_empty() {
            return false;
        }
        // A guard counts when it is on the way to `pos`: the innermost block or lambda around
        // it also holds `pos` (an earlier statement, an enclosing `if`, a lock call whose
        // lambda holds it), not one in a sibling lambda.
        let mut containers: Vec<crate::facts::Span> = Vec::new();
        for g in self.p.with_nested(root) {
            containers.push(self.p.func(g).span);
            walk_stmts(&self.p.func(g).body, &mut |x| {
                if matches!(x.kind, ExprKind::Block(_)) {
                    containers.push(x.span);
                }
            });
        }
        guards.iter().any(|(g, scoped)| {
            *scoped
                || containers
                    .iter()
                    .filter(|c| c.contains(*g))
                    .min_by_key(|c| c.len())
                    .is_some_and(|c| c.start <= pos && pos < c.end)
        })
    }

    /// Is every call of `at`'s function made after a guard (or from callers that are)?
    pub fn callers_guarded(&self, at: FnRef, depth: u32) -> bool {
        if depth > 3 {
            return false;
        }
        let named = named_fn(self.p, at);
        let Some(name) = self.p.func(named).name.clone() else {
            return false;
        };
        let sites = self.p.calls_named(&name);
        // Bounded work: a helper called from everywhere is not "always called under a lock".
        if sites.len() > 64 {
            return false;
        }
        let mut any = false;
        for &(caller, span) in sites.iter() {
            if caller == named || self.p.ancestors(caller).any(|a| a == named) {
                continue;
            }
            let Some(call) = crate::project::find_call(self.p.func(caller), span) else {
                continue;
            };
            let targets = match &call.kind {
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } => self
                    .flow
                    .call_targets(caller, receiver.as_deref(), name, args),
                _ => self.p.fns_named(&name).to_vec(),
            };
            if !targets.contains(&named) {
                continue;
            }
            any = true;
            if !(self.guarded_before(caller, span.start) || self.callers_guarded(caller, depth + 1))
            {
                return false;
            }
        }
        any
    }
}

fn self_loc(co: &Coord, f: FnRef, x: &Expr) -> Loc {
    Loc {
        at: f,
        span: x.span,
        what: co.text(f.unit, x.span),
    }
}

fn push_lambda<'p>(co: &Coord<'p>, f: FnRef, id: usize, out: &mut Vec<(FnRef, &'p Expr)>) {
    out.extend(crate::coord::syntax::body_exprs(
        co.p,
        FnRef {
            unit: f.unit,
            f: id,
        },
    ));
}

/// Is this branch an early exit (`return`, `continue`, `throw`, `break`, or a short block
/// ending in one)?
/// Do `a` and `b` sit in different branches of one `if` / `match` in `body` (only one of them
/// runs)?
fn exclusive_branches(body: &[Stmt], a: crate::facts::Span, b: crate::facts::Span) -> bool {
    let mut yes = false;
    walk_stmts(body, &mut |e: &Expr| {
        if yes {
            return;
        }
        let branches: Vec<crate::facts::Span> = match &e.kind {
            ExprKind::If { then, els, .. } => std::iter::once(then.span)
                .chain(els.as_ref().map(|x| x.span))
                .collect(),
            ExprKind::Match { arms, .. } => arms.iter().map(|m| m.body.span).collect(),
            _ => return,
        };
        let of = |s: crate::facts::Span| branches.iter().position(|br| br.contains(s));
        if let (Some(i), Some(j)) = (of(a), of(b))
            && i != j
        {
            yes = true;
        }
    });
    yes
}

/// The call under the unwraps of its result (`repo.findById(id).orElse(null)` -> `repo.findById(id)`).
fn unwrapped(e: &Expr) -> &Expr {
    let mut cur = e;
    for _ in 0..8 {
        match &cur.kind {
            ExprKind::Call {
                receiver: Some(r),
                name,
                ..
            } if WRAPPERS.contains(&name.as_str())
                && matches!(peel(r).kind, ExprKind::Call { .. }) =>
            {
                cur = peel(r)
            }
            _ => break,
        }
    }
    cur
}

fn is_exit(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Return(_) | ExprKind::Continue(_) | ExprKind::Break(_) | ExprKind::Throw(_) => {
            true
        }
        ExprKind::Block(b) => b.len() <= 4 && matches!(b.last(), Some(Stmt::Expr(x)) if is_exit(x)),
        _ => false,
    }
}

/// `!x`, `x == false`, `!x.await?` -> `x`.
fn negated(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Unary { op, operand } if op == "!" => Some(operand),
        ExprKind::Binary { op, lhs, rhs } if op == "==" => match (&lhs.kind, &rhs.kind) {
            (_, ExprKind::Lit(l)) if l == "false" => Some(lhs),
            (ExprKind::Lit(l), _) if l == "false" => Some(rhs),
            _ => None,
        },
        ExprKind::Call {
            name,
            receiver: Some(r),
            args,
        } if name == "not" && args.is_empty() => Some(r),
        _ => None,
    }
}

/// The subject of a read: root names of its arguments, or of its receiver when it has none
/// (`invoice.isPaid()` -> invoice).
fn read_atoms(read: &Expr) -> HashSet<String> {
    let mut out = HashSet::default();
    let (receiver, args): (Option<&Expr>, &[crate::facts::Arg]) = match &read.kind {
        ExprKind::Call { receiver, args, .. } => (receiver.as_deref(), args),
        ExprKind::Field { receiver, .. } => (Some(receiver), &[]),
        _ => return out,
    };
    for a in args {
        out.extend(atoms_of(&a.value));
    }
    if args.is_empty()
        && let Some(r) = receiver
        && let Some(root) = root_name(r)
    {
        out.insert(root);
    }
    for infra in INFRA_NAMES {
        out.remove(*infra);
    }
    out
}

/// Names of shared infrastructure passed to every call (`state.pool`, `conn`, `tx`): they say
/// nothing about which thing a read and a write are about.
const INFRA_NAMES: &[&str] = &[
    "this",
    "self",
    "state",
    "pool",
    "conn",
    "connection",
    "db",
    "database",
    "ctx",
    "context",
    "tx",
    "txn",
    "transaction",
    "session",
    "client",
    "http",
    "em",
    "jdbc",
    "template",
    "cfg",
    "config",
    "app",
    "env",
    "executor",
    "it",
];

/// The words of a read's subject: the method or field name, plus the constant it is compared
/// with (`invoice.status == PAID` -> status, paid).
fn read_words(read: &Expr, cond: &Expr) -> Vec<String> {
    let mut w = match &read.kind {
        ExprKind::Call { name, .. } | ExprKind::Field { name, .. } => {
            crate::coord::words::words(name)
        }
        _ => Vec::new(),
    };
    walk_expr(cond, &mut |x| {
        if let ExprKind::Binary { op, lhs, rhs } = &x.kind
            && matches!(op.as_str(), "==" | "===" | "!=" | "!==")
        {
            for side in [lhs, rhs] {
                if !side.span.contains(read.span)
                    && let Some(p) = side.path_text()
                {
                    w.extend(crate::coord::words::words(crate::facts::simple_name(&p)));
                }
            }
        }
    });
    w
}

/// Does a write (`markInvoiced`, `save(..)`, `invoice.status = PAID`) record the thing a read
/// (`alreadyInvoiced`, `existsByOrderId`, `invoice.status == PAID`) tests?
fn related(read: &[String], write_name: &str) -> bool {
    const GENERIC_WRITES: &[&str] = &["save", "insert", "persist", "upsert", "record", "store"];
    const GENERIC_READS: &[&str] = &[
        "exists",
        "exist",
        "already",
        "count",
        "found",
        "processed",
        "done",
        "handled",
    ];
    let generic_write = crate::coord::words::words(write_name)
        .first()
        .is_some_and(|f| GENERIC_WRITES.contains(&f.as_str()));
    generic_write
        || read.iter().any(|w| GENERIC_READS.contains(&w.as_str()))
        || related_by_words(read, write_name)
}

/// Do the read and the write name the same thing (`isPaid` / `markPaid`,
/// `alreadyInvoiced` / `markInvoiced`)?
fn related_by_words(read: &[String], write_name: &str) -> bool {
    const READ_FILLER: &[&str] = &[
        "is", "has", "was", "were", "are", "get", "find", "fetch", "load", "check", "by", "for",
        "with", "of", "the", "and", "or", "to", "in", "on", "at", "any", "all", "did", "does",
    ];
    const WRITE_FILLER: &[&str] = &[
        "mark", "set", "save", "record", "update", "insert", "persist", "upsert", "store", "put",
        "add", "as", "by", "for", "with", "of", "the", "and", "to", "flag", "register",
    ];
    let stem = |w: &str| -> String {
        let w = w
            .strip_suffix("ed")
            .or_else(|| w.strip_suffix("ing"))
            .or_else(|| w.strip_suffix('s'))
            .or_else(|| w.strip_suffix('d'))
            .unwrap_or(w);
        w.chars().take(6).collect()
    };
    let rs: Vec<String> = read
        .iter()
        .filter(|w| !READ_FILLER.contains(&w.as_str()) && w.len() > 2)
        .map(|w| stem(w))
        .collect();
    crate::coord::words::words(write_name)
        .iter()
        .filter(|w| !WRITE_FILLER.contains(&w.as_str()) && w.len() > 2)
        .any(|w| rs.contains(&stem(w)))
}

/// Does the condition exit when the thing is *absent* (`x == null`, `x.isEmpty()`,
/// `x.is_none()`)? That is a lookup or validation, not an "already done?" check.
fn exits_when_absent(cond: &Expr) -> bool {
    match &peel(cond).kind {
        ExprKind::Binary { op, lhs, rhs } if op == "==" || op == "===" => {
            matches!(&lhs.kind, ExprKind::Lit(l) if l == "null")
                || matches!(&rhs.kind, ExprKind::Lit(l) if l == "null")
        }
        ExprKind::Call { name, .. } => matches!(
            name.as_str(),
            "isEmpty" | "is_none" | "isNullOrEmpty" | "isNullOrBlank" | "isBlank" | "is_empty"
        ),
        ExprKind::Binary { op, lhs, .. } if op == "||" || op == "&&" => exits_when_absent(lhs),
        _ => false,
    }
}

/// A setter on a request, builder or parameter object being put together (`params.setAmount(..)`,
/// `post.setEntity(..)`, `ChargeCreateParams.builder().putMetadata(..)`): not a record of work
/// done.
fn is_request_building(co: &Coord, at: FnRef, receiver: Option<&Expr>, name: &str) -> bool {
    if matches!(
        name,
        "setEntity"
            | "setHeader"
            | "addHeader"
            | "setBody"
            | "header"
            | "body"
            | "form"
            | "json"
            | "query"
            | "param"
            | "bind"
            | "setParameter"
            | "putMetadata"
    ) {
        return true;
    }
    const BUILT: &[&str] = &[
        "Params", "Request", "Builder", "Options", "Entity", "Body", "Form", "Dto", "Payload",
        "HttpPost", "HttpPut", "Headers", "Command",
        // A collection made in the function (`metadata.insert("invoice_id", id)`,
        // `val tags = mutableMapOf(..)`) records nothing.
        "Map", "Set", "Vec", "List", "MapOf", "SetOf", "ListOf",
    ];
    let mut cur = receiver.map(peel);
    while let Some(x) = cur {
        match &x.kind {
            ExprKind::Call { name, receiver, .. } => {
                if matches!(
                    name.as_str(),
                    "builder" | "newBuilder" | "toBuilder" | "Builder"
                ) {
                    return true;
                }
                cur = receiver.as_deref().map(peel);
            }
            ExprKind::New { ty, .. } => {
                return BUILT
                    .iter()
                    .any(|b| crate::facts::simple_name(ty).ends_with(b));
            }
            ExprKind::Name(n) => {
                let ty =
                    crate::coord::syntax::local_binding(co.p, at, n, usize::MAX).and_then(|b| {
                        b.ty.clone().or_else(|| {
                            b.init.as_ref().and_then(|i| match &peel(i).kind {
                                ExprKind::New { ty, .. } => Some(ty.to_string()),
                                ExprKind::Call { name, receiver, .. } => {
                                    if matches!(name.as_str(), "builder" | "newBuilder") {
                                        Some("Builder".into())
                                    } else if matches!(
                                        name.as_str(),
                                        "new" | "with_capacity" | "default"
                                    ) {
                                        // `HashMap::new()`, `Vec::with_capacity(n)`.
                                        receiver.as_deref().and_then(|r| r.path_text())
                                    } else if receiver.is_none() {
                                        Some(name.to_string())
                                    } else {
                                        None
                                    }
                                }
                                _ => None,
                            })
                        })
                    });
                return ty.is_some_and(|t| {
                    BUILT
                        .iter()
                        .any(|b| crate::facts::simple_name(&t).ends_with(b))
                });
            }
            _ => return false,
        }
    }
    false
}

/// Root names of the values in `e`: `customer.getId()` -> customer, `&period` -> period.
fn atoms_of(e: &Expr) -> HashSet<String> {
    let mut out = HashSet::default();
    walk_expr(e, &mut |x| {
        if let ExprKind::Name(n) = &x.kind
            && n != "this"
            && n != "self"
            && !n.starts_with(|c: char| c.is_uppercase())
        {
            out.insert(n.to_string());
        }
    });
    out
}

/// The name a chain starts from: `invoice.status` -> invoice, `this.x` -> x.
fn root_name(e: &Expr) -> Option<String> {
    let mut cur = peel(e);
    loop {
        match &cur.kind {
            ExprKind::Name(n) if n != "this" && n != "self" => return Some(n.to_string()),
            ExprKind::Field { receiver, name } => {
                if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") {
                    return Some(name.to_string());
                }
                cur = peel(receiver);
            }
            ExprKind::Call {
                receiver: Some(r), ..
            } => cur = peel(r),
            ExprKind::Unary { operand, .. } => cur = peel(operand),
            _ => return None,
        }
    }
}

/// Is the read (or the local holding it) tested negated in `cond` (`!memberOrder && ..`)?
fn under_not(cond: &Expr, read: crate::facts::Span, co: &Coord, at: FnRef) -> bool {
    let mut yes = false;
    walk_expr(cond, &mut |x| {
        if let ExprKind::Unary { op, operand } = &x.kind
            && op == "!"
        {
            if operand.span.contains(read) {
                yes = true;
            }
            if let ExprKind::Name(n) = &peel(operand).kind
                && crate::coord::syntax::local_binding(co.p, at, n, x.span.start)
                    .and_then(|b| b.init.as_ref())
                    .is_some_and(|i| i.span.contains(read))
            {
                yes = true;
            }
        }
    });
    yes
}
