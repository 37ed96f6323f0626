//! IDEM005 check-then-act-billing-guard: an "already done?" read that returns early, then
//! money moves, then a write marks the same thing done, with no lock or atomic claim: every
//! replica (or concurrent run) reads "not done" before any of them writes.
//!
//! Where it decides: [`guards`] finds the guards, the money after them and the mark
//! (`Coord::check_then_act`), using the shared ordered walk in `coord/events.rs` for what
//! the guarded path reaches; [`check`] writes the message. The documentation is `IDEM005.md`
//! beside this file.

use super::ctx::Ctx;
use crate::coord::{Coord, Reach};
use guards::CheckThenAct;

pub mod guards;
use crate::finding::{Finding, Label};
use rayon::prelude::*;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM005: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::CheckThenAct,
    code: CODE,
    name: "check-then-act-billing-guard",
    summary: "An \"already done?\" read guards a charge that is marked done only afterwards, with no lock or atomic claim: concurrent runs all pass the check",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM005.md"),
    precision: "medium",
    security_severity: "7.0",
    tags: &["correctness", "payments", "concurrency"],
    home: module_path!(),
    needs: &[Need::PostSites],
};

pub const CODE: &str = "IDEM005";

/// Files per piece of work: the guards are looked for in parallel, each thread with its own
/// analysis over `co`'s shared answers (so what one walked, the others reuse).
const UNITS_PER_TASK: usize = 256;

pub fn check(ctx: &Ctx, co: &Coord, out: &mut Vec<Finding>) {
    let n = co.p.units.len();
    let tasks: Vec<std::ops::Range<usize>> = (0..n)
        .step_by(UNITS_PER_TASK)
        .map(|s| s..(s + UNITS_PER_TASK).min(n))
        .collect();
    let (p, cat, flows, shared) = (co.p, co.cat, co.flow.caches(), &co.shared);
    let guards: Vec<CheckThenAct> = tasks
        .into_par_iter()
        .map_init(
            || Coord::new(p, cat, flows, shared.clone()),
            |c, units| c.check_then_act(units),
        )
        .flatten()
        .collect();
    for g in guards {
        let CheckThenAct {
            read,
            read_what,
            money,
            write,
        } = g;
        let Reach::Money { at: m, .. } = money else {
            continue;
        };
        let mut labels = vec![Label {
            unit: m.at.unit,
            span: m.span,
            message: "money moves here".into(),
        }];
        labels.push(Label {
            unit: write.at.unit,
            span: write.span,
            message: "and is marked done here, after the money moved".into(),
        });
        out.push(Finding {
            code: CODE,
            unit: read.at.unit,
            span: read.span,
            label: "a read, not a claim".into(),
            message: format!(
                "`{read_what}` checks whether this was already done, then money moves (`{}`) and only afterwards is it marked done (`{}`): two replicas or overlapping runs both read \"not done\" and both charge",
                m.what, write.what
            ),
            labels,
            note: super::ctx::money_call_keyed(co, &m).then(|| super::ctx::KEYED_RACE.to_string()),
            help: "make the check and the claim one atomic step before charging: `INSERT .. ON CONFLICT DO NOTHING` (or `UPDATE .. WHERE status = 'PENDING'`) and charge only if a row was written, or hold a distributed lock (pg_try_advisory_lock, ShedLock, Redisson) around the check, the charge and the write".into(),
            symbol: ctx.symbol(read.at),
            origin: None,
            inferred: None,
        });
    }
}
