//! Which files can hold a POST to a money endpoint: the POST finder reads only those.
//!
//! A URL's shape matches an endpoint only if it ends with the endpoint's last literal segment
//! (`charges` in `/v1/charges`, `pay` in `/v1/invoices/*/pay`), letter for letter, and a
//! shape's literal text comes from a string literal or a configured value. So:
//!
//! 1. **Holders** (a text pass, no parse): files with a string literal where such a segment
//!    stands as a path segment (not inside a longer word); when a configuration file holds
//!    one, the files that name a configuration annotation too. A provider's host-only paths
//!    (`/payments` at Adyen) count only when its host is written somewhere.
//! 2. **What names their carriers**: the shaper leaves a file only through names: a constant
//!    or field whose initialiser may hold a segment, a function whose one returned value may,
//!    a configured field or properties type. The holders are parsed to find those, then the
//!    files naming them, and so on as deep as the shaper goes ([`NAME_HOPS`]).
//! 3. **Helpers below them**: a helper posting to its parameter's URL gets the literal from a
//!    caller, which calls it by name with an argument that may carry one; up to
//!    [`HELPER_ROUNDS`] helpers deep, and only helpers a file that may post can be reached from.
//!
//! Another file's shapes cannot hold a segment, so its POST sites cannot match an endpoint.
//! A unit test checks that the gate finds the same sites as reading every file.

use crate::catalog::Catalog;
use crate::facts::{Expr, ExprKind, FnKind, simple_name};
use crate::hash::HashSet;
use crate::needles::Needles;
use crate::project::{FnRef, Project, walk_expr, walk_stmts};
use rayon::prelude::*;

/// How many names the shaper follows from a site to a literal, at most (its depth bound).
const NAME_HOPS: usize = 13;

/// Rounds of helper callers the POST finder follows (`find`'s loop).
pub const HELPER_ROUNDS: usize = 3;

/// The last literal segment of an endpoint path (`pay` in `/v1/invoices/*/pay`).
fn last_literal_segment(path: &str) -> Option<&str> {
    path.rsplit('/').find(|s| !s.is_empty() && *s != "*")
}

/// Could the word at `start..end` of a string literal in `text` be a URL's last path segment,
/// as the endpoint matcher reads it? Before it: a `/`, the literal's start (a quote), or a
/// hole (a template's `}`, a `%s` placeholder, a `$name`); after it: the literal's end
/// (maybe after white space), a `/`, `?` or `#`, or a hole that may hold one.
pub fn stands_as_segment(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let before = start == 0
        || matches!(b[start - 1], b'/' | b'"' | b'\'' | b'`' | b'}')
        || (start >= 2 && b[start - 2] == b'%' && b[start - 1].is_ascii_alphabetic());
    before && ends_segment(&b[end..])
}

/// Does a segment end before `rest`: at the literal's or line's end (maybe after white
/// space), a `/`, `?`, `#`, an escape, or a hole (`$x`, `{}`, `%s`)?
fn ends_segment(rest: &[u8]) -> bool {
    let next = rest.iter().find(|c| !matches!(c, b' ' | b'\t'));
    next.is_none_or(|c| {
        matches!(
            c,
            b'"' | b'\'' | b'`' | b'/' | b'?' | b'#' | b'\\' | b'$' | b'{' | b'%' | b'\n' | b'\r'
        )
    })
}

/// [`stands_as_segment`] in a configuration file (`psp.url=https://x/v1/charges`,
/// `path: charges`): after a `/`, `=`, `:`, white space or a quote.
fn stands_in_config(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let before = start == 0
        || matches!(
            b[start - 1],
            b'/' | b'=' | b':' | b'"' | b'\'' | b' ' | b'\t' | b'\n'
        );
    before && ends_segment(&b[end..])
}

