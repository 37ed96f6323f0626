//! What an SDK call's params say about money. The params may be built right at the call, in
//! the calling function, in project helpers that return them or are handed them, or at the
//! callers that pass them in; each way they reach the call is a [`Path`] of code regions.
//! Whether the call moves money can then depend on what every path sets: a Stripe
//! PaymentIntent created without `confirm`, a subscription with `payment_behavior`
//! default_incomplete, an Adyen payment of a zero amount (a card stored, nothing charged), or a
//! charge from a single-use token (a repeat fails instead of charging again).

use super::syntax::{chain_links, local_binding, param_to_arg, peel};
use super::words::words;
use crate::catalog::ParamCondition;
use crate::facts::{Expr, ExprKind, Span};
use crate::flow::Flow;
use crate::project::{FnRef, Project, walk_stmts};

/// The calls that may run `f` (the files where one may be written, then the flow's call
/// resolution), with the function each is in: the callers of a function that hands its
/// parameter to an SDK call, or of a helper that sends a POST.
pub fn calls_of<'p>(flow: &Flow<'p>, p: &'p Project, f: FnRef) -> Vec<(FnRef, &'p Expr)> {
    p.calls_that_may_run(f)
        .into_iter()
        .filter_map(|(at, span)| Some((at, crate::project::find_call(p.func(at), span)?)))
        .filter(|(at, call)| match &call.kind {
            ExprKind::Call {
                receiver,
                name,
                args,
            } => flow
                .call_targets(*at, receiver.as_deref(), name, args)
                .contains(&f),
            _ => false,
        })
        .collect()
}

/// A region of code in a function that builds (part of) the params.
#[derive(Clone, Copy, Debug)]
pub struct Place {
    pub at: FnRef,
    pub region: Span,
}

/// One way the params reach the call: every region that builds them along it.
pub type Path = Vec<Place>;

/// How far the search follows callers and helpers, and how much it looks at in all.
const MAX_DEPTH: u32 = 3;
const MAX_PLACES: usize = 48;

pub struct ParamsFinder<'a, 'p> {
    p: &'p Project,
    flow: &'a Flow<'p>,
}

/// The ways the params reach a call.
pub struct Found {
    pub paths: Vec<Path>,
    /// Some helper was not looked into (past the depth or count bound): a field it sets is
    /// not seen.
    pub truncated: bool,
}

/// What one search may still look at.
struct Bounds {
    places_left: usize,
    truncated: bool,
}

impl<'a, 'p> ParamsFinder<'a, 'p> {
    pub fn new(p: &'p Project, flow: &'a Flow<'p>) -> Self {
        ParamsFinder { p, flow }
    }

    /// Every way `e`, a value used in `at` at offset `before`, is built; `None` when one of them
    /// is out of sight (a field, a caller that cannot be found, callers too far up). Helpers
    /// past the depth or count bound are left out, and [`Found::truncated`] says so.
    pub fn paths(&self, at: FnRef, e: &'p Expr, before: usize) -> Option<Found> {
        let mut bounds = Bounds {
            places_left: MAX_PLACES,
            truncated: false,
        };
        let paths = self.paths_at(at, e, before, 0, &mut bounds)?;
        Some(Found {
            paths,
            truncated: bounds.truncated,
        })
    }

