//! Payment SDK calls that move money (`rules/catalog/sdks.toml`): `PaymentIntent.create(..)`,
//! `client.v1().refunds().create(..)`, Adyen `paymentsApi.payments(..)`, PayPal
//! `client.execute(new OrdersCaptureRequest(id))`, async-stripe
//! `CreatePaymentIntent::new(..).send(&client)`.
//!
//! An SDK is seen in a file only through its packages (an import, a qualified name), so a
//! project class named `Charge` or `Refund` is not Stripe's.

use super::sdk_params::{Found, ParamsFinder, Path};
use super::syntax::{local_binding, peel};
use crate::catalog::{Catalog, Sdk, SdkCall, SdkStyle};
use crate::facts::{Expr, ExprKind, Lang, Span, simple_name};
use crate::flow::Flow;
use crate::project::{FnRef, Project};

/// A money call of an SDK.
#[derive(Clone, Copy, Debug)]
pub struct SdkMatch {
    /// Index into the catalogue's SDKs.
    pub sdk: usize,
    /// Index into that SDK's calls.
    pub call: usize,
    /// The called method's name in the source (where a finding points).
    pub name_span: Span,
    /// A repeat of this call fails instead of moving money again (a capture of one payment
    /// intent, a charge from a single-use token): a missing key is not reported.
    pub once: bool,
}

/// What an SDK call does with money.
#[derive(Clone, Copy, Debug)]
pub enum SdkCallIs {
    Money(SdkMatch),
    /// A money call of the SDK whose params make it move none (a PaymentIntent created
    /// without `confirm`, a subscription that waits for its first payment, a zero amount).
    NoMoney,
}

/// Are params that reach the call by `paths` built from one of `c.unless_params` (every path)
/// without setting one of `c.moves_money_with` (no path)? `None` when they are not those
/// params at all (another argument: the options).
fn unconfirmed(finder: &ParamsFinder<'_, '_>, paths: &[Path], c: &SdkCall) -> Option<bool> {
    let typed = |path: &Path| {
        path.iter().any(|pl| {
            c.unless_params
                .iter()
                .any(|t| finder.text(pl).contains(t.as_str()))
        })
    };
    if !paths.iter().any(typed) {
        return None;
    }
    let sets_it = |path: &Path| {
        path.iter().any(|pl| {
            let lower = finder.text(pl).to_ascii_lowercase();
            c.moves_money_with
                .iter()
                .any(|w| lower.contains(w.as_str()))
        })
    };
    Some(paths.iter().all(typed) && !paths.iter().any(sets_it))
}

/// Which SDKs each file can use, found once per run.
pub struct Sdks<'p> {
    p: &'p Project,
    cat: &'p Catalog,
    visible: Vec<Vec<usize>>,
}

