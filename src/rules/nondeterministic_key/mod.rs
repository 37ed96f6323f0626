//! IDEM008 nondeterministic-idempotency-key (pedantic): a key made from a random or time value
//! once per operation. Safe against transport retries of that one request, not against a
//! restart, a second replica or a retry above the call. Reported only where no other rule
//! (IDEM001 interceptors, retry scopes) applies.

use super::ctx::Ctx;
use crate::finding::{Finding, Label};
use crate::flow::{Flow, FlowKind, KeyFlow};
use crate::hash::HashSet;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM008: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::NondeterministicKey,
    code: CODE,
    name: "nondeterministic-idempotency-key",
    summary: "An idempotency key is made from a random or time value once per operation: safe against transport retries of that request, not against restarts, replicas or retries above it",
    severity: Severity::Warning,
    default_enabled: false,
    doc: include_str!("IDEM008.md"),
    precision: "medium",
    security_severity: "4.0",
    tags: &["correctness", "payments", "idempotency", "pedantic"],
    home: module_path!(),
    needs: &[Need::KeyFlows],
};

pub const CODE: &str = "IDEM008";

pub fn check(ctx: &Ctx, flow: &Flow, flows: &[KeyFlow], out: &mut Vec<Finding>) {
    let mut seen = HashSet::default();
    for fl in flows {
        let in_scope = ctx.interceptor_of(fl.taint.at).is_some()
            || ctx.retry_scope_of(fl.taint.at, fl.taint.span).is_some();
        match fl.kind {
            FlowKind::Direct if !in_scope => {}
            FlowKind::ParamDefault => {}
            _ => continue,
        }
        let t = &fl.taint;
        // A helper that already puts its fresh value into a key (`PreparedTransfer {
        // idempotency_key: Uuid::new_v4().to_string(), .. }`) is reported there, once.
        if let Some(v) = &t.via
            && flow
                .key_flows(v.at)
                .iter()
                .any(|k| k.kind == FlowKind::Direct && k.taint.span == v.span)
        {
            continue;
        }
        if !seen.insert((t.at.unit, t.span)) {
            continue;
        }
        let what = match &t.via {
            Some(v) => format!("`{}` (which returns `{}`)", t.what, v.what),
            None => format!("`{}`", t.what),
        };
        let mut labels = Vec::new();
        if let Some(v) = &t.via {
            labels.push(Label {
                unit: v.at.unit,
                span: v.span,
                message: format!("`{}` makes a new value here on every call", v.callee),
            });
        }
        sink_label(ctx, fl, &mut labels);
        out.push(Finding {
            code: CODE,
            unit: t.at.unit,
            span: t.span,
            label: "a new value for every operation".into(),
            message: format!(
                "idempotency key made from {what}: it protects only retries of this one request, not a restart, another replica or a retry of the whole operation"
            ),
            labels,
            note: None,
            help: "derive the key from the operation's business identity (e.g. a SHA-256 of customer id + billing period) so that every attempt, process and replica computes the same key".into(),
            symbol: ctx.symbol(t.at),
            origin: None,
            inferred: None,
        });
    }
}

/// A label on the first line of the sink, when it is not on the primary line.
pub fn sink_label(ctx: &Ctx, fl: &KeyFlow, labels: &mut Vec<Label>) {
    let unit = fl.sink_fn.unit;
    if unit != fl.taint.at.unit {
        return;
    }
    let src = &ctx.p.units[unit].src;
    if src.line_col(fl.sink.start).line == src.line_col(fl.taint.span.start).line {
        return;
    }
    let text = ctx.text(unit, fl.sink);
    let first_line = text.lines().next().unwrap_or("").trim_end();
    let span = crate::facts::Span::new(fl.sink.start, fl.sink.start + first_line.len());
    labels.push(Label {
        unit,
        span,
        message: "used as the idempotency key here".into(),
    });
}

/// One finding per expression: a value that another rule already reports (IDEM001 through the
/// helper call that makes it, say) is not reported again by this pedantic rule.
pub fn drop_claimed(findings: &mut Vec<Finding>) {
    let claimed: HashSet<(usize, crate::facts::Span)> = findings
        .iter()
        .filter(|f| f.code != CODE)
        .flat_map(|f| [Some((f.unit, f.span)), f.origin])
        .flatten()
        .collect();
    findings.retain(|f| f.code != CODE || !claimed.contains(&(f.unit, f.span)));
}
