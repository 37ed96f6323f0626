//! Lambdas handed to a constructor and kept in a field, wherever the object is built:
//! `IdempotencyMiddleware::new(Arc::new(|| Uuid::new_v4().to_string()))` with
//! `fn new(key_gen: KeyGen) -> Self { Self { key_gen } }`, or
//! `new KeyInterceptor(() -> UUID.randomUUID().toString())` with `this.keyGen = keyGen`.
//! Calling the field (`(self.key_gen)()`, `keyGen.get()`) runs one of them.

use crate::facts::Expr;
use crate::facts::{ExprKind, FnId, FnKind, Lang, simple_name};
use crate::project::{FnRef, Project};
use crate::walk::{held_lambda, walk_expr, walk_stmts};
use rayon::prelude::*;

/// One construction that hands lambdas over: how it was called, and which arguments are
/// lambdas.
pub struct Construction {
    /// The unit it is written in.
    pub unit: usize,
    /// `new T(..)` or Kotlin `T(..)` (a constructor), else the associated function's name
    /// (`T::new(..)`, `T::with_key_gen(..)`).
    pub via: Option<String>,
    pub arity: usize,
    /// (argument position, the lambda), the lambda in `unit`.
    pub lambdas: Vec<(usize, FnRef)>,
}

/// Every construction of a type of simple name `type_name` in the project that hands a lambda
/// to its constructor, in project order. A construction writes the type's name (`new T(..)`,
/// Kotlin `T(..)`, `T::new(..)`): only the files whose code does are read.
pub fn constructions_of(p: &Project, type_name: &str) -> Vec<Construction> {
    let per_unit: Vec<Vec<(String, Construction)>> = p
        .units_writing_name(type_name)
        .into_par_iter()
        .map(|u| {
            let mut out = Vec::new();
            let facts = &p.units[u].facts();
            for func in &facts.functions {
                walk_stmts(&func.body, &mut |e| scan(e, u, &mut out));
            }
            // Initialisers of fields and file-level values (`val http =
            // OkHttpClient.Builder().addInterceptor(KeyInterceptor { .. }).build()`).
            for b in facts
                .globals
                .iter()
                .chain(facts.types.iter().flat_map(|t| t.fields.iter()))
            {
                if let Some(init) = &b.init {
                    walk_expr(init, &mut |e| scan(e, u, &mut out));
                }
            }
            out
        })
        .collect();
    per_unit
        .into_iter()
        .flatten()
        .filter(|(ty, _)| ty == type_name)
        .map(|(_, c)| c)
        .collect()
}

/// Records `e` if it builds a type (`new T(..)`, Kotlin `T(..)`, `T::new(..)`) with a lambda
/// argument.
fn scan(e: &Expr, unit: usize, out: &mut Vec<(String, Construction)>) {
    let (ty, via, args) = match (&e.kind, crate::walk::constructed_type(e)) {
        (ExprKind::New { args, .. } | ExprKind::Call { args, .. }, Some(ty)) => (ty, None, args),
        (
            ExprKind::Call {
                receiver: Some(r),
                name,
                args,
            },
            _,
        ) => match r.path_text() {
            Some(t) if simple_name(&t).starts_with(|c: char| c.is_uppercase()) => {
                (simple_name(&t).to_string(), Some(name.to_string()), args)
            }
            _ => return,
        },
        _ => return,
    };
    push(out, unit, ty, via, args);
}

fn push(
    out: &mut Vec<(String, Construction)>,
    unit: usize,
    ty: String,
    via: Option<String>,
    args: &[crate::facts::Arg],
) {
    if args.iter().any(|a| a.name.is_some()) {
        return;
    }
    let lambdas: Vec<(usize, FnRef)> = args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| handed_lambda(&a.value).map(|f| (i, FnRef { unit, f })))
        .collect();
    if !lambdas.is_empty() {
        out.push((
            ty,
            Construction {
                unit,
                via,
                arity: args.len(),
                lambdas,
            },
        ));
    }
}

