//! Facts in the outline's order, whatever the two disagree on.
//!
//! The project index is built from each file's declarations as its outline reads them
//! ([`crate::decls::Decls`]): it names the `i`-th declared function of a file as `FnId` `i` and
//! its `i`-th type as `TypeId` `i`, before (or without) parsing the file. A file is parsed
//! ([`parse`]) against those same declarations, not a second outline of it. On almost every
//! file the lowering numbers them the same way ([`crate::lang::fn_order`]); where it does not (a front-end quirk, a file the parser gave up on),
//! the facts are renumbered to match:
//!
//! - types and declared functions are paired by name, in order (a longest common
//!   subsequence), and each pair takes the outline's id;
//! - what only the outline has becomes a stub in its place: a function without a body, a type
//!   without fields, named and owned as the outline says, so every id the index hands out
//!   points at a declaration of that name;
//! - what only the facts have goes after the outline's declarations (and before the lambdas):
//!   no index entry names it, but nothing in the file loses it.
//!
//! Iterative and bounded: a pairing of more than [`MAX_CELLS`] cells pairs greedily instead.

use crate::decls::{Decls, Parse};
use crate::facts::Lang;
use crate::facts::{FileFacts, FnId, FnKind, Function, Param, Span, TypeDecl, TypeId};
use crate::lang::fn_order::{is_declared, rewrite_ids};

/// The largest pairing table (rows times columns) built; past it, names pair greedily.
const MAX_CELLS: usize = 4 << 20;

/// Renumbers `facts` (declared functions already first) so that the `i`-th type and function
/// of `decls` are the facts' type and function `i`. Returns whether anything changed. A function
/// both list keeps what the facts say of it (its owner, its parameters).
pub fn conform(facts: &mut FileFacts, decls: &Decls) -> bool {
    let types_moved = conform_types(facts, decls);
    let fns_moved = conform_functions(facts, decls);
    types_moved || fns_moved
}

