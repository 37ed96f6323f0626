//! Which functions may reach money ([`MoneyGate`]): a superset of the functions whose ordered walk
//! ([`Coord::reach_fn`], [`Coord::reach_exprs`] on their code) can answer "money moves", found
//! from the evidence backwards (issue 16, `docs/design/evidence-first.md` step 5).
//!
//! Money moves only at evidence the walk recognises in a function's own code: a POST to a money
//! endpoint, a money call by its name or a payment SDK's (`Coord::is_money_call`), or a call to
//! a bodiless function that is a declared POST, is named like money or is a payment port's
//! method. Everything else reaches money by calling, within the walk's depth bounds, a
//! function that does: the callers are found with the walk's own resolution
//! (`Flow::call_targets_agree`, `Coord::method_ref_targets`), asked only of the calls named
//! like a function already in the set. Lambdas and local functions are walked as part of the
//! function they are written in, so a function is in the set when any position in its text
//! is. How a job starts its walk (a `Runnable`'s `run`, a lambda held in a field) is the
//! scheduler rule's to ask (`Coord::job_may_move_money`).
//!
//! A false member only costs time; a missing one would lose a finding, which `--exhaustive`
//! (the gate off) checks on every fixture.

use super::Coord;
use super::money_gate::MoneyGate;
use super::words::{is_money_name, is_payment_port_call};
use crate::facts::{ExprKind, FnKind, TypeKind, simple_name};
use crate::hash::HashMap;
use crate::project::{FnRef, Project};
use crate::walk::walk_stmts;
use rayon::prelude::*;

/// One unit's functions by where they start, each with the innermost function around it.
struct Nesting {
    /// (start, end, function), sorted by start, outer before inner.
    spans: Vec<(usize, usize, usize)>,
    /// Per entry of `spans`: the entry of the innermost function around it.
    parent: Vec<Option<usize>>,
}

impl Nesting {
    fn new(p: &Project, u: usize) -> Nesting {
        let mut spans: Vec<(usize, usize, usize)> = p.units[u]
            .facts()
            .functions
            .iter()
            .enumerate()
            .map(|(f, func)| (func.span.start, func.span.end, f))
            .collect();
        spans.sort_by_key(|&(s, e, f)| (s, std::cmp::Reverse(e), f));
        let mut parent = Vec::with_capacity(spans.len());
        let mut open: Vec<usize> = Vec::new();
        for (i, &(s, e, _)) in spans.iter().enumerate() {
            while let Some(&top) = open.last() {
                if spans[top].0 <= s && e <= spans[top].1 {
                    break;
                }
                open.pop();
            }
            parent.push(open.last().copied());
            open.push(i);
        }
        Nesting { spans, parent }
    }

    /// Every function whose text holds byte `pos`.
    fn around(&self, pos: usize, out: &mut Vec<usize>) {
        let last = self.spans.partition_point(|&(s, _, _)| s <= pos);
        let mut cur = last.checked_sub(1);
        while let Some(i) = cur {
            let (s, e, f) = self.spans[i];
            if s <= pos && pos < e {
                out.push(f);
            }
            cur = self.parent[i];
        }
    }
}

impl<'p> Coord<'p> {
    /// Which functions may reach money: a walk from any other answers no money (built once
    /// per run and shared; open when the run is `--exhaustive`). POSTs to money endpoints are
    /// evidence, so it must be asked of an analysis whose `shared` holds the run's POST sites
    /// (`Coord::find_posts`), as IDEM004's and IDEM005's do.
    pub fn money_gate(&self) -> &MoneyGate {
        self.shared.money.get_or_init(|| {
            if self.flow.caches().exhaustive() {
                MoneyGate::open()
            } else {
                compute(self)
            }
        })
    }
}

