//! The scanned files and the project-wide index the rules query: functions by name, types by
//! name (for supertypes declared in other files), string constants, and where interceptor
//! classes are registered.

use crate::facts::{
    Binding, Expr, ExprKind, FileFacts, FnId, Function, Lang, Span, Text, TypeId, simple_name,
};
use crate::hash::{HashMap, HashSet};
use crate::source::SourceFile;
pub use crate::walk::{held_lambda, walk_expr, walk_stmts};
use rayon::prelude::*;

/// Call name -> (caller, call span) in one file. Names as in the facts: cloning one is a copy,
/// not an allocation, for names of up to 24 bytes.
type CallIndex = HashMap<Text, Vec<(FnId, Span)>>;

/// The calls of one name in the project: (function it is written in, call span).
pub type Calls = std::sync::Arc<[(FnRef, Span)]>;

/// One source file: its declarations (from the lexical outline), and its facts, parsed the
/// first time an analysis asks for them.
/// What every suppression written in a file holds (`// idemlint:ignore`,
/// `@Suppress("idemlint:IDEM001")`; read by [`crate::suppress`]).
pub const DIRECTIVE_MARKER: &str = "idemlint:";

pub struct Unit {
    pub src: SourceFile,
    pub lang: Lang,
    /// Its declarations, which the index is built from.
    decls: crate::decls::Decls,
    /// Its string literals: the gates that look for words in strings read them without the
    /// text.
    literals: crate::literals::Literals,
    /// Its identifiers, one per line, until the project's name index takes them.
    names: Box<str>,
    /// It writes a `\u` escape (which may spell a name).
    escapes: bool,
    /// Its text holds `idemlint:` (it may hold a suppression).
    directives: bool,
    /// The digest of all the above ([`outline_digest`]).
    digest: u128,
    /// (Boxed: most units are never parsed.)
    parse: std::sync::OnceLock<Box<crate::decls::Parse>>,
    /// Some thread has started its parse.
    parsing: std::sync::atomic::AtomicBool,
    /// A test source (`src/test/**`, `*Test.java`, `tests/**`), checked with `--include-tests`.
    pub is_test: bool,
}

impl Unit {
    /// A file read: outlined now, parsed on demand.
    pub fn new(src: SourceFile, lang: Lang, is_test: bool) -> Unit {
        let (lexical, directives, digest) = outlined(lang, src.text());
        Unit {
            decls: lexical.decls,
            literals: lexical.literals,
            names: lexical.names,
            escapes: lexical.escapes,
            directives,
            digest,
            src,
            lang,
            parse: std::sync::OnceLock::new(),
            parsing: Default::default(),
            is_test,
        }
    }

    /// A file that is not analysed (too large): it declares nothing and holds no facts.
    pub fn empty(src: SourceFile, lang: Lang, is_test: bool) -> Unit {
        Unit {
            src,
            lang,
            decls: crate::decls::Decls::default(),
            literals: Default::default(),
            names: Box::default(),
            escapes: false,
            directives: false,
            digest: 0,
            parse: std::sync::OnceLock::from(Box::default()),
            parsing: Default::default(),
            is_test,
        }
    }

    /// The digest of its outline if that is all the run learnt of it: its text was let go and
    /// never read again, and it was never parsed. Another text with the same digest would
    /// have given the run the same answers.
    pub fn outline_only(&self) -> Option<u128> {
        (self.src.released_unread() && self.parse.get().is_none()).then_some(self.digest)
    }

    /// May it hold a suppression (its text holds [`DIRECTIVE_MARKER`])?
    pub fn may_hold_directives(&self) -> bool {
        self.directives
    }

    /// What it declares, as the project index files it.
    pub fn decls(&self) -> &crate::decls::Decls {
        &self.decls
    }

    /// The text of each of its string literals (quotes included), in order.
    pub fn string_literals(&self) -> impl Iterator<Item = &str> {
        self.literals.iter()
    }

    /// May a string literal of its code hold one of the words of `needles`?
    pub fn may_hold_in_strings(&self, needles: &crate::needles::Needles) -> bool {
        needles.may_contain_in_strings(self.lang, self.literals.text(), self.literals.ranges())
    }

    /// [`Self::may_hold_in_strings`], counting a word only where `stands(start, end)` holds of
    /// its byte range ([`crate::needles::Needles::may_contain_in_strings_where`]).
    pub fn may_hold_in_strings_where(
        &self,
        needles: &crate::needles::Needles,
        stands: impl Fn(&str, usize, usize) -> bool,
    ) -> bool {
        let lits = &self.literals;
        needles.may_contain_in_strings_where(self.lang, lits.text(), lits.ranges(), stands)
    }

    /// May its code call a name `pred` accepts with an argument
    /// ([`crate::lex::Lexed::may_call_with_args`]; lexed again, so ask only of files whose code
    /// writes such a name)? A file whose escapes may spell any name may.
    pub fn may_call_with_args(&self, pred: impl Fn(&str) -> bool) -> bool {
        self.escapes
            || crate::lex::lex(self.lang, self.src.text()).may_call_with_args(self.src.text(), pred)
    }

    /// Its imports, as the facts write them (from the outline: no parse).
    pub fn imports(&self) -> &crate::decls::Imports {
        &self.decls.imports
    }

    /// The file's facts, parsed now if no analysis asked for them before (threads asking at
    /// once share one parse).
    pub fn facts(&self) -> &FileFacts {
        &self.parsed().facts
    }

    /// Its parse, done now if not before.
    pub fn parsed(&self) -> &crate::decls::Parse {
        if let Some(p) = self.parse.get() {
            return p;
        }
        // A rayon thread that finds another parsing this file runs other waiting work
        // meanwhile instead of blocking (a blocked thread takes no part in the parallel loops
        // the other thread may be in). With nothing else to run, or outside rayon, it waits
        // for the parse (or, should that parse have panicked, parses the file itself).
        if self.parsing.swap(true, std::sync::atomic::Ordering::AcqRel) {
            while self.parse.get().is_none() && rayon::yield_now() == Some(rayon::Yield::Executed) {
            }
        }
        self.parse.get_or_init(|| {
            Box::new(crate::conform::parse(
                self.lang,
                self.src.text(),
                &self.decls,
            ))
        })
    }

    /// Its parse, if some analysis asked for it.
    pub fn parse_if_done(&self) -> Option<&crate::decls::Parse> {
        self.parse.get().map(|p| &**p)
    }
}

/// What a unit keeps of `text` before any parse: its outline, whether it may hold a
/// suppression, and their digest.
fn outlined(lang: Lang, text: &str) -> (crate::decls::Lexical, bool, u128) {
    let lexical = crate::decls::declared(lang, text);
    let directives = text.contains(DIRECTIVE_MARKER);
    let digest = crate::hash::digest128(&(&lexical, directives));
    (lexical, directives, digest)
}

