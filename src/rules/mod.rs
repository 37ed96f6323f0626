//! The rule registry. Each rule has one home, a directory under `src/rules/` holding its
//! description ([`RuleMeta`]: code, name, level, documentation, and the analyses it needs), its
//! check, its messages and its documentation (`IDEMnnn.md`); it reads the shared analysis
//! ([`Ctx`]) and prints nothing. What runs is decided by rule identity ([`Rule`]) and by
//! what the enabled rules declare they need ([`Need`]), never by code strings.

pub mod check_then_act;
pub mod ctx;
pub mod key_in_interceptor;
pub mod key_in_retry;
pub mod meta;
pub mod nondeterministic_key;
pub mod payment_post;
pub mod scheduler_lock;
pub mod unstable_lock_key;

use crate::coord::Shared;
use crate::finding::Finding;
use crate::flow::{Flow, KeyFlow};
use crate::project::FnRef;
use std::sync::Arc;

pub use ctx::Ctx;
pub use meta::{Need, Rule, RuleMeta};

/// Every rule, in code order (each one's description lives in its own module).
pub static RULES: &[&RuleMeta] = &[
    &key_in_interceptor::META,
    &key_in_retry::META,
    &key_in_retry::HELPER_META,
    &scheduler_lock::META,
    &check_then_act::META,
    &unstable_lock_key::META,
    &payment_post::META,
    &nondeterministic_key::META,
];

pub fn meta(code: &str) -> Option<&'static RuleMeta> {
    RULES
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code))
}

/// Shared analysis for one project run.
///
/// Which rules run.
#[derive(Clone, Debug)]
pub struct Selection {
    pub enabled: Vec<&'static str>,
}

impl Selection {
    /// The rules that are on by default.
    pub fn default_rules() -> Selection {
        Selection {
            enabled: RULES
                .iter()
                .filter(|r| r.default_enabled)
                .map(|r| r.code)
                .collect(),
        }
    }

    /// Every rule.
    pub fn all() -> Selection {
        Selection {
            enabled: RULES.iter().map(|r| r.code).collect(),
        }
    }

    /// Applies ruff-style `select` (replaces the set; `ALL` = every rule), `extend-select`
    /// (adds) and `ignore` (removes). Codes may be prefixes (`IDEM00`). Unknown codes are an
    /// error.
    pub fn from_lists(
        select: Option<&[String]>,
        extend: &[String],
        ignore: &[String],
    ) -> Result<Selection, String> {
        let expand = |code: &str| -> Result<Vec<&'static str>, String> {
            let c = code.trim();
            if c.eq_ignore_ascii_case("ALL") {
                return Ok(RULES.iter().map(|r| r.code).collect());
            }
            let m: Vec<&'static str> = RULES
                .iter()
                .filter(|r| {
                    r.code.len() >= c.len()
                        && r.code[..c.len()].eq_ignore_ascii_case(c)
                        && !c.is_empty()
                        || r.name.eq_ignore_ascii_case(c)
                })
                .map(|r| r.code)
                .collect();
            if m.is_empty() {
                return Err(unknown_rule(c, true));
            }
            Ok(m)
        };
        let mut enabled: Vec<&'static str> = match select {
            Some(list) => {
                let mut v = Vec::new();
                for c in list {
                    v.extend(expand(c)?);
                }
                v
            }
            None => Selection::default_rules().enabled,
        };
        for c in extend {
            enabled.extend(expand(c)?);
        }
        for c in ignore {
            let drop = expand(c)?;
            enabled.retain(|e| !drop.contains(e));
        }
        enabled.sort();
        enabled.dedup();
        Ok(Selection { enabled })
    }

    pub fn is_enabled(&self, code: &str) -> bool {
        self.enabled.contains(&code)
    }

    /// Is this rule on?
    pub fn is_on(&self, rule: Rule) -> bool {
        RULES
            .iter()
            .any(|r| r.id == rule && self.enabled.contains(&r.code))
    }

    /// Does any enabled rule need this analysis?
    pub fn needs(&self, need: Need) -> bool {
        RULES
            .iter()
            .any(|r| r.needs.contains(&need) && self.enabled.contains(&r.code))
    }
}

/// Runs every enabled rule over one unit.
pub fn check_unit(ctx: &Ctx, flow: &Flow, unit: usize, sel: &Selection, out: &mut Vec<Finding>) {
    if !sel.needs(Need::KeyFlows) {
        return;
    }
    let want001 = sel.is_on(Rule::KeyInInterceptor);
    let want002 = sel.is_on(Rule::KeyInRetryScope);
    let want003 = sel.is_on(Rule::RetryCallsKeyMinter);
    let want008 = sel.is_on(Rule::NondeterministicKey);
    // Every key rule starts from a key sink; most files cannot hold one.
    if !flow.sink_gate().may_hold_sink(unit) {
        return;
    }
    let everything = want008 || ((want002 || want003) && !ctx.retry().is_empty());
    let n = ctx.p.units[unit].facts().functions.len();
    let mut flows: Vec<KeyFlow> = Vec::new();
    for f in 0..n {
        let r = FnRef { unit, f };
        // IDEM001 only needs interceptor bodies; the others need every function.
        if everything || ctx.interceptor_of(r).is_some() {
            flows.extend(flow.key_flows(r));
        }
    }
    if want001 {
        key_in_interceptor::check(ctx, &flows, out);
    }
    // Outside interceptors (whose keys go on the request they intercept), a value that is not
    // seen leaving the service is not an idempotency key of a request.
    if want002 || want003 || want008 {
        let judge = crate::outbound::Judge::new(ctx.p, flow, ctx.cat);
        flows.retain(|fl| ctx.interceptor_of(fl.taint.at).is_some() || judge.goes_out(fl));
    }
    if want002 || want003 {
        key_in_retry::check(ctx, &flows, want002, want003, out);
    }
    if want008 {
        nondeterministic_key::check(ctx, flow, &flows, out);
    }
}

