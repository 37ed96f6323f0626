//! The ordered walk: from a job's code, in source order, through lambdas written in it and
//! project helpers it calls (in any file), what comes first: a guard (distributed lock,
//! atomic claim, leader check) or money moving?

use super::Coord;
use super::reach::{Loc, Reach};
use super::syntax::named_fn;
use super::words::{is_leader_name, is_lock_name, is_money_name, is_payment_port_call};
use crate::facts::{Expr, ExprKind, Span, simple_name};
use crate::hash::HashMap;
use crate::project::FnRef;

/// How many project calls deep a money-like *name* still counts as money moving.
pub(crate) const MAX_NAME_DEPTH: usize = 3;

/// How many project calls deep money still counts as moved by the code that calls down there
/// (longer chains are not evidence, and the paths stay short).
const MAX_DEPTH: usize = 24;
/// How many walks answering one call cycle's functions from each of them may take, and how
/// deep those walks may nest.
const CYCLE_BUDGET: usize = 4096;
const MAX_CYCLE_DEPTH: usize = 64;

impl<'p> Coord<'p> {
    /// The first guard or money event of calling `f` (memoised).
    ///
    /// The answer does not depend on what was asked before: functions that call each other
    /// (a strongly connected part of the call graph) are answered together
    /// ([`Self::answer_part`]), after every function they call outside it.
    pub fn reach_fn(&self, f: FnRef) -> Reach {
        if let Some(calls) = self.recording.borrow_mut().as_mut() {
            calls.push(f);
            return Reach::Nothing;
        }
        if let Some(r) = self.reach.borrow().get(&f) {
            return r.clone();
        }
        if self.walking.get() {
            // Answering a function: everything it calls is answered or in its part.
            let in_part = self.solving.borrow().get(&f).cloned();
            return match in_part {
                None => {
                    debug_assert!(false, "{f:?} was not recorded as a callee");
                    Reach::Nothing
                }
                // The part's fixed answer (see `answer_part`).
                Some(r) if !self.from_start.get() => r,
                // A call back into a function on the current path finds nothing new.
                Some(_) if self.path.borrow().contains(&f) => Reach::Nothing,
                Some(_) if self.budget.get() == 0 => Reach::Nothing,
                // Bounded nesting (each level is a nested walk): too deep counts as too many.
                Some(_) if self.path.borrow().len() >= MAX_CYCLE_DEPTH => {
                    self.budget.set(0);
                    Reach::Nothing
                }
                Some(_) => {
                    self.budget.set(self.budget.get() - 1);
                    self.path.borrow_mut().push(f);
                    let r = self.reach_body(f);
                    self.path.borrow_mut().pop();
                    r
                }
            };
        }
        if !self.adopt(f, |_| false) {
            self.solve(f);
        }
        self.reach
            .borrow()
            .get(&f)
            .cloned()
            .unwrap_or(Reach::Nothing)
    }

    /// `reach_body(f)` as part of answering it: calls are looked up, never solved.
    fn answer_walk(&self, f: FnRef) -> Reach {
        let saved = self.walking.replace(true);
        self.path.replace(vec![f]);
        let r = self.reach_body(f);
        self.walking.set(saved);
        r
    }

    /// The first event of `f`'s own body, with callees answered by [`Self::reach_fn`].
    fn reach_body(&self, f: FnRef) -> Reach {
        let func = self.p.func(f);
        match func
            .annotations
            .iter()
            .find(|a| self.cat.coord.locks.annotations.contains(&a.name))
        {
            Some(a) => Reach::Guarded(Loc {
                at: f,
                span: a.span,
                what: format!("@{}", a.name),
            }),
            None => self.reach_stmts(f, &func.body, None),
        }
    }

    /// The project functions `f`'s walk may ask about: every callee it reaches when each
    /// answers "nothing" (other answers only end the walk sooner), and what the walk finds
    /// then.
    fn callees_of(&self, f: FnRef) -> (Vec<FnRef>, Reach) {
        let saved = self.recording.replace(Some(Vec::new()));
        let found = self.reach_body(f);
        let mut calls = self.recording.replace(saved).unwrap_or_default();
        let mut seen = crate::hash::HashSet::default();
        calls.retain(|c| seen.insert(*c));
        (calls, found)
    }