/// Per unit: may a POST site there, or a helper it declares, be sent to a money endpoint?
/// `may_post` says per unit whether its code may send a POST at all; it is asked only when a
/// segment is handed to a project function.
pub fn files(p: &Project, cat: &Catalog, may_post: &dyn Fn() -> Vec<bool>) -> Vec<bool> {
    if p.gates_open() {
        return vec![true; p.units.len()];
    }
    let config = &cat.coord.config;
    let (holders, words, configured) = holders(p, cat);
    let carriers = Carriers {
        p,
        words: &words,
        config: configured.then_some(config),
    };
    let count = |v: &[bool]| v.iter().filter(|&&x| x).count();
    let held = count(&holders);
    let (naming, carrying) = carriers.closure(holders);
    let named = count(&naming);
    let reached = carriers.helpers(naming, &carrying, may_post);
    if crate::timings_enabled() {
        eprintln!(
            "timing:   POST reach: {held} files hold an endpoint's segment{}, {named} with what names their carriers, {} with helpers",
            if configured {
                " (a configuration file holds one)"
            } else {
                ""
            },
            count(&reached)
        );
    }
    reached
}

/// The files with a string literal where an endpoint's last segment may stand (and, when a
/// configuration file holds one, the files naming a configuration annotation); the segments
/// that count; whether a configuration file holds one.
fn holders(p: &Project, cat: &Catalog) -> (Vec<bool>, Needles, bool) {
    let n = p.units.len();
    let eps = &cat.coord.endpoint;
    let any_host: Vec<&str> = eps
        .iter()
        .flat_map(|e| &e.paths)
        .filter_map(|x| last_literal_segment(x))
        .collect();
    let hosts: Vec<&str> = eps
        .iter()
        .flat_map(|e| &e.hosts)
        .map(String::as_str)
        .collect();
    let host_only: Vec<&str> = eps
        .iter()
        .flat_map(|e| &e.host_paths)
        .filter_map(|x| last_literal_segment(x))
        .collect();
    // One pass over every file: a segment standing as one, or a host.
    let all = Needles::new(any_host.iter().chain(&hosts).chain(&host_only).copied());
    let is_host = |w: &str| hosts.iter().any(|h| h.eq_ignore_ascii_case(w));
    let stands = |t: &str, s: usize, e: usize| is_host(&t[s..e]) || stands_as_segment(t, s, e);
    let mut holders = p.units_with_strings_where(&all, stands);
    let config_holds = |needles: &Needles| {
        p.config_texts.iter().any(|t| {
            needles.may_contain_in_strings_where(
                crate::facts::Lang::Java,
                t,
                &[(0, t.len() as u32)],
                |t, s, e| is_host(&t[s..e]) || stands_in_config(t, s, e),
            )
        })
    };
    // A provider's host-only paths count where its host is written (in a file the pass found,
    // or a configuration file); the holders are the files with a segment that can count.
    let mut words = any_host.clone();
    for e in eps.iter().filter(|e| !e.hosts.is_empty()) {
        let host = Needles::new(e.hosts.iter().map(String::as_str));
        if config_holds(&host)
            || (0..n)
                .any(|u| holders[u] && p.units[u].may_hold_in_strings_where(&host, |_, _, _| true))
        {
            words.extend(e.host_paths.iter().filter_map(|x| last_literal_segment(x)));
        }
    }
    let words = Needles::new(words);
    for (u, h) in holders.iter_mut().enumerate() {
        *h = *h && p.units[u].may_hold_in_strings_where(&words, stands_as_segment);
    }
    // A configured value (`@Value("${psp.url}")`, a properties type) is read where a
    // configuration annotation is written.
    let config = &cat.coord.config;
    let configured = config_holds(&words);
    if configured {
        let named = p.units_naming_any(|x| {
            config.annotations.iter().any(|a| a == x)
                || config.properties_annotations.iter().any(|a| a == x)
        });
        for (h, c) in holders.iter_mut().zip(named) {
            *h |= c;
        }
    }
    (holders, words, configured)
}

/// Finds what carries an endpoint's segment out of the files that write it: the names of
/// constants, fields and functions whose value may hold one (and, with a configured endpoint,
/// configured fields and properties types).
struct Carriers<'a> {
    p: &'a Project,
    words: &'a Needles,
    config: Option<&'a crate::catalog::ConfigRefs>,
}

