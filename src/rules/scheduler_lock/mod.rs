//! IDEM004 scheduler-without-distributed-lock: a per-process scheduler (it runs in every
//! replica) whose job reaches a money-moving call with no distributed lock or atomic claim
//! before the money moves.
//!
//! Where it decides: [`jobs`] finds the jobs (`Coord::jobs`: annotations, scheduling calls,
//! start-up tasks, sleep loops, Quartz) and starts the walk from each (`Coord::job_reach`);
//! the shared ordered walk in `coord/events.rs` (`Coord::reach_fn`) answers whether money or
//! a lock/claim comes first, with the money, lock and claim APIs from
//! `rules/catalog/coordination.toml`; [`check`] reports a job whose answer is money and
//! writes the message. The documentation is `IDEM004.md` beside this file.

pub mod jobs;

use super::ctx::Ctx;
use crate::coord::{Coord, Reach};
use crate::finding::{Finding, Label};
use crate::hash::HashSet;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM004: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::SchedulerLock,
    code: CODE,
    name: "scheduler-without-distributed-lock",
    summary: "A job started by a per-process scheduler (it runs in every replica) moves money with no distributed lock or atomic claim first",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM004.md"),
    precision: "high",
    security_severity: "7.5",
    tags: &["correctness", "payments", "concurrency", "scheduler"],
    home: module_path!(),
    needs: &[Need::PostSites],
};

pub const CODE: &str = "IDEM004";

pub fn check(ctx: &Ctx, co: &Coord, out: &mut Vec<Finding>) {
    // Only a job that moves money is reported: with nothing in the project that may reach
    // money, there is no job to look for.
    let gate = co.money_gate();
    if gate.is_empty() {
        return;
    }
    let mut seen = HashSet::default();
    for job in co.jobs() {
        if !seen.insert(job.report) {
            continue;
        }
        if !co.job_may_move_money(&job) {
            continue;
        }
        let reach = co.job_reach(&job);
        let Reach::Money {
            at: money, path, ..
        } = reach
        else {
            continue;
        };
        let mut labels = Vec::new();
        // The calls that lead there, then where the money moves.
        for step in path.iter().take(3) {
            labels.push(Label {
                unit: step.at.unit,
                span: step.span,
                message: format!("the job calls `{}`", step.what),
            });
        }
        labels.push(Label {
            unit: money.at.unit,
            span: money.span,
            message: "money moves here, with no lock or claim before it".into(),
        });
        let (unit, span) = job.report;
        out.push(Finding {
            code: CODE,
            unit,
            span,
            label: "runs in every replica".into(),
            message: format!(
                "{} runs a job that moves money (`{}`) with no distributed lock or atomic claim before it: {}, and each copy moves the money",
                job.how, money.what, job.why
            ),
            labels,
            note: Some(if super::ctx::money_call_keyed(co, &money) {
                format!(
                    "{}; an idempotency key made in each replica (a fresh UUID per run) does not help: every replica makes a different one",
                    super::ctx::KEYED_RACE
                )
            } else {
                "an idempotency key made in each replica (a fresh UUID per run) does not help: every replica makes a different one. A key derived from the business operation makes the provider settle the race, but only within its retention window (24 hours at Stripe) and only if every replica sends an identical request; a \"done already?\" read does not help either: all replicas read before any of them writes".into()
            }),
            help: "take a distributed lock keyed by the billing period before the money moves (`SELECT pg_try_advisory_lock(..)`, ShedLock `@SchedulerLock`, a Redisson lock) and claim each charge atomically (`INSERT .. ON CONFLICT DO NOTHING`, checked) with a key derived from customer and period".into(),
            symbol: ctx.symbol(job.at),
            origin: None,
            inferred: job.inferred.clone(),
        });
    }
}