impl<'p> Sdks<'p> {
    pub fn new(p: &'p Project, cat: &'p Catalog) -> Self {
        let visible = p
            .units
            .iter()
            .map(|u| {
                cat.sdks
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| {
                        s.langs.iter().any(|l| l == u.lang.name())
                            && u.imports().iter().any(|i| imports_sdk(s, u.lang, i))
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        Sdks { p, cat, visible }
    }

    /// Does any file use an SDK?
    pub fn any(&self) -> bool {
        self.visible.iter().any(|v| !v.is_empty())
    }

    pub fn visible(&self, unit: usize) -> &[usize] {
        &self.visible[unit]
    }

    /// What the SDK call `e` (a call in `at`) does with money, if it is a money call of an SDK.
    pub fn money_call(&self, flow: &Flow<'p>, at: FnRef, e: &'p Expr) -> Option<SdkCallIs> {
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &e.kind
        else {
            return None;
        };
        let mut found: Vec<(usize, usize)> = Vec::new();
        for &si in self.visible(at.unit) {
            let sdk = &self.cat.sdks[si];
            for (ci, c) in sdk.call.iter().enumerate() {
                if args.len() < c.min_args || !c.methods.iter().any(|m| m == name) {
                    continue;
                }
                if self.matches(flow, at, sdk, c, receiver.as_deref(), args) {
                    found.push((si, ci));
                    break;
                }
            }
        }
        // Two SDKs a file imports may both fit (`payments().createPayment(..)` is Square's and
        // Mollie's): the one the receiver's type is imported from.
        let &(sdk, call) = match found.as_slice() {
            [] => return None,
            [one] => one,
            many => many
                .iter()
                .find(|(si, _)| self.root_from(flow, at, receiver.as_deref(), *si))
                .unwrap_or(&many[0]),
        };
        let c = &self.cat.sdks[sdk].call[call];
        let mut once = c.once_per_object;
        if !c.moves_money_with.is_empty() || !c.unless_set.is_empty() {
            let finder = ParamsFinder::new(self.p, flow);
            // The params: the arguments, and the receiver chain of a `..params.send(&client)`.
            let chain = receiver.as_deref().filter(|_| c.style == SdkStyle::Chain);
            let mut no_money = false;
            for v in args.iter().map(|a| &a.value).chain(chain) {
                let Some(Found { paths, truncated }) = finder.paths(at, v, e.span.start) else {
                    continue;
                };
                if !c.moves_money_with.is_empty()
                    && let Some(unconfirmed) = unconfirmed(&finder, &paths, c)
                {
                    // A helper not looked into may set it.
                    no_money = unconfirmed && !truncated;
                    break;
                }
                for cond in &c.unless_set {
                    if paths.iter().all(|path| finder.sets(path, cond)) {
                        if cond.once {
                            once = true;
                        } else {
                            no_money = true;
                        }
                    }
                }
            }
            if no_money {
                return Some(SdkCallIs::NoMoney);
            }
        }
        Some(SdkCallIs::Money(SdkMatch {
            sdk,
            call,
            name_span: name_span(self.p, at.unit, e, name, args),
            once,
        }))
    }

    /// Is the type of the object a call chain starts from imported from SDK `si`'s packages
    /// (`mollie: Client` with `import be.woutschoovaerts.mollie.Client`)?
    fn root_from(&self, flow: &Flow<'p>, at: FnRef, receiver: Option<&'p Expr>, si: usize) -> bool {
        let mut root = match receiver {
            Some(r) => peel(r),
            None => return false,
        };
        while let ExprKind::Call {
            receiver: Some(r), ..
        } = &root.kind
        {
            root = peel(r);
        }
        let Some(t) = flow.type_in(at, root) else {
            return false;
        };
        let suffix = format!(".{t}");
        let sdk = &self.cat.sdks[si];
        self.p.units[at.unit]
            .imports()
            .iter()
            .any(|i| i.ends_with(&suffix) && sdk.packages.iter().any(|p| i.starts_with(p.as_str())))
    }

    fn matches(
        &self,
        flow: &Flow<'p>,
        at: FnRef,
        sdk: &Sdk,
        c: &SdkCall,
        receiver: Option<&'p Expr>,
        args: &'p [crate::facts::Arg],
    ) -> bool {
        let unit = at.unit;
        let is_type = |t: &str| self.names_type(unit, sdk, &c.types, t);
        match c.style {
            SdkStyle::Static => receiver.map(peel).is_some_and(|r| {
                matches!(r.kind, ExprKind::Name(_) | ExprKind::Field { .. })
                    && r.path_text().is_some_and(|p| is_type(&p))
            }),
            SdkStyle::Instance => receiver
                .and_then(|r| self.value_type(flow, at, r, c))
                .is_some_and(|t| is_type(&t)),
            SdkStyle::Service => receiver.is_some_and(|r| chain_has_service(r, &c.services)),
            SdkStyle::Api => receiver.is_some_and(|r| {
                let r = peel(r);
                matches!(&r.kind, ExprKind::Call { name, args, .. }
                    if args.is_empty() && c.services.iter().any(|s| s == name))
                    || matches!(&r.kind, ExprKind::Field { name, .. }
                        if is_service_property(&c.services, name))
                    || self.value_type(flow, at, r, c).is_some_and(|t| is_type(&t))
            }),
            SdkStyle::Request => args.iter().any(|a| {
                self.value_type(flow, at, &a.value, c)
                    .is_some_and(|t| is_type(&t))
            }),
            SdkStyle::Chain => {
                let mut cur = receiver.map(peel);
                let mut depth = 0;
                while let Some(x) = cur {
                    depth += 1;
                    if depth > 32 {
                        return false;
                    }
                    match &x.kind {
                        ExprKind::Call { receiver, name, .. } => {
                            if let Some(via) = &c.via
                                && name == via
                                && receiver
                                    .as_deref()
                                    .is_some_and(|r| chain_has_service(r, &c.services))
                            {
                                return true;
                            }
                            if c.via.is_none()
                                && receiver
                                    .as_deref()
                                    .map(peel)
                                    .and_then(|r| r.path_text())
                                    .is_some_and(|p| is_type(&p))
                            {
                                return true;
                            }
                            cur = receiver.as_deref().map(peel);
                        }
                        ExprKind::New { ty, .. } => return is_type(simple_name(ty)),
                        // `let req = CreateRefund::new(..); req.send(&client)`.
                        ExprKind::Name(n) if c.via.is_none() => {
                            cur = local_binding(self.p, at, n, x.span.start)
                                .and_then(|b| b.init.as_ref())
                                .map(peel);
                        }
                        _ => return false,
                    }
                }
                false
            }
        }
    }

    /// The SDK type of a value: declared, constructed, or returned by a static call on one of
    /// the call's types (`PaymentIntent intent = PaymentIntent.retrieve(id)`,
    /// `val intent = PaymentIntent.retrieve(id)`).
    fn value_type(&self, flow: &Flow<'p>, at: FnRef, e: &'p Expr, c: &SdkCall) -> Option<String> {
        let e = peel(e);
        if let Some(t) = flow.type_in(at, e) {
            return Some(t);
        }
        let from_static = |x: &Expr| -> Option<String> {
            // The root of a builder chain: `new CapturesRefundRequest(id).requestBody(..)`.
            let mut x = peel(x);
            while let ExprKind::Call {
                receiver: Some(r), ..
            } = &x.kind
                && matches!(peel(r).kind, ExprKind::Call { .. } | ExprKind::New { .. })
            {
                x = peel(r);
            }
            match &x.kind {
                ExprKind::Call {
                    receiver: Some(r), ..
                } => {
                    let p = peel(r).path_text()?;
                    let t = simple_name(&p);
                    c.types.iter().any(|x| x == t).then(|| t.to_string())
                }
                ExprKind::New { ty, .. } => Some(simple_name(ty).to_string()),
                _ => None,
            }
        };
        match &e.kind {
            ExprKind::Name(n) => local_binding(self.p, at, n, e.span.start)
                .and_then(|b| b.init.as_ref())
                .and_then(from_static),
            _ => from_static(e),
        }
    }

    /// Does `t`, written in `unit`, name one of `types` of the SDK: imported from one of its
    /// packages by name or under an alias (`import com.stripe.model.Refund as StripeRefund`),
    /// or by a wildcard when the project declares no type of that name, or qualified
    /// (`com.stripe.model.Charge`)?
    fn names_type(&self, unit: usize, sdk: &Sdk, types: &[String], path: &str) -> bool {
        if qualified_by(sdk, path) {
            return types.iter().any(|x| x == simple_name(path));
        }
        // Qualified by something else (`ledger::Refund`, `com.acme.ledger.Charge`): the
        // project's type, not the imported one.
        if path.contains(['.', ':']) {
            return false;
        }
        let t = simple_name(path);
        let u = &self.p.units[unit];
        let mut wildcard = false;
        for i in u.imports() {
            if !imports_sdk(sdk, u.lang, i) {
                continue;
            }
            if let Some((orig, alias)) = i.split_once(" as ") {
                if alias.trim() == t {
                    return types.iter().any(|x| x == simple_name(orig));
                }
                continue;
            }
            let last = i.rsplit([':', '.']).next().unwrap_or(i);
            if last == t {
                return types.iter().any(|x| x == t);
            }
            if last == "*" {
                wildcard = true;
            }
        }
        wildcard && types.iter().any(|x| x == t) && self.p.types_named(t).is_empty()
    }
}

/// Is `import` (as the facts keep it) one of `sdk`'s packages or crates?
fn imports_sdk(sdk: &Sdk, lang: Lang, import: &str) -> bool {
    match lang {
        Lang::Rust => {
            let first = import.split("::").next().unwrap_or(import).trim();
            sdk.crates.iter().any(|c| c == first)
        }
        _ => sdk
            .packages
            .iter()
            .any(|p| import == p || import.starts_with(p) && import[p.len()..].starts_with('.')),
    }
}

/// A receiver path qualified by one of the SDK's packages or crates
/// (`com.stripe.model.Charge`, `stripe::Charge`).
fn qualified_by(sdk: &Sdk, path: &str) -> bool {
    sdk.packages
        .iter()
        .any(|p| path.starts_with(p) && path[p.len()..].starts_with('.'))
        || sdk.crates.iter().any(|c| {
            path.strip_prefix(c.as_str())
                .is_some_and(|r| r.starts_with('.') || r.starts_with("::"))
        })
}

/// Does the receiver chain hold a service accessor call with no arguments
/// (`client.paymentIntents()`, `client.v1().refunds()`)?
fn chain_has_service(r: &Expr, services: &[String]) -> bool {
    let mut cur = Some(peel(r));
    let mut depth = 0;
    while let Some(x) = cur {
        depth += 1;
        if depth > 32 {
            return false;
        }
        match &x.kind {
            ExprKind::Call {
                receiver,
                name,
                args,
            } => {
                if args.is_empty() && services.iter().any(|s| s == name) {
                    return true;
                }
                cur = receiver.as_deref().map(peel);
            }
            ExprKind::Field { receiver, name } => {
                if is_service_property(services, name) {
                    return true;
                }
                cur = Some(peel(receiver));
            }
            _ => return false,
        }
    }
    false
}

/// Kotlin reads a Java getter as a property: `paypal.paymentsController` is
/// `getPaymentsController()`, `client.paymentsApi` is `getPaymentsApi()`.
fn is_service_property(services: &[String], name: &str) -> bool {
    services
        .iter()
        .any(|s| super::syntax::getter_property(s).is_some_and(|p| p == name))
}

/// The span of the method name of call `e` (`create` in `PaymentIntent.create(params)`): the
/// last occurrence of the name before the first argument.
pub fn name_span(
    p: &Project,
    unit: usize,
    e: &Expr,
    name: &str,
    args: &[crate::facts::Arg],
) -> Span {
    let src = p.units[unit].src.slice(e.span);
    let end = args
        .iter()
        .map(|a| a.value.span.start)
        .filter(|s| *s >= e.span.start)
        .min()
        .map_or(src.len(), |s| s - e.span.start)
        .min(src.len());
    match src.get(..end).and_then(|s| s.rfind(name)) {
        Some(i) => Span::new(e.span.start + i, e.span.start + i + name.len()),
        None => e.span,
    }
}