fn compute(co: &Coord) -> MoneyGate {
    let clock = std::time::Instant::now();
    let p = co.p;
    let (cat, flows, shared) = (co.cat, co.flow.caches(), &co.shared);
    // Evidence is written in a file's code as names (a money call's, a payment port's, or an
    // SDK money method's beside an SDK type or service its receiver names), or is a POST the
    // POST finder found there. Only those files are read.
    let mut may_hold = p.units_naming_any(|n| money_evidence_name(cat, n));
    let m = &cat.coord.money;
    let sdk_method = p.units_naming_any(|n| m.sdk_methods.iter().any(|s| s == n));
    let sdk_receiver =
        p.units_naming_any(|n| m.sdk_types.iter().chain(&m.sdk_services).any(|s| s == n));
    for u in 0..p.units.len() {
        may_hold[u] |= sdk_method[u] && sdk_receiver[u];
    }
    for s in &shared.posts.sites {
        may_hold[s.at.unit] = true;
    }
    let may_hold: Vec<usize> = (0..p.units.len()).filter(|&u| may_hold[u]).collect();
    // Evidence in each of those units: where money moves, and bodiless functions a call to
    // which moves it, each with how many calls above it the walk still counts it.
    let evidence: Vec<(usize, Evidence)> = may_hold
        .into_par_iter()
        .map_init(
            || Coord::new(p, cat, flows, shared.clone()),
            |c, u| (u, money_evidence(c, u)),
        )
        .collect();
    if evidence
        .iter()
        .all(|(_, e)| e.positions.is_empty() && e.fns.is_empty())
    {
        return MoneyGate::new(Default::default());
    }
    let t_evidence = clock.elapsed().as_secs_f64();
    // Each unit's nesting, made when first needed.
    let mut nesting: HashMap<usize, Nesting> = HashMap::default();
    let mut around_in = |u: usize, pos: usize, out: &mut Vec<usize>| {
        out.clear();
        nesting
            .entry(u)
            .or_insert_with(|| Nesting::new(p, u))
            .around(pos, out);
    };
    // Highest first by how many calls above it money still counts (`budget`): callers of a
    // function with budget b have b - 1; every function reached is a member.
    let mut budget: HashMap<FnRef, i32> = HashMap::default();
    let mut buckets: std::collections::BinaryHeap<(i32, FnRef)> = Default::default();
    let reach = |f: FnRef,
                 b: i32,
                 budget: &mut HashMap<FnRef, i32>,
                 buckets: &mut std::collections::BinaryHeap<(i32, FnRef)>| {
        let known = budget.entry(f).or_insert(-1);
        if *known < b {
            *known = b;
            buckets.push((b, f));
        }
    };
    let mut around = Vec::new();
    for (u, e) in &evidence {
        let u = *u;
        for &(f, b) in &e.fns {
            reach(FnRef { unit: u, f }, b, &mut budget, &mut buckets);
        }
        for &(pos, b) in &e.positions {
            around_in(u, pos, &mut around);
            for &f in &around {
                reach(FnRef { unit: u, f }, b, &mut budget, &mut buckets);
            }
        }
    }
    let t_sorted = clock.elapsed().as_secs_f64();
    // What each call may run, asked once per call.
    let mut targets: HashMap<(FnRef, usize), Vec<FnRef>> = HashMap::default();
    let mut asked = 0usize;
    while let Some((b, f)) = buckets.pop() {
        if b < 1 || budget.get(&f) != Some(&b) {
            // No caller counts its money, or reached again with a higher budget.
            continue;
        }
        let func = p.func(f);
        if func.name.is_none() || func.kind == FnKind::Lambda {
            continue; // a lambda runs where it is written (or as a job's entry)
        }
        for (g, span) in p.calls_that_may_run(f) {
            let Some(e) = crate::project::find_call(p.func(g), span) else {
                continue;
            };
            let runs = targets.entry((g, span.start)).or_insert_with(|| {
                asked += 1;
                match &e.kind {
                    ExprKind::Call {
                        receiver,
                        name,
                        args,
                    } => {
                        co.flow
                            .call_targets_agree(g, receiver.as_deref(), name, args)
                            .0
                    }
                    ExprKind::MethodRef { receiver, name } => {
                        co.method_ref_targets(g, receiver.as_deref(), name)
                    }
                    _ => Vec::new(),
                }
            });
            if runs.contains(&f) {
                around_in(g.unit, span.start, &mut around);
                for &h in &around {
                    reach(
                        FnRef { unit: g.unit, f: h },
                        b - 1,
                        &mut budget,
                        &mut buckets,
                    );
                }
            }
        }
    }
    let member: crate::hash::HashSet<FnRef> = budget
        .into_iter()
        .filter(|&(_, b)| b >= 0)
        .map(|(f, _)| f)
        .collect();
    if crate::timings_enabled() {
        let files: crate::hash::HashSet<usize> = member.iter().map(|f| f.unit).collect();
        let seeds: usize = evidence
            .iter()
            .map(|(_, e)| e.positions.len() + e.fns.len())
            .sum();
        eprintln!(
            "timing:   money gate: {seeds} pieces of evidence in {} files read for it; {} functions in {} files may reach money; {asked} calls resolved; {t_evidence:.3} s evidence, {t_sorted:.3} s sorted, {:.3} s",
            evidence.len(),
            member.len(),
            files.len(),
            clock.elapsed().as_secs_f64()
        );
    }
    MoneyGate::new(member)
}

