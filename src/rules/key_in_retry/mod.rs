//! IDEM002 key-generated-in-retry-scope and IDEM003 retry-calls-key-minting-function: a key
//! computed in code that runs once per attempt (a retry lambda, a retried publisher, a
//! `@Retryable` method, a callback that sends again, a retry loop), either written there
//! (IDEM002) or made by a project function called there (IDEM003).

use super::ctx::Ctx;
use crate::finding::{Finding, Label};
use crate::flow::{FlowKind, KeyFlow};
use crate::hash::HashSet;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM003: what it is, how it is reported, what it needs.
pub static HELPER_META: RuleMeta = RuleMeta {
    id: Rule::RetryCallsKeyMinter,
    code: CODE_CALL,
    name: "retry-calls-key-minting-function",
    summary: "Code that runs again on every retry attempt calls a function that makes a new idempotency key on each call",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM003.md"),
    precision: "high",
    security_severity: "7.5",
    tags: &["correctness", "payments", "idempotency", "retry"],
    home: module_path!(),
    needs: &[Need::KeyFlows],
};

/// IDEM002: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::KeyInRetryScope,
    code: CODE_DIRECT,
    name: "key-generated-in-retry-scope",
    summary: "An idempotency key is made from a random or time value inside code that runs again on every retry attempt",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM002.md"),
    precision: "high",
    security_severity: "7.5",
    tags: &["correctness", "payments", "idempotency", "retry"],
    home: module_path!(),
    needs: &[Need::KeyFlows, Need::PostSites],
};

pub const CODE_DIRECT: &str = "IDEM002";
pub const CODE_CALL: &str = "IDEM003";

pub const HELP: &str = "compute the key once, before the retry boundary, from the operation's business identity (e.g. a SHA-256 of customer id + billing period), and pass that value into the retried code; to retry a prebuilt request, reuse it (`call.clone()`, the same producer) instead of building a new one";

pub fn check(
    ctx: &Ctx,
    flows: &[KeyFlow],
    want_direct: bool,
    want_call: bool,
    out: &mut Vec<Finding>,
) {
    let mut seen = HashSet::default();
    for fl in flows {
        let t = &fl.taint;
        // A parameter default is filled in at the call site, once per call: the call inside a
        // retry scope is what is reported.
        if fl.kind == FlowKind::ParamDefault || ctx.interceptor_of(t.at).is_some() {
            continue;
        }
        let Some(scope) = ctx.retry_scope_of(t.at, t.span) else {
            continue;
        };
        let direct = fl.kind == FlowKind::Direct && t.via.is_none();
        let code = if direct { CODE_DIRECT } else { CODE_CALL };
        if (direct && !want_direct) || (!direct && !want_call) {
            continue;
        }
        if !seen.insert((t.at.unit, t.span)) {
            continue;
        }
        let mut labels = vec![Label {
            unit: scope.anchor_unit,
            span: scope.anchor,
            message: scope.what.clone(),
        }];
        let message = match (&t.via, fl.kind) {
            (Some(v), FlowKind::HelperSetsKey) => format!(
                "`{}` sets a new idempotency key on every call (from `{}`), and it is called inside a retry scope: every attempt sends a different key, so a retried charge is a new charge",
                t.what, v.what
            ),
            (Some(v), _) => format!(
                "`{}` returns a new value on every call (from `{}`), and it becomes the idempotency key inside a retry scope: every attempt sends a different key, so a retried charge is a new charge",
                t.what, v.what
            ),
            (None, _) => format!(
                "idempotency key made from `{}` inside a retry scope: every attempt computes a new key, so a retried charge is a new charge",
                t.what
            ),
        };
        if let Some(v) = &t.via {
            labels.push(Label {
                unit: v.at.unit,
                span: v.span,
                message: format!("`{}` makes a new value here on every call", v.callee),
            });
        }
        super::nondeterministic_key::sink_label(ctx, fl, &mut labels);
        out.push(Finding {
            code,
            unit: t.at.unit,
            span: t.span,
            label: if direct {
                "a new value on every attempt".into()
            } else {
                "called again on every attempt".into()
            },
            message,
            labels,
            note: Some(scope.why.clone()),
            help: HELP.into(),
            symbol: ctx.symbol(t.at),
            origin: None,
            inferred: scope.inferred.clone(),
        });
    }
}

/// IDEM002 for payment SDK calls: an SDK money call with no idempotency key inside a retry
/// scope. The SDK sends no key, or one of its own per call, so every attempt is a new payment.
pub fn check_sdk(ctx: &Ctx, co: &crate::coord::Coord, out: &mut Vec<Finding>) {
    for s in &co.shared.posts.sites {
        let Some(m) = s.sdk else { continue };
        if s.has_key {
            continue;
        }
        let Some(scope) = ctx.retry_scope_of(s.at, s.site) else {
            continue;
        };
        let sdk = &co.cat.sdks[m.sdk];
        let repeat = match &sdk.call[m.call].repeat {
            Some(r) => format!("each retried call {r}"),
            None => "a retried payment is a new payment".into(),
        };
        out.push(Finding {
            code: CODE_DIRECT,
            unit: s.at.unit,
            span: m.name_span,
            label: "a new payment on every attempt".into(),
            message: format!(
                "`{}` moves money through {} with no idempotency key inside a retry scope: every attempt is a new request to {}, so {}; {}",
                s.endpoint, sdk.name, sdk.provider, repeat, sdk.no_key
            ),
            labels: vec![Label {
                unit: scope.anchor_unit,
                span: scope.anchor,
                message: scope.what.clone(),
            }],
            note: Some(scope.why.clone()),
            help: format!(
                "compute a key once, before the retry boundary, from the operation's business identity, and pass it on every attempt: {}",
                sdk.key_takes
            ),
            symbol: ctx.symbol(s.at),
            origin: None,
            inferred: scope.inferred.clone(),
        });
    }
}