    fn paths_at(
        &self,
        at: FnRef,
        e: &'p Expr,
        before: usize,
        depth: u32,
        bounds: &mut Bounds,
    ) -> Option<Vec<Path>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut own = vec![Place { at, region: e.span }];
        // `params`, `&params`, `builder.build()`, `paramsFor(order).toBuilder().build()`: the
        // chain down to the value it starts from, and the project functions along it.
        let mut root = peel(e);
        for link in chain_links(e) {
            self.helpers_of(at, link, depth, &mut own, bounds);
            root = link;
        }
        let ExprKind::Name(n) = &root.kind else {
            // Built inline (`SomeParams.builder()...`, `new T(..)`, a struct literal).
            return Some(vec![own]);
        };
        if let Some(b) = local_binding(self.p, at, n, before) {
            // The local's initialiser and everything done to it before the call.
            own.push(Place {
                at,
                region: Span::new(b.span.start, before),
            });
            let outer = self.p.func(self.p.outermost(at));
            let mut handed = Vec::new();
            let mut parts = Vec::new();
            walk_stmts(&outer.body, &mut |x| {
                if x.span.start >= b.span.start
                    && x.span.end <= before
                    && let ExprKind::Call { args, .. } = &x.kind
                {
                    for g in args {
                        let ExprKind::Name(m) = &peel(&g.value).kind else {
                            continue;
                        };
                        if m == n {
                            handed.push(x);
                        } else if let Some(b2) = local_binding(self.p, at, m, b.span.start) {
                            // A part built beforehand (`request.setAmount(amount)`).
                            parts.push(b2.span.start);
                        }
                    }
                }
            });
            for start in parts {
                own.push(Place {
                    at,
                    region: Span::new(start, b.span.start),
                });
            }
            handed.extend(b.init.iter().flat_map(chain_links));
            for x in handed {
                self.helpers_of(at, x, depth, &mut own, bounds);
            }
            return Some(vec![own]);
        }
        // A parameter: what every caller passes.
        let root_fn = self.p.outermost(at);
        let outer = self.p.func(root_fn);
        let Some(i) = outer.params.iter().position(|p| p.name == n.as_str()) else {
            // A type's static builder (`SomeParams.builder()...`) is built right here; a field
            // is set who knows where.
            return n.starts_with(|c: char| c.is_uppercase()).then(|| vec![own]);
        };
        let mut out = Vec::new();
        for (caller, call) in calls_of(self.flow, self.p, root_fn) {
            let ExprKind::Call { receiver, args, .. } = &call.kind else {
                continue;
            };
            let arg =
                param_to_arg(self.p, root_fn, receiver.as_deref(), i).and_then(|j| args.get(j))?;
            for mut path in self.paths_at(caller, &arg.value, call.span.start, depth + 1, bounds)? {
                path.extend(own.iter().copied());
                out.push(path);
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// If `x` is a call of project functions, their bodies (and the project functions those
    /// call, up to the bounds) are places of the path.
    fn helpers_of(&self, at: FnRef, x: &'p Expr, depth: u32, path: &mut Path, bounds: &mut Bounds) {
        let ExprKind::Call {
            receiver,
            name,
            args,
        } = &x.kind
        else {
            return;
        };
        if self.p.count_named(name) == 0 || self.library_chain(at, receiver.as_deref()) {
            return;
        }
        let targets = self.flow.call_targets(at, receiver.as_deref(), name, args);
        if targets.len() > 1 {
            // Which one runs is not known (every `build()` of the project, by name).
            bounds.truncated = true;
            return;
        }
        for t in targets {
            if depth >= MAX_DEPTH || bounds.places_left == 0 {
                bounds.truncated = true;
                return;
            }
            if path.iter().any(|p| p.at == t) {
                continue;
            }
            bounds.places_left -= 1;
            let f = self.p.func(t);
            path.push(Place {
                at: t,
                region: f.span,
            });
            let mut calls = Vec::new();
            for g in self.p.with_nested(t) {
                walk_stmts(&self.p.func(g).body, &mut |c| {
                    if matches!(c.kind, ExprKind::Call { .. }) {
                        calls.push((g, c));
                    }
                });
            }
            for (g, c) in calls {
                self.helpers_of(g, c, depth + 1, path, bounds);
            }
        }
    }

    /// Does a call chain start at a type no project declares (`SomeParams.builder()...`, a local
    /// declared or built as one: `SomeParams.Builder builder = ..; builder.build()`)? Its
    /// methods are the library's, whatever project classes call theirs.
    fn library_chain(&self, at: FnRef, receiver: Option<&Expr>) -> bool {
        let mut cur = match receiver {
            Some(r) => peel(r),
            None => return false,
        };
        let mut locals = 0;
        loop {
            match &cur.kind {
                ExprKind::Call {
                    receiver: Some(r), ..
                } => cur = peel(r),
                ExprKind::Call { name, .. } => return self.is_library_type(name),
                ExprKind::New { ty, .. } => return self.is_library_type(ty),
                ExprKind::Name(n) if !n.starts_with(|c: char| c.is_uppercase()) => {
                    let Some(b) = local_binding(self.p, at, n, cur.span.start) else {
                        return false;
                    };
                    if let Some(t) = &b.ty {
                        return self.is_library_type(&crate::lang::clean_type(t));
                    }
                    locals += 1;
                    match &b.init {
                        Some(init) if locals < 8 => cur = peel(init),
                        _ => return false,
                    }
                }
                ExprKind::Name(n) | ExprKind::Field { name: n, .. } => {
                    return n.starts_with(|c: char| c.is_uppercase()) && self.is_library_type(n);
                }
                _ => return false,
            }
        }
    }

    /// A type no project declares: by its outermost type when qualified (`SomeParams.Builder`:
    /// the project may have builders of its own; `stripe::CreateCharge`), else by its name.
    fn is_library_type(&self, t: &str) -> bool {
        let t = t.split('<').next().unwrap_or(t);
        t.split(['.', ':'])
            .find(|s| s.starts_with(|c: char| c.is_uppercase()))
            .is_some_and(|outer| self.p.types_named(outer).is_empty())
    }

    /// The source text of a place, without its comments (`// created without confirm`).
    pub fn text(&self, place: &Place) -> std::borrow::Cow<'p, str> {
        crate::source::without_comments(self.p.units[place.at.unit].src.slice(place.region))
    }

    /// Does some place of `path` set the field `cond` names to a value it accepts?
    pub fn sets(&self, path: &Path, cond: &ParamCondition) -> bool {
        let want = normalise(&cond.set);
        path.iter().any(|place| {
            let mut yes = false;
            for g in self.p.with_nested(self.p.outermost(place.at)) {
                walk_stmts(&self.p.func(g).body, &mut |x| {
                    if yes || x.span.start < place.region.start || x.span.end > place.region.end {
                        return;
                    }
                    for (field, value, on) in field_sets(x) {
                        if normalise(&field) == want
                            && on_matches(self.p, place.at.unit, on, cond.on.as_deref())
                            && value_matches(self.p, place.at.unit, value, cond)
                        {
                            yes = true;
                        }
                    }
                });
                if yes {
                    break;
                }
            }
            yes
        })
    }
}

/// `payment_behavior`, `setPaymentBehavior`, `paymentBehavior` -> `paymentbehavior`.
fn normalise(field: &str) -> String {
    let f = match field.strip_prefix("set") {
        Some(rest) if rest.starts_with(|c: char| c.is_uppercase()) => rest,
        _ => field,
    };
    f.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The fields `x` sets, with the value and what it is set on: a setter or builder call with
/// one argument (`setSource(t)`, `.value(0L)`), a map put (`put("source", t)`), an assignment
/// (`p.confirm = Some(true)`), named arguments and struct-literal fields.
fn field_sets(x: &Expr) -> Vec<(String, &Expr, Option<&Expr>)> {
    let mut out = Vec::new();
    match &x.kind {
        ExprKind::Call {
            receiver,
            name,
            args,
        } => {
            if name == "put"
                && args.len() == 2
                && let ExprKind::Str(k) = &args[0].value.kind
            {
                out.push((k.to_string(), &args[1].value, receiver.as_deref()));
            } else if args.len() == 1 && args[0].name.is_none() {
                out.push((name.to_string(), &args[0].value, receiver.as_deref()));
            }
            for a in args {
                if let Some(n) = &a.name {
                    out.push((n.clone(), &a.value, Some(x)));
                }
            }
        }
        ExprKind::New { args, .. } => {
            for a in args {
                if let Some(n) = &a.name {
                    out.push((n.clone(), &a.value, Some(x)));
                }
            }
        }
        ExprKind::Assign { target, value, .. } => {
            if let ExprKind::Field { receiver, name } = &peel(target).kind {
                out.push((name.to_string(), value, Some(receiver)));
            } else if let ExprKind::Name(n) = &peel(target).kind {
                out.push((n.to_string(), value, None));
            }
        }
        _ => {}
    }
    out
}

/// Is what the field is set on what the condition asks (`on = "amount"`: `Amount().value(0L)`,
/// `amount.value = 0`)? An assignment inside `apply { }` has no receiver in sight and counts.
fn on_matches(p: &Project, unit: usize, on: Option<&Expr>, want: Option<&str>) -> bool {
    let Some(want) = want else { return true };
    let Some(on) = on else { return true };
    let text = p.units[unit].src.slice(on.span);
    words(text).iter().any(|w| w == want)
}

fn value_matches(p: &Project, unit: usize, value: &Expr, cond: &ParamCondition) -> bool {
    let v = peel(value);
    if cond.zero {
        return match &v.kind {
            ExprKind::Lit(l) => {
                let l = l.trim_end_matches(['L', 'l', 'f', 'F', 'd', 'D']);
                l.parse::<f64>().is_ok_and(|n| n == 0.0)
            }
            ExprKind::Str(s) => s.trim() == "0",
            ExprKind::Field { name, .. } | ExprKind::Name(name) => name.as_str() == "ZERO",
            _ => false,
        };
    }
    let have = words(p.units[unit].src.slice(v.span));
    !cond.to.is_empty() && cond.to.iter().all(|t| have.contains(t))
}

#[cfg(test)]
mod tests {
    use super::normalise;
    use crate::project::{FnRef, Project};

    /// The callers a resolution may run: every call named `send` whose resolution
    /// (`Flow::call_targets`) runs the function, from the files `Project::calls_that_may_run`
    /// reads, which leave out files naming no type the call could be resolved on.
    #[test]
    fn callers_come_from_the_files_that_may_call() {
        let j = |path: &str, text: &str| (path.to_string(), text.to_string());
        let files = [
            j(
                "billing/src/main/java/a/Gateway.java",
                "package a; interface Gateway { void send(String id); }",
            ),
            j(
                "billing/src/main/java/a/StripeGateway.java",
                "package a; class StripeGateway implements Gateway { public void send(String id) { settle(id); } }",
            ),
            j(
                "billing/src/main/java/a/Mailer.java",
                "package a; class Mailer { void send(String id) { log(id); } }",
            ),
            j(
                "other/src/main/java/b/Queue.java",
                "package b; class Queue { void send(String id) { log(id); } void settle(String id) { log(id); } }",
            ),
            j(
                "other/src/main/java/b/Batch.java",
                "package b; class Batch { void settle(String id) { log(id); } }",
            ),
            j(
                "billing/src/main/java/a/Settler.java",
                "package a; class Settler { void settle(String id) { log(id); } }",
            ),
            // Through the interface, on the class, on a Kotlin constructor call, by a field.
            j(
                "billing/src/main/java/a/ViaInterface.java",
                "package a; class ViaInterface { Gateway g; void run() { g.send(\"x\"); } }",
            ),
            j(
                "billing/src/main/java/a/ViaClass.java",
                "package a; class ViaClass { void run() { new StripeGateway().send(\"x\"); } }",
            ),
            j(
                "billing/src/main/kotlin/a/ViaCtor.kt",
                "package a\nclass ViaCtor { fun run() { StripeGateway().send(\"x\") } }",
            ),
            // A `send` on another type, and on a value of unknown type (three in the module).
            j(
                "billing/src/main/java/a/Unrelated.java",
                "package a; class Unrelated { Mailer m; void run() { m.send(\"x\"); } }",
            ),
            j(
                "billing/src/main/java/a/Untyped.java",
                "package a; class Untyped { void run() { sender.send(\"x\"); } }",
            ),
            // `settle` is the only one of its name in `billing`: any file there may call it.
            j(
                "billing/src/main/java/a/Settle.java",
                "package a; class Settle { void run() { settler.settle(\"x\"); } }",
            ),
            j(
                "other/src/main/java/b/Settle.java",
                "package b; class Settle { void run() { settler.settle(\"x\"); } }",
            ),
        ];
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let p = crate::project::parsed(&refs);
        let cat = crate::catalog::Catalog::builtin();
        let caches = crate::flow::Caches::default();
        let flow = crate::flow::Flow::new(&p, cat, &caches);
        let unit = |path: &str| {
            p.units
                .iter()
                .position(|u| u.src.path.to_str() == Some(path))
                .unwrap()
        };
        let on = |name: &str, owner_unit: &str| -> FnRef {
            *p.fns_named(name)
                .iter()
                .find(|f| f.unit == unit(owner_unit))
                .unwrap()
        };
        // By brute force: every call of the name, resolved.
        let resolved = |p: &Project, f: FnRef, name: &str| -> Vec<FnRef> {
            let mut v: Vec<FnRef> = p
                .calls_named(name)
                .iter()
                .filter(|(at, span)| {
                    let e = crate::project::find_call(p.func(*at), *span).unwrap();
                    let crate::facts::ExprKind::Call {
                        receiver,
                        name,
                        args,
                    } = &e.kind
                    else {
                        return false;
                    };
                    flow.call_targets(*at, receiver.as_deref(), name, args)
                        .contains(&f)
                })
                .map(|(at, _)| *at)
                .collect();
            v.sort();
            v
        };
        let found = |f: FnRef| -> Vec<FnRef> {
            let mut v: Vec<FnRef> = super::calls_of(&flow, &p, f)
                .into_iter()
                .map(|(at, _)| at)
                .collect();
            v.sort();
            v
        };
        let stripe = on("send", "billing/src/main/java/a/StripeGateway.java");
        let want = resolved(&p, stripe, "send");
        let callers: Vec<usize> = want.iter().map(|f| f.unit).collect();
        for via in ["ViaInterface.java", "ViaClass.java"] {
            assert!(
                callers.contains(&unit(&format!("billing/src/main/java/a/{via}"))),
                "{via}"
            );
        }
        assert!(callers.contains(&unit("billing/src/main/kotlin/a/ViaCtor.kt")));
        assert_eq!(found(stripe), want);
        let from = p.may_call_from(stripe);
        for left_out in ["Unrelated.java", "Untyped.java", "Mailer.java"] {
            assert!(
                !from.may_call(&p, unit(&format!("billing/src/main/java/a/{left_out}"))),
                "{left_out}"
            );
        }
        // The only `settle` of `billing`: its calls there run it (an untyped one, and
        // `StripeGateway`'s own), the one in `other` does not, and `other` is not read for it.
        let settler = on("settle", "billing/src/main/java/a/Settler.java");
        let want = resolved(&p, settler, "settle");
        let callers: Vec<usize> = want.iter().map(|f| f.unit).collect();
        assert!(callers.contains(&unit("billing/src/main/java/a/Settle.java")));
        assert!(!callers.contains(&unit("other/src/main/java/b/Settle.java")));
        assert_eq!(found(settler), want);
        assert!(
            !p.may_call_from(settler)
                .may_call(&p, unit("other/src/main/java/b/Settle.java"))
        );
    }

    #[test]
    fn field_spellings_agree() {
        for f in [
            "payment_behavior",
            "setPaymentBehavior",
            "paymentBehavior",
            "PAYMENT_BEHAVIOR",
        ] {
            assert_eq!(normalise(f), "paymentbehavior", "{f}");
        }
        assert_eq!(normalise("settle"), "settle");
        assert_eq!(normalise("setValue"), "value");
    }
}