impl Carriers<'_> {
    /// The holders and the files naming something that carries a segment from them, to a
    /// fixed point ([`NAME_HOPS`] rounds at most): only these files' shapes can hold one.
    fn closure(&self, mut reached: Vec<bool>) -> (Vec<bool>, HashSet<String>) {
        let mut carrying: HashSet<String> = HashSet::default();
        // The reached files to read again: those naming a name found to carry since they were
        // last read (only a declaration that mentions one can start to carry).
        let mut scan = reached.clone();
        for _ in 0..NAME_HOPS {
            // Files naming a new carrier that are not reached yet: the next round's.
            let mut next = vec![false; reached.len()];
            // Within the reached files, to a fixed point: a constant may be built from another.
            loop {
                let todo: Vec<usize> = (0..scan.len()).filter(|&u| scan[u]).collect();
                if todo.is_empty() {
                    break;
                }
                scan.iter_mut().for_each(|x| *x = false);
                let found: Vec<Vec<String>> = todo
                    .into_par_iter()
                    .map(|u| {
                        let mut out = Vec::new();
                        self.carried_in(u, &carrying, &mut out);
                        out
                    })
                    .collect();
                for name in found.into_iter().flatten() {
                    if carrying.contains(&name) {
                        continue;
                    }
                    for u in self.p.units_naming(&name) {
                        if reached[u] {
                            scan[u] = true;
                        } else {
                            next[u] = true;
                        }
                    }
                    carrying.insert(name);
                }
            }
            if !next.contains(&true) {
                break;
            }
            for (u, x) in next.into_iter().enumerate() {
                reached[u] |= x;
                scan[u] |= x;
            }
        }
        (reached, carrying)
    }

    /// Pushes the names declared in unit `u` that carry a segment and are not in `carrying`.
    fn carried_in(&self, u: usize, carrying: &HashSet<String>, out: &mut Vec<String>) {
        let facts = self.p.units[u].facts();
        let push = |n: &str, out: &mut Vec<String>| {
            if !carrying.contains(n) && !out.iter().any(|x| x == n) {
                out.push(n.to_string());
            }
        };
        let fields = facts.types.iter().flat_map(|t| &t.fields);
        for b in fields.chain(&facts.globals) {
            let configured = self.config.is_some_and(|c| {
                b.annotations
                    .iter()
                    .any(|a| c.annotations.contains(&a.name))
                    || b.ty
                        .as_deref()
                        .is_some_and(|t| carrying.contains(simple_name(t)))
            });
            if configured || b.init.as_ref().is_some_and(|e| self.mentions(e, carrying)) {
                push(&b.name, out);
            }
        }
        if let Some(c) = self.config {
            for t in &facts.types {
                if let Some(name) = &t.name
                    && t.annotations
                        .iter()
                        .any(|a| c.properties_annotations.contains(&a.name))
                {
                    // `props.approveUrl()`, `props.getApproveUrl()`, `props.approveUrl`: read
                    // by name on a value of the type (`Shaper::bound_property`).
                    push(simple_name(name), out);
                    for b in &t.fields {
                        push(&b.name, out);
                        let mut cs = b.name.chars();
                        if let Some(first) = cs.next() {
                            push(
                                &format!("get{}{}", first.to_ascii_uppercase(), cs.as_str()),
                                out,
                            );
                        }
                    }
                    for &m in &t.methods {
                        if let Some(n) = facts.functions[m].name.as_deref() {
                            push(n, out);
                        }
                    }
                }
            }
        }
        for (i, f) in facts.functions.iter().enumerate() {
            if let Some(name) = f.name.as_deref()
                && f.kind != FnKind::Lambda
                && self.returns_carrier(&facts.functions, i, carrying)
                && self.followed(FnRef { unit: u, f: i }, name)
            {
                push(name, out);
            }
        }
    }

    /// May the shaper follow a call to `r` (named `name`) into its body: is it, for some
    /// number of arguments, the one function of its name with a body that takes them
    /// (`Shaper::unique_callee`)?
    fn followed(&self, r: FnRef, name: &str) -> bool {
        let p = self.p;
        let Some(d) = p.units[r.unit].decls().functions.get(r.f) else {
            return true;
        };
        if d.varargs {
            return true;
        }
        let kotlin = p.units[r.unit].lang == crate::facts::Lang::Kotlin;
        let arities = if kotlin {
            0..=d.params
        } else {
            d.params..=d.params
        };
        arities.into_iter().any(|a| {
            p.resolve(name, a)
                .filter(|g| {
                    p.units[g.unit]
                        .decls()
                        .functions
                        .get(g.f)
                        .is_none_or(|x| x.has_body)
                })
                .nth(1)
                .is_none()
        })
    }

    /// Does function `i` of these return a value the shaper may follow to a segment: its one
    /// returned expression, with the locals it names?
    fn returns_carrier(
        &self,
        functions: &[crate::facts::Function],
        i: usize,
        carrying: &HashSet<String>,
    ) -> bool {
        let f = &functions[i];
        if !f.has_body {
            return false;
        }
        match super::syntax::returned_exprs(f).as_slice() {
            [ret] => self.value_mentions(functions, i, ret, carrying),
            _ => false,
        }
    }

    /// Does `e`, written in function `i` of these, hold a segment or name a carrier, or name a
    /// local (of that function or one around it) whose initialiser does?
    fn value_mentions(
        &self,
        functions: &[crate::facts::Function],
        i: usize,
        e: &Expr,
        carrying: &HashSet<String>,
    ) -> bool {
        let mut lets: crate::hash::HashMap<&str, Vec<&Expr>> = Default::default();
        let mut scope = Some(i);
        while let Some(k) = scope {
            crate::walk::walk_lets(&functions[k].body, &mut |b| {
                if let Some(init) = &b.init {
                    lets.entry(b.name.as_str()).or_default().push(init);
                }
            });
            scope = functions[k].parent;
        }
        let mut todo: Vec<&Expr> = vec![e];
        let mut seen: HashSet<&str> = HashSet::default();
        while let Some(e) = todo.pop() {
            let mut hit = false;
            walk_expr(e, &mut |x| {
                hit = hit || self.mentions_here(x, carrying);
                if let ExprKind::Name(n) = &x.kind
                    && seen.insert(n.as_str())
                    && let Some(inits) = lets.get(n.as_str())
                {
                    todo.extend(inits.iter().copied());
                }
            });
            if hit {
                return true;
            }
        }
        false
    }

    /// Does `e` or an expression inside it hold a segment or name a carrier?
    fn mentions(&self, e: &Expr, carrying: &HashSet<String>) -> bool {
        let mut hit = false;
        walk_expr(e, &mut |x| hit = hit || self.mentions_here(x, carrying));
        hit
    }

    /// Does `e` itself (not what is inside it) hold a segment or name a carrier?
    fn mentions_here(&self, e: &Expr, carrying: &HashSet<String>) -> bool {
        match &e.kind {
            ExprKind::Str(s) => self.words.may_contain_in_strings_where(
                crate::facts::Lang::Java,
                s,
                &[(0, s.len() as u32)],
                stands_as_segment,
            ),
            ExprKind::Name(n)
            | ExprKind::Field { name: n, .. }
            | ExprKind::Call { name: n, .. } => carrying.contains(n.as_str()),
            ExprKind::New { ty, .. } => carrying.contains(simple_name(ty)),
            _ => false,
        }
    }
}

