//! IDEM007 payment-post-without-idempotency-key: a POST to a money-moving endpoint, or a
//! payment SDK money call, sent with no idempotency key, so a resend after a lost response
//! pays twice. (A keyless SDK call inside a retry scope is IDEM002's.)

use super::ctx::Ctx;
use crate::coord::Coord;
use crate::finding::{Finding, Label};
use crate::hash::HashSet;

use super::meta::{Need, Rule, RuleMeta};
use crate::finding::Severity;

/// IDEM007: what it is, how it is reported, what it needs.
pub static META: RuleMeta = RuleMeta {
    id: Rule::PaymentPost,
    code: CODE,
    name: "payment-post-without-idempotency-key",
    summary: "A POST to a money-moving endpoint, or a payment SDK call that moves money, is sent with no idempotency key",
    severity: Severity::Error,
    default_enabled: true,
    doc: include_str!("IDEM007.md"),
    precision: "high",
    security_severity: "7.5",
    tags: &["correctness", "payments", "idempotency"],
    home: module_path!(),
    needs: &[Need::PostSites],
};

pub const CODE: &str = "IDEM007";

pub fn check(ctx: &Ctx, co: &Coord, out: &mut Vec<Finding>) {
    // One finding per endpoint literal; it is reported if any POST using it has no key.
    let mut seen = HashSet::default();
    for s in &co.shared.posts.sites {
        // A project interceptor of this client sets the key on every request.
        if s.has_key
            || co.shared.posts.covered_by_interceptor(co.p, s).is_some()
            || !seen.insert(s.literal)
        {
            continue;
        }
        if let Some(m) = s.sdk {
            // Inside a retry scope every attempt is a new payment: IDEM002 says so.
            if ctx.retry_scope_of(s.at, s.site).is_none() {
                out.push(sdk_finding(ctx, co, s, m));
            }
            continue;
        }
        let (unit, span) = s.literal;
        let mut labels = Vec::new();
        let src = &co.p.units[unit].src;
        let site_line = co.p.units[s.at.unit].src.line_col(s.site.start).line;
        if s.at.unit != unit || site_line != src.line_col(span.start).line {
            let text = co.p.units[s.at.unit].src.slice(s.site);
            let first = text.lines().next().unwrap_or("").trim_end();
            labels.push(Label {
                unit: s.at.unit,
                span: crate::facts::Span::new(s.site.start, s.site.start + first.len()),
                message: match s.helper {
                    Some(h) => format!(
                        "posted here through `{}`, which sets no idempotency key",
                        co.p.func(h).name.as_deref().unwrap_or("a helper")
                    ),
                    None if s.declared => {
                        "declared as a POST here, with no idempotency key parameter".into()
                    }
                    None => "sent as a POST here, with no idempotency key".into(),
                },
            });
        }
        let what = if s.declared { "declares" } else { "sends" };
        out.push(Finding {
            code: CODE,
            unit,
            span,
            label: format!("{} `{}` without an idempotency key", s.provider, s.endpoint),
            message: format!(
                "this code {what} a POST to {} `{}`, which moves money, with no idempotency key: when the response is lost (timeout, reset connection) and the request is sent again by a retry, a re-run job or another replica, {} makes the payment twice",
                s.provider, s.endpoint, s.provider
            ),
            labels,
            note: None,
            help: "send an `Idempotency-Key` header derived from the operation's business identity (order id, customer + billing period), the same on every attempt".into(),
            symbol: ctx.symbol(s.at),
            origin: None,
            inferred: None,
        });
    }
}

/// An SDK money call sent with no key.
fn sdk_finding(
    ctx: &Ctx,
    co: &Coord,
    s: &crate::coord::endpoints::PostSite,
    m: crate::coord::sdk::SdkMatch,
) -> Finding {
    let sdk = &co.cat.sdks[m.sdk];
    let repeat = sdk.call[m.call]
        .repeat
        .as_deref()
        .unwrap_or("charges, refunds or pays out twice");
    Finding {
        code: CODE,
        unit: s.at.unit,
        span: m.name_span,
        label: format!("{} money call without an idempotency key", sdk.provider),
        message: format!(
            "`{}` moves money through {} with no idempotency key: when the response is lost (timeout, reset connection) and the call is made again by a retry, a re-run job or another replica, {} {}; {}",
            s.endpoint, sdk.name, sdk.provider, repeat, sdk.no_key
        ),
        labels: Vec::new(),
        note: None,
        help: format!(
            "pass a key derived from the operation's business identity (order id, customer + billing period), the same on every attempt: {}",
            sdk.key_takes
        ),
        symbol: ctx.symbol(s.at),
        origin: None,
        inferred: None,
    }
}