/// Files parsed so far in this process (for `IDEMLINT_TIMINGS`).
static PARSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many files [`parse`] has parsed in this process.
pub fn parses_so_far() -> usize {
    PARSES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Parses and lowers `text` (as [`crate::lang::parse_and_lower`]), the facts renumbered to
/// agree with `decls`, the declarations its outline gave ([`crate::decls::declared`]). When the
/// parser gives up, the facts hold only those declarations (without bodies), so the index's
/// ids still point at something.
pub fn parse(lang: Lang, text: &str, decls: &Decls) -> Parse {
    PARSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut out = match crate::lang::parse_and_lower(lang, text) {
        Some(p) => Parse {
            facts: p.facts,
            too_deep: p.too_deep,
            gave_up: false,
        },
        None => Parse {
            gave_up: true,
            ..Parse::default()
        },
    };
    conform(&mut out.facts, decls);
    out
}

fn conform_types(facts: &mut FileFacts, decls: &Decls) -> bool {
    let want: Vec<Option<&str>> = decls.types.iter().map(|t| t.name.as_deref()).collect();
    let have: Vec<Option<&str>> = facts.types.iter().map(|t| t.name.as_deref()).collect();
    if have.starts_with(&want) {
        return false;
    }
    let pairs = pair(&want, &have);
    let (types, new_id) = reorder(std::mem::take(&mut facts.types), &pairs, |i| {
        stub_type(decls, i)
    });
    let stubs: Vec<TypeId> = (0..pairs.len()).filter(|&i| pairs[i].is_none()).collect();
    facts.types = types;
    let fns: Vec<FnId> = (0..facts.functions.len()).collect();
    // Stubs already hold outline ids; only the facts' own types move.
    let stub_parents: Vec<(TypeId, Option<TypeId>)> = stubs
        .iter()
        .map(|&t| (t, facts.types[t].parent_type.take()))
        .collect();
    rewrite_ids(facts, &fns, Some(&new_id));
    for (t, parent) in stub_parents {
        facts.types[t].parent_type = parent;
        if let Some(p) = parent
            && let Some(pt) = facts.types.get_mut(p)
        {
            pt.nested.push(t);
        }
    }
    true
}

fn stub_type(decls: &Decls, i: usize) -> TypeDecl {
    let t = &decls.types[i];
    TypeDecl {
        name: t.name.as_deref().map(String::from),
        kind: t.kind,
        supertypes: t.supertypes.clone(),
        annotations: Vec::new(),
        fields: Vec::new(),
        methods: Vec::new(),
        nested: Vec::new(),
        span: Span::default(),
        name_span: Span::default(),
        parent_type: t.parent,
        parent_fn: None,
    }
}

fn conform_functions(facts: &mut FileFacts, decls: &Decls) -> bool {
    let declared = facts
        .functions
        .iter()
        .take_while(|f| is_declared(f))
        .count();
    let want: Vec<&str> = decls.functions.iter().map(|f| f.name.as_str()).collect();
    let have: Vec<&str> = facts.functions[..declared]
        .iter()
        .map(|f| f.name.as_deref().unwrap_or_default())
        .collect();
    if have.starts_with(&want) {
        return false;
    }
    let pairs = pair(&want, &have);
    let n_types = facts.types.len();
    // (After the facts' own declared functions the outline lacks come the lambdas, in order.)
    let (fns, new_id) = reorder(std::mem::take(&mut facts.functions), &pairs, |i| {
        stub_fn(decls, i, n_types)
    });
    let stubs: Vec<FnId> = (0..pairs.len()).filter(|&i| pairs[i].is_none()).collect();
    facts.functions = fns;
    // A stub points at no function, so the rewrite leaves it as it is.
    rewrite_ids(facts, &new_id, None);
    for &s in &stubs {
        if let Some(t) = facts.functions[s].owner
            && let Some(ty) = facts.types.get_mut(t)
        {
            ty.methods.push(s);
        }
    }
    true
}

fn stub_fn(decls: &Decls, i: usize, types: usize) -> Function {
    let d = &decls.functions[i];
    let owner = d.owner.filter(|&t| t < types);
    let param = || Param {
        name: String::new(),
        ty: None,
        annotations: Vec::new(),
        span: Span::default(),
        default: None,
    };
    Function {
        name: Some(d.name.to_string()),
        kind: if owner.is_some() {
            FnKind::Method
        } else {
            FnKind::Function
        },
        params: (0..d.params).map(|_| param()).collect(),
        annotations: Vec::new(),
        modifiers: Vec::new(),
        return_type: None,
        owner,
        parent: None,
        body: Vec::new(),
        has_body: false,
        span: Span::default(),
        name_span: Span::default(),
    }
}

/// `old` in the order `pairs` gives (the `i`-th is `old[pairs[i]]`, or `stub(i)` where it pairs
/// with nothing), then the rest of `old` in order; with each old item's new index.
fn reorder<T>(
    old: Vec<T>,
    pairs: &[Option<usize>],
    mut stub: impl FnMut(usize) -> T,
) -> (Vec<T>, Vec<usize>) {
    let n_old = old.len();
    let mut old: Vec<Option<T>> = old.into_iter().map(Some).collect();
    let mut new_id = vec![usize::MAX; n_old];
    let mut out = Vec::with_capacity(pairs.len() + n_old);
    for (i, p) in pairs.iter().enumerate() {
        // (`pair` pairs each old index once at most.)
        match p.and_then(|k| Some((k, old.get_mut(k)?.take()?))) {
            Some((k, item)) => {
                new_id[k] = i;
                out.push(item);
            }
            None => out.push(stub(i)),
        }
    }
    for (k, item) in old.into_iter().enumerate() {
        if let Some(item) = item {
            new_id[k] = out.len();
            out.push(item);
        }
    }
    (out, new_id)
}

/// For each of `want`, the index in `have` it pairs with: a longest common subsequence of the
/// two (after their common start and end), or, past [`MAX_CELLS`], the next equal one.
fn pair<T: PartialEq>(want: &[T], have: &[T]) -> Vec<Option<usize>> {
    let mut out = vec![None; want.len()];
    let pre = want.iter().zip(have).take_while(|(a, b)| a == b).count();
    let suf = want[pre..]
        .iter()
        .rev()
        .zip(have[pre..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    for (i, o) in out.iter_mut().enumerate().take(pre) {
        *o = Some(i);
    }
    for k in 0..suf {
        out[want.len() - 1 - k] = Some(have.len() - 1 - k);
    }
    let (w, h) = (&want[pre..want.len() - suf], &have[pre..have.len() - suf]);
    if w.is_empty() || h.is_empty() {
        return out;
    }
    if w.len().saturating_mul(h.len()) > MAX_CELLS {
        let mut j = 0;
        for (i, a) in w.iter().enumerate() {
            if let Some(k) = h[j..].iter().position(|b| b == a) {
                out[pre + i] = Some(pre + j + k);
                j += k + 1;
            }
        }
        return out;
    }
    // lcs[i][j]: the longest common subsequence of w[i..] and h[j..].
    let cols = h.len() + 1;
    let mut lcs = vec![0u32; (w.len() + 1) * cols];
    for i in (0..w.len()).rev() {
        for j in (0..h.len()).rev() {
            lcs[i * cols + j] = if w[i] == h[j] {
                lcs[(i + 1) * cols + j + 1] + 1
            } else {
                lcs[(i + 1) * cols + j].max(lcs[i * cols + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < w.len() && j < h.len() {
        if w[i] == h[j] {
            out[pre + i] = Some(pre + j);
            i += 1;
            j += 1;
        } else if lcs[(i + 1) * cols + j] >= lcs[i * cols + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::{FnDecl, Outlined, TyDecl};

    /// Each function and type, by where it is written, with the names of what its ids point
    /// at (its parent, its owner, a type's parent and methods): the same before and after a
    /// renumbering that keeps every id pointing where it pointed.
    fn shape(facts: &FileFacts) -> Vec<String> {
        let fname = |i: FnId| facts.functions[i].name.clone();
        let tname = |t: TypeId| (facts.types[t].name.clone(), facts.types[t].span);
        let mut out: Vec<String> = facts
            .functions
            .iter()
            .filter(|f| f.span != Span::default())
            .map(|f| {
                let mut lambdas = Vec::new();
                crate::walk::walk_stmts(&f.body, &mut |e| {
                    if let crate::facts::ExprKind::Lambda(id) = e.kind {
                        lambdas.push(facts.functions[id].span);
                    }
                });
                format!(
                    "fn {:?} {:?} parent {:?} owner {:?} lambdas {lambdas:?}",
                    f.name,
                    f.span,
                    f.parent.map(fname),
                    f.owner.map(tname)
                )
            })
            .collect();
        out.extend(
            facts
                .types
                .iter()
                .filter(|t| t.span != Span::default())
                .map(|t| {
                    let mut methods: Vec<_> = t.methods.iter().map(|&m| fname(m)).collect();
                    methods.sort();
                    format!(
                        "type {:?} {:?} parent {:?} methods {methods:?}",
                        t.name,
                        t.span,
                        t.parent_type.map(tname)
                    )
                }),
        );
        out.sort();
        out
    }

    /// Conforms the facts of `text` to its outline changed by `edit`: the outline's `i`-th
    /// function and type are then the facts' `i`-th, every id still points where it pointed,
    /// and the facts' own declarations are all still there.
    fn conformed(lang: Lang, text: &str, edit: impl FnOnce(&mut Outlined)) -> FileFacts {
        let lexed = crate::lex::lex(lang, text);
        let mut o = crate::outline::outline(lang, text, &lexed.tokens);
        edit(&mut o);
        let decls = Decls::of_outline(&o);
        let mut facts = crate::lang::parse_and_lower(lang, text).unwrap().facts;
        let before = shape(&facts);
        assert!(conform(&mut facts, &decls), "nothing to conform in {text}");
        for (i, d) in o.functions.iter().enumerate() {
            let f = &facts.functions[i];
            assert_eq!(f.name.as_deref(), Some(d.name.as_ref()), "function {i}");
            // (A function both list keeps the facts' owner.)
            if f.span == Span::default() {
                assert_eq!(f.owner, d.owner_type, "owner of stub {i}");
            }
        }
        for (i, t) in o.types.iter().enumerate() {
            assert_eq!(facts.types[i].name.as_deref(), t.name, "type {i}");
        }
        assert_eq!(shape(&facts), before, "an id points elsewhere");
        crate::lang::fn_order::ids_agree(&facts).unwrap();
        assert!(
            !conform(&mut facts, &decls),
            "conforming twice changes more"
        );
        facts
    }

    #[test]
    fn a_type_only_the_facts_have_goes_last() {
        // The outline has no type for `impl T for ()`: `b` is owned by outline type 1.
        let facts = conformed(
            Lang::Rust,
            "struct S;\nimpl T for () { fn a(&self) {} }\nimpl S { fn b(&self) { let c = || 1; } }\n",
            |_| {},
        );
        assert_eq!(facts.types[2].name.as_deref(), Some("()"));
        assert_eq!(facts.functions[1].owner, Some(1));
    }

    #[test]
    fn a_function_only_the_facts_have_goes_after_the_outlines() {
        let facts = conformed(
            Lang::Kotlin,
            "class C {\n  var x: Int = 0\n    set(v) { field = v }\n  fun h() { run { 1 } }\n}\n",
            |_| {},
        );
        assert_eq!(facts.functions[1].name.as_deref(), Some("<set-x>"));
        assert_eq!(facts.functions[2].kind, FnKind::Lambda);
    }

    #[test]
    fn what_only_the_outline_has_becomes_a_stub_in_its_place() {
        let text = "class A { void f() { Runnable r = () -> g(); } }\n\
                    class B { void g() {} class N { void h() {} } }\n";
        // A function and a type the facts lack, in the middle: later ids move up.
        let facts = conformed(Lang::Java, text, |o| {
            o.types.insert(
                1,
                TyDecl {
                    name: Some("Ghost"),
                    kind: crate::facts::TypeKind::Class,
                    parent: Some(0),
                    supertypes: vec!["Base".into()],
                    fields: Vec::new(),
                },
            );
            for t in &mut o.types[2..] {
                t.parent = t.parent.map(|p| if p >= 1 { p + 1 } else { p });
            }
            for f in &mut o.functions {
                f.owner_type = f.owner_type.map(|t| if t >= 1 { t + 1 } else { t });
            }
            o.functions.insert(
                1,
                FnDecl {
                    name: "boo".into(),
                    arity: 2,
                    owner: Some("Ghost"),
                    owner_type: Some(1),
                    has_body: true,
                    has_self: false,
                    varargs: false,
                },
            );
        });
        let ghost = &facts.types[1];
        assert_eq!(ghost.supertypes, ["Base"]);
        assert_eq!(ghost.parent_type, Some(0));
        assert!(facts.types[0].nested.contains(&1));
        assert_eq!(ghost.methods, [1]);
        let boo = &facts.functions[1];
        assert_eq!((boo.params.len(), boo.has_body), (2, false));
        assert_eq!(facts.types[3].name.as_deref(), Some("N"));
        assert_eq!(facts.types[3].parent_type, Some(2));
    }

    #[test]
    fn names_pair_in_order() {
        let p = |a: &str, b: &str| {
            let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            pair(&a, &b)
        };
        assert_eq!(p("abc", "abc"), [Some(0), Some(1), Some(2)]);
        assert_eq!(p("axc", "abc"), [Some(0), None, Some(2)]);
        assert_eq!(p("ac", "abc"), [Some(0), Some(2)]);
        assert_eq!(p("abab", "bab"), [None, Some(0), Some(1), Some(2)]);
        assert_eq!(p("", "ab"), Vec::<Option<usize>>::new());
        assert_eq!(p("ab", ""), [None, None]);
    }

    /// On every fixture file the lowering already numbers functions and types as the outline
    /// does, but one listed front-end defect.
    #[test]
    fn fixtures_need_no_renumbering() {
        let mut moved = Vec::new();
        for (lang, path, text) in crate::lang::fixture_sources() {
            let Some(parsed) = crate::lang::parse_and_lower(lang, &text) else {
                continue;
            };
            let mut facts = parsed.facts;
            if conform(&mut facts, &crate::decls::declared(lang, &text).decls) {
                moved.push(path.file_name().unwrap().to_string_lossy().to_string());
            }
        }
        assert_eq!(moved, ["PaymentsGateway.kt"]);
    }
}