impl Carriers<'_> {
    /// `reached` and the files declaring the helpers a segment may be handed to from there, as
    /// the POST finder follows them ([`HELPER_ROUNDS`] deep): a function called in a reached
    /// file with an argument that may carry a segment, then a function such a helper calls
    /// with its own parameter or local, and so on.
    fn helpers(
        &self,
        mut reached: Vec<bool>,
        carrying: &HashSet<String>,
        may_post: &dyn Fn() -> Vec<bool>,
    ) -> Vec<bool> {
        let p = self.p;
        // (call name, unit it is written in)
        let mut calls: HashSet<(&str, usize)> = HashSet::default();
        for u in (0..reached.len()).filter(|&u| reached[u]) {
            let functions = &p.units[u].facts().functions;
            for i in 0..functions.len() {
                self.calls_handing(
                    u,
                    functions,
                    i,
                    |e| self.value_mentions(functions, i, e, carrying),
                    &mut calls,
                );
            }
        }
        if calls.is_empty() {
            return reached;
        }
        let to_post = hops_to_post(p, &may_post());
        let mut may_call: crate::hash::HashMap<FnRef, crate::project::MayCall> = Default::default();
        let mut seen: HashSet<FnRef> = HashSet::default();
        for round in 0..HELPER_ROUNDS {
            let mut helpers: Vec<FnRef> = Vec::new();
            for &(name, from) in &calls {
                for &r in p.fns_named(name) {
                    let helper = p.units[r.unit]
                        .decls()
                        .functions
                        .get(r.f)
                        .is_none_or(|d| d.has_body && (d.params > 0 || d.varargs));
                    if helper
                        && to_post[r.unit] < HELPER_ROUNDS - round
                        && !seen.contains(&r)
                        && may_call
                            .entry(r)
                            .or_insert_with(|| p.may_call_from(r))
                            .may_call(p, from)
                    {
                        seen.insert(r);
                        helpers.push(r);
                    }
                }
            }
            if helpers.is_empty() {
                break;
            }
            p.prefetch(helpers.iter().map(|r| r.unit));
            calls = HashSet::default();
            for r in helpers {
                reached[r.unit] = true;
                let functions = &p.units[r.unit].facts().functions;
                let own: HashSet<&str> = {
                    let mut own: HashSet<&str> = functions[r.f]
                        .params
                        .iter()
                        .map(|q| q.name.as_str())
                        .collect();
                    crate::walk::walk_lets(&functions[r.f].body, &mut |b| {
                        own.insert(b.name.as_str());
                    });
                    own
                };
                let hands_own = |e: &Expr| {
                    let mut hit = false;
                    walk_expr(e, &mut |x| {
                        hit =
                            hit || matches!(&x.kind, ExprKind::Name(n) if own.contains(n.as_str()));
                    });
                    hit
                };
                self.calls_handing(r.unit, functions, r.f, hands_own, &mut calls);
            }
        }
        reached
    }

    /// Pushes the names of the calls written in function `i` of unit `u` (not in its lambdas)
    /// with an argument `hands` accepts, with `u`.
    fn calls_handing<'f>(
        &self,
        u: usize,
        functions: &'f [crate::facts::Function],
        i: usize,
        hands: impl Fn(&Expr) -> bool,
        out: &mut HashSet<(&'f str, usize)>,
    ) {
        walk_stmts(&functions[i].body, &mut |e| {
            if let ExprKind::Call { name, args, .. } = &e.kind
                && !out.contains(&(name.as_str(), u))
                && args.iter().any(|a| hands(&a.value))
            {
                out.insert((name.as_str(), u));
            }
        });
    }
}