/// The lambdas that constructions of `type_name` (the one whose code is in unit `owner`)
/// anywhere in the project hand to the constructor parameter it keeps in `field`, in project
/// order.
pub fn field_lambdas(
    p: &Project,
    built: &dyn Fn(&str) -> std::sync::Arc<[Construction]>,
    owner: usize,
    type_name: &str,
    field: &str,
) -> Vec<FnRef> {
    // (declaring unit, constructor name or None for a constructor proper, parameters, the
    // one kept)
    let mut ctors: Vec<(usize, Option<&str>, usize, usize)> = Vec::new();
    for t in p.types_named(type_name) {
        let decl = &p.units[t.unit].facts().types[t.t];
        for &m in &decl.methods {
            let at = FnRef { unit: t.unit, f: m };
            let func = p.func(at);
            if let Some(i) = kept_param(p, at, type_name, field) {
                let via = match func.kind {
                    FnKind::Constructor => None,
                    _ => func.name.as_deref().filter(|n| *n != type_name),
                };
                ctors.push((t.unit, via, func.params.len(), i));
            }
        }
    }
    if ctors.is_empty() {
        return Vec::new();
    }
    let sites = built(type_name);
    // Several types of that name (in different packages or modules): only the owner's
    // constructors count, and a construction counts for the type it can see.
    let ambiguous = {
        let mut units: Vec<usize> = p.types_named(type_name).iter().map(|t| t.unit).collect();
        units.sort();
        units.dedup();
        units.len() > 1
    };
    if ambiguous {
        ctors.retain(|&(decl, ..)| match p.units[owner].lang {
            Lang::Rust => decl == owner,
            _ => same_dir(p, decl, owner),
        });
    }
    let mut out: Vec<FnRef> = sites
        .iter()
        .flat_map(|c| {
            ctors
                .iter()
                .filter(|&&(decl, via, arity, _)| {
                    c.via.as_deref() == via
                        && c.arity == arity
                        && (!ambiguous || sees(p, c.unit, decl, type_name))
                })
                .flat_map(|&(.., i)| {
                    c.lambdas
                        .iter()
                        .filter(move |(j, _)| *j == i)
                        .map(|(_, f)| *f)
                })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Can code in unit `site` mean the `type_name` declared in unit `decl`? An import of the
/// type decides when there is one: its package (Java, Kotlin) is the declaring file's
/// directory, its module (Rust) the declaring file (`crate::fresh::KeyHeader` is `fresh.rs`
/// or `fresh/mod.rs`). Without one, the same file, or for Java and Kotlin the same package.
fn sees(p: &Project, site: usize, decl: usize, type_name: &str) -> bool {
    if site == decl {
        return true;
    }
    let imports: Vec<String> = p.units[site]
        .imports()
        .iter()
        .filter_map(|i| {
            let i = i.replace("::", ".");
            let pkg = i.strip_suffix(type_name)?.strip_suffix('.')?;
            Some(
                pkg.trim_start_matches("crate.")
                    .trim_start_matches("super.")
                    .trim_start_matches("self.")
                    .to_string(),
            )
        })
        .collect();
    if imports.is_empty() {
        return p.units[site].lang != Lang::Rust && same_dir(p, site, decl);
    }
    let path = &p.units[decl].src.path;
    let dir = path
        .parent()
        .map(|d| d.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    imports.iter().any(|pkg| match p.units[decl].lang {
        Lang::Rust => {
            let module = pkg.rsplit('.').next().unwrap_or(pkg);
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            match stem {
                "mod" => dir.rsplit('/').next() == Some(module),
                _ => stem == module,
            }
        }
        _ => !pkg.is_empty() && dir.ends_with(&pkg.replace('.', "/")),
    })
}

/// Are units `a` and `b` the same file or in the same directory (a Java or Kotlin package)?
fn same_dir(p: &Project, a: usize, b: usize) -> bool {
    a == b || p.units[a].src.path.parent() == p.units[b].src.path.parent()
}

/// A lambda handed over as it is, or wrapped by a smart pointer or a cast (`Arc::new(|| ..)`,
/// `Box::new(..)`, `|| .. as Box<dyn Fn>`). Any other call around it (`Suppliers.memoize(..)`)
/// may change what calling it returns.
fn handed_lambda(e: &Expr) -> Option<FnId> {
    match &e.kind {
        ExprKind::Call {
            receiver: Some(r),
            name,
            args,
        } if args.len() == 1
            && matches!(name.as_str(), "new" | "from" | "pin")
            && r.path_text()
                .is_some_and(|t| crate::facts::SMART_POINTERS.contains(&simple_name(&t))) =>
        {
            held_lambda(&args[0].value, false)
        }
        ExprKind::Call { .. } => None,
        _ => held_lambda(e, true),
    }
}

/// Which parameter of `at` (a function of `type_name`) it keeps in `field`: a struct literal
/// `Self { field }` / `Self { field: param }`, `this.field = param`, or a Kotlin constructor
/// property.
fn kept_param(p: &Project, at: FnRef, type_name: &str, field: &str) -> Option<usize> {
    let func = p.func(at);
    let index = |n: &str| func.params.iter().position(|q| q.name == n);
    // Kotlin's `class KeyInterceptor(private val newKey: () -> String)`: the primary
    // constructor's parameter is the property.
    if p.units[at.unit].lang == Lang::Kotlin
        && func.kind == FnKind::Constructor
        && let Some(i) = index(field)
    {
        return Some(i);
    }
    let mut found = None;
    walk_stmts(&func.body, &mut |e| {
        if found.is_some() {
            return;
        }
        match &e.kind {
            ExprKind::New { ty, args, .. } if ty == "Self" || simple_name(ty) == type_name => {
                for a in args {
                    if a.name.as_deref() == Some(field)
                        && let ExprKind::Name(n) = &a.value.kind
                    {
                        found = index(n);
                    }
                }
            }
            ExprKind::Assign { target, value, op } if op == "=" => {
                // `this.keys = keys`, or `keys = gen` where no parameter is called `keys`.
                let to_field = match &target.kind {
                    ExprKind::Field { receiver, name } => {
                        name == field
                            && matches!(&receiver.kind, ExprKind::Name(r) if r == "this" || r == "self")
                    }
                    ExprKind::Name(n) => n == field && index(n).is_none(),
                    _ => false,
                };
                // `Objects.requireNonNull(keys, "keys")`, Guava's `checkNotNull(keys)`: the same
                // value.
                let value = match &value.kind {
                    ExprKind::Call { name, args, .. }
                        if matches!(args.len(), 1 | 2)
                            && matches!(name.as_str(), "requireNonNull" | "checkNotNull") =>
                    {
                        &args[0].value
                    }
                    _ => value,
                };
                if to_field && let ExprKind::Name(n) = &value.kind {
                    found = index(n);
                }
            }
            _ => {}
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The constructions of a type are read from the files that write its name, and only
    /// those of that type are kept.
    #[test]
    fn constructions_are_read_where_the_type_is_named() {
        let p = crate::project::parsed(&[
            (
                "Wire.java",
                "class Wire {\n  KeyInterceptor k = new KeyInterceptor(() -> java.util.UUID.randomUUID().toString());\n  Other o = new Other(() -> 1);\n}",
            ),
            (
                "Plain.java",
                "class Plain {\n  Runnable r = new Thread(() -> {});\n}",
            ),
        ]);
        let found = constructions_of(&p, "KeyInterceptor");
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].unit, found[0].arity, found[0].lambdas.len()),
            (0, 1, 1)
        );
        assert!(p.units[1].parse_if_done().is_none(), "Plain.java was read");
        assert_eq!(constructions_of(&p, "Other").len(), 1);
    }
}
