//! Cheap, conservative pre-checks that let the rules skip expensive summaries.
//!
//! [`SinkGate`]: which project functions may put an idempotency key into a request (directly,
//! or through other project functions). A key sink always names the key somewhere — a header
//! or field name (`"Idempotency-Key"`), a key variable or parameter, a key setter
//! (`setIdempotencyKey`), a key wrapper call (`Idempotent(key)`), or a constant holding such a
//! name — so a function whose text (and whose callees' names) carry none of these cannot set a
//! key, and calls to it need no summary. The gate is a superset: a false member only costs time.

use crate::catalog::Catalog;
use crate::facts::ExprKind;
use crate::project::{FnRef, Project, walk_stmts};
use std::collections::HashSet;

pub struct SinkGate {
    /// Names a call may reach a possible key-setting function by (function names, and the
    /// locals/fields holding such lambdas).
    names: HashSet<String>,
    /// Units whose text names a key.
    unit_evidence: Vec<bool>,
}

/// Lower case, letters and digits only (how the catalogue compares key names).
fn normalise(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl SinkGate {
    pub fn compute(p: &Project, cat: &Catalog) -> SinkGate {
        let mut stems: Vec<String> = cat
            .sinks
            .key_names
            .iter()
            .chain(&cat.sinks.key_variables)
            .map(|s| normalise(s))
            .filter(|s| !s.is_empty())
            .collect();
        stems.sort();
        stems.dedup();
        // Constants (anywhere) whose value names a key, and constants aliasing them.
        let mut consts: HashSet<&str> = p
            .index
            .constants()
            .filter(|(_, vals)| {
                vals.iter().any(|v| {
                    let n = normalise(v);
                    stems.iter().any(|s| n.contains(s.as_str()))
                })
            })
            .map(|(k, _)| k.as_str())
            .collect();
        loop {
            let more: Vec<&str> = p
                .index
                .const_aliases()
                .filter(|(k, from)| {
                    !consts.contains(k.as_str()) && from.iter().any(|f| consts.contains(f.as_str()))
                })
                .map(|(k, _)| k.as_str())
                .collect();
            if more.is_empty() {
                break;
            }
            consts.extend(more);
        }
        // Key wrappers are calls (`Idempotent(key)`): matched as a call, not as a word (every
        // HTTP client says which methods are idempotent).
        let wrappers = &cat.sinks.key_wrappers;
        // Token by token (identifiers, and words of string literals with their dashes), so
        // that `isIdempotent(); key` does not read as `idempotentkey`; a wrapper only as a
        // call (`Idempotent(key)`, not "Idempotent." in a comment).
        let names_key = |text: &str| -> bool {
            let mut norm = String::new();
            let bytes = text.as_bytes();
            let is_tok = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
            let mut i = 0;
            while i < bytes.len() {
                if !is_tok(bytes[i]) {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < bytes.len() && is_tok(bytes[i]) {
                    i += 1;
                }
                let t = &text[start..i];
                norm.clear();
                norm.extend(
                    t.bytes()
                        .filter(u8::is_ascii_alphanumeric)
                        .map(|b| b.to_ascii_lowercase() as char),
                );
                if consts.contains(t) || stems.iter().any(|s| norm.contains(s.as_str())) {
                    return true;
                }
                if wrappers.iter().any(|w| w == t) && text[i..].trim_start().starts_with('(') {
                    return true;
                }
            }
            false
        };
        let unit_evidence: Vec<bool> = p.units.iter().map(|u| names_key(&u.src.text)).collect();
        let mut names: HashSet<String> = HashSet::new();
        let mut pending: Vec<(Vec<String>, HashSet<&str>)> = Vec::new();
        for (u, unit) in p.units.iter().enumerate() {
            for (f, via) in crate::project::call_names(unit) {
                let via: Vec<String> = via.into_iter().map(str::to_string).collect();
                let func = &unit.facts.functions[f];
                if unit_evidence[u] && names_key(unit.src.slice(func.span)) {
                    names.extend(via);
                    continue;
                }
                let mut calls: HashSet<&str> = HashSet::new();
                for g in p.with_nested(FnRef { unit: u, f }) {
                    walk_stmts(&p.func(g).body, &mut |e| match &e.kind {
                        ExprKind::Call { name, .. } | ExprKind::MethodRef { name, .. } => {
                            calls.insert(name);
                        }
                        _ => {}
                    });
                }
                pending.push((via, calls));
            }
        }
        loop {
            let mut grew = false;
            pending.retain(|(via, calls)| {
                if calls.iter().any(|c| names.contains(*c)) {
                    names.extend(via.iter().cloned());
                    grew = true;
                    false
                } else {
                    true
                }
            });
            if !grew {
                break;
            }
        }
        if crate::timings_enabled() {
            eprintln!(
                "timing:   sink gate: {} key constants, {} of {} files name a key, {} names",
                consts.len(),
                unit_evidence.iter().filter(|x| **x).count(),
                unit_evidence.len(),
                names.len()
            );
        }
        SinkGate {
            names,
            unit_evidence,
        }
    }

    /// May a call named `name` made in `unit` reach a function that sets a key?
    pub fn may_set_key(&self, unit: usize, name: &str) -> bool {
        self.unit_evidence.get(unit).copied().unwrap_or(true) || self.names.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Lang;
    use crate::project::Unit;
    use crate::source::SourceFile;

    fn project(files: &[(&str, &str)]) -> Project {
        Project::new(
            files
                .iter()
                .map(|(path, text)| {
                    let lang = Lang::from_path(std::path::Path::new(path)).unwrap();
                    Unit {
                        src: SourceFile::new(path.into(), text.to_string()),
                        lang,
                        facts: crate::lang::parse_and_lower(lang, text).unwrap().facts,
                    }
                })
                .collect(),
        )
    }

    #[test]
    fn key_setting_helpers_and_their_callers_pass_the_gate() {
        let p = project(&[
            (
                "Headers.java",
                "class Headers { static final String IDEM = \"Idempotency-Key\"; }",
            ),
            (
                "Stamp.java",
                "class Stamp {\n  Request stamp(Request r, String k) { return r.newBuilder().header(Headers.IDEM, k).build(); }\n\
                 Request fresh(Request r) { return stamp(r, java.util.UUID.randomUUID().toString()); }\n}",
            ),
            (
                "Other.kt",
                "class Other {\n  fun isIdempotent(m: String) = m != \"POST\" // Idempotent. A comment.\n\
                 fun run() { println(isIdempotent(\"GET\")) }\n  fun wrap(k: String) = RequestStrategy.Idempotent(k)\n}",
            ),
            (
                "Plain.java",
                "class Plain { void go() { fresh(null); close(); } }",
            ),
        ]);
        let g = SinkGate::compute(&p, crate::catalog::Catalog::builtin());
        // A constant's value names the key; the helper uses the constant; its caller follows.
        assert!(g.names.contains("stamp"));
        assert!(g.names.contains("fresh"));
        // A wrapper call names a key; the word in a method name or a comment does not.
        assert!(g.names.contains("wrap"));
        assert!(!g.names.contains("isIdempotent"));
        assert!(!g.names.contains("run"));
        assert!(!g.names.contains("close"));
        assert_eq!(g.unit_evidence, [true, true, true, false]);
        assert!(g.may_set_key(3, "fresh"));
        assert!(!g.may_set_key(3, "close"));
        assert!(g.may_set_key(1, "anything"));
    }
}
