//! What every rule is handed: the project, the catalogue, and the interceptor and retry scopes
//! found on first use; and what the scheduler and check-then-act rules say of a keyed money
//! call. A module of its own, so that the rules do not import the registry that runs them.

use crate::catalog::Catalog;
use crate::facts::{FnKind, Span};
use crate::hash::HashMap;
use crate::project::{FnRef, Project};
use crate::scopes::interceptors::InterceptorScope;
use std::sync::{Arc, OnceLock};

/// The interceptor and retry scopes are found on first use: the key rules need them only in
/// files that can hold a key sink, IDEM007 only when there is a POST to a money endpoint, and
/// most projects have neither. [`Ctx::find_scopes`] finds both at once, side by side.
pub struct Ctx<'p> {
    pub p: &'p Project,
    pub cat: &'static Catalog,
    /// The value flow's project-wide answers, shared by every analysis of the run.
    pub flows: &'p crate::flow::Caches,
    interceptors: OnceLock<HashMap<FnRef, Arc<InterceptorScope>>>,
    retry: OnceLock<crate::scopes::retry::RetryScopes>,
}

impl<'p> Ctx<'p> {
    pub fn new(p: &'p Project, cat: &'static Catalog, flows: &'p crate::flow::Caches) -> Self {
        Ctx {
            p,
            cat,
            flows,
            interceptors: OnceLock::new(),
            retry: OnceLock::new(),
        }
    }

    /// Finds the interceptor and retry scopes now, on two threads when there are two.
    pub fn find_scopes(&self) {
        rayon::join(|| self.interceptors(), || self.retry());
    }

    /// Every interceptor or middleware body in the project, found on first use.
    pub fn interceptors(&self) -> &HashMap<FnRef, Arc<InterceptorScope>> {
        self.interceptors
            .get_or_init(|| crate::scopes::interceptors::find(self.p, self.cat))
    }

    /// Every retry scope in the project, found on first use.
    pub fn retry(&self) -> &crate::scopes::retry::RetryScopes {
        self.retry
            .get_or_init(|| crate::scopes::retry::find(self.p, self.cat))
    }

    pub fn interceptor_of(&self, f: FnRef) -> Option<&Arc<InterceptorScope>> {
        crate::scopes::interceptors::scope_of(self.p, self.interceptors(), f)
    }

    /// The retry scope code at `span` in `f` runs in, if any.
    pub fn retry_scope_of(
        &self,
        f: FnRef,
        span: Span,
    ) -> Option<&Arc<crate::scopes::retry::RetryScope>> {
        self.retry().scope_of(self.p, f, span)
    }

    /// Qualified name of the function enclosing `f` (`StripeKeys.intercept`, `charge`).
    pub fn symbol(&self, f: FnRef) -> String {
        let named = self
            .p
            .ancestors(f)
            .find(|a| self.p.func(*a).kind != FnKind::Lambda)
            .unwrap_or(f);
        let func = self.p.func(named);
        let name = func.name.clone().unwrap_or_else(|| "<lambda>".into());
        if func.owner.is_none() && func.name.is_none() {
            // A lambda in a field initialiser: name it after the innermost enclosing type.
            let facts = &self.p.units[named.unit].facts();
            if let Some(ty) = facts
                .types
                .iter()
                .filter(|t| t.span.contains(func.span) && t.name.is_some())
                .min_by_key(|t| t.span.len())
            {
                return format!("{}.<lambda>", ty.name.as_deref().unwrap_or(""));
            }
        }
        match func.owner {
            Some(t) => {
                let ty = &self.p.units[named.unit].facts().types[t];
                format!("{}.{}", ty.name.as_deref().unwrap_or("<anonymous>"), name)
            }
            None => name,
        }
    }

    pub fn text(&self, unit: usize, span: Span) -> &str {
        self.p.units[unit].src.slice(span)
    }
}

/// Issue 15 item 4: the money call of a scheduler or check-then-act path that sends an
/// idempotency key. The rule still reports the path (the race runs every other side effect
/// twice, and a key settles it only for identical requests within the provider's retention
/// window); the finding says so.
pub(crate) fn money_call_keyed(co: &crate::coord::Coord, money: &crate::coord::reach::Loc) -> bool {
    co.shared
        .posts
        .at_site(money.at.unit, money.span)
        .is_some_and(|s| s.has_key)
}

/// What a finding says about a keyed money call (see [`money_call_keyed`]).
pub(crate) const KEYED_RACE: &str = "the payment request sends an idempotency key: if that key is derived from the business operation (the same in every replica and run), the provider settles this race, but only within its retention window (24 hours at Stripe) and only when both requests are identical; everything else the path does (the rows it writes, the emails it sends) still happens twice";
