//! Where a distributed lock's key or name is given (IDEM006): advisory-lock SQL arguments,
//! Redisson/Hazelcast `getLock(name)`, `LockRegistry.obtain(key)`, ShedLock
//! `LockConfiguration` names, Curator paths, Redis `SET NX` keys, and project lock helpers'
//! key parameters.

use super::Coord;
use super::syntax::peel;
use crate::catalog::contains_ignore_ascii_case;
use crate::facts::{Arg, Expr, ExprKind, Span, simple_name};
use crate::hash::{HashMap, HashSet};
use crate::project::{FnRef, walk_expr, walk_stmts};
use rayon::prelude::*;

/// A lock key expression.
pub struct LockKey<'p> {
    pub at: FnRef,
    pub key: &'p Expr,
    /// The lock API (`pg_try_advisory_lock`, `getLock`, a project helper).
    pub api: String,
    pub call: Span,
}

/// The keyed subset of the catalogue's `sql_locks` (`SKIP LOCKED` has no key), longest first.
const KEYED_SQL_LOCKS: &[&str] = &[
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_lock",
    "pg_advisory_xact_lock",
    "pg_advisory_lock",
    "get_lock(",
    "sp_getapplock",
];

const BIND_CALLS: &[&str] = &[
    "bind",
    "bind_by_name",
    "setParameter",
    "param",
    "addValue",
    "setLong",
    "setInt",
    "setString",
    "setObject",
];