/// May a name written in a file make money evidence there on its own ([`money_evidence`]): a
/// call or bodiless function named like money, or a type named like a payment port (whose
/// methods count)? (A payment SDK's money method counts only with an SDK type or service in
/// its receiver, `Coord::is_sdk_money_call`: a file needs both names.)
fn money_evidence_name(cat: &crate::catalog::Catalog, name: &str) -> bool {
    let m = &cat.coord.money;
    is_money_name(cat, name)
        || super::words::words(name)
            .iter()
            .any(|w| super::words::has(&m.port_words, w))
}

/// How many calls above where money moves the walk still counts it. A money-like name counts
/// `MAX_NAME_DEPTH` calls up (`Coord::through`): a function that moves money itself answers
/// with no call on the path, and a caller's answer has one call more than its callee's. Other
/// money counts at any depth here: within `MAX_DEPTH` calls, and a call cycle too large to
/// walk from each of its functions answers calls into it with the money any of them moves,
/// however far (`Coord::answer_part`).
const REAL_BUDGET: i32 = i32::MAX;
const NAME_BUDGET: i32 = super::events::MAX_NAME_DEPTH as i32;

/// Money evidence in one unit, each with its budget.
struct Evidence {
    /// Where money moves in its functions' code.
    positions: Vec<(usize, i32)>,
    /// Bodiless functions a call to which moves money.
    fns: Vec<(usize, i32)>,
}

