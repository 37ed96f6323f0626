//! The rule registry. Each rule lives in its own module and reads the shared analysis
//! ([`Ctx`]); none of them prints.

pub mod check_then_act;
pub mod ctx;
pub mod key_in_interceptor;
pub mod key_in_retry;
pub mod nondeterministic_key;
pub mod payment_post;
pub mod scheduler_lock;
pub mod unstable_lock_key;

use crate::coord::Shared;
use crate::finding::{Finding, Severity};
use crate::flow::{Flow, KeyFlow};
use crate::project::FnRef;
use std::sync::Arc;

pub use ctx::Ctx;

/// Static description of a rule.
#[derive(Debug)]
pub struct RuleMeta {
    pub code: &'static str,
    pub name: &'static str,
    /// One line: what the rule reports.
    pub summary: &'static str,
    pub severity: Severity,
    /// On unless selected away; off (pedantic) rules need `--select` / `--extend-select`.
    pub default_enabled: bool,
    /// `rules/IDEMnnn.md`: What it does / Why is this bad? / Example / Fix / References.
    pub doc: &'static str,
    /// GitHub code scanning `precision` (`very-high`, `high`, `medium`, `low`).
    pub precision: &'static str,
    /// GitHub code scanning `security-severity` (0.0 to 10.0).
    pub security_severity: &'static str,
    pub tags: &'static [&'static str],
}

pub static RULES: &[RuleMeta] = &[
    RuleMeta {
        code: "IDEM001",
        name: "key-generated-in-interceptor",
        summary: "An idempotency key is made from a random or time value inside an HTTP interceptor, middleware or filter, which runs again for every attempt",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM001.md"),
        precision: "high",
        security_severity: "7.5",
        tags: &["correctness", "payments", "idempotency", "retry"],
    },
    RuleMeta {
        code: "IDEM002",
        name: "key-generated-in-retry-scope",
        summary: "An idempotency key is made from a random or time value inside code that runs again on every retry attempt",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM002.md"),
        precision: "high",
        security_severity: "7.5",
        tags: &["correctness", "payments", "idempotency", "retry"],
    },
    RuleMeta {
        code: "IDEM003",
        name: "retry-calls-key-minting-function",
        summary: "Code that runs again on every retry attempt calls a function that makes a new idempotency key on each call",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM003.md"),
        precision: "high",
        security_severity: "7.5",
        tags: &["correctness", "payments", "idempotency", "retry"],
    },
    RuleMeta {
        code: "IDEM004",
        name: "scheduler-without-distributed-lock",
        summary: "A job started by a per-process scheduler (it runs in every replica) moves money with no distributed lock or atomic claim first",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM004.md"),
        precision: "high",
        security_severity: "7.5",
        tags: &["correctness", "payments", "concurrency", "scheduler"],
    },
    RuleMeta {
        code: "IDEM005",
        name: "check-then-act-billing-guard",
        summary: "An \"already done?\" read guards a charge that is marked done only afterwards, with no lock or atomic claim: concurrent runs all pass the check",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM005.md"),
        precision: "medium",
        security_severity: "7.0",
        tags: &["correctness", "payments", "concurrency"],
    },
    RuleMeta {
        code: "IDEM006",
        name: "unstable-lock-key",
        summary: "A distributed lock's key contains a host name, pod name, pid, random or clock value, so every replica or run takes a different lock",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM006.md"),
        precision: "high",
        security_severity: "7.0",
        tags: &["correctness", "payments", "concurrency", "lock"],
    },
    RuleMeta {
        code: "IDEM007",
        name: "payment-post-without-idempotency-key",
        summary: "A POST to a money-moving endpoint, or a payment SDK call that moves money, is sent with no idempotency key",
        severity: Severity::Error,
        default_enabled: true,
        doc: include_str!("../../rules/IDEM007.md"),
        precision: "high",
        security_severity: "7.5",
        tags: &["correctness", "payments", "idempotency"],
    },
    RuleMeta {
        code: "IDEM008",
        name: "nondeterministic-idempotency-key",
        summary: "An idempotency key is made from a random or time value once per operation: safe against transport retries of that request, not against restarts, replicas or retries above it",
        severity: Severity::Warning,
        default_enabled: false,
        doc: include_str!("../../rules/IDEM008.md"),
        precision: "medium",
        security_severity: "4.0",
        tags: &["correctness", "payments", "idempotency", "pedantic"],
    },
];

pub fn meta(code: &str) -> Option<&'static RuleMeta> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(code))
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
                let known: Vec<&str> = RULES.iter().map(|r| r.code).collect();
                return Err(format!(
                    "unknown rule `{c}` (known rules: {}, or ALL)",
                    known.join(", ")
                ));
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
}

/// Runs every enabled rule over one unit.
pub fn check_unit(ctx: &Ctx, flow: &Flow, unit: usize, sel: &Selection, out: &mut Vec<Finding>) {
    let want001 = sel.is_enabled("IDEM001");
    let want002 = sel.is_enabled("IDEM002");
    let want003 = sel.is_enabled("IDEM003");
    let want008 = sel.is_enabled("IDEM008");
    if !(want001 || want002 || want003 || want008) {
        return;
    }
    // Every key rule starts from a key sink; most files cannot hold one.
    if !flow.sink_gate().may_hold_sink(unit) {
        return;
    }
    let everything = want008 || ((want002 || want003) && !ctx.retry().is_empty());
    let n = ctx.p.units[unit].facts.functions.len();
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
        eprintln!("timing:   {what} {:.3} s", clock.elapsed().as_secs_f64());
    }
    t
}

/// Runs the project-wide coordination rules (IDEM004–IDEM007) once.
pub fn check_project(ctx: &Ctx, sel: &Selection, out: &mut Vec<Finding>) {
    let want = |c| sel.is_enabled(c);
    if !(want("IDEM002")
        || want("IDEM004")
        || want("IDEM005")
        || want("IDEM006")
        || want("IDEM007"))
    {
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
            if !(want("IDEM002") || want("IDEM004") || want("IDEM005") || want("IDEM007")) {
                return (Vec::new(), Vec::new());
            }
            let shared = Arc::new(Shared::new(timed("POST sites", || {
                crate::coord::Coord::find_posts(ctx.p, ctx.cat, ctx.flows, &interceptors)
            })));
            rayon::join(
                || {
                    let mut scheduler = Vec::new();
                    if want("IDEM004") {
                        let co = coord(&shared);
                        timed("IDEM004", || {
                            scheduler_lock::check(ctx, &co, &mut scheduler)
                        });
                    }
                    scheduler
                },
                || {
                    let mut guards = Vec::new();
                    if want("IDEM002") || want("IDEM005") || want("IDEM007") {
                        let co = coord(&shared);
                        if want("IDEM005") {
                            timed("IDEM005", || check_then_act::check(ctx, &co, &mut guards));
                        }
                        if want("IDEM007") {
                            timed("IDEM007", || payment_post::check(ctx, &co, &mut guards));
                        }
                        if want("IDEM002") {
                            key_in_retry::check_sdk(ctx, &co, &mut guards);
                        }
                    }
                    guards
                },
            )
        },
        || {
            let mut out = Vec::new();
            if want("IDEM006") {
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