impl<'p> Coord<'p> {
    pub fn lock_keys(&self) -> Vec<LockKey<'p>> {
        let mut out = Vec::new();
        let mut memo: HashMap<(FnRef, u32), Vec<usize>> = HashMap::default();
        // Files naming `NX` (Redis SET NX: Lettuce's `SetArgs.Builder.nx()` takes no argument).
        let nx = self.p.units_naming_any(|n| n.eq_ignore_ascii_case("nx"));
        // Files whose code writes a lock word (SQL locks, a string "NX"), in an identifier or a
        // string literal: one answer serves both questions below (the keyed SQL locks all
        // contain a lock word).
        let lock_words = self.p.units_writing(LOCK_WORDS);
        let helpers = self.lock_helper_names(&nx, &lock_words);
        // Every lock key is an argument of a call whose name the file's code writes (a lock
        // call, a helper, `setIfAbsent`, redis' `cmd`) or comes with SQL or "NX" written there
        // (Lettuce's `SetArgs.Builder.nx()` takes none): files with none of them have no lock
        // key.
        let mut may_have = self
            .p
            .units_calling_with_args(|n| helpers.contains(n) || matches!(n, "setIfAbsent" | "cmd"));
        for (u, m) in nx.into_iter().enumerate() {
            may_have[u] |= m;
        }
        for (u, m) in lock_words.into_iter().enumerate() {
            may_have[u] |= m;
        }
        self.p
            .prefetch((0..self.p.units.len()).filter(|&u| may_have[u]));
        for (u, unit) in self.p.units.iter().enumerate() {
            if !may_have[u] {
                continue;
            }
            for f in 0..unit.facts().functions.len() {
                let at = FnRef { unit: u, f };
                self.keys_in(at, &mut out, &mut memo, &helpers, 0);
            }
        }
        out
    }

    /// Names of project functions that may put a parameter into a lock key: their body (or a
    /// lambda in it) has a call [`Self::keys_in`] reports, or calls such a function, with an
    /// argument that names one of the function's parameters (only a parameter named in a key
    /// makes a helper: see [`Self::lock_key_params`]); and the catalogue's lock calls. Calls to
    /// any other name cannot be lock helpers, so they are not resolved (the resolution is the
    /// costly part of this rule on large trees). A superset: false members only cost time.
    /// `nx`: per unit, does its code name `NX`?
    fn lock_helper_names(&self, nx: &[bool], lock_words: &[bool]) -> HashSet<&'p str> {
        let p: &'p crate::project::Project = self.p;
        let key_calls = &self.cat.coord.locks.key_calls;
        // A function with a lock call of its own names it, or SQL, or "NX", in its file's text;
        // a function above one calls it by a name its file's text holds. Only those files are
        // read, level by level.
        let lock_calls = |n: &str| key_calls.iter().any(|(k, _)| k == n) || n == "setIfAbsent";
        let mut scanned = vec![false; p.units.len()];
        let mut names: HashSet<&'p str> = HashSet::default();
        let mut calls_of: HelperCalls<'p> = Vec::new();
        let mut scan =
            |want: Vec<bool>, names: &mut HashSet<&'p str>, calls_of: &mut HelperCalls<'p>| {
                let todo: Vec<usize> = (0..p.units.len())
                    .filter(|&u| want[u] && !scanned[u])
                    .collect();
                for &u in &todo {
                    scanned[u] = true;
                }
                let found: Vec<_> = todo
                    .into_par_iter()
                    .map(|u| helpers_in(p, u, key_calls))
                    .collect();
                for (direct, calls) in found {
                    names.extend(direct);
                    calls_of.extend(calls);
                }
            };
        // (A key is an argument: a file that calls these names with none, `lock.lock()`, has
        // no key of theirs.)
        let mut direct = p.units_calling_with_args(lock_calls);
        for (u, m) in lock_words.iter().enumerate() {
            direct[u] |= *m || nx[u];
        }
        scan(direct, &mut names, &mut calls_of);
        // `keys_in` follows helpers three calls deep and the innermost must have a lock call
        // of its own, so a call at the top can only reach a lock key through functions at most
        // two helper levels above one with a lock call.
        for _ in 0..2 {
            if !names.is_empty() {
                let callers = p.units_calling_with_args(|n| names.contains(n));
                scan(callers, &mut names, &mut calls_of);
            }
            let next: Vec<&'p str> = calls_of
                .iter()
                .filter(|(_, calls)| calls.iter().any(|c| names.contains(c)))
                .flat_map(|(via, _)| via.iter().copied())
                .collect();
            names.extend(next);
        }
        // The catalogue's lock calls are resolved too: a project function of that name may
        // be what runs.
        names.extend(key_calls.iter().map(|(k, _)| k.as_str()));
        names
    }

    /// Lock keys in `at` (with project helpers' key parameters resolved to arguments).
    fn keys_in(
        &self,
        at: FnRef,
        out: &mut Vec<LockKey<'p>>,
        memo: &mut HashMap<(FnRef, u32), Vec<usize>>,
        helpers: &HashSet<&'p str>,
        depth: u32,
    ) {
        let func = self.p.func(at);
        let mut inner: HashSet<Span> = HashSet::default();
        let mut nodes: Vec<&'p Expr> = Vec::new();
        walk_stmts(&func.body, &mut |e| match &e.kind {
            ExprKind::Call { receiver, .. } => {
                if let Some(r) = receiver {
                    inner.insert(peel(r).span);
                }
                nodes.push(e);
            }
            ExprKind::New { .. } | ExprKind::Macro { .. } => nodes.push(e),
            _ => {}
        });
        for e in nodes {
            let (name, args, receiver): (&str, &'p [Arg], Option<&'p Expr>) = match &e.kind {
                ExprKind::Call {
                    receiver,
                    name,
                    args,
                } => (name, args, receiver.as_deref()),
                ExprKind::New { ty, args, .. } => (simple_name(ty), args, None),
                ExprKind::Macro { name, args } => (name, args, None),
                _ => continue,
            };
            let mut push = |key: &'p Expr, api: String| {
                out.push(LockKey {
                    at,
                    key,
                    api,
                    call: e.span,
                });
            };
            // SQL advisory locks: the other arguments, the SQL's computed parts, and binds in
            // the chain above (`query("select pg_try_advisory_lock($1)").bind(key)`).
            if let Some((i, api)) = args
                .iter()
                .enumerate()
                .find_map(|(i, a)| self.sql_lock_in(&a.value).map(|s| (i, s)))
            {
                for (j, a) in args.iter().enumerate() {
                    if j == i {
                        for part in computed_parts(&a.value) {
                            push(part, api.clone());
                        }
                    } else if !is_class_literal(&a.value) {
                        push(&a.value, api.clone());
                    }
                }
                continue;
            }
            if let ExprKind::Call { name: n, args, .. } = &e.kind
                && BIND_CALLS.contains(&n.as_str())
                && let Some(api) = self.chain_sql_lock(at, e)
            {
                let idx = if n.starts_with("set") && args.len() >= 2 {
                    1
                } else {
                    0
                };
                if let Some(a) = args.get(idx) {
                    push(&a.value, api);
                }
                continue;
            }
            // Redis `set(key, value, SetParams().nx())`, redis-rs `cmd("SET").arg(key)..arg("NX")`.
            if is_set_nx(name, args) {
                push(&args[0].value, "SET NX".into());
                continue;
            }
            // Project helpers that put a parameter into a lock key.
            if let ExprKind::Call { .. } = &e.kind
                && helpers.contains(name)
            {
                let targets = self.flow.call_targets(at, receiver, name, args);
                let with_body: Vec<FnRef> = targets
                    .into_iter()
                    .filter(|t| self.p.func(*t).has_body && *t != at)
                    .collect();
                if !with_body.is_empty() {
                    if depth < 3 {
                        for t in with_body {
                            for j in self.lock_key_params(t, memo, helpers, depth + 1) {
                                if let Some(a) = super::syntax::param_to_arg(self.p, t, receiver, j)
                                    .and_then(|j| args.get(j))
                                {
                                    push(&a.value, format!("{name}(..)"));
                                }
                            }
                        }
                    }
                    continue;
                }
            }
            let Some((_, idx)) = self
                .cat
                .coord
                .locks
                .key_calls
                .iter()
                .find(|(n, _)| n == name)
            else {
                continue;
            };
            let mut idx = *idx;
            // ShedLock: `LockConfiguration(createdAt, name, atMostFor, atLeastFor)` since 4.0,
            // `LockConfiguration(name, lockAtMostUntil[, lockAtLeastUntil])` before.
            if name == "LockConfiguration"
                && (args.len() < 4 || matches!(args[0].value.kind, ExprKind::Str(_)))
            {
                idx = 0;
            }
            if name == "obtain"
                && !receiver.is_some_and(|r| {
                    let t = self.p.units[at.unit].src.slice(r.span).to_ascii_lowercase();
                    t.contains("lock") || t.contains("registry")
                })
            {
                continue;
            }
            if matches!(name, "lock" | "tryLock" | "withLock" | "try_lock")
                && self.is_local_lock_pub(at, receiver, name, args)
            {
                continue;
            }
            // Generic lock calls take a key only as a string-like argument: not Redisson's
            // `tryLock(wait, lease, unit)`, not a `LockConfiguration` object (its own
            // constructor is checked where it is built).
            let generic = matches!(
                name,
                "lock"
                    | "tryLock"
                    | "withLock"
                    | "try_lock"
                    | "acquireLock"
                    | "tryAcquireLock"
                    | "obtain"
                    | "SimpleLock"
            );
            if let Some(a) = args.get(idx)
                && !matches!(a.value.kind, ExprKind::Lambda(_) | ExprKind::Lit(_))
                && !(generic && (self.is_object_arg(at, &a.value) || has_time_unit(args)))
            {
                push(&a.value, name.to_string());
            }
        }
        // redis-rs: the first `.arg(..)` after `cmd("SET")` in a chain that also has "NX".
        self.redis_cmd_keys(at, out);
    }

    /// An object built by a constructor (`new LockConfiguration(..)`, or a local holding one).
    fn is_object_arg(&self, at: FnRef, e: &Expr) -> bool {
        let is_ctor = |x: &Expr| match &peel(x).kind {
            ExprKind::New { .. } => true,
            ExprKind::Call { receiver, name, .. } => {
                receiver.is_none() && name.starts_with(|c: char| c.is_uppercase())
                    || name == "builder"
                    || name == "build"
            }
            _ => false,
        };
        if is_ctor(e) {
            return true;
        }
        if let ExprKind::Name(n) = &peel(e).kind
            && let Some(b) = super::syntax::local_binding(self.p, at, n, e.span.start)
        {
            return b.init.as_ref().is_some_and(is_ctor)
                || b.ty
                    .as_deref()
                    .is_some_and(|t| t.ends_with("Configuration"));
        }
        false
    }

    /// Parameters of project function `f` that end up in a lock key inside it.
    fn lock_key_params(
        &self,
        f: FnRef,
        memo: &mut HashMap<(FnRef, u32), Vec<usize>>,
        helpers: &HashSet<&'p str>,
        depth: u32,
    ) -> Vec<usize> {
        if let Some(v) = memo.get(&(f, depth)) {
            return v.clone();
        }
        let params: Vec<String> = self
            .p
            .func(f)
            .params
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let mut keys = Vec::new();
        for g in self.p.with_nested(f) {
            self.keys_in(g, &mut keys, memo, helpers, depth);
        }
        let mut out = Vec::new();
        for k in &keys {
            walk_expr(k.key, &mut |x| {
                if let ExprKind::Name(n) = &x.kind
                    && let Some(i) = params.iter().position(|p| p == n)
                    && !out.contains(&i)
                {
                    out.push(i);
                }
            });
        }
        memo.insert((f, depth), out.clone());
        out
    }

    /// The lock function a SQL string in `e` calls.
    fn sql_lock_in(&self, e: &Expr) -> Option<String> {
        let mut found = None;
        walk_expr(e, &mut |x| {
            if found.is_none()
                && let ExprKind::Str(s) = &x.kind
            {
                let low = s.to_ascii_lowercase();
                for k in KEYED_SQL_LOCKS {
                    if low.contains(k) {
                        found = Some(k.trim_end_matches('(').to_string());
                        return;
                    }
                }
            }
        });
        found
    }

    /// For a `.bind(..)` call: the advisory-lock function of the SQL lower in its chain, or in
    /// the initialiser of the local the chain starts from (JDBC `try (PreparedStatement ps =
    /// conn.prepareStatement("SELECT pg_try_advisory_lock(?)")) { ps.setLong(1, key); .. }`).
    fn chain_sql_lock(&self, at: FnRef, e: &'p Expr) -> Option<String> {
        let mut cur = e;
        let mut followed = false;
        for _ in 0..12 {
            let r = match &cur.kind {
                ExprKind::Call {
                    receiver: Some(r), ..
                } => r,
                ExprKind::Name(n) if !followed => {
                    followed = true;
                    let init = super::syntax::local_binding(self.p, at, n, cur.span.start)?;
                    cur = peel(init.init.as_ref()?);
                    if let Some(s) = self.sql_call(cur) {
                        return Some(s);
                    }
                    continue;
                }
                _ => return None,
            };
            cur = peel(r);
            if let Some(s) = self.sql_call(cur) {
                return Some(s);
            }
        }
        None
    }

    /// The advisory-lock function of the SQL a call or macro is given.
    fn sql_call(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Call { args, .. } | ExprKind::Macro { args, .. } => {
                args.iter().find_map(|a| self.sql_lock_in(&a.value))
            }
            _ => None,
        }
    }

    fn redis_cmd_keys(&self, at: FnRef, out: &mut Vec<LockKey<'p>>) {
        let func = self.p.func(at);
        let mut tops: Vec<&'p Expr> = Vec::new();
        walk_stmts(&func.body, &mut |e| {
            if let ExprKind::Call { name, .. } = &e.kind
                && name == "arg"
            {
                tops.push(e);
            }
        });
        let mut done: HashSet<Span> = HashSet::default();
        for e in tops {
            // Walk down to `cmd("SET")`, remembering the args in order.
            let mut chain: Vec<&'p Expr> = Vec::new();
            let mut cur: &'p Expr = e;
            let mut is_set = false;
            while let ExprKind::Call {
                receiver,
                name,
                args,
            } = &cur.kind
            {
                if name == "cmd"
                    && args.first().is_some_and(|a| {
                        matches!(&a.value.kind, ExprKind::Str(s) if s.eq_ignore_ascii_case("set"))
                    })
                {
                    is_set = true;
                    break;
                }
                if name == "arg" {
                    chain.push(cur);
                }
                match receiver {
                    Some(r) => cur = peel(r),
                    None => break,
                }
            }
            let Some(first) = chain.last() else { continue };
            if !is_set || !done.insert(first.span) {
                continue;
            }
            let nx = chain.iter().any(|c| match &c.kind {
                ExprKind::Call { args, .. } => args.iter().any(
                    |a| matches!(&a.value.kind, ExprKind::Str(s) if s.eq_ignore_ascii_case("nx")),
                ),
                _ => false,
            });
            if nx
                && let ExprKind::Call { args, .. } = &first.kind
                && let Some(a) = args.first()
            {
                out.push(LockKey {
                    at,
                    key: &a.value,
                    api: "SET NX".into(),
                    call: first.span,
                });
            }
        }
    }
}