/// The money evidence in unit `u` (as `Coord::call_event` and `Coord::through` find it):
/// POSTs to money endpoints, SDK money calls and bodiless functions that are declared POSTs or
/// named like money count at any depth; a call named like money, and a payment port's method,
/// only a few calls down.
fn money_evidence(co: &Coord, u: usize) -> Evidence {
    let p = co.p;
    let unit = &p.units[u];
    let posts = &co.shared.posts;
    let mut positions: Vec<(usize, i32)> = posts
        .sites
        .iter()
        .filter(|s| s.at.unit == u)
        .map(|s| (s.site.start, REAL_BUDGET))
        .collect();
    let mut fns = Vec::new();
    for (f, func) in unit.facts().functions.iter().enumerate() {
        let at = FnRef { unit: u, f };
        if !func.has_body {
            let port = p.enclosing_type(at).is_some_and(|t| {
                let decl = &unit.facts().types[t];
                matches!(decl.kind, TypeKind::Interface)
                    && decl
                        .name
                        .as_deref()
                        .zip(func.name.as_deref())
                        .is_some_and(|(tn, n)| is_payment_port_call(co.cat, simple_name(tn), n))
            });
            if posts.declared(at).is_some()
                || func
                    .name
                    .as_deref()
                    .is_some_and(|n| is_money_name(co.cat, n))
            {
                fns.push((f, REAL_BUDGET));
            } else if port {
                fns.push((f, NAME_BUDGET));
            }
            continue;
        }
        walk_stmts(&func.body, &mut |e| {
            if let ExprKind::Call {
                receiver,
                name,
                args,
            } = &e.kind
            {
                let receiver = receiver.as_deref();
                if co.is_sdk_money_call(receiver, name, args) {
                    positions.push((e.span.start, REAL_BUDGET));
                } else if co.is_money_call(at, receiver, name, args) {
                    // The walk judges a call by its name only when no function it may run
                    // has a body (`Coord::call_event`); one that does is evidence only if it
                    // reaches money itself, and then its callers are found from it.
                    let (targets, _) = co.flow.call_targets_agree(at, receiver, name, args);
                    if !targets.iter().any(|&t| p.body_and_owner(t).0) {
                        positions.push((e.span.start, NAME_BUDGET));
                    }
                }
            }
        });
    }
    Evidence { positions, fns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use std::sync::Arc;

    fn project(files: &[(&str, &str)]) -> Project {
        crate::project::parsed(files)
    }

    fn named(p: &Project, name: &str) -> FnRef {
        p.fns_named(name)[0]
    }

    /// Every function whose walk answers money is in the gate, and the gate leaves out some
    /// that cannot (a random project of call cycles, locks and charges).
    #[test]
    fn every_function_that_reaches_money_passes() {
        let p = crate::coord::events::tests::cyclic_project();
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(crate::coord::Shared::default()));
        let gate = co.money_gate();
        let (mut money, mut left_out) = (0, 0);
        for u in 0..p.units.len() {
            for f in 0..p.units[u].facts().functions.len() {
                let f = FnRef { unit: u, f };
                let reaches = matches!(co.reach_fn(f), crate::coord::Reach::Money { .. });
                if reaches {
                    money += 1;
                    assert!(
                        gate.may_reach(f),
                        "{f:?} reaches money but the gate says no"
                    );
                }
                left_out += usize::from(!gate.may_reach(f));
            }
        }
        assert!(
            money > 0 && left_out > 0,
            "{money} reach money, {left_out} left out"
        );
    }

    /// A money-like name counts three calls up, a payment SDK call at any depth; helpers in
    /// other files, method references and lambdas written in a function count; unrelated
    /// functions and same-named functions a call cannot run do not.
    #[test]
    fn callers_within_the_walks_bounds_pass() {
        let p = project(&[
            (
                "Chain.java",
                "class Chain {\n\
                 void e(String id) { chargeCustomer(id); }\n\
                 void d(String id) { e(id); }\n\
                 void c(String id) { d(id); }\n\
                 void b(String id) { c(id); }\n\
                 void a(String id) { b(id); }\n}",
            ),
            (
                "Sdk.java",
                "class Sdk {\n\
                 static void s5(String id) { stripe.charges().create(params(id)); }\n\
                 static void s4(String id) { s5(id); }\n\
                 static void s3(String id) { s4(id); }\n\
                 static void s2(String id) { s3(id); }\n\
                 static void s1(String id) { s2(id); }\n}",
            ),
            (
                "Job.java",
                "class Job {\n\
                 void refs(java.util.List<String> ids) { ids.forEach(Sdk::s1); }\n\
                 void lambda(Runnable r) { later(() -> Sdk.s1(\"x\")); }\n\
                 void unrelated() { System.out.println(\"hi\"); }\n}",
            ),
            (
                "Other.java",
                "class Other { void e() { log(); } void f() { e(); } }",
            ),
        ]);
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(crate::coord::Shared::default()));
        let gate = co.money_gate();
        let is_money = |f: FnRef| matches!(co.reach_fn(f), crate::coord::Reach::Money { .. });
        // By name: `b` answers money three calls above the charge, `a` does not.
        for n in ["e", "d", "c", "b"] {
            let f = p
                .fns_named(n)
                .iter()
                .copied()
                .find(|f| f.unit == 0)
                .unwrap();
            assert!(gate.may_reach(f) && is_money(f), "{n}");
        }
        assert!(!gate.may_reach(named(&p, "a")) && !is_money(named(&p, "a")));
        for n in ["s5", "s4", "s3", "s2", "s1", "refs", "lambda"] {
            assert!(gate.may_reach(named(&p, n)), "{n}");
        }
        assert!(!gate.may_reach(named(&p, "unrelated")));
        // `Other.f` calls its own `e`, which the walk resolves in its class: not the charging
        // one.
        let f = named(&p, "f");
        assert!(!gate.may_reach(f) && !is_money(f));
        // Off (`--exhaustive`): everything passes.
        let open = MoneyGate::open();
        assert!(open.may_reach(named(&p, "unrelated")) && !open.is_empty());
    }

    /// A call named like money is evidence by its name only when no function it may run has
    /// a body, as the walk judges it: `Location.capture()` runs the project's own `capture`,
    /// which moves no money, so its caller is not read; a project `capture` that charges
    /// makes its callers members from its own evidence.
    #[test]
    fn a_money_name_that_runs_a_project_body_is_judged_by_the_body() {
        let p = project(&[
            (
                "Location.java",
                "class Location { static Location capture() { return new Location(); } }",
            ),
            (
                "Real.java",
                "class Real { void capture(String id) { stripe.charges().create(params(id)); } }",
            ),
            (
                "Job.java",
                "class Job {\n\
                 void tick() { Location.capture(); }\n\
                 void go(Real r) { r.capture(\"x\"); }\n\
                 void external(Gateway g) { g.capture(\"x\"); }\n}",
            ),
        ]);
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(crate::coord::Shared::default()));
        let gate = co.money_gate();
        let is_money = |f: FnRef| matches!(co.reach_fn(f), crate::coord::Reach::Money { .. });
        let tick = named(&p, "tick");
        assert!(!is_money(tick) && !gate.may_reach(tick));
        for n in ["go", "external"] {
            assert!(
                is_money(named(&p, n)) && gate.may_reach(named(&p, n)),
                "{n}"
            );
        }
    }

    /// An SDK money method's name is evidence only beside an SDK type or service: a file that
    /// calls some other `create` is not read for the gate.
    #[test]
    fn an_sdk_method_name_alone_opens_no_file() {
        let p = project(&[
            (
                "Pay.java",
                "class Pay { void pay(String id) { stripe.paymentIntents().create(params(id)); } }",
            ),
            (
                "Factory.java",
                "class Factory { Object make() { return builderFactory.create(); } }",
            ),
        ]);
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(crate::coord::Shared::default()));
        assert!(co.money_gate().may_reach(named(&p, "pay")));
        assert!(!co.money_gate().may_reach(named(&p, "make")));
        assert!(p.units[0].parse_if_done().is_some());
        assert!(
            p.units[1].parse_if_done().is_none(),
            "Factory.java was parsed for the money gate"
        );
    }

    /// A project with no money evidence has an empty gate.
    #[test]
    fn no_evidence_no_members() {
        let p = project(&[(
            "A.java",
            "class A { void run() { b(); } void b() { log(); } }",
        )]);
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let co = Coord::new(&p, cat, &flows, Arc::new(crate::coord::Shared::default()));
        assert!(co.money_gate().is_empty());
        assert!(!co.money_gate().may_reach(named(&p, "run")));
    }
}