/// The digest of everything a run learns of `text` (a file in `lang`) when it never parses
/// it nor reads it again ([`Unit::outline_only`]): its declarations, identifiers and string
/// literals (identifiers in the order first written), whether it writes a `\u` escape or a
/// suppression marker. An edit that leaves it the same (a comment, a changed number, white
/// space) changes no answer about any file.
pub fn outline_digest(lang: Lang, text: &str) -> u128 {
    outlined(lang, text).2
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnRef {
    pub unit: usize,
    pub f: FnId,
}

/// Project functions a call or reference may run, as remembered by the analyses' memo
/// tables and handed to their callers.
pub type Targets = std::rc::Rc<[FnRef]>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeRef {
    pub unit: usize,
    pub t: TypeId,
}

/// Project-wide lookups, built once after all files are lowered.
#[derive(Default)]
pub struct Index {
    fns_by_name: crate::name_map::NameMap<FnRef>,
    /// Methods by name and owner type simple name; a companion object's methods are also
    /// filed under the enclosing type.
    methods: crate::methods::Methods<FnRef>,
    types_by_name: crate::name_map::NameMap<TypeRef>,
    /// Simple name -> every string literal a field/constant of that name is initialised with.
    constants: HashMap<String, Vec<String>>,
    /// Simple name -> constants it is initialised from (`A = B`, `A = from_static(B)`).
    const_aliases: HashMap<String, Vec<String>>,
}

/// Which files a call to one function may be written in ([`Project::may_call_from`]).
pub enum MayCall {
    Anywhere,
    In {
        /// Per unit: does its code name the function's owner or a supertype of it (or is it
        /// the function's own file)?
        naming: Vec<bool>,
        /// The build module (or Rust crate) whose every file may call it by name alone.
        root: Option<String>,
    },
}

impl MayCall {
    /// May a call in unit `u` resolve to the function?
    pub fn may_call(&self, p: &Project, u: usize) -> bool {
        match self {
            MayCall::Anywhere => true,
            MayCall::In { naming, root } => {
                naming[u]
                    || root
                        .as_deref()
                        .is_some_and(|r| p.root_of(u).is_some_and(|(o, _)| o == r))
            }
        }
    }
}

pub struct Project {
    pub units: Vec<Unit>,
    pub index: Index,
    /// Per unit: the lambdas and local functions written directly in each function (read from
    /// the facts on first use).
    children: Vec<std::sync::OnceLock<HashMap<FnId, Vec<FnId>>>>,
    /// Per unit: the names of its bindings (locals, fields, file-level values) initialised
    /// with a lambda, wrapped or not (read from the facts on first use).
    lambda_names: Vec<std::sync::OnceLock<HashSet<String>>>,
    /// Type simple name -> names of the calls it is passed to (`addNetworkInterceptor`), read
    /// on first use from the files that name a registering call.
    registrations: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// Functions that may take a key parameter, read on first use.
    key_params: std::sync::OnceLock<crate::key_params::KeyParams>,
    /// Per unit: its build module root and module path ([`module_root`] of its path).
    roots: Vec<Option<(String, String)>>,
    /// Per unit and type: simple names of all supertypes, transitively.
    supers: Vec<Vec<Vec<Text>>>,
    /// Supertype simple name -> simple names of project types below it, transitively.
    subtypes: HashMap<Text, Vec<Text>>,
    /// The same, as subtype -> position in that list (for types with many subtypes).
    subtype_pos: HashMap<Text, HashMap<Text, usize>>,
    /// Field or file-level binding name -> where it is declared: (unit, owning type or `None`
    /// for a file-level binding, index in that list).
    fields_by_name: crate::name_map::NameMap<(usize, Option<TypeId>, usize)>,
    /// Identifier -> the units whose code writes it.
    names: crate::name_map::NameMap<u32>,
    /// Units that may spell a name through `\u` escapes: they may hold any name.
    any_name: Vec<u32>,
    /// `--exhaustive`: every file may hold anything (the name index and needles say yes).
    gates_open: bool,
    /// Per unit, on first use: its calls and method references by name.
    unit_calls: Vec<std::sync::OnceLock<CallIndex>>,
    /// Call name -> every call of it in the project, kept once asked.
    calls_by_name: std::sync::Mutex<HashMap<String, Calls>>,
    /// Text of configuration files next to the sources (`application.properties`,
    /// `application.yml`, `quartz.properties`) that the coordination rules read.
    pub config_texts: Vec<String>,
}

impl Project {
    pub fn new(mut units: Vec<Unit>) -> Project {
        // The three tables read only the units: built side by side.
        let ((names, any_name), (index, fields_by_name)) = rayon::join(
            || name_index(&units),
            || rayon::join(|| Index::build(&units), || fields_by_name(&units)),
        );
        // The name index has taken the units' names.
        for unit in &mut units {
            unit.names = Box::default();
        }
        let children = units.iter().map(|_| std::sync::OnceLock::new()).collect();
        let lambda_names = units.iter().map(|_| std::sync::OnceLock::new()).collect();
        let unit_calls = units.iter().map(|_| std::sync::OnceLock::new()).collect();
        let roots = units.par_iter().map(|u| module_root(&u.src.path)).collect();
        let mut project = Project {
            units,
            index,
            children,
            lambda_names,
            registrations: std::sync::OnceLock::new(),
            key_params: std::sync::OnceLock::new(),
            roots,
            supers: Vec::new(),
            subtypes: HashMap::default(),
            subtype_pos: HashMap::default(),
            config_texts: Vec::new(),
            unit_calls,
            names,
            any_name,
            gates_open: false,
            calls_by_name: Default::default(),
            fields_by_name,
        };
        project.supers = (0..project.units.len())
            .into_par_iter()
            .map(|u| {
                (0..project.units[u].decls().types.len())
                    .map(|t| {
                        let mut out: Vec<Text> = Vec::new();
                        for (s, _, _) in project.supertype_origins(TypeRef { unit: u, t }) {
                            if !out.iter().any(|o| *o == s) {
                                out.push(Text::from(s));
                            }
                        }
                        out
                    })
                    .collect()
            })
            .collect();
        let mut subtypes: HashMap<Text, Vec<Text>> = HashMap::default();
        for (u, unit) in project.units.iter().enumerate() {
            for (t, ty) in unit.decls().types.iter().enumerate() {
                let Some(name) = ty.name.as_deref().map(simple_name) else {
                    continue;
                };
                for sup in &project.supers[u][t] {
                    let v = subtypes.entry(sup.clone()).or_default();
                    if !v.iter().any(|x| x == name) {
                        v.push(Text::from(name));
                    }
                }
            }
        }
        // Asked only of a type with more subtypes than owners of a method (at least one).
        project.subtype_pos = subtypes
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(k, v)| {
                let pos = v.iter().enumerate().map(|(i, s)| (s.clone(), i)).collect();
                (k.clone(), pos)
            })
            .collect();
        project.subtypes = subtypes;
        project
    }

    pub fn func(&self, r: FnRef) -> &Function {
        &self.units[r.unit].facts().functions[r.f]
    }

    /// Unit `u`'s build module root and module path ([`module_root`] of its path).
    pub fn root_of(&self, u: usize) -> Option<(&str, &str)> {
        self.roots[u]
            .as_ref()
            .map(|(r, m)| (r.as_str(), m.as_str()))
    }

    /// Does `r` have a body, and which type is it a member of? From the declarations (no
    /// parse), or for a function only the facts have, from the facts.
    pub fn body_and_owner(&self, r: FnRef) -> (bool, Option<TypeId>) {
        match self.units[r.unit].decls().functions.get(r.f) {
            Some(d) => (d.has_body, d.owner),
            None => (self.func(r).has_body, self.func(r).owner),
        }
    }

    /// The name of type `t` of unit `u` (from the declarations, as [`Self::body_and_owner`]).
    pub fn type_name(&self, u: usize, t: TypeId) -> Option<&str> {
        let unit = &self.units[u];
        match unit.decls().types.get(t) {
            Some(d) => d.name.as_deref(),
            None => unit.facts().types[t].name.as_deref(),
        }
    }

    /// Project functions a call `name(args)` may resolve to: same name and a parameter count
    /// that fits (Kotlin/Rust default parameters are not modelled, so arity must match unless
    /// the callee has more parameters than the call has arguments and the call uses named
    /// arguments).
    pub fn resolve(&self, name: &str, arity: usize) -> impl Iterator<Item = FnRef> + '_ {
        self.index
            .fns_by_name
            .get(name)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |r| self.arity_ok(*r, arity))
    }

    /// Does a call with `arity` arguments fit `r`? Kotlin parameters may have defaults (not
    /// modelled), so a Kotlin function with more parameters fits too. Read from the
    /// declarations (no parse), or for a function only the facts have, from the facts.
    pub fn arity_ok(&self, r: FnRef, arity: usize) -> bool {
        let unit = &self.units[r.unit];
        let (n, varargs) = match unit.decls().functions.get(r.f) {
            Some(d) => (d.params, d.varargs),
            None => {
                let f = self.func(r);
                let n = f.params.iter().filter(|p| p.name != "self").count();
                (n, crate::outline::varargs(&f.params, unit.src.text()))
            }
        };
        n == arity || (n > arity && unit.lang == Lang::Kotlin) || (arity + 1 >= n && varargs)
    }

    /// Methods named `name` with `arity` parameters of type `ty` or of a project type that
    /// extends / implements it (an override or implementation may be what runs).
    pub fn resolve_on_type(&self, ty: &str, name: &str, arity: usize) -> Vec<FnRef> {
        let mut out: Vec<FnRef> = Vec::new();
        let methods = &self.index.methods;
        let owners = methods.owner_count(name);
        if owners == 0 {
            return out;
        }
        let subs: &[Text] = self.subtypes.get(ty).map_or(&[], |v| v.as_slice());
        let mut add = |v: &[(u32, FnRef)]| {
            for &(_, r) in v {
                if self.arity_ok(r, arity) && !out.contains(&r) {
                    out.push(r);
                }
            }
        };
        add(methods.on(name, ty));
        // A widely implemented type (`Runnable`, `Exception`) has many subtypes but few of
        // them declare this method: walk whichever side is smaller.
        if subs.len() <= owners {
            for sub in subs {
                add(methods.on(name, sub));
            }
        } else {
            // Keep the order of `subtypes` (the order callers see results in).
            let pos = &self.subtype_pos[ty];
            let mut hits: Vec<(usize, FnRef)> = methods
                .named(name)
                .filter_map(|(o, r)| pos.get(o).map(|&i| (i, r)))
                .collect();
            hits.sort_by_key(|h| h.0);
            for (_, r) in hits {
                if self.arity_ok(r, arity) && !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Functions named `name` with `arity` parameters declared in unit `u`.
    pub fn resolve_in_unit(&self, u: usize, name: &str, arity: usize) -> Vec<FnRef> {
        self.fns_named_in(u, name)
            .iter()
            .copied()
            .filter(|r| self.arity_ok(*r, arity))
            .collect()
    }

    /// When several project functions are named `name`, the one a call from `unit` names: the
    /// only one in the caller's build module (a Rust crate, a Maven or Gradle module: two
    /// copies of a module in one repository), or, in Rust, the one the caller's `use` brings in
    /// (`use crate::v2::lock::acquire_lock`, `use super::lock::acquire_lock`). `None` when that
    /// does not single one out.
    pub fn declared_for(&self, unit: usize, name: &str) -> Option<FnRef> {
        let all = self.index.fns_by_name.get(name)?;
        let (root, _) = self.root_of(unit)?;
        let mine: Vec<FnRef> = all
            .iter()
            .copied()
            .filter(|r| self.root_of(r.unit).is_some_and(|(o, _)| o == root))
            .collect();
        if let [only] = mine[..] {
            return Some(only);
        }
        if self.units[unit].lang != Lang::Rust {
            return None;
        }
        let module = self.imported_module(unit, name)?;
        let hits: Vec<FnRef> = mine
            .into_iter()
            .filter(|r| {
                self.root_of(r.unit).is_some_and(|(_, m)| {
                    m == module || m.strip_suffix("/mod") == Some(module.as_str())
                })
            })
            .collect();
        match hits[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The function `name` of Rust module `module` (`settlement`, `crate::jobs`,
    /// `super::lock`) as seen from `unit`, in the caller's crate: the one function of that name
    /// in a file of that module (`settlement.rs`, `settlement/mod.rs`, `jobs/settlement.rs`).
    pub fn in_module(&self, unit: usize, module: &str, name: &str) -> Option<FnRef> {
        let (root, _) = self.root_of(unit)?;
        let last = module.rsplit("::").next()?;
        if last.is_empty()
            || last.starts_with(char::is_uppercase)
            || matches!(last, "self" | "super" | "crate")
        {
            return None;
        }
        let hits: Vec<FnRef> = self
            .index
            .fns_by_name
            .get(name)?
            .iter()
            .copied()
            .filter(|r| {
                self.body_and_owner(*r).1.is_none()
                    && self.root_of(r.unit).is_some_and(|(o, m)| {
                        let m = m.strip_suffix("/mod").unwrap_or(m);
                        o == root
                            && (m == last || m.strip_suffix(last).is_some_and(|p| p.ends_with('/')))
                    })
            })
            .collect();
        match hits[..] {
            [only] => Some(only),
            _ => None,
        }
    }

    /// The module path (as `a/lock`, within the crate's `src/`) that a Rust unit's
    /// `use crate::a::lock::name` / `use super::lock::name` / `use self::lock::name` imports
    /// `name` from.
    fn imported_module(&self, unit: usize, name: &str) -> Option<String> {
        let u = &self.units[unit];
        let (_, here) = self.root_of(unit)?;
        // The caller's own module directory: `src/a/b.rs` and `src/a/b/mod.rs` are `a/b`.
        let here = here.strip_suffix("/mod").unwrap_or(here).to_string();
        let tail = format!("::{name}");
        let path = u
            .imports()
            .iter()
            .find_map(|i| i.strip_suffix(tail.as_str()))?;
        let mut parts = path.split("::");
        let mut module: Vec<&str> = match parts.next()? {
            "crate" => Vec::new(),
            "self" => here
                .split('/')
                .filter(|s| !s.is_empty() && *s != "main" && *s != "lib")
                .collect(),
            "super" => {
                let mut m: Vec<&str> = here.split('/').filter(|s| !s.is_empty()).collect();
                m.pop();
                m
            }
            _ => return None,
        };
        for p in parts {
            match p {
                "super" => {
                    module.pop();
                }
                p => module.push(p),
            }
        }
        Some(module.join("/"))
    }

    /// How many project functions are named `name` (any arity).
    /// Project types with this simple name.
    pub fn types_named(&self, name: &str) -> &[TypeRef] {
        self.index.types_by_name.named(name)
    }

    /// Every field and file-level binding called `name`: (unit, binding).
    pub fn fields_named(
        &self,
        name: &str,
    ) -> impl Iterator<Item = (usize, &crate::facts::Binding)> {
        self.fields_by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(move |&(u, t, i)| Some((u, self.binding_at(u, t, i, name)?)))
    }

    /// Does a project type called `type_name` declare a field (or record component) `field`?
    pub fn type_has_field(&self, type_name: &str, field: &str) -> bool {
        self.types_named(type_name).iter().any(|t| {
            self.units[t.unit].decls().types[t.t]
                .fields
                .iter()
                .any(|b| b.name == field)
        })
    }

    /// The one field or file-level binding called `name` in the project with an initialiser,
    /// if exactly one has one. The declarations say which have one, so only its file is read.
    pub fn only_initialised_field(&self, name: &str) -> Option<(usize, &crate::facts::Binding)> {
        let mut with_init =
            self.fields_by_name
                .get(name)
                .into_iter()
                .flatten()
                .filter(|&&(u, t, i)| {
                    let d = self.units[u].decls();
                    let list = match t {
                        Some(t) => d.types.get(t).map(|x| x.fields.as_slice()),
                        None => Some(d.globals.as_slice()),
                    };
                    list.and_then(|l| l.get(i)).is_some_and(|f| f.has_init)
                });
        let &(u, t, i) = with_init.next()?;
        if with_init.next().is_some() {
            return None;
        }
        let b = self.binding_at(u, t, i, name)?;
        b.init.is_some().then_some((u, b))
    }

    /// The `i`-th field of type `t` of unit `u` (or file-level binding when `t` is `None`),
    /// called `name`, from its facts; where the facts list it elsewhere, by name.
    fn binding_at(
        &self,
        u: usize,
        t: Option<TypeId>,
        i: usize,
        name: &str,
    ) -> Option<&crate::facts::Binding> {
        let f = self.units[u].facts();
        let list = match t {
            Some(t) => &f.types.get(t)?.fields,
            None => &f.globals,
        };
        list.get(i)
            .filter(|b| b.name == name)
            .or_else(|| list.iter().find(|b| b.name == name))
    }

    /// The types declaring a field (or record component) called `name`: (unit, type).
    pub fn field_owners(&self, name: &str) -> impl Iterator<Item = (usize, TypeId)> {
        self.fields_by_name
            .get(name)
            .into_iter()
            .flatten()
            .filter_map(|&(u, t, _)| t.map(|t| (u, t)))
    }

    /// Every named (non-lambda) project function called `name`.
    pub fn fns_named(&self, name: &str) -> &[FnRef] {
        self.index.fns_by_name.named(name)
    }

    /// Does file `u` import something under one of `prefixes` (`okhttp3`, `org.jobrunr`)?
    pub fn imports_any(&self, u: usize, prefixes: &[String]) -> bool {
        self.units[u]
            .imports()
            .iter()
            .any(|i| prefixes.iter().any(|pre| i.starts_with(pre.as_str())))
    }

    /// The named functions called `name` declared in unit `u`, in order (the project's list
    /// of them is in unit order).
    pub fn fns_named_in(&self, u: usize, name: &str) -> &[FnRef] {
        let all = self.fns_named(name);
        let start = all.partition_point(|r| r.unit < u);
        let end = start + all[start..].partition_point(|r| r.unit == u);
        &all[start..end]
    }

    /// Every call (or method reference) in the project named `name`: (function it is written
    /// in, call span), in file and function order. Only files whose code names it are read;
    /// the answer is kept for the next question.
    pub fn calls_named(&self, name: &str) -> Calls {
        let cache = || {
            self.calls_by_name
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(v) = cache().get(name) {
            return v.clone();
        }
        let per_unit: Vec<Vec<(FnRef, Span)>> = self
            .units_naming(name)
            .into_par_iter()
            .map(|u| {
                self.calls_named_in(u, name)
                    .iter()
                    .map(|&(f, span)| (FnRef { unit: u, f }, span))
                    .collect::<Vec<_>>()
            })
            .collect();
        let v: Calls = per_unit.into_iter().flatten().collect();
        cache().insert(name.to_string(), v.clone());
        v
    }

    /// The calls and method references named like `f` in the files where a call may resolve to
    /// `f` ([`Self::may_call_from`]): a superset of the calls the flow's resolution
    /// (`Flow::call_targets`, `Coord::method_ref_targets`) runs `f` from. Other files are not
    /// read.
    pub fn calls_that_may_run(&self, f: FnRef) -> Vec<(FnRef, Span)> {
        let Some(name) = self.func(f).name.as_deref() else {
            return Vec::new();
        };
        let from = self.may_call_from(f);
        let per_unit: Vec<Vec<(FnRef, Span)>> = self
            .units_naming(name)
            .into_par_iter()
            .filter(|&u| from.may_call(self, u))
            .map(|u| {
                self.calls_named_in(u, name)
                    .iter()
                    .map(|&(f, span)| (FnRef { unit: u, f }, span))
                    .collect::<Vec<_>>()
            })
            .collect();
        per_unit.into_iter().flatten().collect()
    }

    /// Where a call resolving to `f` can be written, read from the declarations and the name
    /// index alone (no file is parsed). The flow resolves a call by name:
    /// - on the caller's own type, a receiver's declared or constructed type, or the type a
    ///   path names (`Billing.charge(..)`), then on the types below it: such a call runs `f`
    ///   only if that type is `f`'s owner or one of its supertypes, and the caller's code
    ///   names it (its own declaration, a local's or field's declared type, a constructor);
    /// - in the caller's file;
    /// - as the only function of that name in the project, or in the caller's build module or
    ///   Rust crate (`Flow::unique`, `Project::declared_for`, `Project::in_module`); a method
    ///   reference takes any of two or fewer functions of the name.
    pub fn may_call_from(&self, f: FnRef) -> MayCall {
        // From the declarations when they list it (no parse).
        let name = match self.units[f.unit].decls().functions.get(f.f) {
            Some(d) => d.name.as_str(),
            None => self.func(f).name.as_deref().unwrap_or_default(),
        };
        if self.gates_open || self.count_named(name) <= 2 {
            return MayCall::Anywhere;
        }
        let root = self.root_of(f.unit).map(|(r, _)| r);
        // The only one of its name in its build module, or a Rust function outside any type
        // (`in_module`, an import of its module: a method is reached through its type, or by
        // its name alone when it is the only one).
        let in_root = root.as_ref().filter(|r| {
            self.units[f.unit].lang == Lang::Rust && self.body_and_owner(f).1.is_none()
                || self
                    .fns_named(name)
                    .iter()
                    .filter(|g| self.root_of(g.unit).is_some_and(|(o, _)| o == **r))
                    .count()
                    == 1
        });
        // The owner's names (a companion object's methods are filed under the enclosing type
        // too), then every supertype of a type of such a name.
        let mut types: Vec<String> = Vec::new();
        for (o, r) in self.index.methods.named(name) {
            if r == f && !types.iter().any(|t| t == o) {
                types.push(o.to_string());
            }
        }
        for i in 0..types.len() {
            for &t in self
                .index
                .types_by_name
                .get(&types[i])
                .into_iter()
                .flatten()
            {
                for s in self.all_supertypes(t) {
                    if !types.iter().any(|x| x == s) {
                        types.push(s.to_string());
                    }
                }
            }
        }
        let mut naming = vec![false; self.units.len()];
        for t in &types {
            for u in self.units_naming(t) {
                naming[u] = true;
            }
        }
        naming[f.unit] = true;
        MayCall::In {
            naming,
            root: in_root.map(|r| r.to_string()),
        }
    }

    /// The calls and method references named `name` written in unit `u`: (the function they
    /// are written in, the call's span).
    pub fn calls_named_in(&self, u: usize, name: &str) -> &[(FnId, Span)] {
        self.calls_in(u).get(name).map_or(&[], Vec::as_slice)
    }

    /// The calls and method references written in unit `u`, by name.
    fn calls_in(&self, u: usize) -> &CallIndex {
        self.unit_calls[u].get_or_init(|| {
            let mut m = CallIndex::default();
            for (f, func) in self.units[u].facts().functions.iter().enumerate() {
                walk_stmts(&func.body, &mut |e| {
                    if let ExprKind::Call { name, .. } | ExprKind::MethodRef { name, .. } = &e.kind
                    {
                        m.entry(name.clone()).or_default().push((f, e.span));
                    }
                });
            }
            m
        })
    }

    pub fn count_named(&self, name: &str) -> usize {
        self.index.fns_by_name.named(name).len()
    }

    /// String values a constant named `name` is declared with anywhere in the project.
    pub fn constant_values(&self, name: &str) -> &[String] {
        self.index
            .constants
            .get(simple_name(name))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Does a function called `name` hand a parameter on into a call naming idempotency
    /// (`options(key) { ..setIdempotencyKey(key) }`), or into such a function?
    pub fn passes_to_idem_call(&self, name: &str) -> bool {
        self.key_params().idem_passers.contains(name)
    }

    fn key_params(&self) -> &crate::key_params::KeyParams {
        self.key_params.get_or_init(|| {
            let files: Vec<_> = self
                .units
                .par_iter()
                .map(|u| crate::key_params::in_file(u.facts()))
                .collect();
            crate::key_params::KeyParams::join(files)
        })
    }

    /// May a function called `name` take an idempotency key as a parameter?
    pub fn has_key_params(&self, name: &str) -> bool {
        self.key_params().key_param_fns.contains(name)
    }

    /// The header names (literals or constant names) that functions called `name` put a
    /// parameter under, as they are.
    pub fn header_params(&self, name: &str) -> &[String] {
        self.key_params()
            .header_param_fns
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The calls a type called `type_name` is handed to that some catalogue entry lists as a
    /// registration (`addNetworkInterceptor`).
    pub fn registrations_of(&self, type_name: &str, cat: &crate::catalog::Catalog) -> &[String] {
        self.registrations
            .get_or_init(|| {
                let calls = crate::registrations::registering_calls(cat);
                // A registering call's name is written in the code of the file that makes it,
                // and so is the name of the type it registers (constructed, or the declared
                // type of what is passed): only a project type below an interceptor's
                // supertype is ever asked about.
                let types = self.types_below(&cat.interceptor_supertypes());
                let registered = self.units_naming_any(|n| types.contains(n));
                let mut naming = self.units_naming_any(|n| calls.contains(&n));
                for (n, r) in naming.iter_mut().zip(registered) {
                    *n &= r;
                }
                let per_unit: Vec<Vec<(String, String)>> = self
                    .units
                    .par_iter()
                    .zip(naming)
                    .map(|(u, naming)| {
                        if calls.is_empty() || !naming {
                            return Vec::new();
                        }
                        crate::registrations::in_file(u.facts(), &calls)
                    })
                    .collect();
                let mut m: HashMap<String, Vec<String>> = HashMap::default();
                for (ty, call) in per_unit.into_iter().flatten() {
                    let v = m.entry(ty).or_default();
                    if !v.contains(&call) {
                        v.push(call);
                    }
                }
                m
            })
            .get(type_name)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Simple names of all supertypes of a type, following project classes transitively
    /// (`class StripeKeys : BaseKeyInterceptor()` where the base implements `Interceptor`).
    pub fn all_supertypes(&self, r: TypeRef) -> &[Text] {
        self.supers
            .get(r.unit)
            .and_then(|u| u.get(r.t))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The simple names of the project's named types with one of `supers` among their
    /// supertypes (transitively, from the declarations: no file is parsed).
    pub fn types_below(&self, supers: &HashSet<&str>) -> HashSet<&str> {
        let mut out = HashSet::default();
        for (u, unit) in self.units.iter().enumerate() {
            for (t, ty) in unit.decls().types.iter().enumerate() {
                if let Some(name) = ty.name.as_deref()
                    && self
                        .all_supertypes(TypeRef { unit: u, t })
                        .iter()
                        .any(|s| supers.contains(s.as_str()))
                {
                    out.insert(simple_name(name));
                }
            }
        }
        out
    }

    /// Every supertype of a type, transitively through project types: (simple name, name as
    /// written, the unit whose declaration names it — its imports say which `Interceptor`).
    pub fn supertype_origins(&self, r: TypeRef) -> Vec<(String, String, usize)> {
        let mut out = Vec::new();
        let mut seen = HashSet::default();
        let mut stack = vec![r];
        while let Some(t) = stack.pop() {
            if !seen.insert(t) || seen.len() > 64 {
                continue;
            }
            for written in self.written_supertypes(t) {
                let s = simple_name(written).to_string();
                if let Some(defs) = self.index.types_by_name.get(&s) {
                    stack.extend(defs.iter().copied());
                }
                out.push((s, written.clone(), t.unit));
            }
        }
        out
    }

    /// The supertypes of a type as written: from its declaration, or for a type only the facts
    /// have (no outline lists it), from the facts.
    fn written_supertypes(&self, r: TypeRef) -> &[String] {
        let unit = &self.units[r.unit];
        match unit.decls().types.get(r.t) {
            Some(t) => &t.supertypes,
            None => unit
                .facts()
                .types
                .get(r.t)
                .map_or(&[], |t| t.supertypes.as_slice()),
        }
    }

    /// The type `f` is written in: its owner, an enclosing function's owner, or (for a lambda
    /// in a field initialiser) the innermost type whose body contains it.
    pub fn enclosing_type(&self, f: FnRef) -> Option<TypeId> {
        if let Some(t) = self.ancestors(f).find_map(|a| self.func(a).owner) {
            return Some(t);
        }
        let span = self.func(f).span;
        self.units[f.unit]
            .facts()
            .types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.span.contains(span))
            .min_by_key(|(_, t)| t.span.len())
            .map(|(i, _)| i)
    }

    /// The lambda a local (of `enclosing` or a function around it), a field of the enclosing
    /// type, or else the one file-level value or field of that name in unit `u` is initialised
    /// with. With `wrapped`, a lambda inside a SAM constructor or a cast counts too
    /// (`val keys = Interceptor { .. }`).
    pub fn lambda_bound_to(
        &self,
        u: usize,
        enclosing: Option<FnRef>,
        name: &str,
        wrapped: bool,
    ) -> Option<FnId> {
        if !self.lambda_names_in(u).contains(name) {
            return None;
        }
        let facts = &self.units[u].facts();
        let as_lambda = |e: &Expr| held_lambda(e, wrapped);
        if let Some(f) = enclosing {
            for a in self.ancestors(f) {
                let mut found = None;
                crate::walk::walk_lets(&self.func(a).body, &mut |b| {
                    if found.is_none() && b.name == name {
                        found = b.init.as_ref().and_then(as_lambda);
                    }
                });
                if found.is_some() {
                    return found;
                }
            }
            if let Some(owner) = self.enclosing_type(f)
                && let Some(b) = facts.types[owner].fields.iter().find(|b| b.name == name)
            {
                return b.init.as_ref().and_then(as_lambda);
            }
        }
        // A file-level binding, or (a field initialiser, whose type is not tracked) the one
        // field of that name in the file.
        let mut holders = facts
            .globals
            .iter()
            .chain(facts.types.iter().flat_map(|t| t.fields.iter()))
            .filter(|b| b.name == name);
        let first = holders.next()?;
        if holders.next().is_some() {
            return None;
        }
        first.init.as_ref().and_then(as_lambda)
    }

    /// The names of unit `u`'s bindings that [`Self::lambda_bound_to`] may find a lambda in.
    fn lambda_names_in(&self, u: usize) -> &HashSet<String> {
        self.lambda_names[u].get_or_init(|| {
            let facts = self.units[u].facts();
            let mut out = HashSet::default();
            let mut add = |b: &crate::facts::Binding| {
                if b.init.as_ref().and_then(|e| held_lambda(e, true)).is_some() {
                    out.insert(b.name.to_string());
                }
            };
            for f in &facts.functions {
                crate::walk::walk_lets(&f.body, &mut add);
            }
            facts
                .globals
                .iter()
                .chain(facts.types.iter().flat_map(|t| t.fields.iter()))
                .for_each(add);
            out
        })
    }

    /// `f` and every lambda / local function nested in it, at any depth.
    pub fn with_nested(&self, f: FnRef) -> Vec<FnRef> {
        let mut out = vec![f];
        let mut i = 0;
        while i < out.len() {
            let g = out[i];
            if let Some(ch) = self.children_in(g.unit).get(&g.f) {
                out.extend(ch.iter().map(|&c| FnRef { unit: g.unit, f: c }));
            }
            i += 1;
        }
        out
    }

    /// Turns the file gates off (`--exhaustive`): every name or word may be in every file, so
    /// every scan reads every file, as before the gates.
    pub fn open_gates(&mut self) {
        self.gates_open = true;
    }

    /// Are the file gates off (`--exhaustive`)?
    pub fn gates_open(&self) -> bool {
        self.gates_open
    }

    /// Parses these units now, in parallel (a loop that reads them one by one afterwards does
    /// not parse them on one thread).
    pub fn prefetch(&self, units: impl Iterator<Item = usize>) {
        let units: Vec<usize> = units.collect();
        units.into_par_iter().for_each(|u| {
            self.units[u].facts();
        });
    }

    /// The units whose code may hold the name `name` (a call of it, a declaration, a
    /// reference), in order: those that write it, those whose escapes may spell it, and for a
    /// name the front ends make up (`invoke`, `Companion`), every unit.
    pub fn units_naming(&self, name: &str) -> Vec<usize> {
        if self.gates_open || crate::lex::MADE_UP_NAMES.contains(&name) {
            return (0..self.units.len()).collect();
        }
        self.name_lookup(name)
    }

    /// [`Self::units_naming`], with the gates open too: for a filter that both modes apply
    /// (a name written in the code is the only way to construct, call or assign what it
    /// names). A path (`a.b.Psp`, `x::Psp`) is looked for by its last segment; what is not a
    /// name at all may be anywhere.
    pub fn units_writing_name(&self, name: &str) -> Vec<usize> {
        let last = name.rsplit(['.', ':']).next().unwrap_or(name);
        let is_name = !last.is_empty()
            && last
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
        if !is_name || crate::lex::MADE_UP_NAMES.contains(&last) {
            return (0..self.units.len()).collect();
        }
        self.name_lookup(last)
    }

    /// The units whose code writes `name` or may spell it with escapes, in order.
    fn name_lookup(&self, name: &str) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .names
            .get(name)
            .into_iter()
            .flatten()
            .chain(&self.any_name)
            .map(|&u| u as usize)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Per unit: which of `words` (at most 128) its code may write, as bits (bit `i` for
    /// `words[i]`; every bit with the gates open, for a unit whose escapes may spell any name,
    /// and for a name the facts may make up).
    pub fn units_naming_which(&self, words: &[&str]) -> Vec<u128> {
        assert!(words.len() <= 128, "at most 128 words");
        let all = match words.len() {
            128 => u128::MAX,
            n => (1u128 << n) - 1,
        };
        if self.gates_open {
            return vec![all; self.units.len()];
        }
        let mut out = vec![0u128; self.units.len()];
        for (i, w) in words.iter().enumerate() {
            let bit = 1u128 << i;
            if crate::lex::MADE_UP_NAMES.contains(w) {
                out.iter_mut().for_each(|x| *x |= bit);
                continue;
            }
            for &u in self.names.get(w).into_iter().flatten() {
                out[u as usize] |= bit;
            }
        }
        for &u in &self.any_name {
            out[u as usize] = all;
        }
        out
    }

    /// Per unit: may its code hold a name `pred` accepts? Each distinct name of the project is
    /// asked once.
    pub fn units_naming_any(&self, pred: impl Fn(&str) -> bool + Sync) -> Vec<bool> {
        let mut out = vec![false; self.units.len()];
        if self.gates_open || crate::lex::MADE_UP_NAMES.iter().any(|n| pred(n)) {
            out.iter_mut().for_each(|x| *x = true);
            return out;
        }
        let hits: Vec<&[u32]> = self
            .names
            .par_iter()
            .filter(|(n, _)| pred(n))
            .map(|(_, v)| v)
            .collect();
        for &u in hits.into_iter().flatten().chain(&self.any_name) {
            out[u as usize] = true;
        }
        out
    }

    /// Per unit: may its code call a name `pred` accepts with an argument
    /// ([`Unit::may_call_with_args`])? The files naming one are lexed again, in parallel.
    pub fn units_calling_with_args(&self, pred: impl Fn(&str) -> bool + Sync) -> Vec<bool> {
        let naming = self.units_naming_any(&pred);
        if self.gates_open {
            return naming;
        }
        naming
            .into_par_iter()
            .enumerate()
            .map(|(u, n)| n && self.units[u].may_call_with_args(&pred))
            .collect()
    }

    /// May a string literal of unit `u`'s code hold one of the words of `needles` (yes for
    /// every unit with the gates open)?
    pub fn units_with_strings_holding_one(
        &self,
        u: usize,
        needles: &crate::needles::Needles,
    ) -> bool {
        self.gates_open || self.units[u].may_hold_in_strings(needles)
    }

    /// Per unit, in parallel: [`Unit::may_hold_in_strings_where`].
    pub fn units_with_strings_where(
        &self,
        needles: &crate::needles::Needles,
        stands: impl Fn(&str, usize, usize) -> bool + Sync,
    ) -> Vec<bool> {
        self.units
            .par_iter()
            .map(|u| self.gates_open || u.may_hold_in_strings_where(needles, &stands))
            .collect()
    }

    /// Per unit, in parallel: may its code (outside comments) write one of `words`, in any
    /// case? A word is written in an identifier or in a string literal: each distinct
    /// identifier of the project is asked once (for the word without the punctuation around
    /// it: `get_lock` for `get_lock(`; not for a word with a quote in it, `nx"`), then every
    /// file's string literals.
    pub fn units_writing(&self, words: &[&str]) -> Vec<bool> {
        // A word with a quote or a template's `$` in it (`nx"`) is only ever in a string.
        let cores: Vec<&str> = words
            .iter()
            .filter(|w| !w.contains(['"', '\'', '`', '$']))
            .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
            .filter(|w| !w.is_empty())
            .collect();
        let in_names = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&cores)
            .ok();
        let naming = self.units_naming_any(|n| in_names.as_ref().is_none_or(|a| a.is_match(n)));
        let needles = crate::needles::Needles::new(words.iter().copied());
        self.units
            .par_iter()
            .zip(naming)
            .map(|(u, n)| n || self.gates_open || u.may_hold_in_strings(&needles))
            .collect()
    }

    /// The lambdas and local functions written directly in each function of unit `u`.
    fn children_in(&self, u: usize) -> &HashMap<FnId, Vec<FnId>> {
        self.children[u].get_or_init(|| {
            let mut m: HashMap<FnId, Vec<FnId>> = HashMap::default();
            for (i, f) in self.units[u].facts().functions.iter().enumerate() {
                if let Some(parent) = f.parent {
                    m.entry(parent).or_default().push(i);
                }
            }
            m
        })
    }

    /// The outermost function around `f` (`f` itself when it is not nested).
    pub fn outermost(&self, f: FnRef) -> FnRef {
        self.ancestors(f).last().unwrap_or(f)
    }

    /// The chain of functions from `f` outwards through enclosing lambdas / local functions.
    pub fn ancestors(&self, r: FnRef) -> impl Iterator<Item = FnRef> + '_ {
        let mut cur = Some(r);
        let mut steps = 0;
        std::iter::from_fn(move || {
            let c = cur?;
            steps += 1;
            cur = if steps > 256 {
                None
            } else {
                self.func(c).parent.map(|p| FnRef { unit: c.unit, f: p })
            };
            Some(c)
        })
    }
}

impl Index {
    /// Every constant name with the string literals it is initialised with.
    pub fn constants(&self) -> impl Iterator<Item = (&String, &Vec<String>)> {
        self.constants.iter()
    }

    /// Every constant name with the constants it is initialised from.
    pub fn const_aliases(&self) -> impl Iterator<Item = (&String, &Vec<String>)> {
        self.const_aliases.iter()
    }

    /// The index of `units`' declarations.
    fn build(units: &[Unit]) -> Index {
        let fns = || {
            units.iter().enumerate().flat_map(|(u, unit)| {
                let decls = unit.decls();
                decls
                    .functions
                    .iter()
                    .enumerate()
                    .map(move |(i, f)| (decls, f, FnRef { unit: u, f: i }))
            })
        };
        let mut index = Index {
            fns_by_name: crate::name_map::NameMap::build(
                fns().map(|(_, f, r)| (f.name.as_str(), r)),
            ),
            // A method is filed under its type; a companion object's also under the type
            // enclosing it.
            methods: crate::methods::Methods::build(fns().flat_map(|(decls, f, r)| {
                let ty = f.owner.and_then(|o| decls.types.get(o));
                let own = ty.and_then(|t| t.name.as_deref());
                let enclosing = ty
                    .filter(|t| t.kind == crate::facts::TypeKind::Object)
                    .and_then(|t| t.parent)
                    .and_then(|p| decls.types.get(p))
                    .and_then(|p| p.name.as_deref());
                [own, enclosing]
                    .into_iter()
                    .flatten()
                    .map(move |o| (f.name.as_str(), simple_name(o), r))
            })),
            types_by_name: crate::name_map::NameMap::build(units.iter().enumerate().flat_map(
                |(u, unit)| {
                    unit.decls()
                        .types
                        .iter()
                        .enumerate()
                        .filter_map(move |(i, t)| {
                            let name = t.name.as_deref()?;
                            Some((simple_name(name), TypeRef { unit: u, t: i }))
                        })
                },
            )),
            constants: HashMap::default(),
            const_aliases: HashMap::default(),
        };
        for unit in units {
            let decls = unit.decls();
            for b in decls
                .types
                .iter()
                .flat_map(|t| &t.fields)
                .chain(&decls.globals)
            {
                index.add_constant(b);
            }
        }
        index
    }

    fn add_constant(&mut self, b: &crate::decls::DeclField) {
        use crate::outline::Constant;
        match &b.constant {
            Some(Constant::Str(v)) => push_to(&mut self.constants, &b.name, v.to_string()),
            // `IDEMPOTENCY_KEY_NAME = HeaderName::from_static(IDEMPOTENCY_KEY)`
            Some(Constant::Alias(other)) => {
                push_to(&mut self.const_aliases, &b.name, other.to_string())
            }
            None => {}
        }
    }
}

/// Identifier -> units writing it, from each unit's names, and the units
/// whose `\u` escapes may spell any name.
fn name_index(units: &[Unit]) -> (crate::name_map::NameMap<u32>, Vec<u32>) {
    let index = crate::name_map::NameMap::build(units.iter().enumerate().flat_map(|(u, unit)| {
        unit.names
            .split('\n')
            .filter(|n| !n.is_empty())
            .map(move |n| (n, u as u32))
    }));
    let any = (0..units.len() as u32)
        .filter(|&u| units[u as usize].escapes)
        .collect();
    (index, any)
}

/// Field or file-level binding name -> where it is declared: (unit, owning type or `None` for
/// a file-level binding, index in that list).
fn fields_by_name(units: &[Unit]) -> crate::name_map::NameMap<(usize, Option<TypeId>, usize)> {
    crate::name_map::NameMap::build(units.iter().enumerate().flat_map(|(u, unit)| {
        let decls = unit.decls();
        let globals = decls
            .globals
            .iter()
            .enumerate()
            .map(move |(i, b)| (b, None, i));
        let fields = decls.types.iter().enumerate().flat_map(|(t, ty)| {
            ty.fields
                .iter()
                .enumerate()
                .map(move |(i, b)| (b, Some(t), i))
        });
        globals
            .chain(fields)
            .map(move |(b, t, i)| (b.name.as_str(), (u, t, i)))
    }))
}

/// `map[key].push(v)`, allocating the key only when it is new.
fn push_to<T>(map: &mut HashMap<String, Vec<T>>, key: &str, v: T) {
    match map.get_mut(key) {
        Some(list) => list.push(v),
        None => {
            map.insert(key.to_string(), vec![v]);
        }
    }
}

use crate::constants::{const_alias, const_str_syntactic};

impl Project {
    /// See [`const_str_syntactic`]; the catalogue's header-name constructors count too, and a
    /// constant initialised from another constant resolves to that one's value.
    pub fn const_str(&self, e: &Expr, cat: &crate::catalog::Catalog) -> Option<String> {
        self.const_str_direct(e, cat)
            .or_else(|| const_alias(e).and_then(|a| self.unique_constant(&a)))
    }

    fn const_str_direct(&self, e: &Expr, cat: &crate::catalog::Catalog) -> Option<String> {
        match &e.kind {
            ExprKind::Call { name, args, .. } | ExprKind::New { ty: name, args, .. }
                if args.len() == 1
                    && cat
                        .sinks
                        .header_name_constructors
                        .iter()
                        .any(|c| c == simple_name(name)) =>
            {
                self.const_str_direct(&args[0].value, cat)
            }
            _ => const_str_syntactic(e),
        }
    }

    /// Component names of a record type `ty` with `n` components (Java records, whose
    /// canonical constructor is implicit).
    pub fn record_components(&self, ty: &str, n: usize) -> Option<Vec<String>> {
        self.index.types_by_name.get(ty)?.iter().find_map(|r| {
            let decl = &self.units[r.unit].facts().types[r.t];
            let comps: Vec<String> = decl
                .fields
                .iter()
                .filter(|b| !b.modifiers.iter().any(|m| m == "static"))
                .map(|b| b.name.clone())
                .collect();
            (decl.kind == crate::facts::TypeKind::Record && comps.len() == n).then_some(comps)
        })
    }

    /// The value of a constant named `name` if every declaration of it in the project agrees
    /// (following constants initialised from other constants).
    pub fn unique_constant(&self, name: &str) -> Option<String> {
        let mut name = simple_name(name).to_string();
        for _ in 0..8 {
            let vals = self.constant_values(&name);
            if let Some(first) = vals.first() {
                return vals.iter().all(|v| v == first).then(|| first.clone());
            }
            let aliases = self.index.const_aliases.get(&name)?;
            let first = aliases.first()?;
            if !aliases.iter().all(|a| a == first) {
                return None;
            }
            name = simple_name(first).to_string();
        }
        None
    }

    /// The string value of field `field` of project type `ty` (`Headers.IDEMPOTENCY_KEY`),
    /// looking into companion objects too.
    pub fn type_constant(
        &self,
        ty: &str,
        field: &str,
        cat: &crate::catalog::Catalog,
    ) -> Option<String> {
        for r in self.index.types_by_name.get(ty)? {
            let facts = &self.units[r.unit].facts();
            let decl = &facts.types[r.t];
            let own = decl.fields.iter();
            let nested = decl
                .nested
                .iter()
                .flat_map(|&n| facts.types[n].fields.iter());
            for b in own.chain(nested) {
                if b.name == field
                    && let Some(v) = b.init.as_ref().and_then(|i| {
                        self.const_str(i, cat).or_else(|| match &i.kind {
                            // An enum constant carrying its header name:
                            // `IDEMPOTENCY_KEY("Idempotency-Key")`.
                            ExprKind::New { args, .. } | ExprKind::Call { args, .. } => {
                                match args.first().map(|a| &a.value.kind) {
                                    Some(ExprKind::Str(s)) => Some(s.to_string()),
                                    _ => None,
                                }
                            }
                            _ => None,
                        })
                    })
                {
                    return Some(v);
                }
            }
        }
        None
    }
}

/// The call or method reference at `span` in `func`'s body (not in its lambdas).
pub fn find_call(func: &Function, span: Span) -> Option<&Expr> {
    let mut found = None;
    walk_stmts(&func.body, &mut |x| {
        if found.is_none()
            && x.span == span
            && matches!(x.kind, ExprKind::Call { .. } | ExprKind::MethodRef { .. })
        {
            found = Some(x);
        }
    });
    found
}

/// Lambdas of `unit` held by a local, field or file-level value (see [`held_lambda`]):
/// lambda -> holder names.
fn lambda_holders(unit: &Unit) -> HashMap<FnId, Vec<&str>> {
    let facts = &unit.facts();
    let mut all: Vec<&Binding> = facts.globals.iter().collect();
    all.extend(facts.types.iter().flat_map(|t| t.fields.iter()));
    for g in &facts.functions {
        crate::walk::walk_lets(&g.body, &mut |b| all.push(b));
    }
    let mut out: HashMap<FnId, Vec<&str>> = HashMap::default();
    for b in all {
        if let Some(id) = b.init.as_ref().and_then(|e| held_lambda(e, true)) {
            out.entry(id).or_default().push(&b.name);
        }
    }
    out
}

/// For every function of `unit` with a body, the names a call can reach it by: its own name,
/// or for a lambda the locals, fields and file-level values holding it (as
/// [`Project::lambda_bound_to`] resolves them). Lambdas nobody holds run inside their
/// enclosing function and are left out.
pub fn call_names(unit: &Unit) -> Vec<(FnId, Vec<&str>)> {
    let mut held: Option<HashMap<FnId, Vec<&str>>> = None;
    let mut out = Vec::new();
    for (f, func) in unit.facts().functions.iter().enumerate() {
        if !func.has_body {
            continue;
        }
        let via: Vec<&str> = match func.name.as_deref() {
            Some(n) => vec![n],
            None => held
                .get_or_insert_with(|| lambda_holders(unit))
                .get(&f)
                .cloned()
                .unwrap_or_default(),
        };
        if !via.is_empty() {
            out.push((f, via));
        }
    }
    out
}

/// The build module a source file belongs to and its module path inside it, from the file's
/// path: a Rust crate is the directory above its `src/` (`a/src/billing/payouts.rs` is
/// `("a", "billing/payouts")`); a Maven or Gradle module the directory above `src/main/<lang>/`
/// or `src/test/<lang>/`. `None` for other layouts.
pub fn module_root(path: &std::path::Path) -> Option<(String, String)> {
    let s = path.to_str()?.replace('\\', "/");
    let s = s.strip_prefix("./").unwrap_or(&s);
    let no_ext = s.rsplit_once('.').map_or(s, |(a, _)| a);
    let (root, rest) = if let Some(i) = no_ext
        .rfind("/src/main/")
        .or_else(|| no_ext.rfind("/src/test/"))
    {
        let rest = &no_ext[i + "/src/main/".len()..];
        (&no_ext[..i], rest.split_once('/').map_or(rest, |(_, r)| r))
    } else if let Some(r) = no_ext
        .strip_prefix("src/main/")
        .or_else(|| no_ext.strip_prefix("src/test/"))
    {
        ("", r.split_once('/').map_or(r, |(_, r)| r))
    } else if let Some(i) = no_ext.rfind("/src/") {
        (&no_ext[..i], &no_ext[i + "/src/".len()..])
    } else if let Some(r) = no_ext.strip_prefix("src/") {
        ("", r)
    } else {
        return None;
    };
    Some((root.to_string(), rest.to_string()))
}

/// A project of in-memory sources (path, text), each parsed and lowered (for unit tests).
#[cfg(test)]
pub(crate) fn parsed(files: &[(&str, &str)]) -> Project {
    Project::new(
        files
            .iter()
            .map(|(path, text)| {
                let lang = Lang::from_path(std::path::Path::new(path)).unwrap();
                Unit::new(SourceFile::new(path.into(), text.to_string()), lang, false)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::module_root;
    use std::path::Path;

    /// A Rust method is called through its type (or by its name alone when it is the only
    /// one): a file of the same crate that names another type's `new` cannot call it, while a
    /// free function may be called from anywhere in its crate through its module.
    #[test]
    fn a_rust_method_is_called_where_its_type_is_named() {
        let p = super::parsed(&[
            (
                "svc/src/a.rs",
                "pub struct A;\nimpl A { pub fn new() -> A { A } }\npub fn make() {}",
            ),
            (
                "svc/src/b.rs",
                "pub struct B;\nimpl B { pub fn new() -> B { B } }\npub fn make() {}",
            ),
            (
                "svc/src/c.rs",
                "pub struct C;\nimpl C { pub fn new() -> C { C } }\npub fn make() {}",
            ),
            ("svc/src/main.rs", "fn main() { let b = b::B::new(); }"),
            (
                "svc/src/uses_a.rs",
                "fn go() { let a = crate::a::A::new(); }",
            ),
        ]);
        let new_of_a = p
            .fns_named("new")
            .iter()
            .copied()
            .find(|f| f.unit == 0)
            .unwrap();
        let from = p.may_call_from(new_of_a);
        assert!(!from.may_call(&p, 3), "main.rs names only B");
        assert!(from.may_call(&p, 4));
        let make_of_a = p
            .fns_named("make")
            .iter()
            .copied()
            .find(|f| f.unit == 0)
            .unwrap();
        assert!(p.may_call_from(make_of_a).may_call(&p, 3));
    }

    /// A Rust call through a module path (`settlement::run()`) is resolved from the
    /// declarations: the other files declaring a `run` are not parsed to see whether theirs is
    /// a method.
    #[test]
    fn module_functions_from_the_declarations() {
        let p = super::parsed(&[
            (
                "svc/src/main.rs",
                "mod settlement;\nfn main() { settlement::run(); }",
            ),
            ("svc/src/settlement.rs", "pub fn run() { charge(); }"),
            ("svc/src/a.rs", "struct A;\nimpl A { fn run(&self) {} }"),
            ("svc/src/b/settlement.rs", "impl B { pub fn run(&self) {} }"),
            ("svc/src/c.rs", "pub fn run() {}"),
        ]);
        let f = p.in_module(0, "settlement", "run").unwrap();
        assert_eq!(f.unit, 1);
        for u in 2..5 {
            assert!(p.units[u].parse_if_done().is_none(), "{u}");
        }
        assert_eq!(p.body_and_owner(f), (true, None));
        let m = p
            .fns_named("run")
            .iter()
            .find(|r| r.unit == 2)
            .copied()
            .unwrap();
        let (has_body, owner) = p.body_and_owner(m);
        assert!(has_body && p.type_name(2, owner.unwrap()) == Some("A"));
    }

    /// Threads asking for one file's parse at once share one parse: those that find it under
    /// way run other work or wait, and all get the same facts.
    #[test]
    fn one_parse_shared_by_threads_asking_at_once() {
        use rayon::prelude::*;
        let body: String = (0..400)
            .map(|i| format!("void f{i}() {{ g(); }}\n"))
            .collect();
        let p = super::parsed(&[
            ("A.java", &format!("class A {{\n{body}}}")),
            ("B.java", "class B { void h() {} }"),
        ]);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let seen: Vec<usize> = pool.install(|| {
            (0..64)
                .into_par_iter()
                .map(|i| {
                    let u = &p.units[i % 2];
                    std::ptr::from_ref(u.parsed()) as usize
                })
                .collect()
        });
        for i in 2..64 {
            assert_eq!(seen[i], seen[i % 2], "{i}");
        }
        assert_eq!(p.units[0].facts().functions.len(), 400);
    }

    /// The name index holds the names a file's code writes, not those of its comments; a
    /// made-up name (`invoke`) is in every file, and a Java file with `\\u` escapes in its code
    /// may hold any.
    #[test]
    fn files_by_the_names_their_code_writes() {
        let p = super::parsed(&[
            ("A.java", "class A { void f() { charge(); } }"),
            (
                "B.java",
                "// charge() is not called here\nclass B { void g() { log(); } }",
            ),
            ("C.java", "class C { void \\u0063harge() { } }"),
            ("D.kt", "fun h(k: () -> Unit) = k()"),
            // Escapes in a string, a character and a comment spell no name; Kotlin has none
            // in code.
            (
                "E.java",
                "class E { String s = \"\\u0063harge\"; char c = '\\u0063'; /* \\u0063 */ }",
            ),
            ("F.kt", "val s = \"\\u0063harge\""),
        ]);
        assert_eq!(p.units_naming("charge"), [0, 2]);
        assert_eq!(p.units_naming("log"), [1, 2]);
        assert_eq!(p.units_naming("invoke"), [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            p.units_naming_any(|n| n.starts_with("charg")),
            [true, false, true, false, false, false]
        );
        // The calls of a name come from those files, in order.
        let calls = p.calls_named("charge");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].0.unit, 0);
        // The filter both modes apply: a path by its last name, what is no name everywhere,
        // and the same with the gates open.
        let mut p = p;
        for open in [false, true] {
            if open {
                p.open_gates();
                assert_eq!(p.units_naming("log"), [0, 1, 2, 3, 4, 5]);
            }
            assert_eq!(p.units_writing_name("charge"), [0, 2]);
            assert_eq!(p.units_writing_name("a.b.log"), [1, 2]);
            assert_eq!(p.units_writing_name("x::log"), [1, 2]);
            assert_eq!(p.units_writing_name("List<A>"), [0, 1, 2, 3, 4, 5]);
            assert_eq!(p.units_writing_name("invoke"), [0, 1, 2, 3, 4, 5]);
        }
    }

    #[test]
    fn module_roots_from_paths() {
        let m = |p: &str| module_root(Path::new(p)).map(|(a, b)| format!("{a}|{b}"));
        assert_eq!(
            m("a/src/billing/payouts.rs").as_deref(),
            Some("a|billing/payouts")
        );
        assert_eq!(m("./src/lock.rs").as_deref(), Some("|lock"));
        assert_eq!(
            m("svc/b/src/sweeps/v2/mod.rs").as_deref(),
            Some("svc/b|sweeps/v2/mod")
        );
        assert_eq!(
            m("billing/src/main/java/com/acme/Pay.java").as_deref(),
            Some("billing|com/acme/Pay")
        );
        assert_eq!(
            m("src/test/kotlin/com/acme/PayTest.kt").as_deref(),
            Some("|com/acme/PayTest")
        );
        assert_eq!(m("Pay.java"), None);
    }

    /// A word counts in an identifier (in any case, without the punctuation around it) or in
    /// a string literal; not in a comment; a word with a quote in it only in a string.
    #[test]
    fn units_writing_words_in_names_and_strings() {
        let p = super::parsed(&[
            ("A.java", "class A { void f() { advisoryLock(1); } }"),
            ("B.java", "class B { /* pg_advisory_lock */ void f() {} }"),
            ("C.kt", "val c = listOf(\"SET\", \"k\", \"NX\")"),
            ("D.java", "class D { int unix; void f() { unix++; } }"),
            ("E.rs", "fn f() { get_lock(1); }"),
        ]);
        let words = ["advisory", "nx\"", "get_lock("];
        assert_eq!(p.units_writing(&words), [true, false, true, false, true]);
    }

    /// The one initialised field of a name is found from the declarations: files declaring
    /// it without an initialiser are not parsed, and two initialised ones answer none.
    #[test]
    fn only_initialised_field_reads_one_file() {
        let p = super::parsed(&[
            (
                "A.java",
                "class A { static final String URL = \"/v1/charges\"; }",
            ),
            ("B.java", "class B { String URL; void f() {} }"),
            ("C.kt", "class C { val other = 1 }"),
        ]);
        let (u, b) = p.only_initialised_field("URL").expect("one");
        assert_eq!((u, b.name.as_str()), (0, "URL"));
        assert!(p.units[1].parse_if_done().is_none(), "B was parsed");
        let two = super::parsed(&[
            ("A.java", "class A { static final String URL = \"a\"; }"),
            ("B.java", "class B { static final String URL = \"b\"; }"),
        ]);
        assert!(two.only_initialised_field("URL").is_none());
        assert!(two.units.iter().all(|u| u.parse_if_done().is_none()));
    }
}