/// `TimeUnit.SECONDS`, `ChronoUnit.MINUTES`, `Duration.ofSeconds(..)` among the arguments: a
/// wait/lease call (`tryLock(10, 60, SECONDS)`), not a keyed one.
fn has_time_unit(args: &[Arg]) -> bool {
    args.iter().any(|a| {
        let mut yes = false;
        walk_expr(&a.value, &mut |x| {
            if let Some(p) = x.path_text()
                && (p.contains("TimeUnit") || p.contains("ChronoUnit"))
            {
                yes = true;
            }
            if let ExprKind::Call {
                receiver: Some(r), ..
            } = &x.kind
                && r.path_text()
                    .is_some_and(|p| crate::facts::simple_name(&p) == "Duration")
            {
                yes = true;
            }
        });
        yes
    })
}

/// The computed (non-literal) parts of a SQL string expression.
fn computed_parts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } if op == "+" => {
            let mut v = computed_parts(lhs);
            v.extend(computed_parts(rhs));
            v
        }
        ExprKind::Template(parts) => parts
            .iter()
            .filter(|p| !matches!(p.kind, ExprKind::Str(_)))
            .collect(),
        ExprKind::Str(_) => Vec::new(),
        _ => vec![e],
    }
}

/// `Boolean.class`, `Boolean::class.java`, `Long.class`.
fn is_class_literal(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Field { name, .. } if name == "class" || name == "java")
        || matches!(&e.kind, ExprKind::MethodRef { name, .. } if name == "class")
}

