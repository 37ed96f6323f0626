//! How the project index reads a constant's initialiser: a string literal, or the name of
//! another constant, either of them possibly wrapped in a call that builds a constant from one
//! argument. Shared by the index (from facts) and the outline (from tokens).

use crate::facts::{Expr, ExprKind, simple_name};

/// The constant another constant is initialised from: `B`, `Headers.B`, `from_static(B)`.
/// Calls that build a constant from one argument (`HeaderName::from_static("k")`, `Set.of(K)`):
/// the constant is that argument's.
pub(crate) const CONST_WRAPPERS: &[&str] = &["from_static", "from_str", "HeaderName", "of"];

pub(crate) fn const_alias(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Name(n) | ExprKind::Field { name: n, .. } => Some(n.to_string()),
        ExprKind::Call { name, args, .. } | ExprKind::New { ty: name, args, .. }
            if args.len() == 1 && CONST_WRAPPERS.contains(&simple_name(name)) =>
        {
            const_alias(&args[0].value)
        }
        _ => None,
    }
}

/// The string a constant initialiser holds: a literal, or a header name built from one
/// (`HeaderName::from_static("idempotency-key")`).
pub(crate) fn const_str_syntactic(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Str(s) => Some(s.to_string()),
        ExprKind::Call { name, args, .. } | ExprKind::New { ty: name, args, .. }
            if args.len() == 1 && CONST_WRAPPERS.contains(&simple_name(name)) =>
        {
            const_str_syntactic(&args[0].value)
        }
        _ => None,
    }
}