/// Runs `f`; with `IDEMLINT_TIMINGS=1`, says how long it took.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let clock = std::time::Instant::now();
    let t = f();
    if crate::timings_enabled() {
        eprintln!(
            "timing:   {what} {:.3} s ({} files parsed so far{})",
            clock.elapsed().as_secs_f64(),
            crate::conform::parses_so_far(),
            crate::timing_memory()
        );
    }
    t
}

/// Runs the project-wide coordination rules (IDEM004–IDEM007) once.
pub fn check_project(ctx: &Ctx, sel: &Selection, out: &mut Vec<Finding>) {
    let want = |r| sel.is_on(r);
    if !(sel.needs(Need::PostSites) || sel.needs(Need::LockKeys)) {
        return;
    }
    let interceptors = || -> Vec<(FnRef, &'static crate::catalog::InterceptorEntry)> {
        let mut v: Vec<(FnRef, &'static crate::catalog::InterceptorEntry)> = ctx
            .interceptors()
            .iter()
            .map(|(f, s)| (*f, s.entry))
            .collect();
        v.sort_by_key(|(f, _)| *f);
        v
    };
    // IDEM006 needs no POST sites and shares nothing with the others: it runs beside them.
    // POSTs are money events for the scheduler and guard rules too: found first, then
    // IDEM005 (in parallel pieces) and IDEM007 beside IDEM004, each piece with its own
    // analysis state over answers they share (a memoised walk gives the same answer whatever
    // was asked before it; `Coord::reach_fn`), and the findings are joined in a fixed order.
    let coord =
        |shared: &Arc<Shared>| crate::coord::Coord::new(ctx.p, ctx.cat, ctx.flows, shared.clone());
    let ((scheduler, guards), locks) = rayon::join(
        || {
            if !sel.needs(Need::PostSites) {
                return (Vec::new(), Vec::new());
            }
            let shared = Arc::new(Shared::new(timed("POST sites", || {
                crate::coord::Coord::find_posts(ctx.p, ctx.cat, ctx.flows, &interceptors)
            })));
            // IDEM004 starts from the money gate and IDEM005 asks it too. Built here, before
            // they run side by side, rather than by one while the other's thread waits for it
            // (a rayon thread blocked on it takes no part in the gate's parallel parses).
            if want(Rule::SchedulerLock) {
                coord(&shared).money_gate();
            }
            rayon::join(
                || {
                    let mut scheduler = Vec::new();
                    if want(Rule::SchedulerLock) {
                        let co = coord(&shared);
                        timed("IDEM004", || {
                            scheduler_lock::check(ctx, &co, &mut scheduler)
                        });
                    }
                    scheduler
                },
                || {
                    let mut guards = Vec::new();
                    let others = [Rule::KeyInRetryScope, Rule::CheckThenAct, Rule::PaymentPost];
                    if others.into_iter().any(want) {
                        let co = coord(&shared);
                        if want(Rule::CheckThenAct) {
                            timed("IDEM005", || check_then_act::check(ctx, &co, &mut guards));
                        }
                        if want(Rule::PaymentPost) {
                            timed("IDEM007", || payment_post::check(ctx, &co, &mut guards));
                        }
                        if want(Rule::KeyInRetryScope) {
                            key_in_retry::check_sdk(ctx, &co, &mut guards);
                        }
                    }
                    guards
                },
            )
        },
        || {
            let mut out = Vec::new();
            if want(Rule::UnstableLockKey) {
                let co = coord(&Arc::default());
                timed("IDEM006", || unstable_lock_key::check(ctx, &co, &mut out));
            }
            out
        },
    );
    out.extend(scheduler);
    out.extend(guards);
    out.extend(locks);
}

/// The message for a rule code or name that names no rule: the closest one if it is close
/// (`IDEM0004`, `key-generated-in-retry`), then the codes there are (and `ALL`, where a
/// selection may say it).
pub fn unknown_rule(given: &str, with_all: bool) -> String {
    let known: Vec<&str> = RULES.iter().map(|r| r.code).collect();
    let names = RULES.iter().flat_map(|r| [r.code, r.name]);
    let hint = match crate::suggest::closest(given, names) {
        Some(m) => format!("; did you mean `{m}`?"),
        None => String::new(),
    };
    let all = if with_all { ", or ALL" } else { "" };
    format!(
        "unknown rule `{given}`{hint} (known rules: {}{all})",
        known.join(", ")
    )
}