/// Per unit, how many helper calls a helper declared there may be from a file that may post
/// (`may_post`): 0 in one, 1 when it names a function with a parameter declared in one, and so
/// on below [`HELPER_ROUNDS`] (`HELPER_ROUNDS` when further).
fn hops_to_post(p: &Project, may_post: &[bool]) -> Vec<usize> {
    let mut hops: Vec<usize> = may_post
        .iter()
        .map(|&m| if m { 0 } else { HELPER_ROUNDS })
        .collect();
    for k in 1..HELPER_ROUNDS {
        let mut names: HashSet<&str> = HashSet::default();
        for (u, unit) in p.units.iter().enumerate() {
            if hops[u] == k - 1 {
                names.extend(
                    unit.decls()
                        .functions
                        .iter()
                        .filter(|f| f.has_body && (f.params > 0 || f.varargs))
                        .map(|f| f.name.as_str()),
                );
            }
        }
        let naming = p.units_naming_any(|n| names.contains(n));
        for (h, n) in hops.iter_mut().zip(naming) {
            if n && *h == HELPER_ROUNDS {
                *h = k;
            }
        }
    }
    hops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_stand_alone() {
        let at = |t: &str, w: &str| {
            let s = t.find(w).unwrap();
            stands_as_segment(t, s, s + w.len())
        };
        assert!(at("\"/v1/charges\"", "charges"));
        assert!(at("\"charges\"", "charges"));
        assert!(at("\"/v1/charges?expand=x\"", "charges"));
        assert!(at("\"{}/charges/{}\"", "charges"));
        assert!(at("\"%scharges\"", "charges"));
        assert!(at("\"${base}charges\"", "charges"));
        assert!(at("\"POST /v1/charges \"", "charges"));
        assert!(at("\"/v1/charges$query\"", "charges"));
        assert!(!at("\"job was cancel \"", "cancel"));
        assert!(!at("\"/v1/charges are\"", "charges"));
        assert!(!at("\"/v1/payouts\"", "pay"));
        assert!(!at("\"repay\"", "pay"));
        assert!(!at("\"/v1/charges.json\"", "charges"));
        assert!(!at("\"api.payments\"", "payments"));
        assert!(!at("\"x-payments\"", "payments"));
    }

    #[test]
    fn last_segments() {
        assert_eq!(last_literal_segment("/v1/invoices/*/pay"), Some("pay"));
        assert_eq!(last_literal_segment("/v1/billing/*"), Some("billing"));
        assert_eq!(last_literal_segment("/v1/charges"), Some("charges"));
    }
}

