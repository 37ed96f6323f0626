//! The catalogue additions a project's configuration may make (its `catalog` table): read by
//! the configuration, applied by the catalogue. A module of its own, so that the catalogue does
//! not import the configuration (which imports the rule registry).

use serde::{Deserialize, Serialize};

/// Additions to `rules/catalog/*.toml`.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CatalogExtension {
    /// Extra header / attribute / field names that carry an idempotency key
    /// (`"X-Acme-Dedup-Token"`).
    #[serde(default)]
    pub idempotency_headers: Vec<String>,
    /// Extra nondeterministic sources: `"Receiver.method"` (`"IdGen.next"`) or a bare function
    /// name (`"new_token"`).
    #[serde(default)]
    pub nondeterministic_sources: Vec<String>,
    /// Extra interceptor types: `{ supertype = "AcmeHttpHook", method = "before" }`.
    #[serde(default)]
    pub interceptors: Vec<InterceptorExtension>,
    /// Project functions that retry the lambda they are given (`"withBackoff"`). Used by the
    /// retry rules.
    #[serde(default)]
    pub retry_helpers: Vec<String>,
    /// Extra per-process scheduling APIs (`"JobRunner.every"`). Used by the scheduler rules.
    #[serde(default)]
    pub scheduler_apis: Vec<String>,
    /// Extra money-moving call names (`"settleInvoice"`). Used by the scheduler rules.
    #[serde(default)]
    pub money_calls: Vec<String>,
    /// Extra distributed-lock APIs (`"withClusterLock"`). Used by the scheduler rules.
    #[serde(default)]
    pub lock_apis: Vec<String>,
    /// Extra money-moving endpoint paths (`"/v2/payments/*/capture"`, `*` = one segment). A
    /// POST to one needs an idempotency key (IDEM007) and moves money (IDEM004, IDEM005).
    #[serde(default)]
    pub money_endpoints: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct InterceptorExtension {
    /// Interface or base class name (`"AcmeHttpHook"`).
    pub supertype: String,
    /// The method that runs for every request (`"before"`).
    pub method: String,
    /// Shown in messages; defaults to the supertype.
    #[serde(default)]
    pub framework: Option<String>,
}
