//! Cheap, conservative pre-checks that let the rules skip expensive summaries.
//!
//! [`SinkGate`]: which project functions may put an idempotency key into a request (directly,
//! or through other project functions). A key sink always names the key somewhere — a header
//! or field name (`"Idempotency-Key"`), a key variable or parameter, a key setter
//! (`setIdempotencyKey`), a key wrapper call (`Idempotent(key)`), or a constant holding such a
//! name — so a function whose text (and whose callees' names) carry none of these cannot set a
//! key, and calls to it need no summary. The gate is a superset: a false member only costs time.

use crate::catalog::{Catalog, normalise};
use crate::facts::{ExprKind, simple_name};
use crate::hash::HashSet;
use crate::project::{FnRef, Project, walk_stmts};
use aho_corasick::Anchored;
use aho_corasick::automaton::Automaton;
use rayon::prelude::*;

pub struct SinkGate {
    /// Names a call may reach a possible key-setting function by (function names, and the
    /// locals/fields holding such lambdas).
    names: HashSet<String>,
    /// Units whose text names a key.
    unit_evidence: Vec<bool>,
    /// Units that name a key or call a function declared in a unit that does (or one that
    /// passes the gate): only these can hold a key sink.
    unit_may_flow: Vec<bool>,
}

impl SinkGate {
    /// The gate off (`--exhaustive`): every function may set a key.
    pub fn open() -> SinkGate {
        SinkGate {
            names: HashSet::default(),
            unit_evidence: Vec::new(),
            unit_may_flow: Vec::new(),
        }
    }

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
        // Payment SDKs' positional keys are named by their call or type (`requestPayment`,
        // `CreatePaymentRequest`): whole tokens.
        let sdk_key_tokens: Vec<&str> = cat
            .sdks
            .iter()
            .flat_map(|s| &s.key_args)
            .map(|(n, _)| n.split('.').next().unwrap_or(n))
            .collect();
        // Token by token (identifiers, and words of string literals with their dashes), so
        // that `isIdempotent(); key` does not read as `idempotentkey`: one pass of a DFA over
        // the stems that skips `_`/`-` and starts again at every other non-alphanumeric byte.
        // Constants count as whole tokens, a wrapper only as a call (`Idempotent(key)`, not
        // "Idempotent." in a comment).
        let stem_dfa = aho_corasick::dfa::DFA::new(&stems).ok();
        let words = aho_corasick::AhoCorasick::new(
            consts
                .iter()
                .copied()
                .chain(wrappers.iter().map(String::as_str))
                .chain(sdk_key_tokens.iter().copied()),
        )
        .ok();
        let stems_match = |text: &str| -> bool {
            let bytes = text.as_bytes();
            let Some(dfa) = &stem_dfa else {
                return true; // cannot happen for the catalogue's stems; stay conservative
            };
            if let Ok(start) = dfa.start_state(Anchored::No) {
                // Letters and digits lower-cased as the catalogue's `normalise` does, so that a
                // configured `Zahlungs-Schlüssel` is found in `"Zahlungs-Schlüssel"`: ASCII byte
                // by byte, any other character decoded and fed as its lower-case UTF-8 bytes.
                let mut sid = start;
                let mut k = 0;
                while k < bytes.len() {
                    let b = bytes[k];
                    if b.is_ascii() {
                        k += 1;
                        if b.is_ascii_alphanumeric() {
                            sid = dfa.next_state(Anchored::No, sid, b.to_ascii_lowercase());
                            if dfa.is_match(sid) {
                                return true;
                            }
                        } else if b != b'_' && b != b'-' {
                            sid = start;
                        }
                        continue;
                    }
                    let c = text[k..].chars().next().unwrap_or(' ');
                    k += c.len_utf8().max(1);
                    if !c.is_alphanumeric() {
                        sid = start;
                        continue;
                    }
                    let mut buf = [0u8; 4];
                    for lc in c.to_lowercase() {
                        for &lb in lc.encode_utf8(&mut buf).as_bytes() {
                            sid = dfa.next_state(Anchored::No, sid, lb);
                        }
                        if dfa.is_match(sid) {
                            return true;
                        }
                    }
                }
            } else {
                return true;
            }
            false
        };
        let words_match = |text: &str| -> bool {
            let bytes = text.as_bytes();
            let Some(words) = &words else {
                return true;
            };
            let is_tok = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
            words.find_overlapping_iter(text).any(|m| {
                let t = &text[m.start()..m.end()];
                let whole = (m.start() == 0 || !is_tok(bytes[m.start() - 1]))
                    && bytes.get(m.end()).is_none_or(|&b| !is_tok(b));
                whole
                    && (consts.contains(t)
                        || sdk_key_tokens.contains(&t)
                        || wrappers.iter().any(|w| w == t)
                            && text[m.end()..].trim_start().starts_with('('))
            })
        };
        let names_key = |text: &str| stems_match(text) || words_match(text);
        // The words are identifiers: only files whose code writes one can match them as whole
        // tokens (the text is read only there).
        let word_units = p.units_naming_any(|n| {
            consts.contains(n) || sdk_key_tokens.contains(&n) || wrappers.iter().any(|w| w == n)
        });
        // A key word is written in an identifier or a string literal: each distinct
        // identifier of the project is read once, then every file's string literals (a word
        // in a comment names no key).
        let stem_units = p.units_naming_any(|n| stems_match(n));
        let unit_evidence: Vec<bool> = p
            .units
            .par_iter()
            .zip(word_units)
            .zip(stem_units)
            .map(|((u, w), s)| {
                s || (w && words_match(u.src.text())) || u.string_literals().any(stems_match)
            })
            .collect();
        let mut names: HashSet<String> = HashSet::default();
        // Functions whose own text names a key (only in files that do).
        let mut direct: HashSet<FnRef> = HashSet::default();
        for (u, unit) in p
            .units
            .iter()
            .enumerate()
            .filter(|(u, _)| unit_evidence[*u])
        {
            for (f, via) in crate::project::call_names(unit) {
                if names_key(unit.src.slice(unit.facts().functions[f].span)) {
                    names.extend(via.into_iter().map(str::to_string));
                    direct.insert(FnRef { unit: u, f });
                }
            }
        }
        // Their callers, transitively, as the flow resolves a call (`Flow::callees`, which
        // decides where a helper's key is followed): a function is a member when a call in it,
        // or in a lambda written in it, may run a member. The calls of a member's name in the
        // files Project::may_call_from allows are a superset of those (as in
        // Project::calls_that_may_run), and only they are read. A lambda runs where its holder
        // is called by name.
        let clock = std::time::Instant::now();
        let mut members: HashSet<FnRef> = direct.clone();
        let mut work: Vec<FnRef> = direct.iter().copied().collect();
        // Per unit, on first use: each function's names as a call target (a lambda's are
        // its holders').
        let mut via_of: crate::hash::HashMap<
            usize,
            crate::hash::HashMap<crate::facts::FnId, Vec<&str>>,
        > = Default::default();
        let mut via = |f: FnRef| -> Vec<&str> {
            via_of
                .entry(f.unit)
                .or_insert_with(|| {
                    crate::project::call_names(&p.units[f.unit])
                        .into_iter()
                        .collect()
                })
                .get(&f.f)
                .cloned()
                .unwrap_or_default()
        };
        // Per callee name: the files that may hold one of its calls (they write the name) and
        // are not read for it yet. A file is read for a name once, when some member of that
        // name may first be called from it.
        let mut unread: crate::hash::HashMap<&str, Vec<usize>> = Default::default();
        let mut holders_done: HashSet<&str> = HashSet::default();
        while let Some(f) = work.pop() {
            let func = p.func(f);
            let mut callers: Vec<FnRef> = Vec::new();
            match func.name.as_deref() {
                Some(name) if func.kind != crate::facts::FnKind::Lambda => {
                    let naming = unread.entry(name).or_insert_with(|| p.units_naming(name));
                    // Every file writing the name read already: nothing new to find.
                    if naming.is_empty() {
                        continue;
                    }
                    let from = p.may_call_from(f);
                    let (fresh, rest): (Vec<usize>, Vec<usize>) =
                        naming.iter().partition(|&&u| from.may_call(p, u));
                    *naming = rest;
                    p.prefetch(fresh.iter().copied());
                    for u in fresh {
                        callers.extend(
                            p.calls_named_in(u, name)
                                .iter()
                                .map(|&(g, _)| FnRef { unit: u, f: g }),
                        );
                    }
                }
                _ => {
                    for h in via(f) {
                        if holders_done.insert(h) {
                            callers.extend(p.calls_named(h).iter().map(|&(g, _)| g));
                        }
                    }
                }
            }
            for g in callers {
                for a in p.ancestors(g) {
                    if members.insert(a) {
                        work.push(a);
                    }
                }
            }
        }
        let t_closure = clock.elapsed().as_secs_f64();
        let n_members = members.len();
        for m in &members {
            names.extend(via(*m).into_iter().map(str::to_string));
        }
        // Names declared in files that name a key whose callers may hold a sink: a function
        // whose own text names a key (a key parameter, `charge(idempotencyKey)`,
        // `@Header("Idempotency-Key")`, with a body or not, or a fresh parameter default), and
        // every type (a constructor or record component named like a key).
        let mut declared: HashSet<&str> = HashSet::default();
        for (u, unit) in p.units.iter().enumerate() {
            if unit_evidence[u] {
                declared.extend(
                    unit.facts()
                        .functions
                        .iter()
                        .filter(|f| names_key(unit.src.slice(f.span)))
                        .filter_map(|f| f.name.as_deref()),
                );
                declared.extend(unit.facts().types.iter().filter_map(|t| t.name.as_deref()));
                declared.extend(
                    unit.facts()
                        .types
                        .iter()
                        .filter_map(|t| t.name.as_deref().map(simple_name)),
                );
            }
        }
        // Only a file whose code writes one of those names can call it.
        let naming = match names.is_empty() && declared.is_empty() {
            true => vec![false; p.units.len()],
            false => p.units_naming_any(|n| names.contains(n) || declared.contains(n)),
        };
        let unit_may_flow: Vec<bool> = p
            .units
            .par_iter()
            .enumerate()
            .map(|(u, unit)| {
                unit_evidence[u]
                    || naming[u]
                        && unit.facts().functions.iter().any(|f| {
                            let mut hit = false;
                            walk_stmts(&f.body, &mut |e| {
                                let called = match &e.kind {
                                    ExprKind::Call { name, .. }
                                    | ExprKind::MethodRef { name, .. }
                                    | ExprKind::Macro { name, .. } => name.as_str(),
                                    ExprKind::New { ty, .. } => simple_name(ty),
                                    _ => return,
                                };
                                hit |= names.contains(called) || declared.contains(called);
                            });
                            hit
                        })
            })
            .collect();
        if crate::timings_enabled() {
            eprintln!(
                "timing:   sink gate: {} key constants, {} of {} files name a key, {} callers \
                 in {:.3} s, {} names, {} files may hold a key sink",
                consts.len(),
                unit_evidence.iter().filter(|x| **x).count(),
                unit_evidence.len(),
                n_members,
                t_closure,
                names.len(),
                unit_may_flow.iter().filter(|x| **x).count()
            );
        }
        SinkGate {
            names,
            unit_evidence,
            unit_may_flow,
        }
    }

    /// Can a function of `unit` put a value into a key sink (directly, through a project
    /// function's key parameter or default, or through a helper)? When not, its key flows are
    /// empty and need not be computed.
    pub fn may_hold_sink(&self, unit: usize) -> bool {
        self.unit_may_flow.get(unit).copied().unwrap_or(true)
    }

    /// May a call named `name` made in `unit` reach a function that sets a key?
    pub fn may_set_key(&self, unit: usize, name: &str) -> bool {
        self.unit_evidence.get(unit).copied().unwrap_or(true) || self.names.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> Project {
        crate::project::parsed(files)
    }

    /// A constant that names a key is evidence where code writes it, not where only a
    /// comment or a string spells its name; a key's own name counts in code and strings, not
    /// in comments.
    #[test]
    fn key_constants_count_where_code_names_them() {
        let p = project(&[
            (
                "Headers.java",
                "class Headers { static final String PAY_HEADER = \"Idempotency-Key\"; }",
            ),
            (
                "Uses.java",
                "class Uses { void go(Request r) { r.header(Headers.PAY_HEADER, k()); } }",
            ),
            (
                "Mentions.java",
                "class Mentions {\n  // see PAY_HEADER\n  String s = \"PAY_HEADER\";\n}",
            ),
            (
                "Commented.java",
                "class Commented {\n  // sends the Idempotency-Key header\n  void go() { send(); }\n}",
            ),
            (
                "Param.kt",
                "class Param { fun go(idempotencyKey: String) = send(idempotencyKey) }",
            ),
        ]);
        let g = SinkGate::compute(&p, crate::catalog::Catalog::builtin());
        // The key's name in a comment is no evidence; in an identifier or a string it is.
        assert_eq!(g.unit_evidence, [true, true, false, false, true]);
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
            (
                "Api.kt",
                "interface Api { fun charge(amount: Long, idempotencyKey: String) }",
            ),
            (
                "Caller.kt",
                "class Caller(val api: Api) { fun pay() = api.charge(5, k()) }",
            ),
            (
                "Unrelated.java",
                "class Unrelated { void tidy() { close(); toString(); } }",
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
        assert_eq!(
            g.unit_evidence,
            [true, true, true, false, true, false, false]
        );
        // Files that may hold a sink: those naming a key, callers of gate functions, and
        // callers of functions declared where a key is named (a key parameter).
        let hold: Vec<bool> = (0..7).map(|u| g.may_hold_sink(u)).collect();
        assert_eq!(hold, [true, true, true, true, true, true, false]);
        assert!(g.may_set_key(3, "fresh"));
        assert!(!g.may_set_key(3, "close"));
        assert!(g.may_set_key(1, "anything"));
        // A file whose code writes none of those names cannot call one: it is not read.
        assert!(
            p.units[6].parse_if_done().is_none(),
            "Unrelated.java was parsed"
        );
        assert!(p.units[3].parse_if_done().is_some());
    }

    /// A caller counts when its call may run a key-setting function as the flow resolves
    /// calls, not when it merely shares its name: `b.stamp()` on another type is not followed.
    #[test]
    fn callers_are_found_by_resolution_not_by_name() {
        let p = project(&[
            (
                "Headers.java",
                "class Headers { static final String IDEM = \"Idempotency-Key\"; }",
            ),
            (
                "Stamp.java",
                "class Stamp {\n  Request stamp(Request r) { return r.newBuilder().header(Headers.IDEM, java.util.UUID.randomUUID().toString()).build(); }\n}",
            ),
            ("A.java", "class A { void stamp() {} }"),
            ("B.java", "class B { void stamp() {} }"),
            ("UsesB.java", "class UsesB { void go(B b) { b.stamp(); } }"),
            (
                "UsesStamp.java",
                "class UsesStamp {\n  Stamp s;\n  Request send(Request r) { return s.stamp(r); }\n}",
            ),
            (
                "Outer.java",
                "class Outer {\n  UsesStamp u;\n  void pay(Request r) { u.send(r); }\n}",
            ),
        ]);
        let g = SinkGate::compute(&p, crate::catalog::Catalog::builtin());
        assert!(g.names.contains("stamp"));
        assert!(g.names.contains("send"));
        assert!(g.names.contains("pay"), "callers of callers");
        assert!(!g.names.contains("go"), "a call of another type's stamp");
    }
}