/// A redis-rs command chain `cmd("SET").arg(key).arg(value).arg("NX")..` (this call or one
/// it is chained on): run with `.query(..)`, its reply says whether the key was set.
pub(crate) fn is_redis_set_nx_chain(e: &Expr) -> bool {
    let mut nx = false;
    let mut cur = e;
    while let ExprKind::Call {
        receiver,
        name,
        args,
    } = &cur.kind
    {
        let first_is = |w: &str| {
            args.first().is_some_and(
                |a| matches!(&a.value.kind, ExprKind::Str(s) if s.eq_ignore_ascii_case(w)),
            )
        };
        if name == "cmd" {
            return nx && first_is("set");
        }
        nx |= name == "arg" && first_is("nx");
        match receiver {
            Some(r) => cur = peel(r),
            None => return false,
        }
    }
    false
}

/// Redis `SET key value NX`: Jedis `set(k, v, SetParams().nx())`, Lettuce
/// `set(k, v, SetArgs.Builder.nx())`.
/// Functions that hand a parameter to calls: the names each is reached by, with the names of
/// those calls.
type HelperCalls<'p> = Vec<(Vec<&'p str>, Vec<&'p str>)>;

/// What the functions of unit `u` say for [`Coord::lock_helper_names`]: the names of those with
/// a lock call keyed by a parameter, and for the others that hand a parameter to calls, the
/// names they are reached by with the names of those calls.
fn helpers_in<'p>(
    p: &'p crate::project::Project,
    u: usize,
    key_calls: &[(String, usize)],
) -> (Vec<&'p str>, HelperCalls<'p>) {
    let unit = &p.units[u];
    let mut names: Vec<&'p str> = Vec::new();
    let mut calls_of: HelperCalls<'p> = Vec::new();
    for (f, via) in crate::project::call_names(unit) {
        let mut direct = false;
        let mut calls: Vec<&'p str> = Vec::new();
        let params = &p.func(FnRef { unit: u, f }).params;
        let names_param = |args: &[Arg]| {
            if params.is_empty() {
                return false;
            }
            let mut yes = false;
            for a in args {
                walk_expr(&a.value, &mut |x| {
                    yes |=
                        matches!(&x.kind, ExprKind::Name(n) if params.iter().any(|q| q.name == *n));
                });
            }
            yes
        };
        let mut passes_param = false;
        for g in p.with_nested(FnRef { unit: u, f }) {
            walk_stmts(&p.func(g).body, &mut |e| {
                let (c, args) = match &e.kind {
                    ExprKind::Call { name, args, .. } | ExprKind::Macro { name, args } => {
                        (name.as_str(), args)
                    }
                    ExprKind::New { ty, args, .. } => (simple_name(ty), args),
                    // Advisory-lock SQL (also what `.bind(..)` keys hang off), and the
                    // "NX" of a redis-rs `cmd("SET")` chain.
                    ExprKind::Str(s) => {
                        direct |= s.eq_ignore_ascii_case("nx")
                            || ["advisory", "get_lock(", "sp_getapplock"]
                                .iter()
                                .any(|k| contains_ignore_ascii_case(s, k));
                        return;
                    }
                    _ => return,
                };
                // A lock call with its key argument (`mutex.lock()` has none, nor
                // has `mutex.withLock { .. }`), or a Redis `set(key, value, ..nx..)`.
                direct |= key_calls.iter().any(|(k, _)| k == c)
                    && args
                        .iter()
                        .take(2)
                        .any(|a| !matches!(a.value.kind, ExprKind::Lambda(_)))
                    || is_set_nx(c, args);
                // A helper's key parameter maps to an argument that names a parameter
                // of this function: other calls cannot pass a key through.
                if names_param(args) {
                    passes_param = true;
                    calls.push(c);
                }
            });
        }
        if direct && passes_param {
            names.extend(via);
        } else if !calls.is_empty() {
            calls_of.push((via, calls));
        }
    }
    (names, calls_of)
}

