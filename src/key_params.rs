//! Which project functions may take an idempotency key as a parameter, by name: the value flow
//! binds a call's arguments to a key only for these.
//!
//! - a parameter named like a key (`idempotencyKey`) or annotated as a header (`@Header`);
//! - a parameter handed on as it is after a first argument that names a header
//!   (`.header("Idempotency-Key", key)`, `.header(IDEMPOTENCY_KEY, key)`): the header name is
//!   kept, for the value flow to decide ([`crate::flow::Flow::key_param_of`]);
//! - a parameter handed on as it is to a call whose name says idempotency
//!   (`setIdempotencyKey(key)`, `RequestStrategy::Idempotent(key)`), or to such a function, two
//!   levels up (`send(.., key) { create(params, options(key)) }`). Not to any function with a
//!   key-named parameter: in a server that takes keys from its own callers that is most
//!   functions, and the value flow would evaluate them all.

use crate::facts::{Arg, Expr, ExprKind, FileFacts};
use crate::hash::{HashMap, HashSet};
use crate::walk::walk_stmts;

#[derive(Default)]
pub struct KeyParams {
    /// Names of functions that may take a key parameter.
    pub key_param_fns: HashSet<String>,
    /// Names of functions that hand a parameter on after a header name (a literal or a
    /// constant), with those names.
    pub header_param_fns: HashMap<String, Vec<String>>,
    /// Names of functions that hand a parameter as it is to a call naming idempotency, or to
    /// such a function.
    pub idem_passers: HashSet<String>,
}

/// What one file's functions say: the sets above, and the functions not (yet) known to take a
/// key with the calls they hand a parameter to as it is.
#[derive(Default)]
pub struct FileKeyParams {
    found: KeyParams,
    passes: Vec<(String, Vec<String>)>,
}

impl KeyParams {
    /// Joins the files' findings (in file order) and settles the passers.
    pub fn join(files: impl IntoIterator<Item = FileKeyParams>) -> KeyParams {
        let mut out = KeyParams::default();
        let mut passes = Vec::new();
        for f in files {
            out.key_param_fns.extend(f.found.key_param_fns);
            out.idem_passers.extend(f.found.idem_passers);
            for (name, texts) in f.found.header_param_fns {
                out.header_param_fns.entry(name).or_default().extend(texts);
            }
            passes.extend(f.passes);
        }
        out.settle(passes);
        out
    }

    /// A function that hands a parameter as it is to an idempotency passer is one too, two
    /// levels up.
    fn settle(&mut self, mut passes: Vec<(String, Vec<String>)>) {
        for _ in 0..2 {
            let (now, rest): (Vec<_>, Vec<_>) = passes
                .into_iter()
                .partition(|(_, calls)| calls.iter().any(|c| self.idem_passers.contains(c)));
            if now.is_empty() {
                break;
            }
            for (n, _) in now {
                self.key_param_fns.insert(n.clone());
                self.idem_passers.insert(n);
            }
            passes = rest;
        }
    }
}

/// The key parameters of one file's functions.
pub fn in_file(facts: &FileFacts) -> FileKeyParams {
    let mut out = FileKeyParams::default();
    let found = &mut out.found;
    for f in &facts.functions {
        let keyish = f.params.iter().any(|p| {
            crate::catalog::contains_ignore_ascii_case(&p.name, "idem")
                || p.annotations.iter().any(|a| {
                    matches!(
                        a.name.as_str(),
                        "Header" | "RequestHeader" | "HeaderParam" | "Param"
                    )
                })
        });
        let mut idem_call = false;
        let mut passes: Vec<String> = Vec::new();
        if let Some(name) = &f.name
            && !keyish
            && !f.params.is_empty()
        {
            let is_param = |a: &Arg| {
                matches!(&a.value.kind, ExprKind::Name(n)
                    if f.params.iter().any(|p| p.name == *n))
            };
            let mut texts: Vec<String> = Vec::new();
            walk_stmts(&f.body, &mut |e: &Expr| {
                let ExprKind::Call {
                    name: callee, args, ..
                } = &e.kind
                else {
                    return;
                };
                if args.len() >= 2
                    && let Some(t) = header_name_text(&args[0].value)
                    && args[1..].iter().any(is_param)
                {
                    texts.push(t.to_string());
                }
                if args.iter().any(|a| {
                    is_param(a) && !matches!(&a.value.kind, ExprKind::Name(n) if n == "self")
                }) {
                    if crate::catalog::contains_ignore_ascii_case(callee, "idem") {
                        idem_call = true;
                    } else if !passes.iter().any(|c| c == callee.as_str()) {
                        passes.push(callee.to_string());
                    }
                }
            });
            if !texts.is_empty() {
                found
                    .header_param_fns
                    .entry(name.clone())
                    .or_default()
                    .extend(texts);
            }
        }
        if let (true, Some(name)) = (idem_call, &f.name) {
            found.idem_passers.insert(name.clone());
        }
        if let (true, Some(name)) = (keyish || idem_call, &f.name) {
            found.key_param_fns.insert(name.clone());
        } else if let Some(name) = &f.name
            && !passes.is_empty()
        {
            out.passes.push((name.clone(), passes));
        }
    }
    out
}

/// The text of `e` when it could name a header: a string literal, or a constant
/// (`IDEMPOTENCY_KEY`, `Headers.IDEMPOTENCY_KEY`).
fn header_name_text(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Str(s) => Some(s.as_str()),
        ExprKind::Name(n) | ExprKind::Field { name: n, .. }
            if n.chars().any(|c| c.is_ascii_uppercase())
                && !n.chars().any(|c| c.is_lowercase()) =>
        {
            Some(n.as_str())
        }
        _ => None,
    }
}