#[cfg(test)]
mod reach_tests {
    use crate::catalog::Catalog;
    use crate::project::Project;

    /// Endpoint literals reaching POSTs in other files: a constant read by a URL function
    /// another file calls, a helper two calls below the literal, a configured URL; a POST to
    /// no money endpoint, and a helper of the same name as one a literal is handed to that the
    /// caller cannot call (`Notifier.send`: the caller names only `Poster`).
    const FILES: &[(&str, &str)] = &[
        (
            "src/main/kotlin/app/StripePaths.kt",
            "package app\nobject StripePaths {\n    const val CHARGES = \"/v1/charges\"\n}\n",
        ),
        (
            "src/main/kotlin/app/StripeUrls.kt",
            "package app\nclass StripeUrls(private val base: String) {\n    fun charges(): String = base + StripePaths.CHARGES\n}\n",
        ),
        (
            "src/main/kotlin/app/ChargeClient.kt",
            "package app\nimport okhttp3.Request\nclass ChargeClient(private val urls: StripeUrls, private val http: okhttp3.OkHttpClient) {\n    fun charge(body: okhttp3.RequestBody) {\n        val request = Request.Builder().url(urls.charges()).post(body).build()\n        http.newCall(request).execute()\n    }\n}\n",
        ),
        (
            "src/main/java/app/Poster.java",
            "package app;\nimport org.springframework.web.client.RestTemplate;\nclass Poster {\n    private final RestTemplate rest = new RestTemplate();\n    private final String base = \"https://api.stripe.com\";\n    String send(String path, Object body) {\n        return rest.postForObject(base + path, body, String.class);\n    }\n}\n",
        ),
        (
            "src/main/java/app/Relay.java",
            "package app;\nclass Relay {\n    private final Poster poster = new Poster();\n    String relay(String p, Object b) {\n        return poster.send(p, b);\n    }\n}\n",
        ),
        (
            "src/main/java/app/Refunds.java",
            "package app;\nclass Refunds {\n    private final Relay relay = new Relay();\n    void refund(Object b) {\n        relay.relay(\"/v1/refunds\", b);\n    }\n}\n",
        ),
        (
            "src/main/java/app/Notifier.java",
            "package app;\nimport org.springframework.web.client.RestTemplate;\nclass Notifier {\n    private final RestTemplate rest = new RestTemplate();\n    void send(String path, Object body) {\n        rest.postForObject(\"https://hooks.example\" + path, body, String.class);\n    }\n}\n",
        ),
        (
            "src/main/java/app/Mailer.java",
            "package app;\nclass Mailer {\n    void send(String to, Object body) {}\n}\n",
        ),
        (
            "src/main/java/app/Orders.java",
            "package app;\nimport org.springframework.web.client.RestTemplate;\nclass Orders {\n    private final RestTemplate rest = new RestTemplate();\n    void order(Object b) {\n        rest.postForObject(\"https://shop.example/v1/orders\", b, String.class);\n    }\n}\n",
        ),
        (
            "src/main/java/app/PayoutClient.java",
            "package app;\nimport org.springframework.beans.factory.annotation.Value;\nimport org.springframework.web.client.RestTemplate;\nclass PayoutClient {\n    @Value(\"${psp.payouts-url}\")\n    private String payoutsUrl;\n    private final RestTemplate rest = new RestTemplate();\n    void payout(Object b) {\n        rest.postForObject(payoutsUrl, b, String.class);\n    }\n}\n",
        ),
    ];

