//! Where interceptor types are registered: `addNetworkInterceptor(new StripeKeys())`. An
//! interceptor class whose framework entry in the catalogue names the call it is handed to is
//! taken for that framework's ([`crate::scopes::interceptors`]).
//!
//! Only calls that some catalogue entry lists as a registration can decide anything, so only
//! files whose text holds one of those names are read ([`registering_calls`] and
//! [`crate::needles::Needles`]).

use crate::catalog::Catalog;
use crate::facts::{Expr, ExprKind, FileFacts, Stmt};
use crate::hash::HashMap;
use crate::walk::walk_stmts;

/// The registering calls the catalogue's interceptor entries list, of the shapes recorded:
/// `add..`, `..Interceptor`, `with`, `register`.
pub fn registering_calls(cat: &Catalog) -> Vec<&str> {
    let mut calls: Vec<&str> = cat
        .interceptors
        .iter()
        .flat_map(|e| e.registrations.iter().map(String::as_str))
        .filter(|name| {
            name.starts_with("add")
                || name.ends_with("Interceptor")
                || *name == "with"
                || *name == "register"
        })
        .collect();
    calls.sort_unstable();
    calls.dedup();
    calls
}

/// Interceptor registrations written in one file, as (type, registering call):
/// `addNetworkInterceptor(new StripeKeys())`, `.addInterceptor(StripeKeys())`,
/// `val keys = StripeKeys(); builder.addNetworkInterceptor(keys)`, a field holding one.
pub fn in_file(facts: &FileFacts, registering: &[&str]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    use crate::walk::{constructed_type as constructed, declared_type as type_of};
    // Fields and locals by type, built only for bodies with a registering call.
    let mut fields: Option<HashMap<&str, String>> = None;
    let mut bodies: Vec<&[Stmt]> = facts.functions.iter().map(|f| f.body.as_slice()).collect();
    bodies.push(&facts.top_level);
    for body in bodies {
        let mut calls: Vec<(&str, &[crate::facts::Arg])> = Vec::new();
        walk_stmts(body, &mut |e: &Expr| {
            if let ExprKind::Call { name, args, .. } = &e.kind
                && registering.contains(&name.as_str())
            {
                calls.push((name.as_str(), args));
            }
        });
        if calls.is_empty() {
            continue;
        }
        let fields = fields.get_or_insert_with(|| {
            let mut m = HashMap::default();
            for t in &facts.types {
                for b in &t.fields {
                    if let Some(ty) = type_of(b) {
                        m.insert(b.name.as_str(), ty);
                    }
                }
            }
            m
        });
        let mut locals: HashMap<&str, String> = HashMap::default();
        crate::walk::walk_lets(body, &mut |b| {
            if let Some(ty) = type_of(b) {
                locals.insert(b.name.as_str(), ty);
            }
        });
        for (name, args) in calls {
            for a in args {
                let ty = constructed(&a.value).or_else(|| match &a.value.kind {
                    ExprKind::Name(n) if n.starts_with(|c: char| c.is_uppercase()) => {
                        Some(n.to_string())
                    }
                    ExprKind::Name(n) => locals.get(n.as_str()).or(fields.get(n.as_str())).cloned(),
                    ExprKind::Field { name: n, .. } => fields.get(n.as_str()).cloned(),
                    _ => None,
                });
                if let Some(ty) = ty {
                    out.push((ty, name.to_string()));
                }
            }
        }
    }
    out
}