/// Words a lock call's file holds in a string when the call takes a key of its own:
/// advisory-lock SQL, a Redis `SET .. NX` (the names `nx` and `setIfAbsent` are looked up in
/// the name index).
const LOCK_WORDS: &[&str] = &[
    NX_STRING[0],
    NX_STRING[1],
    "advisory",
    "get_lock(",
    "sp_getapplock",
];

/// How a string literal (or a template's piece) that is `NX` ends in the text: before its
/// closing quote, or before the template's next `$`. (A bare `nx` matched `kotlinx` in every
/// coroutine import.)
const NX_STRING: [&str; 2] = ["nx\"", "nx$"];

pub(crate) fn is_set_nx(name: &str, args: &[Arg]) -> bool {
    name == "set" && args.len() >= 3 && args[2..].iter().any(|a| mentions_nx(&a.value))
}

fn mentions_nx(e: &Expr) -> bool {
    let mut yes = false;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Call { name, .. } | ExprKind::Field { name, .. } | ExprKind::Name(name)
            if name.eq_ignore_ascii_case("nx") || name == "setIfAbsent" || name == "NX" =>
        {
            yes = true
        }
        ExprKind::Str(s) if s.eq_ignore_ascii_case("nx") => yes = true,
        _ => {}
    });
    yes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One scan for [`LOCK_WORDS`] stands for the keyed SQL locks too (`lock_keys`): each holds
    /// one of the words.
    #[test]
    fn every_keyed_sql_lock_holds_a_lock_word() {
        for sql in KEYED_SQL_LOCKS.iter().chain(&NX_STRING) {
            assert!(
                LOCK_WORDS
                    .iter()
                    .any(|w| sql.to_ascii_lowercase().contains(&w.to_ascii_lowercase())),
                "{sql}"
            );
        }
    }
}