    /// Answers `root` and everything it may call that is not answered yet, one strongly
    /// connected part at a time, callees first (Tarjan's algorithm, without recursion).
    fn solve(&self, root: FnRef) {
        /// A function's place in the search: visit order, lowest reachable, still open.
        struct Node {
            order: usize,
            low: usize,
            open: bool,
            calls: Vec<FnRef>,
            found: Reach,
        }
        let mut nodes: HashMap<FnRef, Node> = HashMap::default();
        let mut open: Vec<FnRef> = Vec::new();
        // (function, next call to look at)
        let mut path: Vec<(FnRef, usize)> = Vec::new();
        let visit = |f: FnRef, nodes: &mut HashMap<FnRef, Node>, open: &mut Vec<FnRef>| {
            let order = nodes.len();
            let (calls, found) = self.callees_of(f);
            nodes.insert(
                f,
                Node {
                    order,
                    low: order,
                    open: true,
                    calls,
                    found,
                },
            );
            open.push(f);
        };
        visit(root, &mut nodes, &mut open);
        path.push((root, 0));
        while let Some(&(f, next)) = path.last() {
            if let Some(&c) = nodes[&f].calls.get(next) {
                path.last_mut().expect("a frame").1 += 1;
                if self.reach.borrow().contains_key(&c)
                    || self.solving.borrow().contains_key(&c)
                    || self.adopt(c, |g| nodes.contains_key(g))
                {
                    continue;
                }
                match nodes.get(&c) {
                    None => {
                        visit(c, &mut nodes, &mut open);
                        path.push((c, 0));
                    }
                    Some(n) if n.open => {
                        let order = n.order;
                        let me = nodes.get_mut(&f).expect("visited");
                        me.low = me.low.min(order);
                    }
                    Some(_) => {}
                }
                continue;
            }
            path.pop();
            let Node { order, low, .. } = nodes[&f];
            if let Some(&(parent, _)) = path.last() {
                let p = nodes.get_mut(&parent).expect("visited");
                p.low = p.low.min(low);
            }
            if low == order {
                let at = open.iter().rposition(|x| *x == f).expect("open");
                let part: Vec<(FnRef, Vec<FnRef>, Reach)> = open
                    .split_off(at)
                    .into_iter()
                    .map(|g| {
                        let n = nodes.get_mut(&g).expect("visited");
                        n.open = false;
                        (
                            g,
                            std::mem::take(&mut n.calls),
                            std::mem::replace(&mut n.found, Reach::Nothing),
                        )
                    })
                    .collect();
                self.answer_part(part);
            }
        }
    }

    /// Answers one strongly connected part (functions with what they call and what their
    /// recording walk found), the same way whatever query came in by and whatever order the
    /// functions are declared in.
    ///
    /// Each function is answered by a walk that starts there, as when it is asked about on
    /// its own: a call into the part walks the callee in turn, and a call back into a
    /// function on the current path finds nothing new. That can take many walks in a large,
    /// dense cycle; past [`CYCLE_BUDGET`] of them, every call into the part answers with the
    /// money that one of its functions moves on its own (the least such function) through an
    /// SDK call or a POST to a payment endpoint, or nothing (a money-like name far away is no
    /// evidence). A function whose callees all find nothing keeps what its recording walk found.
    fn answer_part(&self, part: Vec<(FnRef, Vec<FnRef>, Reach)>) {
        // What `f` finds when calls into the part look up their answers in `solving`: what its
        // recording walk found if every callee finds nothing, else a walk.
        let answer = |(f, calls, found): &(FnRef, Vec<FnRef>, Reach)| {
            let nothing = {
                let (reach, solving) = (self.reach.borrow(), self.solving.borrow());
                calls.iter().all(|c| {
                    matches!(
                        reach.get(c).or_else(|| solving.get(c)),
                        Some(Reach::Nothing)
                    )
                })
            };
            if nothing {
                found.clone()
            } else {
                self.answer_walk(*f)
            }
        };
        if let [(f, calls, _)] = &part[..]
            && !calls.contains(f)
        {
            let r = answer(&part[0]);
            self.publish(vec![(*f, r)]);
            return;
        }
        let mut part = part;
        part.sort_by_key(|(f, ..)| *f);
        self.solving
            .replace(part.iter().map(|(f, ..)| (*f, Reach::Nothing)).collect());
        // Each function from the start, within the budget for the whole part.
        self.from_start.set(true);
        self.budget.set(CYCLE_BUDGET);
        let mut answers: Vec<(FnRef, Reach)> = part
            .iter()
            .map(|(f, ..)| (*f, self.answer_walk(*f)))
            .collect();
        if self.budget.get() == 0 {
            // Too many: calls into the part find the money one of its functions moves when
            // calls into the part find nothing.
            self.from_start.set(false);
            let money = part
                .iter()
                .map(answer)
                .find(|r| matches!(r, Reach::Money { by_name: false, .. }))
                .unwrap_or(Reach::Nothing);
            for r in self.solving.borrow_mut().values_mut() {
                *r = money.clone();
            }
            answers = part
                .iter()
                .map(|(f, ..)| (*f, self.answer_walk(*f)))
                .collect();
        }
        self.from_start.set(false);
        self.solving.borrow_mut().clear();
        self.publish(answers);
    }

    /// Records a part's answers, here and for the run's other analyses.
    fn publish(&self, answers: Vec<(FnRef, Reach)>) {
        let members: std::sync::Arc<[FnRef]> = answers.iter().map(|(f, _)| *f).collect();
        if let Ok(mut shared) = self.shared.answers.write() {
            for (f, r) in &answers {
                shared
                    .entry(*f)
                    .or_insert_with(|| (r.clone(), members.clone()));
            }
        }
        self.reach.borrow_mut().extend(answers);
    }

    /// Takes `f`'s answer, with those of its whole part, from another analysis of the run,
    /// unless this analysis's current search has `visited` one of the part's functions.
    fn adopt(&self, f: FnRef, visited: impl Fn(&FnRef) -> bool) -> bool {
        let Ok(shared) = self.shared.answers.read() else {
            return false;
        };
        let Some((_, members)) = shared.get(&f) else {
            return false;
        };
        if members.iter().any(&visited) {
            return false;
        }
        let mut reach = self.reach.borrow_mut();
        for m in members.iter() {
            if let Some((r, _)) = shared.get(m) {
                reach.insert(*m, r.clone());
            }
        }
        true
    }