    fn project(config: bool, exhaustive: bool) -> Project {
        let mut p = crate::project::parsed(FILES);
        if config {
            p.config_texts = vec!["psp.payouts-url=https://api.stripe.com/v1/payouts\n".into()];
        }
        if exhaustive {
            p.open_gates();
        }
        p
    }

    fn reached(p: &Project) -> Vec<&str> {
        p.units
            .iter()
            .for_each(|u| assert!(u.parse_if_done().is_none()));
        let files = super::files(p, Catalog::builtin(), &|| {
            crate::coord::endpoints::may_post(p, None)
        });
        (0..p.units.len())
            .filter(|&u| files[u])
            .map(|u| p.units[u].src.path.file_name().unwrap().to_str().unwrap())
            .collect()
    }

    /// The POST sites found: (file, line, endpoint).
    fn sites(p: &Project) -> Vec<(String, usize, String)> {
        let cat = Catalog::builtin();
        let flows = crate::flow::Caches::default();
        let flow = crate::flow::Flow::new(p, cat, &flows);
        let posts = crate::coord::endpoints::find(p, cat, &flow, &Vec::new);
        let mut out: Vec<(String, usize, String)> = posts
            .sites
            .iter()
            .map(|s| {
                let src = &p.units[s.at.unit].src;
                let name = src.path.file_name().unwrap().to_str().unwrap().to_string();
                (name, src.line_col(s.site.start).line, s.endpoint.clone())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn files_a_literal_reaches() {
        let all = [
            "StripePaths.kt",
            "StripeUrls.kt",
            "ChargeClient.kt",
            "Poster.java",
            "Relay.java",
            "Refunds.java",
        ];
        assert_eq!(reached(&project(false, false)), all);
        // A configured endpoint: the files writing a configuration annotation too.
        let configured = project(true, false);
        let with_config = reached(&configured);
        assert!(
            with_config.contains(&"PayoutClient.java"),
            "{with_config:?}"
        );
        assert!(!with_config.contains(&"Orders.java"), "{with_config:?}");
    }

    /// The gate changes no answer: the same POST sites as with every file read.
    #[test]
    fn sites_are_those_of_every_file() {
        for config in [false, true] {
            let gated = sites(&project(config, false));
            assert_eq!(gated, sites(&project(config, true)));
            let files: Vec<&str> = gated.iter().map(|s| s.0.as_str()).collect();
            assert!(files.contains(&"ChargeClient.kt"), "{gated:?}");
            assert!(files.contains(&"Refunds.java"), "{gated:?}");
            assert_eq!(files.contains(&"PayoutClient.java"), config, "{gated:?}");
        }
    }

    /// Which files may post is asked only when a segment is handed to a project function:
    /// a project with no endpoint literal answers without it.
    #[test]
    fn may_post_is_asked_only_for_helpers() {
        let p = crate::project::parsed(&FILES[6..]);
        let files = super::files(&p, Catalog::builtin(), &|| panic!("asked which files post"));
        assert!(!files.contains(&true));
    }
}
