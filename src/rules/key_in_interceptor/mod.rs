//! IDEM001 key-generated-in-interceptor: a fresh random/time value becomes the idempotency key
//! inside an HTTP interceptor, middleware or filter body, so each attempt that runs the body
//! sends a different key.

use super::ctx::Ctx;
use crate::finding::{Finding, Label};
use crate::flow::{FlowKind, KeyFlow};
use crate::hash::HashSet;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM001: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::KeyInInterceptor,
    code: CODE,
    name: "key-generated-in-interceptor",
    summary: "An idempotency key is made from a random or time value inside an HTTP interceptor, middleware or filter, which runs again for every attempt",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM001.md"),
    precision: "high",
    security_severity: "7.5",
    tags: &["correctness", "payments", "idempotency", "retry"],
    home: module_path!(),
    needs: &[Need::KeyFlows],
};

pub const CODE: &str = "IDEM001";

pub const HELP: &str = "compute the key once per business operation, before the request is sent, from its identity (e.g. a SHA-256 of customer id + billing period), and put it on the request or its context; the interceptor should only copy it onto the request and fail if it is missing, never invent one";

pub fn check(ctx: &Ctx, flows: &[KeyFlow], out: &mut Vec<Finding>) {
    let mut seen = HashSet::default();
    for fl in flows {
        if fl.kind == FlowKind::ParamDefault {
            continue;
        }
        let Some(scope) = ctx.interceptor_of(fl.taint.at) else {
            continue;
        };
        let t = &fl.taint;
        // A helper that is itself part of an interceptor (an overridden hook, a private
        // method) is reported inside, where the key is made.
        if fl.kind == FlowKind::HelperSetsKey
            && t.via
                .as_ref()
                .is_some_and(|v| ctx.interceptor_of(v.at).is_some())
        {
            continue;
        }
        // A value made in a helper that is itself part of the interceptor (a private method of
        // the interceptor class) is reported where it is made, with the call as a label.
        let in_helper = t
            .via
            .as_ref()
            .filter(|v| ctx.interceptor_of(v.at).is_some() && fl.kind == FlowKind::Direct);
        let (unit, span, at) = match in_helper {
            Some(v) => (v.at.unit, v.span, v.at),
            None => (t.at.unit, t.span, t.at),
        };
        if !seen.insert((unit, span)) {
            continue;
        }
        let e = scope.entry;
        let what = match (in_helper.and(t.via.as_ref()), fl.kind) {
            (Some(v), _) => format!("idempotency key made from `{}`", v.what),
            _ => match (&t.via, fl.kind) {
                (Some(v), FlowKind::HelperSetsKey) => format!(
                    "`{}` sets an idempotency key made from `{}`",
                    t.what, v.what
                ),
                (Some(v), _) => format!(
                    "idempotency key made from `{}` (which returns `{}`)",
                    t.what, v.what
                ),
                (None, _) => format!("idempotency key made from `{}`", t.what),
            },
        };
        let message = format!(
            "{what} inside {} {} {}: every run sends a new key, so a retried request can charge the customer twice",
            crate::finding::article(&e.framework),
            e.framework,
            e.kind,
        );
        let mut labels = vec![Label {
            unit: scope.anchor_unit,
            span: scope.anchor,
            message: scope.what.clone(),
        }];
        match (&t.via, in_helper) {
            (Some(v), None) => labels.push(Label {
                unit: v.at.unit,
                span: v.span,
                message: format!("`{}` makes a new value here on every call", v.callee),
            }),
            (Some(v), Some(_)) => labels.push(Label {
                unit: t.at.unit,
                span: t.span,
                message: format!(
                    "`{}` is called here, on every run of the interceptor",
                    v.callee
                ),
            }),
            _ => {}
        }
        if in_helper.is_none() {
            super::nondeterministic_key::sink_label(ctx, fl, &mut labels);
        }
        out.push(Finding {
            code: CODE,
            unit,
            span,
            label: "a new value every time the interceptor runs".into(),
            message,
            labels,
            note: Some(format!("{}.", e.why)),
            help: HELP.into(),
            symbol: ctx.symbol(at),
            origin: t.via.as_ref().map(|v| (v.at.unit, v.span)),
            inferred: scope.inferred.clone(),
        });
    }
}