    /// The first event in `stmts` of `at`, optionally only before position `until`.
    pub fn reach_stmts(
        &self,
        at: FnRef,
        stmts: &'p [crate::facts::Stmt],
        until: Option<usize>,
    ) -> Reach {
        let mut items: Vec<(FnRef, &'p Expr)> = Vec::new();
        for s in stmts {
            items.extend(super::syntax::stmt_exprs(s).into_iter().map(|e| (at, e)));
        }
        self.reach_exprs(items, until)
    }

    /// The first event in these expressions, in order.
    pub fn reach_exprs(&self, items: Vec<(FnRef, &'p Expr)>, until: Option<usize>) -> Reach {
        let mut stack: Vec<(FnRef, &'p Expr)> = items.into_iter().rev().collect();
        // The recording walk is not cut short: it must see every call a real walk (which
        // skips what a lock runs) can reach. What it finds is what a walk cut short finds.
        let recording = self.recording.borrow().is_some();
        let mut steps = 0usize;
        while let Some((at, e)) = stack.pop() {
            steps += 1;
            if steps > 200_000 && !recording {
                break;
            }
            if until.is_some_and(|u| e.span.start >= u) {
                continue;
            }
            match self.event(at, e) {
                // `executeWithLock(this::rotateKeys, cfg)`, `locks.withLock("x") { .. }`: the lock
                // covers the work handed to it, not what follows.
                Some(Reach::Guarded(_)) if runs_work(e) => continue,
                Some(_) if steps > 200_000 => return Reach::Nothing,
                Some(r) => return r,
                None => {}
            }
            // Children in source order; lambdas written here run here (forEach, executeWithLock,
            // scope functions) as far as ordering goes.
            let start = stack.len();
            match &e.kind {
                ExprKind::Lambda(id) => stack.extend(super::syntax::body_exprs(
                    self.p,
                    FnRef {
                        unit: at.unit,
                        f: *id,
                    },
                )),
                ExprKind::New { body: Some(t), .. } | ExprKind::Object(t) => {
                    let ty = &self.p.units[at.unit].facts().types[*t];
                    for &m in &ty.methods {
                        stack.extend(super::syntax::body_exprs(
                            self.p,
                            FnRef {
                                unit: at.unit,
                                f: m,
                            },
                        ));
                    }
                }
                _ => e.for_each_child(|c| stack.push((at, c))),
            }
            stack[start..].reverse();
        }
        Reach::Nothing
    }

    /// Spans of every guard in `root` (and the lambdas in it) that starts before `pos`.
    pub fn guards_before(&self, root: FnRef, pos: usize) -> Vec<(Span, bool)> {
        let mut out = Vec::new();
        let mut stack: Vec<(FnRef, &'p Expr)> = Vec::new();
        for s in self.p.func(root).body.iter().rev() {
            for e in super::syntax::stmt_exprs(s) {
                stack.push((root, e));
            }
        }
        let mut steps = 0usize;
        while let Some((at, e)) = stack.pop() {
            steps += 1;
            if steps > 200_000 || e.span.start >= pos {
                continue;
            }
            if let Some(Reach::Guarded(g)) = self.event(at, e) {
                if runs_work(e) {
                    // Guards only what runs inside it.
                    if e.span.contains(Span::new(pos, pos)) {
                        out.push((e.span, true));
                    }
                    continue;
                }
                out.push((
                    if g.at.unit == root.unit && g.span.start < pos && e.span.contains(g.span) {
                        g.span
                    } else {
                        e.span
                    },
                    false,
                ));
            }
            match &e.kind {
                ExprKind::Lambda(id) => stack.extend(super::syntax::body_exprs(
                    self.p,
                    FnRef {
                        unit: at.unit,
                        f: *id,
                    },
                )),
                _ => e.for_each_child(|c| stack.push((at, c))),
            }
        }
        out
    }

    fn loc(&self, at: FnRef, span: Span) -> Loc {
        Loc {
            at,
            span,
            what: self.text(at.unit, span),
        }
    }

    /// Is `e` itself a guard or money event (or a call whose callee decides)?
    fn event(&self, at: FnRef, e: &'p Expr) -> Option<Reach> {
        match &e.kind {
            ExprKind::Str(s) => self.sql_event(at, e.span, s),
            // SQL split over concatenated literals: `"INSERT .. " + "ON CONFLICT DO NOTHING"`.
            ExprKind::Binary { op, .. } if op == "+" => {
                let mut text = String::new();
                let mut only_strings = true;
                crate::project::walk_expr(e, &mut |x| match &x.kind {
                    ExprKind::Str(s) => text.push_str(s),
                    ExprKind::Binary { op, .. } if op == "+" => {}
                    _ => only_strings = false,
                });
                if only_strings || text.len() > 12 {
                    self.sql_event(at, e.span, &text)
                } else {
                    None
                }
            }
            // `if (!isLeader) return`, `if leader.load(..) { .. }`: a leader flag tested.
            ExprKind::If { cond, .. } => {
                let mut leader = None;
                crate::project::walk_expr(cond, &mut |x| {
                    if let ExprKind::Name(n) | ExprKind::Field { name: n, .. } = &x.kind
                        && is_leader_name(n)
                        && leader.is_none()
                    {
                        leader = Some(x.span);
                    }
                });
                leader.map(|s| Reach::Guarded(self.loc(at, s)))
            }
            ExprKind::Name(n) | ExprKind::Field { name: n, .. } => {
                // SQL held in a constant: `CLAIM_BATCH = ".. FOR UPDATE SKIP LOCKED"`.
                if n.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    && let Some(v) = self.const_text(at, e)
                    && self.sql_lock_word(&v).is_some()
                {
                    return Some(Reach::Guarded(self.loc(at, e.span)));
                }
                None
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => self.call_event(at, e, receiver.as_deref(), name, args),
            ExprKind::New { ty, .. } => {
                if self.shared.posts.at_site(at.unit, e.span).is_some() {
                    return Some(self.money(at, e.span, Vec::new()));
                }
                let _ = ty;
                None
            }
            ExprKind::MethodRef { receiver, name } => {
                // `customers.forEach(this::charge)`: runs the method here.
                let targets = self.method_ref_targets(at, receiver.as_deref(), name);
                self.through(at, e.span, &targets)
            }
            ExprKind::Macro { name, .. }
                if name == "query" || name == "query_as" || name == "query_scalar" =>
            {
                None
            }
            _ => None,
        }
    }

    /// The catalogue's SQL lock word in `text` (`pg_try_advisory_lock`, `skip locked`), if any.
    pub fn sql_lock_word(&self, text: &str) -> Option<&'p str> {
        let low = text.to_ascii_lowercase();
        self.cat
            .coord
            .locks
            .sql_locks
            .iter()
            .find(|k| low.contains(k.as_str()))
            .map(|k| k.as_str())
    }

    /// SQL text that locks (advisory locks, `SKIP LOCKED`) or, when its result is tested,
    /// claims (`INSERT .. ON CONFLICT DO NOTHING`, `UPDATE .. WHERE status = 'PENDING'`).
    fn sql_event(&self, at: FnRef, span: Span, text: &str) -> Option<Reach> {
        let locks = &self.cat.coord.locks;
        let low = text.to_ascii_lowercase();
        if self.sql_lock_word(text).is_some() {
            return Some(Reach::Guarded(self.loc(at, span)));
        }
        let insert = low.contains("insert") || low.contains("merge");
        let claim = (insert || low.contains("on conflict") || low.contains("on duplicate key"))
            && locks.sql_claims.iter().any(|k| low.contains(k.as_str()))
            || (low.trim_start().starts_with("update")
                && low.split_once("where").is_some_and(|(_, w)| {
                    [
                        "status",
                        "state",
                        "claimed",
                        "owner",
                        "lock",
                        "processing",
                        "is null",
                        "pending",
                    ]
                    .iter()
                    .any(|c| w.contains(c))
                }));
        (claim && self.is_checked(at, span)).then(|| Reach::Guarded(self.loc(at, span)))
    }

    /// The literal text of a constant (concatenated pieces included).
    pub fn const_text(&self, at: FnRef, e: &Expr) -> Option<String> {
        let (owner, name) = match &e.kind {
            ExprKind::Name(n) => (None, n.as_str()),
            ExprKind::Field { receiver, name } => (receiver.path_text(), name.as_str()),
            _ => return None,
        };
        let owner = owner.filter(|o| o != "this" && o != "self");
        let key = (at.unit, owner.clone(), name.to_string());
        if let Some(v) = self.const_texts.borrow().get(&key) {
            return v.clone();
        }
        let text = super::syntax::field_binding(self.p, at.unit, Some(at), owner.as_deref(), name)
            .and_then(|(_, b)| b.init.as_ref())
            .and_then(|init| {
                let mut text = String::new();
                crate::project::walk_expr(init, &mut |x| {
                    if let ExprKind::Str(s) = &x.kind {
                        text.push_str(s);
                    }
                });
                (!text.is_empty()).then_some(text)
            });
        self.const_texts.borrow_mut().insert(key, text.clone());
        text
    }

    fn money(&self, at: FnRef, span: Span, path: Vec<Loc>) -> Reach {
        Reach::Money {
            at: self.loc(at, span),
            path,
            by_name: false,
        }
    }

    fn money_by_name(&self, at: FnRef, span: Span) -> Reach {
        Reach::Money {
            at: self.loc(at, span),
            path: Vec::new(),
            by_name: true,
        }
    }

    fn call_event(
        &self,
        at: FnRef,
        e: &'p Expr,
        receiver: Option<&'p Expr>,
        name: &str,
        args: &'p [crate::facts::Arg],
    ) -> Option<Reach> {
        let cat = self.cat;
        if self.shared.posts.at_site(at.unit, e.span).is_some() {
            return Some(self.money(at, e.span, Vec::new()));
        }
        // A claim whose answer is tested: `setIfAbsent(..)`, Redis `SET key value NX` (Jedis,
        // Lettuce, a redis-rs `cmd("SET")..arg("NX")..query(..)` chain).
        if super::lockkeys::is_set_nx(name, args)
            || cat.coord.locks.checked_calls.iter().any(|c| c == name)
            || (name != "arg" && super::lockkeys::is_redis_set_nx_chain(e))
        {
            return self
                .is_checked(at, e.span)
                .then(|| Reach::Guarded(self.loc(at, e.span)));
        }
        // Constructing a lock or an elector (`LeaseLeaderElector(..)`) takes nothing.
        if is_lock_name(cat, name)
            && !name.starts_with(|c: char| c.is_uppercase())
            && !self.is_local_lock(at, receiver, name, args)
        {
            return Some(Reach::Guarded(self.loc(at, e.span)));
        }
        let (targets, all_must_agree) = self.flow.call_targets_agree(at, receiver, name, args);
        // A call through an interface runs one of its implementations: money only when every
        // one of them moves it (`command.execute()` with a charge and a cancel command).
        if all_must_agree {
            let bodies: Vec<FnRef> = targets
                .iter()
                .copied()
                .filter(|t| *t != at && self.p.func(*t).has_body)
                .collect();
            if bodies.len() > 1 {
                let money = bodies
                    .iter()
                    .filter(|t| {
                        matches!(self.through(at, e.span, &[**t]), Some(Reach::Money { .. }))
                    })
                    .count();
                if money > 0 && money < bodies.len() {
                    return None;
                }
            }
        }
        if !targets.is_empty() {
            match self.through(at, e.span, &targets) {
                // A helper that takes a lock guards what follows only when its answer is
                // tested (`if (!guard.tryBegin()) return`) or it runs the work itself
                // (`locks.runExclusive { .. }`); `elector.start()` guards nothing.
                Some(Reach::Guarded(g)) => {
                    let runs_work = args.iter().any(|a| {
                        matches!(
                            a.value.kind,
                            ExprKind::Lambda(_) | ExprKind::MethodRef { .. } | ExprKind::Object(_)
                        )
                    });
                    if runs_work || self.is_checked(at, e.span) {
                        return Some(Reach::Guarded(g));
                    }
                }
                Some(r) => return Some(r),
                None => {}
            }
            if targets.iter().any(|t| self.p.func(*t).has_body) {
                return None;
            }
        }
        if self.shared.posts.moves_no_money(at.unit, e.span) {
            return None;
        }
        if self.is_sdk_money_call(receiver, name, args) {
            return Some(self.money(at, e.span, Vec::new()));
        }
        if self.is_money_call(at, receiver, name, args)
            && !self.field_accessor(at, receiver, name, args.len())
        {
            // A money-like name on a fluent chain of the project's own methods
            // (`amounts.plusFees(..).plusPenaltyCharges(..)`, where a project class declares
            // both `plusFees` and `plusPenaltyCharges`): what runs is that class's method, so
            // money moves only if it moves it. (A chain through a library,
            // `gateway.transaction().refund(..)`, is the library's call.)
            if targets.is_empty() {
                let own = self.fluent_chain_methods(at, receiver, name, args.len());
                if !own.is_empty() {
                    return self
                        .through(at, e.span, &own)
                        .filter(|r| matches!(r, Reach::Money { .. }));
                }
            }
            return Some(self.money_by_name(at, e.span));
        }
        // A method of a project interface that nothing in the project implements, named as a
        // payment port (`billingGateway.collect(..)`): its adapter to the provider lives in
        // another library.
        if !targets.is_empty()
            && targets.iter().all(|t| {
                self.p.enclosing_type(*t).is_some_and(|ty| {
                    let decl = &self.p.units[t.unit].facts().types[ty];
                    matches!(decl.kind, crate::facts::TypeKind::Interface)
                        && decl
                            .name
                            .as_deref()
                            .is_some_and(|n| is_payment_port_call(cat, n, name))
                })
            })
        {
            return Some(self.money_by_name(at, e.span));
        }
        None
    }

    /// A Java call named like a field of its receiver's class: an accessor that Lombok
    /// (`@Accessors(fluent = true)`) or a record generates (`penaltyCharges()`,
    /// `amounts.penaltyCharges()`, `new OutstandingAmountsDTO(c).penaltyCharges(x)`), not a
    /// charge. (In Kotlin such a call invokes a property of function type: it is what the
    /// property holds.)
    fn field_accessor(&self, at: FnRef, receiver: Option<&Expr>, name: &str, arity: usize) -> bool {
        if self.p.units[at.unit].lang != crate::facts::Lang::Java {
            return false;
        }
        let has_field = |t: &crate::facts::TypeDecl| t.fields.iter().any(|b| b.name == name);
        let type_has_field = |ty: &str| self.p.type_has_field(ty, name);
        if crate::flow::is_self_receiver(receiver) {
            // Java never calls a field: a call without a receiver that the class does not
            // declare is a generated accessor, or a method inherited from a library base
            // class or statically imported (`chargeCustomer(..)` from `BillingJobSupport`).
            let facts = &self.p.units[at.unit].facts();
            let imported = facts.imports.iter().any(|i| {
                i.ends_with(&format!(".{name}"))
                    || i.strip_suffix(".*").is_some_and(|owner| {
                        simple_name(owner).starts_with(|c: char| c.is_uppercase())
                    })
            });
            return !imported
                && self.p.enclosing_type(at).is_some_and(|t| {
                    let decl = &facts.types[t];
                    has_field(decl)
                        && decl
                            .supertypes
                            .iter()
                            .all(|s| !self.p.types_named(simple_name(s)).is_empty())
                });
        }
        if let Some(ty) = receiver.and_then(|r| self.flow.type_in(at, r)) {
            return type_has_field(&ty);
        }
        // A fluent chain on a new object: `new OutstandingAmountsDTO(c).principal(p)..`.
        if let Some(ty) = receiver.and_then(|r| crate::flow::constructed_type(chain_root(r))) {
            return type_has_field(&ty);
        }
        // A value of unknown type (`cache.get(id).penaltyCharges()`, `s -> s.penaltyCharges()`):
        // a getter named like a component of a project record, or a field of a class with
        // fluent accessors, that no project method is named like. Only names of two words or
        // more: an SDK's `intent.capture()` stays money even if some record has a `capture`.
        arity == 0
            && super::words::words(name).len() >= 2
            && self.p.fns_named(name).is_empty()
            && self.p.field_owners(name).any(|(u, t)| {
                let decl = &self.p.units[u].facts().types[t];
                decl.kind == crate::facts::TypeKind::Record
                    || decl.annotations.iter().any(|a| a.name == "Accessors")
            })
    }

    /// Methods named `name` (with `arity` arguments and a body, other than `at`) of the project
    /// class a fluent chain `receiver` works on: the chain starts at a value of that class
    /// (a typed local or field, or `new T(..)`) and calls that class's own methods
    /// (`amounts.plusFees(..)`). Empty for anything else, such as a chain that starts at a
    /// library object (`gateway.transaction()`).
    fn fluent_chain_methods(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        arity: usize,
    ) -> Vec<FnRef> {
        let Some(r) = receiver.map(super::syntax::peel) else {
            return Vec::new();
        };
        let ExprKind::Call { name: inner, .. } = &r.kind else {
            return Vec::new();
        };
        if self.flow.type_in(at, r).is_some() {
            return Vec::new();
        }
        let root = chain_root(r);
        let Some(ty) = crate::flow::constructed_type(root).or_else(|| self.flow.type_in(at, root))
        else {
            return Vec::new();
        };
        let methods = |n: &str| -> Vec<FnRef> {
            self.p
                .types_named(&ty)
                .iter()
                .flat_map(|t| {
                    self.p.units[t.unit].facts().types[t.t]
                        .methods
                        .iter()
                        .map(move |&m| FnRef { unit: t.unit, f: m })
                })
                .filter(|f| {
                    let func = self.p.func(*f);
                    func.has_body && func.name.as_deref() == Some(n)
                })
                .collect()
        };
        if methods(inner).is_empty() {
            return Vec::new();
        }
        let mut out: Vec<FnRef> = methods(name)
            .into_iter()
            .filter(|t| *t != at && self.p.arity_ok(*t, arity))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Calls into project functions: money if any callee moves money first, guarded if one
    /// takes a lock first (and none moves money).
    pub(crate) fn through(&self, at: FnRef, span: Span, targets: &[FnRef]) -> Option<Reach> {
        let mut guarded = None;
        for &t in targets {
            if t == at {
                continue;
            }
            let func = self.p.func(t);
            if !func.has_body {
                if let Some(site) = self.shared.posts.declared(t) {
                    let _ = site;
                    return Some(self.money(at, span, Vec::new()));
                }
                if func
                    .name
                    .as_deref()
                    .is_some_and(|n| is_money_name(self.cat, n))
                {
                    return Some(self.money(at, span, Vec::new()));
                }
                if let Some(a) = func.annotations.iter().find(|a| {
                    self.cat.coord.locks.annotations.contains(&a.name) || self.annotation_locks(a)
                }) {
                    guarded = Some(Reach::Guarded(Loc {
                        at: t,
                        span: a.span,
                        what: format!("@{}", a.name),
                    }));
                }
                continue;
            }
            match self.reach_fn(t) {
                // A money-like name far down a call chain (a framework's `captureAll()` seven
                // calls below) is not evidence that this code moves money.
                Reach::Money {
                    by_name: true,
                    path,
                    ..
                } if path.len() >= MAX_NAME_DEPTH => {}
                Reach::Money { path, .. } if path.len() >= MAX_DEPTH => {}
                Reach::Money {
                    at: m,
                    mut path,
                    by_name,
                } => {
                    path.insert(0, self.loc(at, span));
                    return Some(Reach::Money {
                        at: m,
                        path,
                        by_name,
                    });
                }
                Reach::Guarded(g) => guarded = Some(Reach::Guarded(g)),
                Reach::Nothing => {}
            }
        }
        guarded
    }

    /// `@Query("SELECT .. FOR UPDATE SKIP LOCKED")` on a repository method.
    fn annotation_locks(&self, a: &crate::facts::Annotation) -> bool {
        a.args.iter().any(|x| match &x.value.kind {
            ExprKind::Str(s) => self.sql_lock_word(s).is_some(),
            ExprKind::Field { name, .. } | ExprKind::Name(name) => name.starts_with("PESSIMISTIC"),
            _ => false,
        })
    }

    pub(crate) fn method_ref_targets(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
    ) -> Vec<FnRef> {
        let own = matches!(receiver.map(|r| &r.kind), None | Some(ExprKind::Name(_)) if receiver.is_none_or(|r| matches!(&r.kind, ExprKind::Name(n) if n == "this" || n == "self")));
        let cands = self.p.fns_named(name);
        if own {
            let my = self.p.enclosing_type(named_fn(self.p, at));
            let mine: Vec<FnRef> = self
                .p
                .fns_named_in(at.unit, name)
                .iter()
                .copied()
                .filter(|f| self.p.func(*f).owner.is_some() && self.p.func(*f).owner == my)
                .collect();
            if !mine.is_empty() {
                return mine;
            }
        }
        if let Some(r) = receiver
            && let Some(t) = self
                .flow
                .type_in(at, r)
                .or_else(|| r.path_text().map(|p| simple_name(&p).to_string()))
        {
            // Every method of that name on the type or below it: the same few are asked for
            // again and again, and each answer walks every method of the name.
            let key = (name.to_string(), t);
            let known = self.methods_on.borrow().get(&key).cloned();
            let on = known.unwrap_or_else(|| {
                let on: crate::project::Targets = cands
                    .iter()
                    .copied()
                    .filter(|f| {
                        self.p.func(*f).owner.is_some_and(|o| {
                            let ty = &self.p.units[f.unit].facts().types[o];
                            ty.name.as_deref().map(simple_name) == Some(key.1.as_str())
                                || self
                                    .p
                                    .all_supertypes(crate::project::TypeRef { unit: f.unit, t: o })
                                    .iter()
                                    .any(|s| *s == key.1)
                        })
                    })
                    .collect();
                self.methods_on.borrow_mut().insert(key, on.clone());
                on
            });
            if !on.is_empty() {
                return on.to_vec();
            }
        }
        if cands.len() <= 2 {
            return cands.to_vec();
        }
        Vec::new()
    }

    /// A money-moving call the analysis cannot look into: by name, a Stripe-style SDK.
    pub fn is_sdk_money_call(
        &self,
        receiver: Option<&Expr>,
        name: &str,
        args: &[crate::facts::Arg],
    ) -> bool {
        let m = &self.cat.coord.money;
        // Builder setters (`Metadata.builder().chargeAmount(..)`) set fields.
        let mut cur = receiver.map(super::syntax::peel);
        while let Some(x) = cur {
            match &x.kind {
                ExprKind::Call { name, receiver, .. } => {
                    if matches!(
                        name.as_str(),
                        "builder" | "newBuilder" | "toBuilder" | "Builder"
                    ) {
                        return false;
                    }
                    cur = receiver.as_deref().map(super::syntax::peel);
                }
                ExprKind::New { ty, .. } if ty.ends_with("Builder") => return false,
                _ => cur = None,
            }
        }
        if m.sdk_services.iter().any(|s| s == name) && args.is_empty() {
            // `client.charges()`: an accessor.
            return false;
        }
        if m.sdk_methods.iter().any(|s| s == name)
            && let Some(r) = receiver
        {
            let mut cur = Some(super::syntax::peel(r));
            while let Some(x) = cur {
                match &x.kind {
                    ExprKind::Name(_) | ExprKind::Field { .. } => {
                        if let Some(p) = x.path_text()
                            && m.sdk_types.iter().any(|t| t == simple_name(&p))
                        {
                            return true;
                        }
                        cur = None;
                    }
                    ExprKind::Call { receiver, name, .. } => {
                        if m.sdk_services.iter().any(|s| s == name) {
                            return true;
                        }
                        if m.sdk_types.iter().any(|t| t == name) {
                            return true;
                        }
                        cur = receiver.as_deref().map(super::syntax::peel);
                    }
                    _ => cur = None,
                }
            }
        }
        false
    }

    /// A money-moving call the analysis cannot look into: an SDK call, or by its name.
    pub fn is_money_call(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        args: &[crate::facts::Arg],
    ) -> bool {
        let m = &self.cat.coord.money;
        if m.sdk_services.iter().any(|s| s == name) && args.is_empty() {
            // `client.charges()`: an accessor.
            return false;
        }
        let money = self.is_sdk_money_call(receiver, name, args) || {
            // Builder setters (`Metadata.builder().chargeAmount(..)`) set fields.
            let mut cur = receiver.map(super::syntax::peel);
            let mut builder = false;
            while let Some(x) = cur {
                match &x.kind {
                    ExprKind::Call { name, receiver, .. } => {
                        if matches!(
                            name.as_str(),
                            "builder" | "newBuilder" | "toBuilder" | "Builder"
                        ) {
                            builder = true;
                        }
                        cur = receiver.as_deref().map(super::syntax::peel);
                    }
                    ExprKind::New { ty, .. } if ty.ends_with("Builder") => {
                        builder = true;
                        cur = None;
                    }
                    _ => cur = None,
                }
            }
            !builder && is_money_name(self.cat, name)
        };
        money && !receiver.is_some_and(|r| self.never_moves_money(at, r))
    }

    /// Is `receiver` one on which no call moves money (Mockito's `argumentCaptor`, by its name
    /// or its declared type: the catalogue's `not_receiver_words` and `not_receiver_types`)?
    fn never_moves_money(&self, at: FnRef, receiver: &Expr) -> bool {
        let m = &self.cat.coord.money;
        let named = receiver.path_text().is_some_and(|p| {
            let p = p.to_ascii_lowercase();
            m.not_receiver_words
                .iter()
                .any(|w| p.contains(&w.to_ascii_lowercase()))
        });
        named
            || (!m.not_receiver_types.is_empty()
                && self
                    .flow
                    .type_in(at, receiver)
                    .is_some_and(|t| m.not_receiver_types.contains(&t)))
    }

    pub(crate) fn is_local_lock_pub(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        args: &[crate::facts::Arg],
    ) -> bool {
        self.is_local_lock(at, receiver, name, args)
    }

    /// `lock.lock()` on a `ReentrantLock`, `state.lock().await` on a Rust `Mutex`,
    /// `mutex.withLock { }` on a coroutine `Mutex`: in-process only.
    fn is_local_lock(
        &self,
        at: FnRef,
        receiver: Option<&Expr>,
        name: &str,
        args: &[crate::facts::Arg],
    ) -> bool {
        let Some(r) = receiver else {
            return false;
        };
        let locks = &self.cat.coord.locks;
        let lang = self.p.units[at.unit].lang;
        if lang == crate::facts::Lang::Rust
            && args.is_empty()
            && matches!(
                name,
                "lock"
                    | "try_lock"
                    | "read"
                    | "write"
                    | "blocking_lock"
                    | "acquire"
                    | "try_acquire"
                    | "acquire_owned"
                    | "try_acquire_owned"
            )
        {
            return true;
        }
        let r = super::syntax::peel(r);
        // The binding the receiver names: its initialiser decides, then its type.
        let var = match &r.kind {
            ExprKind::Name(n) => Some(n.as_str()),
            ExprKind::Field { receiver, name } if matches!(&receiver.kind, ExprKind::Name(s) if s == "this" || s == "self") => {
                Some(name.as_str())
            }
            _ => None,
        };
        if let Some(v) = var {
            let b = super::syntax::local_binding(self.p, at, v, usize::MAX).or_else(|| {
                super::syntax::field_binding(self.p, at.unit, Some(at), None, v)
                    .filter(|(u, _)| *u == at.unit)
                    .map(|(_, b)| b)
            });
            if let Some(b) = b {
                if let Some(init) = &b.init {
                    let init = super::syntax::peel(init);
                    let ctor = match &init.kind {
                        ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
                        ExprKind::Call { name, receiver, .. } => Some(if name == "new" {
                            receiver
                                .as_deref()
                                .and_then(|r| r.path_text())
                                .map(|p| simple_name(&p).to_string())
                                .unwrap_or_default()
                        } else {
                            name.to_string()
                        }),
                        _ => None,
                    };
                    if let Some(c) = ctor {
                        return locks.local_lock_constructors.contains(&c)
                            || locks.local_lock_types.contains(&c);
                    }
                }
                if let Some(t) = &b.ty {
                    return locks.local_lock_types.iter().any(|l| l == simple_name(t));
                }
            }
            if let Some(t) = self.flow.type_in(at, r) {
                return locks.local_lock_types.contains(&t);
            }
        }
        false
    }
}

/// A call handing work to run inside it: a lambda, method reference or object argument.
fn runs_work(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { args, .. } if args.iter().any(|a| matches!(
        super::syntax::peel(&a.value).kind,
        ExprKind::Lambda(_) | ExprKind::MethodRef { .. } | ExprKind::Object(_)
    ) || matches!(&a.value.kind, ExprKind::Cast { expr, .. } if matches!(expr.kind, ExprKind::MethodRef { .. } | ExprKind::Lambda(_)))))
}

/// Where a call chain starts: `amounts` in `amounts.plusFees(..).plusPenalties(..)`,
/// `new T(..)` in `new T(..).a(..).b(..)` (parentheses and casts peeled).
fn chain_root(e: &Expr) -> &Expr {
    super::syntax::chain_links(e).last().unwrap_or(e)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::facts::Lang;
    use crate::project::{Project, Unit};
    use crate::source::SourceFile;
    use std::sync::Arc;

    /// 40 classes of three methods calling each other at random (fixed seed): most are in
    /// call cycles, some guard with a lock, some charge.
    pub(crate) fn cyclic_project() -> Project {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let n = 40;
        let units = (0..n)
            .map(|i| {
                let mut src = format!("class C{i} {{\n");
                for k in 0..3 {
                    src.push_str(&format!("  static void m{i}x{k}(String id) {{\n"));
                    for _ in 0..next(4) {
                        let (c, m) = (next(n), next(3));
                        src.push_str(&format!("    C{c}.m{c}x{m}(id);\n"));
                    }
                    match next(12) {
                        0 => src.push_str("    stripe.charges().create(params(id));\n"),
                        1 => src.push_str("    chargeCustomer(id);\n"),
                        2 => src.push_str("    if (!locks.tryLock(id)) { return; }\n"),
                        _ => {}
                    }
                    if next(3) == 0 {
                        let (c, m) = (next(n), next(3));
                        src.push_str(&format!("    C{c}.m{c}x{m}(id);\n"));
                    }
                    src.push_str("  }\n");
                }
                src.push_str("}\n");
                let path = format!("C{i}.java");
                Unit::new(SourceFile::new(path.into(), src), Lang::Java, false)
            })
            .collect();
        Project::new(units)
    }

    /// An answer taken from another analysis is the one this analysis would have found: each
    /// function asked alone (a fresh analysis per function) gives what three analyses sharing
    /// their answers give, asking in order, in reverse and interleaved.
    #[test]
    fn shared_answers_equal_answers_found_alone() {
        let p = cyclic_project();
        let cat = Catalog::builtin();
        let fns: Vec<FnRef> = (0..p.units.len())
            .flat_map(|u| {
                (0..p.units[u].facts().functions.len()).map(move |f| FnRef { unit: u, f })
            })
            .collect();
        let alone: Vec<String> = fns
            .iter()
            .map(|f| {
                let flows = crate::flow::Caches::default();
                let co = Coord::new(&p, cat, &flows, Arc::new(super::super::Shared::default()));
                format!("{:?}", co.reach_fn(*f))
            })
            .collect();
        assert!(alone.iter().any(|r| r.starts_with("Money")));
        assert!(alone.iter().any(|r| r.starts_with("Guarded")));
        assert!(alone.iter().any(|r| r == "Nothing"));
        let shared = Arc::new(super::super::Shared::default());
        let flows = crate::flow::Caches::default();
        let (a, b, c) = (
            Coord::new(&p, cat, &flows, shared.clone()),
            Coord::new(&p, cat, &flows, shared.clone()),
            Coord::new(&p, cat, &flows, shared.clone()),
        );
        let n = fns.len();
        for i in 0..n {
            // `a` in order, `b` in reverse (taking what `a` found), `c` from the middle.
            for (co, f) in [
                (&a, fns[i]),
                (&b, fns[n - 1 - i]),
                (&c, fns[(i + n / 2) % n]),
            ] {
                let at = fns.iter().position(|g| *g == f).expect("listed");
                assert_eq!(format!("{:?}", co.reach_fn(f)), alone[at], "{f:?}");
            }
        }
    }
}
