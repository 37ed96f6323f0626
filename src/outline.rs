//! The declaration outline (issue 16, `docs/design/evidence-first.md` step 1): the functions a
//! file declares, found from the lexical pass's tokens ([`crate::lex`]) without parsing, as the
//! front ends' facts name them: methods, constructors, free and local functions, with their
//! arity, whether they have a body, and the type they are members of.
//!
//! It is meant to stand in for the facts when the project index is built, so it must agree with
//! them: `tests/outline.rs` compares the two on the fixtures and, on demand, on any code. The
//! front ends number declared functions first (`lang::fn_order`), so the outline's `i`-th
//! function is the facts' function `i`: an index built from outlines can name a function of a
//! file that has not been parsed.
//!
//! What the facts hold, by language:
//! - Java: methods and constructors (named as their class), annotation type elements; a member
//!   of an anonymous class or of an enum constant's body has no owner.
//! - Kotlin: `fun`s (an extension's receiver is not a parameter), a primary constructor
//!   (`class D(val x: Int)`), `constructor(..)`, `init { }` as `<init>`, property accessors as
//!   `<get-name>` / `<set-name>`; a companion object is the type `Companion`.
//! - Rust: `fn`s; a method's owner is its `impl`'s type or its trait, and `self` is a parameter.
//!
//! Functions written inside another function's body are local: they have no owner.

use crate::facts::{Lang, TypeKind};
use crate::lex::Tok;

/// One declared function.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FnDecl<'a> {
    pub name: std::borrow::Cow<'a, str>,
    /// Parameters, not counting a Kotlin extension's receiver.
    pub arity: usize,
    /// The simple name of the type it is a member of.
    pub owner: Option<&'a str>,
    /// That type's index in [`Outlined::types`] (the facts' `TypeId`).
    pub owner_type: Option<usize>,
    pub has_body: bool,
    /// A Rust method's first parameter is `self` (counted in `arity`).
    pub has_self: bool,
    /// It takes any number of arguments: a Java varargs parameter (`String... parts`), a
    /// Kotlin `vararg` one.
    pub varargs: bool,
}

/// The named functions of `facts` (lowered from `text`) as the outline describes them, in the
/// facts' order: what [`functions`] must find for the same text.
pub fn of_facts<'a>(facts: &'a crate::facts::FileFacts, text: &str) -> Vec<FnDecl<'a>> {
    facts
        .functions
        .iter()
        .filter(|f| f.kind != crate::facts::FnKind::Lambda)
        .filter_map(|f| {
            Some(FnDecl {
                name: f.name.as_deref()?.into(),
                arity: f.params.len(),
                owner: f
                    .owner
                    .and_then(|t| facts.types[t].name.as_deref())
                    .map(crate::facts::simple_name),
                owner_type: f.owner,
                has_body: f.has_body,
                has_self: f.params.first().is_some_and(|p| p.name == "self"),
                varargs: varargs(&f.params, text),
            })
        })
        .collect()
}

/// Does a function with these parameters (lowered from `text`) take any number of arguments:
/// a last parameter written `T... name` (Java), or one with the `vararg` modifier (Kotlin, which
/// stands before the parameter's own span)?
pub fn varargs(params: &[crate::facts::Param], text: &str) -> bool {
    let slice = |s: crate::facts::Span| text.get(s.start..s.end).unwrap_or("");
    let java = params.last().is_some_and(|p| {
        p.ty.as_deref().is_some_and(|t| t.ends_with("[]")) && slice(p.span).contains("...")
    });
    java || params.iter().any(|p| {
        let before = text.get(..p.span.start).unwrap_or("").trim_end();
        slice(p.span).trim_start().starts_with("vararg ")
            || before
                .strip_suffix("vararg")
                .is_some_and(|b| !b.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// What a `{` opened.
#[derive(Clone, Copy, Debug)]
enum Frame<'a> {
    /// A type's body (class, interface, record, object, companion, impl, trait), with the
    /// type's index in [`Outlined::types`].
    Type(&'a str, usize),
    /// An enum's body: its constants come first, and its members start after the token at
    /// the third index.
    Enum(&'a str, usize, usize),
    /// An anonymous class's body, or a Java enum constant's: members without an owner.
    Anon(usize),
    /// A function's body.
    Body,
    /// A Rust module's body (`mod m { .. }`).
    Module,
    /// Anything else: a block, a lambda, an anonymous class, an initialiser.
    Other,
}

/// The functions declared in `text`, whose tokens the lexical pass found, in order.
pub fn functions<'a>(lang: Lang, text: &'a str, toks: &[Tok]) -> Vec<FnDecl<'a>> {
    outline(lang, text, toks).functions
}

/// The functions and types declared in `text`, each in the facts' order.
pub fn outline<'a>(lang: Lang, text: &'a str, toks: &[Tok]) -> Outlined<'a> {
    let mut o = Outline {
        lang,
        text,
        toks,
        frames: Vec::new(),
        out: Vec::new(),
        types: Vec::new(),
        globals: Vec::new(),
        imports: Vec::new(),
        opened: false,
        next_frame: None,
        property: None,
        record_components: None,
    };
    o.run();
    Outlined {
        functions: o.out,
        types: o.types,
        globals: o.globals,
        imports: o.imports,
    }
}

/// What a file declares.
#[derive(Debug, Default)]
pub struct Outlined<'a> {
    pub functions: Vec<FnDecl<'a>>,
    /// Types, anonymous ones included, in the facts' order: the `i`-th is the facts' type `i`.
    pub types: Vec<TyDecl<'a>>,
    /// File-level bindings: Kotlin top-level properties, Rust `const`s and `static`s.
    pub globals: Vec<FieldDecl<'a>>,
    /// Imports as the facts write them: Java and Kotlin paths (`java.util.*`, `x.Y as Z`),
    /// Rust `use` trees flattened (`std::sync::Arc`) and `extern crate` names.
    pub imports: Vec<std::borrow::Cow<'a, str>>,
}

/// One declared type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TyDecl<'a> {
    /// `None` for an anonymous class or object expression; a Rust `impl`'s self type.
    pub name: Option<&'a str>,
    pub kind: TypeKind,
    /// The type whose body declares this one (none for a type declared in a function).
    pub parent: Option<usize>,
    /// Extended classes, implemented interfaces, a Rust impl's trait or a trait's bounds, as
    /// written minus type arguments (`base.B`, `fmt::Debug`); an enum constant's body extends
    /// its enum, an anonymous class the type it names.
    pub supertypes: Vec<std::borrow::Cow<'a, str>>,
    /// Fields, properties, enum constants and record components, in the facts' order.
    pub fields: Vec<FieldDecl<'a>>,
}

/// A field, property, constant or file-level binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDecl<'a> {
    pub name: std::borrow::Cow<'a, str>,
    /// The declared type as the facts write it (`java.util.Map`, `int[]`, `str`).
    pub ty: Option<std::borrow::Cow<'a, str>>,
    /// Whether it is initialised where it is declared.
    pub has_init: bool,
    /// What the project index files under its name, when its initialiser is a string or
    /// another constant.
    pub constant: Option<Constant<'a>>,
}

/// A constant's initialiser as the project index reads it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Constant<'a> {
    /// A string literal (decoded), or one wrapped in a call of
    /// [`crate::constants::CONST_WRAPPERS`] (`HeaderName::from_static("k")`).
    Str(std::borrow::Cow<'a, str>),
    /// Another constant's simple name (`A = B`, `A = Headers.B`, `A = from_static(B)`).
    Alias(std::borrow::Cow<'a, str>),
}

impl<'a> FieldDecl<'a> {
    fn of(b: &'a crate::facts::Binding) -> Self {
        let init = b.init.as_ref();
        FieldDecl {
            name: b.name.as_str().into(),
            ty: b.ty.as_deref().map(Into::into),
            has_init: init.is_some(),
            constant: init.and_then(|e| {
                crate::constants::const_str_syntactic(e)
                    .map(|s| Constant::Str(s.into()))
                    .or_else(|| crate::constants::const_alias(e).map(|a| Constant::Alias(a.into())))
            }),
        }
    }
}

/// The file-level bindings of `facts` as the outline describes them.
pub fn globals_of_facts(facts: &crate::facts::FileFacts) -> Vec<FieldDecl<'_>> {
    facts.globals.iter().map(FieldDecl::of).collect()
}

/// The types of `facts` as the outline describes them.
pub fn types_of_facts(facts: &crate::facts::FileFacts) -> Vec<TyDecl<'_>> {
    facts
        .types
        .iter()
        .map(|t| TyDecl {
            name: t.name.as_deref(),
            kind: t.kind,
            parent: t.parent_type,
            supertypes: t.supertypes.iter().map(|s| s.as_str().into()).collect(),
            fields: t.fields.iter().map(FieldDecl::of).collect(),
        })
        .collect()
}

struct Outline<'a, 't> {
    lang: Lang,
    text: &'a str,
    toks: &'t [Tok],
    frames: Vec<Frame<'a>>,
    out: Vec<FnDecl<'a>>,
    types: Vec<TyDecl<'a>>,
    globals: Vec<FieldDecl<'a>>,
    imports: Vec<std::borrow::Cow<'a, str>>,
    /// Whether a brace has opened yet.
    opened: bool,
    /// What the `{` at a token index opens, when a declaration said so.
    next_frame: Option<(usize, Frame<'a>)>,
    /// Kotlin: the last property declared at this level (for `get()` / `set(v)`).
    property: Option<(usize, &'a str)>,
    /// Java: the last record declared, with its number of components.
    record_components: Option<(&'a str, usize)>,
}

const JAVA_NOT_A_TYPE: &[&str] = &[
    "new",
    "return",
    "throw",
    "else",
    "case",
    "yield",
    "assert",
    "await",
    "instanceof",
];

impl<'a> Outline<'a, '_> {
    fn word(&self, i: usize) -> Option<&'a str> {
        let t = self.toks.get(i)?;
        if t.kind != b'a' {
            return None;
        }
        self.text.get(t.start as usize..t.end as usize)
    }

    fn kind(&self, i: usize) -> u8 {
        self.toks.get(i).map_or(0, |t| t.kind)
    }

    fn is(&self, i: usize, w: &str) -> bool {
        self.word(i) == Some(w)
    }

    /// The owner a function declared here has: the type whose body this is.
    fn owner(&self) -> Option<&'a str> {
        self.owner_type().and_then(|(n, _)| n)
    }

    /// The owner's name (none for an anonymous class) and index in [`Outlined::types`].
    fn owner_type(&self) -> Option<(Option<&'a str>, usize)> {
        match self.frames.last() {
            Some(Frame::Type(n, t) | Frame::Enum(n, t, _)) => Some((Some(n), *t)),
            Some(Frame::Anon(t)) => Some((None, *t)),
            _ => None,
        }
    }

    fn at_member_level(&self) -> bool {
        matches!(
            self.frames.last(),
            Some(Frame::Type(..) | Frame::Enum(..) | Frame::Anon(_))
        )
    }

    /// The token index of the `{` that opens the body of a declaration whose header goes on
    /// at `j` (groups skipped), if it has one before a `;`, `}` or `=`.
    fn body_brace(&self, mut j: usize) -> Option<usize> {
        while j < self.toks.len() {
            match self.kind(j) {
                b'{' => return Some(j),
                b';' | b'}' | b'=' => return None,
                b'(' | b'[' | b'<' => j = self.group(j).0,
                // A Kotlin declaration without a body ends where the next one starts
                // (`companion object : Log()` before `val x by lazy { .. }`).
                b'a' if self.lang == Lang::Kotlin
                    && matches!(
                        self.word(j),
                        Some(
                            "fun"
                                | "val"
                                | "var"
                                | "class"
                                | "interface"
                                | "object"
                                | "init"
                                | "typealias"
                        )
                    ) =>
                {
                    return None;
                }
                _ => j += 1,
            }
        }
        None
    }

    /// What the `{` at `brace` opens.
    fn opens(&mut self, brace: Option<usize>, frame: Frame<'a>) {
        if let Some(b) = brace {
            self.next_frame = Some((b, frame));
        }
    }

    /// The index after the bracket group opening at `i` (`(`, `[`, `{` or `<`), and the number
    /// of items at its top level (commas + 1, or 0 when empty). A `<` that turns out not to
    /// open type arguments (`a < b`) is a group of nothing. Iterative: any depth of nesting.
    fn group(&self, i: usize) -> (usize, usize) {
        let open = self.kind(i);
        let angle = open == b'<';
        let mut stack: Vec<u8> = vec![closer(open)];
        let (mut items, mut seen) = (0usize, false);
        let mut j = i + 1;
        while j < self.toks.len() {
            let k = self.kind(j);
            match k {
                b'(' | b'[' | b'{' => {
                    if angle && k == b'{' {
                        return (i + 1, 0);
                    }
                    stack.push(closer(k));
                    seen = true;
                }
                b'<' if angle => {
                    stack.push(b'>');
                    seen = true;
                }
                // Type arguments inside a parameter list (`Map<String, Object> m`): one item.
                b'<' => {
                    seen = true;
                    if let Some(end) = self.angle_end(j) {
                        j = end;
                        continue;
                    }
                }
                // `->` is an arrow, not a closing angle bracket; outside type arguments `>` is
                // an operator.
                b'>' if !angle || self.kind(j - 1) == b'-' => seen = true,
                b')' | b']' | b'}' | b'>' => {
                    if angle && k != b'>' && stack.len() == 1 {
                        return (i + 1, 0);
                    }
                    if stack.last() == Some(&k) {
                        stack.pop();
                    } else if let Some(at) = stack.iter().rposition(|c| *c == k) {
                        // Broken input: close what the bracket closes.
                        stack.truncate(at);
                    } else {
                        j += 1;
                        continue;
                    }
                    if stack.is_empty() {
                        return (j + 1, items + usize::from(seen));
                    }
                }
                b',' if stack.len() == 1 => {
                    items += usize::from(seen);
                    seen = false;
                }
                b';' if angle => return (i + 1, 0),
                _ => seen = true,
            }
            j += 1;
        }
        (j, items + usize::from(seen))
    }

    /// The index after the type arguments opening at the `<` at `i`, unless it is an operator
    /// (`a < b`): brackets inside must balance, and no `;`, `{`, `}` or `=` comes first.
    fn angle_end(&self, i: usize) -> Option<usize> {
        let (mut angle, mut paren) = (0usize, 0usize);
        // (Bounded, so that a long list of comparisons stays linear.)
        for j in i..self.toks.len().min(i + MAX_TYPE_ARGS) {
            match self.kind(j) {
                b'<' => angle += 1,
                b'>' if self.kind(j - 1) != b'-' => {
                    angle -= 1;
                    if angle == 0 {
                        return Some(j + 1);
                    }
                }
                b'(' | b'[' => paren += 1,
                b')' | b']' => paren = paren.checked_sub(1)?,
                b';' | b'{' | b'}' | b'=' => return None,
                _ => {}
            }
        }
        None
    }

    /// Records a function whose parameters (if any) open at token `open`.
    fn push(
        &mut self,
        name: impl Into<std::borrow::Cow<'a, str>>,
        arity: usize,
        has_body: bool,
        open: Option<usize>,
    ) {
        let owner = self.owner_type();
        let (has_self, varargs) = open.map_or((false, false), |o| self.param_traits(o));
        self.out.push(FnDecl {
            name: name.into(),
            arity,
            owner: owner.and_then(|o| o.0),
            owner_type: owner.map(|o| o.1),
            has_body,
            has_self,
            varargs,
        });
    }

    /// Of the parameter list opening at token `open`: does a Rust one start with `self`
    /// (`&'a mut self`), and does a Java (`...`) or Kotlin (`vararg`) one take any number of
    /// arguments?
    fn param_traits(&self, open: usize) -> (bool, bool) {
        let (mut has_self, mut varargs) = (false, false);
        let (mut depth, mut first) = (0usize, true);
        let mut j = open + 1;
        while j < self.toks.len() {
            let k = self.kind(j);
            match k {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => break,
                b')' | b']' | b'}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                match self.lang {
                    Lang::Rust if first => match k {
                        b'&' | b'\'' => {}
                        b'a' if self.is(j, "mut") || self.kind(j - 1) == b'\'' => {}
                        b'a' => {
                            has_self = self.is(j, "self");
                            first = false;
                        }
                        _ => first = false,
                    },
                    Lang::Java
                        if k == b'.' && self.kind(j + 1) == b'.' && self.kind(j + 2) == b'.' =>
                    {
                        varargs = true
                    }
                    Lang::Kotlin if self.is(j, "vararg") => varargs = true,
                    _ => {}
                }
            }
            j += 1;
        }
        (has_self, varargs)
    }

    /// Java or Kotlin: the import whose path starts at `j` (`a.b.*`; Kotlin's `as` alias
    /// kept, as written); returns the index after it.
    fn dotted_import(&mut self, mut j: usize) -> usize {
        let mut path = String::new();
        while let Some(w) = self
            .word(j)
            .or_else(|| (self.kind(j) == b'*').then_some("*"))
        {
            path.push_str(w.trim_matches('`'));
            j += 1;
            if self.kind(j) == b'.' && matches!(self.kind(j + 1), b'a' | b'*') {
                path.push('.');
                j += 1;
            } else {
                break;
            }
        }
        if self.lang == Lang::Kotlin
            && self.is(j, "as")
            && let Some(alias) = self.word(j + 1)
        {
            path.push_str(" as ");
            path.push_str(alias.trim_matches('`'));
            j += 2;
        }
        if !path.is_empty() {
            self.imports.push(path.into());
        }
        j
    }

    /// Rust: the paths a `use` tree starting at `j` names, flattened as the front end does
    /// (`a::{b, c::d}` is `a::b` and `a::c::d`; aliases dropped, `self` is its prefix);
    /// returns the index after it.
    fn rust_use(&mut self, j: usize) -> usize {
        let mut end = j;
        while end < self.toks.len() && !matches!(self.kind(end), b';' | b'}') {
            end = if self.kind(end) == b'{' {
                self.group(end).0
            } else {
                end + 1
            };
        }
        let joined = |a: &str, b: &str| {
            if a.is_empty() {
                b.to_string()
            } else {
                format!("{a}::{b}")
            }
        };
        let mut stack: Vec<(usize, usize, String)> = vec![(j, end, String::new())];
        while let Some((mut k, stop, prefix)) = stack.pop() {
            let mut path = String::new();
            while k < stop {
                if self.kind(k) == b':' && self.kind(k + 1) == b':' {
                    path.push_str("::");
                    k += 2;
                } else if let Some(w) = self
                    .word(k)
                    .filter(|_| path.is_empty() || path.ends_with("::"))
                {
                    path.push_str(w);
                    k += 1;
                } else if self.kind(k) == b'*' {
                    path.push('*');
                    k += 1;
                } else {
                    break;
                }
            }
            if self.kind(k) == b'{' && k < stop {
                let inner = path.strip_suffix("::").unwrap_or(&path);
                let np = if inner.is_empty() {
                    prefix.clone()
                } else {
                    joined(&prefix, inner)
                };
                for (a, b) in self.items(k).into_iter().rev() {
                    stack.push((a, b, np.clone()));
                }
                continue;
            }
            // (An alias, `a::b as c`, is left out.)
            // `{self}` is its prefix, `{self as x}` is not.
            if path == "self" && !prefix.is_empty() && !self.is(k, "as") {
                self.imports.push(prefix.into());
            } else if !path.is_empty() {
                self.imports.push(joined(&prefix, &path).into());
            }
        }
        end
    }

    /// The type whose member may start at token `i` (after `{`, `}` or `;` in its body, past
    /// an enum's constants).
    fn member_start(&self, i: usize) -> Option<usize> {
        if i == 0 || !matches!(self.kind(i - 1), b'{' | b'}' | b';') {
            return None;
        }
        match self.frames.last()? {
            Frame::Type(_, t) | Frame::Anon(t) => Some(*t),
            Frame::Enum(_, t, members) if i > *members => Some(*t),
            _ => None,
        }
    }

    /// An enum's constants, from the `{` at `open`, recorded as fields of type `t`; returns
    /// the index of the `;` or `}` after them.
    fn enum_constants(&mut self, open: usize, t: usize) -> usize {
        if self.lang == Lang::Rust {
            return open; // (variants are read with the header: `rust_fields`)
        }
        let enum_name = self.types[t].name.unwrap_or("");
        let mut j = open + 1;
        while j < self.toks.len() {
            while self.kind(j) == b'@' {
                j = self.skip_annotation(j).max(j + 1);
            }
            let Some(name) = self.word(j) else {
                return j;
            };
            j += 1;
            let args = self.kind(j) == b'(';
            if args {
                j = self.group(j).0;
            }
            if self.kind(j) == b'{' {
                j = self.group(j).0;
            }
            self.types[t].fields.push(FieldDecl {
                name: name.into(),
                ty: Some(enum_name.into()),
                has_init: self.lang == Lang::Java || args,
                constant: None,
            });
            if self.kind(j) != b',' {
                return j;
            }
            j += 1;
        }
        j
    }

    /// The text of tokens `a..=b` as the Java front end writes a type: up to its first `<`,
    /// without white space.
    fn java_type(&self, a: usize, b: usize) -> Option<std::borrow::Cow<'a, str>> {
        let text = self
            .text
            .get(self.toks[a].start as usize..self.toks[b].end as usize)?;
        // Varargs (`Class<?>... types`) are an array of the element type.
        if let Some(element) = text.trim_end().strip_suffix("...") {
            let element = crate::lang::java::squeeze(&crate::lang::clean_type(element));
            return Some(format!("{element}[]").into());
        }
        Some(crate::lang::java::squeeze(&crate::lang::clean_type(text)).into())
    }

    /// Java: a record's components between the parentheses at `open` and `close`, as fields
    /// of type `t`.
    fn java_components(&mut self, open: usize, close: usize, t: usize) {
        let mut j = open + 1;
        while j < close {
            while self.kind(j) == b'@' {
                j = self.skip_annotation(j).max(j + 1);
            }
            let start = j;
            let mut name = None;
            while j < close && self.kind(j) != b',' {
                match self.kind(j) {
                    b'<' | b'(' | b'[' => {
                        j = self.group(j).0;
                        continue;
                    }
                    b'a' => name = Some(j),
                    _ => {}
                }
                j += 1;
            }
            if let Some(n) = name.filter(|n| *n > start) {
                let field = FieldDecl {
                    name: self.word(n).unwrap_or("").into(),
                    ty: self.java_type(start, n - 1),
                    has_init: false,
                    constant: None,
                };
                self.types[t].fields.push(field);
            }
            j += 1;
        }
    }

    /// Java: the fields a member starting at `i` declares (`int a, b[] = {..};`), recorded in
    /// type `t`; nothing for a method, constructor, type or initialiser.
    fn java_fields(&mut self, i: usize, t: usize) {
        let mut j = i;
        loop {
            if self.kind(j) == b'@' {
                if self.is(j + 1, "interface") {
                    return;
                }
                j = self.skip_annotation(j).max(j + 1);
            } else if self.word(j).is_some_and(is_java_modifier) {
                j += 1;
            } else {
                break;
            }
        }
        if self.word(j).is_none()
            || matches!(
                self.word(j),
                Some("class" | "interface" | "enum" | "record")
            )
        {
            return;
        }
        let start = j;
        let mut fields: Vec<FieldDecl<'a>> = Vec::new();
        let mut ty: Option<std::borrow::Cow<'a, str>> = None;
        let (mut name, mut init) = (None::<usize>, None::<usize>);
        while j < self.toks.len() {
            let init_seen = init.is_some();
            match self.kind(j) {
                b'(' if !init_seen => return,
                b'{' if !init_seen => return,
                b'<' if !init_seen => {
                    j = self.group(j).0;
                    continue;
                }
                // Type arguments in an initialiser (`new HashMap<K, V>()`), not a comparison.
                b'<' if let Some(end) = self.angle_end(j) => {
                    j = end;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    j = self.group(j).0;
                    continue;
                }
                b'=' => init = Some(j + 1),
                b'a' if !init_seen => name = Some(j),
                b',' | b';' => {
                    let Some(n) = name else { return };
                    if fields.is_empty() {
                        ty = if n > start {
                            self.java_type(start, n - 1).filter(|t| t != "var")
                        } else {
                            None
                        };
                    }
                    let end = j;
                    fields.push(FieldDecl {
                        name: self.word(n).unwrap_or("").into(),
                        ty: ty.clone(),
                        has_init: init.is_some(),
                        constant: init.and_then(|at| self.constant_at(at, |k| k == end)),
                    });
                    if self.kind(j) == b';' {
                        break;
                    }
                    (name, init) = (None, None);
                }
                b'}' => return,
                _ => {}
            }
            j += 1;
        }
        if self.kind(j) == b';' {
            self.types[t].fields.extend(fields);
        }
    }

    /// The type path starting at token `j` (`a.b.C`, `a::b::C`) as written, without white
    /// space, and the index after it and its type arguments.
    fn path_at(&self, j: usize) -> Option<(usize, std::borrow::Cow<'a, str>)> {
        self.word(j)?;
        let mut end = j;
        loop {
            if self.kind(end + 1) == b'.' && self.word(end + 2).is_some() {
                end += 2;
            } else if self.kind(end + 1) == b':'
                && self.kind(end + 2) == b':'
                && self.word(end + 3).is_some()
            {
                end += 3;
            } else {
                break;
            }
        }
        let (a, b) = (self.toks[j].start as usize, self.toks[end].end as usize);
        let text = self.text.get(a..b)?;
        let path = if text.contains(char::is_whitespace) {
            text.split_whitespace().collect::<String>().into()
        } else {
            text.into()
        };
        let mut next = end + 1;
        if self.kind(next) == b'<' {
            next = self.group(next).0;
        }
        Some((next, path))
    }

    /// The index after an annotation at `j` (`@A`, `@a.B(..)`), or `j` when there is none.
    fn skip_annotation(&self, j: usize) -> usize {
        if self.kind(j) != b'@' || self.word(j + 1).is_none() {
            return j;
        }
        let mut k = j + 2;
        // A Kotlin use-site target: `@field:Id`, `@get:JsonProperty("x")`.
        if self.kind(k) == b':' && self.kind(k + 1) != b':' && self.word(k + 1).is_some() {
            k += 2;
        }
        while self.kind(k) == b'.' && self.word(k + 1).is_some() {
            k += 2;
        }
        if self.kind(k) == b'(' {
            k = self.group(k).0;
        }
        k
    }

    /// Java: the supertypes in a type's header, which goes on at `j` (after the name).
    fn java_supertypes(&self, mut j: usize) -> Vec<std::borrow::Cow<'a, str>> {
        let mut out = Vec::new();
        let mut listing = false;
        while j < self.toks.len() {
            match self.kind(j) {
                b'{' | b';' | b'}' => break,
                b'<' | b'(' => j = self.group(j).0,
                b'@' => j = self.skip_annotation(j).max(j + 1),
                b',' => j += 1,
                b'a' => match self.word(j) {
                    Some("extends" | "implements") => {
                        listing = true;
                        j += 1;
                    }
                    Some("permits") => {
                        listing = false;
                        j += 1;
                    }
                    _ if listing => match self.path_at(j) {
                        Some((next, path)) => {
                            out.push(path);
                            j = next;
                        }
                        None => j += 1,
                    },
                    _ => j += 1,
                },
                _ => j += 1,
            }
        }
        out
    }

    /// Kotlin: the supertypes after a type's name at `j`: past type parameters and a primary
    /// constructor, the list after `:` (`: Base(x), I by d, J<T>`).
    fn kotlin_header(&self, mut j: usize) -> (usize, Vec<std::borrow::Cow<'a, str>>) {
        loop {
            match self.kind(j) {
                b'<' => j = self.group(j).0,
                // The primary constructor's parameters end the header but for the list.
                b'(' => {
                    j = self.group(j).0;
                    if self.kind(j) != b':' {
                        return (j, Vec::new());
                    }
                }
                b'@' => j = self.skip_annotation(j).max(j + 1),
                b':' => return self.kotlin_super_list(j),
                b'a' if matches!(
                    self.word(j),
                    Some(
                        "private"
                            | "public"
                            | "internal"
                            | "protected"
                            | "actual"
                            | "expect"
                            | "constructor"
                    )
                ) =>
                {
                    j += 1
                }
                _ => return (j, Vec::new()),
            }
        }
    }

    /// Kotlin: the `{` of the body of a type whose header goes on at `j` (after its name or
    /// after `object`), if it has one: the header's grammar decides where it ends, since a
    /// body-less declaration may be followed by anything (`class A(val x: Int)⏎test { .. }`).
    fn kotlin_body(&self, j: usize) -> Option<usize> {
        let (mut end, _) = self.kotlin_header(j);
        if self.is(end, "where") {
            // Constraints: `where T : A, U : B<C>`.
            end += 1;
            while matches!(self.kind(end), b'a' | b':' | b',' | b'.' | b'?' | b'<') {
                end = if self.kind(end) == b'<' {
                    self.group(end).0
                } else {
                    end + 1
                };
            }
        }
        (self.kind(end) == b'{').then_some(end)
    }

    /// Kotlin: the supertype list after the `:` at `colon`, and the index where it ends.
    fn kotlin_super_list(&self, colon: usize) -> (usize, Vec<std::borrow::Cow<'a, str>>) {
        let mut out = Vec::new();
        let mut j = colon + 1;
        while j < self.toks.len() {
            j = self.skip_annotation(j);
            let mut next = if let Some((next, ty)) = self.kotlin_function_type(j) {
                out.push(ty.into());
                next
            } else {
                let Some((mut next, path)) = self.path_at(j) else {
                    break;
                };
                if is_kotlin_decl_start(&path) || path == "where" {
                    break;
                }
                out.push(path);
                if self.kind(next) == b'(' {
                    next = self.group(next).0;
                }
                next
            };
            if self.is(next, "by") {
                // The delegate: up to the next supertype or the body.
                next += 1;
                while next < self.toks.len()
                    && !matches!(self.kind(next), b',' | b'{' | b'}' | b';')
                {
                    if matches!(self.kind(next), b'(' | b'[') {
                        next = self.group(next).0;
                    } else if self
                        .word(next)
                        .is_some_and(|w| is_kotlin_decl_start(w) || w == "where")
                    {
                        break;
                    } else {
                        next += 1;
                    }
                }
            }
            if self.kind(next) != b',' {
                return (next, out);
            }
            j = next + 1;
        }
        (j, out)
    }

    /// The top-level items of the bracket group opening at `open`: (first, end) token
    /// ranges between its commas.
    fn items(&self, open: usize) -> Vec<(usize, usize)> {
        let close = self.group(open).0.saturating_sub(1);
        let mut out = Vec::new();
        let (mut j, mut start) = (open + 1, open + 1);
        while j < close {
            match self.kind(j) {
                b'(' | b'[' | b'{' => j = self.group(j).0,
                b'<' => j = self.angle_end(j).unwrap_or(j + 1),
                b',' => {
                    out.push((start, j));
                    j += 1;
                    start = j;
                }
                _ => j += 1,
            }
        }
        if start < close.min(j) {
            out.push((start, close.min(j)));
        }
        out
    }

    /// Rust: the index after the attributes (`#[..]`) and visibility (`pub(crate)`) at `j`.
    fn rust_item_head(&self, mut j: usize) -> usize {
        loop {
            if self.kind(j) == b'#' && self.kind(j + 1) == b'[' {
                j = self.group(j + 1).0;
            } else if self.is(j, "pub") {
                j += 1;
                if self.kind(j) == b'(' {
                    j = self.group(j).0;
                }
            } else {
                return j;
            }
        }
    }

    /// Rust: a type's text in tokens `a..b` as the front end writes it.
    fn rust_type(&self, a: usize, b: usize) -> Option<std::borrow::Cow<'a, str>> {
        if a >= b {
            return None;
        }
        let text = self
            .text
            .get(self.toks[a].start as usize..self.toks[b - 1].end as usize)?;
        Some(crate::lang::rust::clean_ty(text).into())
    }

    /// Rust: the fields of the struct or union, or the variants of the enum, whose header goes
    /// on at `j` (after the name), recorded in type `t`.
    fn rust_fields(&mut self, mut j: usize, t: usize) {
        if self.kind(j) == b'<' {
            j = self.group(j).0;
        }
        let variants = self.types[t].kind == TypeKind::Enum;
        let mut fields = Vec::new();
        if self.kind(j) == b'(' && !variants {
            for (k, (a, b)) in self.items(j).into_iter().enumerate() {
                let a = self.rust_item_head(a);
                fields.push(FieldDecl {
                    name: k.to_string().into(),
                    ty: self.rust_type(a, b),
                    has_init: false,
                    constant: None,
                });
            }
        } else if let Some(open) = self.body_brace(j) {
            for (a, b) in self.items(open) {
                let a = self.rust_item_head(a);
                let Some(name) = self.word(a) else { continue };
                let (ty, has_init) = if variants {
                    // A discriminant: `A = 1`, after the name.
                    (None, self.kind(a + 1) == b'=')
                } else if self.kind(a + 1) == b':' {
                    (self.rust_type(a + 2, b), false)
                } else {
                    continue;
                };
                let constant = has_init
                    .then(|| self.constant_at(a + 2, |k| k == b))
                    .flatten();
                fields.push(FieldDecl {
                    name: name.into(),
                    ty,
                    has_init,
                    constant,
                });
            }
        }
        self.types[t].fields = fields;
    }

    /// Rust: a `const` or `static` at `i`: a field of the impl or trait whose body this is,
    /// or a file-level binding; none in a function.
    fn rust_binding(&mut self, i: usize) {
        let mut j = i + 1;
        if self.is(j, "mut") {
            j += 1;
        }
        let Some(name) = self.word(j) else { return };
        if self.kind(j + 1) != b':' {
            return;
        }
        let start = j + 2;
        let mut k = start;
        while k < self.toks.len() && !matches!(self.kind(k), b'=' | b';' | b'{' | b'}') {
            match self.kind(k) {
                b'(' | b'[' => k = self.group(k).0,
                b'<' => k = self.angle_end(k).unwrap_or(k + 1),
                _ => k += 1,
            }
        }
        let has_init = self.kind(k) == b'=';
        let field = FieldDecl {
            name: name.into(),
            ty: self.rust_type(start, k),
            has_init,
            constant: has_init
                .then(|| self.constant_at(k + 1, |e| self.kind(e) == b';'))
                .flatten(),
        };
        match self.frames.split_last() {
            Some((Frame::Type(_, t), outer))
                if outer.iter().all(|f| matches!(f, Frame::Module)) =>
            {
                self.types[*t].fields.push(field)
            }
            None => self.globals.push(field),
            Some((Frame::Module, outer)) if outer.iter().all(|f| matches!(f, Frame::Module)) => {
                self.globals.push(field)
            }
            _ => {}
        }
    }

    /// Kotlin: the type written at `j`, as the front end names it (a path's names joined by
    /// `.`, a function type's text), and the index after it; `param` for a constructor
    /// parameter's.
    fn kotlin_type(&self, j: usize, param: bool) -> (usize, Option<std::borrow::Cow<'a, str>>) {
        let at = j;
        let mut j = j;
        while self.kind(j) == b'@' {
            let past = self.skip_annotation(j).max(j + 1);
            // `@Composable () -> Unit`: the parentheses are the function type's.
            if self.kind(past) == b'-' && self.kind(past + 1) == b'>' && self.kind(past - 1) == b')'
            {
                j += 2;
                while self.kind(j) == b'.' && self.word(j + 1).is_some() {
                    j += 2;
                }
            } else {
                j = past;
            }
        }
        // An annotated function type keeps its annotations in the facts' text
        // (`@Composable () -> Unit`).
        if let Some((end, _)) = self.kotlin_function_type(j) {
            // In a constructor parameter a nullable result makes the whole type nullable,
            // and the facts name the function type inside, without its `suspend`
            // (`val f: suspend () -> T?`).
            let at = if param && self.kind(end - 1) == b'?' && self.is(at, "suspend") {
                at + 1
            } else {
                at
            };
            return (end, self.kotlin_type_text(at, end));
        }
        let start = j;
        if self.is(j, "suspend") {
            j += 1;
        }
        if self.kind(j) == b'(' {
            let (_, inner) = self.kotlin_type(j + 1, param);
            let mut end = self.group(j).0;
            if self.kind(end) == b'?' {
                end += 1;
            }
            return (end, inner);
        }
        let mut names: Vec<&'a str> = Vec::new();
        while let Some(w) = self.word(j) {
            names.push(w.trim_matches('`'));
            j += 1;
            if self.kind(j) == b'<' {
                j = self.group(j).0;
            }
            if self.kind(j) == b'.' && self.word(j + 1).is_some() {
                j += 1;
            } else {
                break;
            }
        }
        // A function type with a receiver: `Interceptor.Chain.() -> Response`.
        if self.kind(j) == b'.'
            && self.kind(j + 1) == b'('
            && let Some((end, _)) = self.kotlin_function_type(j + 1)
        {
            return (end, self.kotlin_type_text(start, end));
        }
        if self.kind(j) == b'?' {
            j += 1;
        }
        let ty = match names.as_slice() {
            [] | ["dynamic"] => None,
            [one] => Some((*one).into()),
            many => Some(many.join(".").into()),
        };
        (j, ty)
    }

    /// The type whose body a declaration at this level is in, or `None` at the top level
    /// (also `None` inside anything else: a body or a block).
    fn member_of(&self) -> Option<Option<usize>> {
        match self.frames.last() {
            None => Some(None),
            Some(Frame::Type(_, t) | Frame::Enum(_, t, _) | Frame::Anon(t)) => Some(Some(*t)),
            _ => None,
        }
    }

    fn add_field(&mut self, to: Option<usize>, field: FieldDecl<'a>) {
        match to {
            Some(t) => self.types[t].fields.push(field),
            None => self.globals.push(field),
        }
    }

    /// Kotlin: the property declared by the `val`/`var` at `i`, whose name is at `name_at`
    /// (`val (a, b) = ..` declares one per name).
    fn kotlin_property(&mut self, i: usize, name_at: usize) {
        let Some(to) = self.member_of() else { return };
        if self.kind(i + 1) == b'(' {
            let end = self.group(i + 1).0;
            let has_init = self.kind(end) == b'=';
            // (Each name holds the whole initialiser.)
            let constant = has_init
                .then(|| self.constant_at(end + 1, |k| self.kotlin_init_ends(k)))
                .flatten();
            for (a, b) in self.items(i + 1) {
                let Some(name) = self.word(a) else { continue };
                let ty = if self.kind(a + 1) == b':' && a + 2 < b {
                    self.kotlin_type(a + 2, false).1
                } else {
                    None
                };
                let field = FieldDecl {
                    name: name.trim_matches('`').into(),
                    ty,
                    has_init,
                    constant: constant.clone(),
                };
                self.add_field(to, field);
            }
            return;
        }
        let Some(name) = self.word(name_at) else {
            return;
        };
        let mut k = name_at + 1;
        let mut ty = None;
        if self.kind(k) == b':' {
            (k, ty) = self.kotlin_type(k + 1, false);
        }
        let field = FieldDecl {
            name: name.trim_matches('`').into(),
            ty,
            has_init: self.kind(k) == b'=' || self.is(k, "by"),
            // (A delegate, `by X.y`, is the initialiser too.)
            constant: (self.kind(k) == b'=' || self.is(k, "by"))
                .then(|| self.constant_at(k + 1, |e| self.kotlin_init_ends(e)))
                .flatten(),
        };
        self.add_field(to, field);
    }

    /// Kotlin: the properties a primary constructor at `open` declares (`val x: Int = 1`), as
    /// fields of type `t`.
    fn kotlin_ctor_fields(&mut self, open: usize, t: usize) {
        for (a, b) in self.items(open) {
            let mut j = a;
            loop {
                if self.kind(j) == b'@' {
                    j = self.skip_annotation(j).max(j + 1);
                } else if self.word(j).is_some_and(|w| {
                    is_kotlin_modifier(w) || matches!(w, "override" | "vararg" | "lateinit")
                }) {
                    j += 1;
                } else {
                    break;
                }
            }
            if !matches!(self.word(j), Some("val" | "var")) {
                continue;
            }
            let Some(name) = self.word(j + 1) else {
                continue;
            };
            let mut k = j + 2;
            let mut ty = None;
            if self.kind(k) == b':' {
                (k, ty) = self.kotlin_type(k + 1, true);
            }
            let has_init = k < b && self.kind(k) == b'=';
            let field = FieldDecl {
                name: name.trim_matches('`').into(),
                ty,
                has_init,
                constant: has_init
                    .then(|| self.constant_at(k + 1, |e| e == b))
                    .flatten(),
            };
            self.types[t].fields.push(field);
        }
    }

    /// The constant an initialiser starting at token `j` holds, if it is exactly one (a
    /// string, a constant's name, or one of them wrapped in a constant-building call) and
    /// the initialiser ends where `ends` says.
    fn constant_at(&self, j: usize, ends: impl Fn(usize) -> bool) -> Option<Constant<'a>> {
        // Nothing the lexer leaves out (a character literal, an operator) may stand before it.
        let gap = self
            .text
            .get(self.toks.get(j.checked_sub(1)?)?.end as usize..self.toks.get(j)?.start as usize)?
            .trim();
        if !(gap.is_empty() || gap.starts_with("//") || gap.starts_with("/*")) {
            return None;
        }
        let (c, next) = self.constant_expr(j, 0)?;
        ends(next).then_some(c)
    }

    fn constant_expr(&self, j: usize, depth: usize) -> Option<(Constant<'a>, usize)> {
        if depth > 8 {
            return None;
        }
        // A chain (`a.b`, `X.y().z`, `5.seconds`, `HeaderName::from_static(..)`) from a
        // primary: the facts file a field access under its name, a plain string as itself,
        // and a constant-building call under its one argument's constant.
        let mut k = j;
        let primary = match self.kind(k) {
            b'"' => Some(Constant::Str(self.string_value(k)?.into())),
            b'0' | b'\'' => None,
            b'a' if self.lang == Lang::Java && self.is(k, "new") => return None,
            b'a' => {
                let w = self.word(k)?;
                let literal = match self.lang {
                    Lang::Java | Lang::Kotlin => matches!(w, "true" | "false" | "null"),
                    Lang::Rust => matches!(w, "true" | "false"),
                };
                (!literal).then(|| Constant::Alias(w.into()))
            }
            _ => return None,
        };
        let mut last = self.word(k);
        k += 1;
        let mut steps = 0;
        let mut call: Option<usize> = None;
        loop {
            // (`::` is a path only in Rust; in Java and Kotlin a method reference.)
            let sep = match self.kind(k) {
                b'.' => 1,
                b':' if self.lang == Lang::Rust && self.kind(k + 1) == b':' => 2,
                _ => 0,
            };
            if sep > 0 && self.word(k + sep).is_some() {
                last = self.word(k + sep);
                call = None;
                k += sep + 1;
            } else if self.kind(k) == b'(' && last.is_some() && call.is_none() {
                call = Some(k);
                k = self.group(k).0;
            } else {
                break;
            }
            steps += 1;
        }
        if let Some(open) = call {
            if !last.is_some_and(|l| crate::constants::CONST_WRAPPERS.contains(&l)) {
                return None;
            }
            let (end, n) = self.group(open);
            if n != 1 {
                return None;
            }
            let (inner, after) = self.constant_expr(open + 1, depth + 1)?;
            return (after + 1 == end).then_some((inner, end));
        }
        if steps == 0 {
            return Some((primary?, k));
        }
        Some((Constant::Alias(last?.into()), k))
    }

    /// The value of the string literal token at `j`, as the front end decodes it; `None` for
    /// a Kotlin template (`"$a"`), which is not a constant.
    fn string_value(&self, j: usize) -> Option<String> {
        let t = self.toks.get(j)?;
        let text = self.text.get(t.start as usize..t.end as usize)?;
        match self.lang {
            Lang::Java => Some(crate::lang::java::string_content(text)),
            Lang::Rust => Some(crate::lang::rust::decode_str(text)),
            Lang::Kotlin => kotlin_string(text),
        }
    }

    /// Kotlin: whether the token at `k` ends a property's initialiser (the next declaration,
    /// an accessor, or the end of the body).
    fn kotlin_init_ends(&self, k: usize) -> bool {
        if k >= self.toks.len() || matches!(self.kind(k), b'}' | b';' | b'@') {
            return true;
        }
        if self
            .word(k)
            .is_some_and(|w| is_kotlin_decl_start(w) || matches!(w, "get" | "set" | "typealias"))
        {
            return true;
        }
        // A name on the next line starts a new statement (an operator between would be a
        // continuation, and the lexer keeps no `+`: so only white space and comments may
        // stand between).
        let gap = self
            .toks
            .get(k.wrapping_sub(1))
            .and_then(|p| self.text.get(p.end as usize..self.toks[k].start as usize))
            .unwrap_or("");
        let rest = gap.trim();
        self.kind(k) == b'a'
            && gap.contains('\n')
            && (rest.is_empty() || rest.starts_with("//") || rest.starts_with("/*"))
    }

    /// Kotlin: the text of tokens `a..b` as the front end writes a type it does not name by
    /// its path: up to the first `<`, without a trailing `?`.
    fn kotlin_type_text(&self, a: usize, b: usize) -> Option<std::borrow::Cow<'a, str>> {
        let text = self
            .text
            .get(self.toks[a].start as usize..self.toks[b.checked_sub(1)?].end as usize)?;
        let text = text.split('<').next().unwrap_or(text).trim();
        Some(text.trim_end_matches(['?', '!']).trim().to_string().into())
    }

    /// Kotlin: a function type at `j` as a supertype (`(Request) -> R`, `suspend () -> T`), as
    /// the facts write it: its text up to the first `<`, without a trailing `?`; and the
    /// index after it.
    fn kotlin_function_type(&self, j: usize) -> Option<(usize, String)> {
        let start = j;
        let mut j = j;
        if self.is(j, "suspend") {
            j += 1;
        }
        if self.kind(j) != b'(' {
            return None;
        }
        // `(A) -> (B) -> C`: parameter groups and arrows, then the result type.
        let mut last;
        loop {
            j = self.group(j).0;
            if !(self.kind(j) == b'-' && self.kind(j + 1) == b'>') {
                return None;
            }
            j += 2;
            if self.kind(j) == b'(' {
                continue;
            }
            let (next, _) = self.path_at(j)?;
            last = next - 1;
            j = next;
            if self.kind(j) == b'?' {
                last = j;
                j += 1;
            }
            break;
        }
        let (a, b) = (
            self.toks[start].start as usize,
            self.toks[last].end as usize,
        );
        let text = self.text.get(a..b)?;
        let text = text.split('<').next().unwrap_or(text).trim();
        Some((j, text.trim_end_matches(['?', '!']).trim().to_string()))
    }

    /// Rust: a trait's bounds after its name at `j` (`: Clone + fmt::Debug`), without
    /// `?Sized` and lifetimes (which the lexer leaves out).
    fn rust_bounds(&self, mut j: usize) -> Vec<std::borrow::Cow<'a, str>> {
        if self.kind(j) == b'<' {
            j = self.group(j).0;
        }
        let mut out = Vec::new();
        if self.kind(j) != b':' {
            return out;
        }
        j += 1;
        while j < self.toks.len() && !matches!(self.kind(j), b'{' | b';' | b'}') {
            if self.is(j, "where") {
                break;
            }
            let relaxed = self.kind(j) == b'?';
            if relaxed {
                j += 1;
            }
            match self.path_at(j) {
                Some((next, path)) => {
                    if !relaxed {
                        out.push(path);
                    }
                    j = next;
                }
                None => j += 1,
            }
        }
        out
    }

    /// Kotlin: is the token at `i`, in a type's body, inside a function's expression body
    /// (`fun f() = object : X { .. }`, `get() = ..`) rather than a property's initialiser? The
    /// declaration it is in is read backwards, up to the brace or `;` before it.
    fn in_expression_body(&self, i: usize) -> bool {
        let mut depth = 0usize;
        for j in (i.saturating_sub(MAX_TYPE_ARGS)..i).rev() {
            match self.kind(j) {
                b')' | b']' => depth += 1,
                b'(' | b'[' => depth = depth.saturating_sub(1),
                b'{' | b'}' | b';' => return false,
                b'a' if depth == 0 => match self.word(j) {
                    Some("fun") => return true,
                    Some("get" | "set") if self.kind(j + 1) == b'(' => return true,
                    Some("val" | "var") => return false,
                    _ => {}
                },
                _ => {}
            }
        }
        false
    }

    /// Records a type declared here and returns its index.
    fn push_type(&mut self, name: Option<&'a str>, kind: TypeKind) -> usize {
        // The type whose body this is; none inside a function's body.
        // Other braces are skipped in Java (array initialisers; a lambda's body is a function
        // only when its `{` follows `->`, and then it is not a type's body either), but in
        // Kotlin a brace in an initialiser is a lambda: a function.
        let parent = self.frames.iter().rev().find_map(|f| match f {
            Frame::Type(_, t) | Frame::Enum(_, t, _) | Frame::Anon(t) => Some(Some(*t)),
            Frame::Body => Some(None),
            Frame::Other if self.lang == Lang::Kotlin => Some(None),
            Frame::Other | Frame::Module => None,
        });
        self.types.push(TyDecl {
            name,
            kind,
            parent: parent.flatten(),
            supertypes: Vec::new(),
            fields: Vec::new(),
        });
        self.types.len() - 1
    }

    fn run(&mut self) {
        let mut i = 0;
        while i < self.toks.len() {
            let k = self.kind(i);
            match k {
                b'{' => {
                    let declared = self.next_frame.filter(|(b, _)| *b == i);
                    let frame = match declared {
                        Some((_, Frame::Enum(n, t, _))) => {
                            self.next_frame = None;
                            Frame::Enum(n, t, self.enum_constants(i, t))
                        }
                        Some((_, f)) => {
                            self.next_frame = None;
                            f
                        }
                        None if self.lang == Lang::Java && self.initializer(i) => Frame::Body,
                        None => Frame::Other,
                    };
                    self.frames.push(frame);
                    self.opened = true;
                    i += 1;
                }
                b'}' => {
                    self.frames.pop();
                    i += 1;
                }
                b'a' | b'@' if self.lang == Lang::Java && self.member_start(i).is_some() => {
                    if let Some(t) = self.member_start(i) {
                        self.java_fields(i, t);
                    }
                    i = if k == b'a' { self.java(i) } else { i + 1 };
                }
                b'a' => {
                    i = match self.lang {
                        Lang::Java => self.java(i),
                        Lang::Kotlin => self.kotlin(i),
                        Lang::Rust => self.rust(i),
                    };
                }
                _ => i += 1,
            }
        }
    }

    /// A type declaration at `i` (its keyword): the name, and its body is a type frame.
    fn type_decl(&mut self, i: usize, kind: TypeKind) -> Option<(usize, &'a str)> {
        let name = self.word(i + 1)?;
        if matches!(self.kind(i.wrapping_sub(1)), b'.' | b':') && i > 0 {
            return None;
        }
        let t = self.push_type(Some(name), kind);
        self.types[t].supertypes = match self.lang {
            Lang::Java => self.java_supertypes(i + 2),
            Lang::Kotlin => self.kotlin_header(i + 2).1,
            Lang::Rust => self.rust_bounds(i + 2),
        };
        let frame = if kind == TypeKind::Enum {
            Frame::Enum(name, t, 0)
        } else {
            Frame::Type(name, t)
        };
        let brace = match self.lang {
            Lang::Kotlin => self.kotlin_body(i + 2),
            _ => self.body_brace(i + 2),
        };
        self.opens(brace, frame);
        Some((i + 2, name))
    }

    /// The enum whose body this is.
    fn enum_name(&self) -> Option<std::borrow::Cow<'a, str>> {
        match self.frames.last() {
            Some(Frame::Enum(n, ..)) => Some((*n).into()),
            _ => None,
        }
    }

    /// An enum constant with a body (`A(1) { .. }`, `LIVE { .. }`) at `i`, in an enum's body:
    /// the `{` of its body.
    fn enum_constant_body(&self, i: usize) -> Option<usize> {
        if !matches!(self.frames.last(), Some(Frame::Enum(..)))
            || !matches!(self.kind(i.wrapping_sub(1)), b'{' | b',')
        {
            return None;
        }
        let mut j = i + 1;
        if self.kind(j) == b'(' {
            j = self.group(j).0;
        }
        (self.kind(j) == b'{').then_some(j)
    }

    fn java(&mut self, i: usize) -> usize {
        let w = self.word(i).unwrap_or("");
        let after_dot = i > 0 && self.kind(i - 1) == b'.';
        if w == "import" && self.frames.is_empty() {
            return self.dotted_import(i + usize::from(self.is(i + 1, "static")) + 1);
        }
        // `record` is a keyword only where a record is declared: `record R(..)`.
        let record =
            w == "record" && self.word(i + 1).is_some() && matches!(self.kind(i + 2), b'(' | b'<');
        if matches!(w, "class" | "interface" | "enum") && !after_dot || record {
            let kind = match w {
                "enum" => TypeKind::Enum,
                "interface" => TypeKind::Interface,
                "record" => TypeKind::Record,
                _ => TypeKind::Class,
            };
            let Some((j, name)) = self.type_decl(i, kind) else {
                return i + 1;
            };
            if record {
                // A record's canonical constructor (compact or implicit) takes its components.
                let k = if self.kind(j) == b'<' {
                    self.group(j).0
                } else {
                    j
                };
                let (end, n) = self.group(k);
                self.record_components = Some((name, n));
                let t = self.types.len() - 1;
                self.java_components(k, end - 1, t);
            }
            return j;
        }
        if w == "new" {
            // An anonymous class: `new T(..) { .. }`.
            let mut j = i + 1;
            while matches!(self.kind(j), b'a' | b'.') || self.kind(j) == b'<' {
                if self.kind(j) == b'<' {
                    j = self.group(j).0;
                } else {
                    j += 1;
                }
            }
            if self.kind(j) == b'(' {
                let end = self.group(j).0;
                if self.kind(end) == b'{' {
                    let t = self.push_type(None, TypeKind::Anonymous);
                    self.types[t].supertypes =
                        self.path_at(i + 1).map(|(_, p)| p).into_iter().collect();
                    self.opens(Some(end), Frame::Anon(t));
                }
            }
            return i + 1;
        }
        if let Some(b) = self.enum_constant_body(i) {
            let t = self.push_type(None, TypeKind::Anonymous);
            self.types[t].supertypes = self.enum_name().into_iter().collect();
            self.opens(Some(b), Frame::Anon(t));
            return i + 1;
        }
        if self.kind(i + 1) != b'(' || !self.at_member_level() {
            // A compact record constructor: `R {`.
            if self.kind(i + 1) == b'{'
                && self.at_member_level()
                && let Some((r, n)) = self.record_components
                && r == w
                && self.owner() == Some(r)
                && !matches!(self.kind(i.wrapping_sub(1)), b'.' | b'=')
                && !self.is(i.wrapping_sub(1), "new")
            {
                self.push(w, n, true, None);
                self.opens(Some(i + 1), Frame::Body);
            }
            return i + 1;
        }
        let prev = self.kind(i.wrapping_sub(1));
        let prev_word = self.word(i.wrapping_sub(1));
        let ctor = self.owner() == Some(w);
        let typed = i > 0
            && matches!(prev, b'a' | b'>' | b']')
            && !(prev == b'>' && i > 1 && self.kind(i - 2) == b'-')
            && !prev_word.is_some_and(|p| JAVA_NOT_A_TYPE.contains(&p))
            && !(prev == b'>' && self.generic_call(i - 1));
        if !(typed || ctor && matches!(prev, b'{' | b'}' | b';' | b')' | b'a' | b'>')) {
            return i + 1;
        }
        if ctor && self.is(i.wrapping_sub(1), "new") {
            return i + 1;
        }
        let (mut j, arity) = self.group(i + 1);
        // `throws A, B`, `[]` after the parameters, `default ..` of an annotation element
        // (whose value may be an array: `default { }`).
        while j < self.toks.len() && !matches!(self.kind(j), b'{' | b';' | b'}') {
            if self.is(j, "default") {
                while j < self.toks.len() && self.kind(j) != b';' {
                    j += 1;
                }
                break;
            }
            j += 1;
        }
        let has_body = self.kind(j) == b'{';
        self.push(w, arity, has_body, Some(i + 1));
        if has_body {
            self.opens(Some(j), Frame::Body);
        }
        j
    }

    /// A Java initializer block at the `{` at `i`, in a type's body: `static { .. }` is
    /// `<clinit>`, a bare `{ .. }` is `<init>` (recorded here).
    fn initializer(&mut self, i: usize) -> bool {
        if !self.at_member_level() || i == 0 {
            return false;
        }
        let name = if self.is(i - 1, "static") {
            "<clinit>"
        } else if matches!(self.kind(i - 1), b'{' | b'}' | b';') {
            "<init>"
        } else {
            return false;
        };
        self.push(name, 0, true, None);
        true
    }

    /// Is the `>` at `close` the end of a call's type arguments (`Builder.<T>newBuilder()`)?
    fn generic_call(&self, close: usize) -> bool {
        let mut depth = 0usize;
        let mut j = close;
        loop {
            match self.kind(j) {
                b'>' => depth += 1,
                b'<' => {
                    depth -= 1;
                    if depth == 0 {
                        return j > 0 && self.kind(j - 1) == b'.';
                    }
                }
                b'{' | b'}' | b';' => return false,
                _ => {}
            }
            if j == 0 {
                return false;
            }
            j -= 1;
        }
    }

    fn kotlin(&mut self, i: usize) -> usize {
        let w = self.word(i).unwrap_or("");
        let after_dot = i > 0 && matches!(self.kind(i - 1), b'.' | b':');
        // (An import after code, like a build script's `plugins { }`, is not read as one.)
        if w == "import" && self.frames.is_empty() && !after_dot && !self.opened {
            return self.dotted_import(i + 1);
        }
        if let Some(b) = self.enum_constant_body(i) {
            // An enum entry with a body is a type of its own.
            let t = self.push_type(Some(w), TypeKind::Object);
            self.types[t].supertypes = self.enum_name().into_iter().collect();
            self.opens(Some(b), Frame::Type(w, t));
            return i + 1;
        }
        match w {
            "class" | "interface" | "object" if !after_dot => {
                if w == "object" && self.is(i.wrapping_sub(1), "companion") {
                    let named = self.word(i + 1).filter(|n| !is_kotlin_keyword(n));
                    let name = named.unwrap_or("Companion");
                    let j = i + 1 + usize::from(named.is_some());
                    let brace = self.kotlin_body(j);
                    let t = self.push_type(Some(name), TypeKind::Object);
                    self.opens(brace, Frame::Type(name, t));
                    self.types[t].supertypes = self.kotlin_header(j).1;
                    if self.kind(j) == b':' {
                        self.super_call(j, name);
                    }
                    return j;
                }
                if w == "object" && self.word(i + 1).is_none() {
                    // An object expression: `object : Runnable { .. }`; its members have no
                    // owner.
                    let brace = self.kotlin_body(i + 1);
                    let t = self.push_type(None, TypeKind::Anonymous);
                    if self.in_expression_body(i) {
                        self.types[t].parent = None;
                    }
                    self.types[t].supertypes = self.kotlin_header(i + 1).1;
                    self.opens(brace, Frame::Anon(t));
                    return i + 1;
                }
                // (The modifiers before the keyword: `enum class`, `annotation class`.)
                let modifier = |m: &str| {
                    (1..=6)
                        .map_while(|k| self.word(i.checked_sub(k)?))
                        .take_while(|w| is_kotlin_modifier(w))
                        .any(|x| x == m)
                };
                let kind = match w {
                    _ if self.is(i.wrapping_sub(1), "enum") => TypeKind::Enum,
                    _ if modifier("annotation") => TypeKind::Interface,
                    "interface" => TypeKind::Interface,
                    "object" => TypeKind::Object,
                    _ => TypeKind::Class,
                };
                let Some((mut j, name)) = self.type_decl(i, kind) else {
                    return i + 1;
                };
                if self.kind(j) == b'<' {
                    j = self.group(j).0;
                }
                // A primary constructor: `class D(..)`, `class D private constructor(..)`,
                // `class D @Inject constructor(..)`.
                let mut k = j;
                loop {
                    if self.kind(k) == b'@' {
                        k += 2;
                        while self.kind(k) == b'.' {
                            k += 2;
                        }
                        if self.kind(k) == b'(' {
                            k = self.group(k).0;
                        }
                    } else if matches!(
                        self.word(k),
                        Some("private" | "public" | "internal" | "protected" | "actual" | "expect")
                    ) {
                        k += 1;
                    } else {
                        break;
                    }
                }
                if self.is(k, "constructor") {
                    k += 1;
                }
                // (Its owner is the class itself, whose body has not opened yet.)
                let ctor = |o: &mut Self, arity: usize| {
                    let (has_self, varargs) = o.param_traits(k);
                    o.out.push(FnDecl {
                        name: name.into(),
                        arity,
                        owner: Some(name),
                        owner_type: o.types.len().checked_sub(1),
                        has_body: true,
                        has_self,
                        varargs,
                    });
                };
                if w == "class" && self.kind(k) == b'(' {
                    let (end, n) = self.group(k);
                    ctor(self, n);
                    let t = self.types.len() - 1;
                    self.kotlin_ctor_fields(k, t);
                    return end;
                }
                if self.kind(k) == b':' && w != "interface" {
                    self.super_call(k, name);
                }
                j
            }
            // (`fun interface I { .. }` declares an interface.)
            "fun" if !after_dot && !self.is(i + 1, "interface") => self.kotlin_fun(i),
            "constructor" if self.at_member_level() && self.kind(i + 1) == b'(' => {
                let (mut j, n) = self.group(i + 1);
                let owner = self.owner().unwrap_or("");
                // `: this(..)` / `: super(..)` delegation before the body.
                if self.kind(j) == b':' && self.kind(j + 2) == b'(' {
                    j = self.group(j + 2).0;
                }
                let has_body = self.kind(j) == b'{';
                self.push(owner, n, has_body, Some(i + 1));
                if has_body {
                    self.opens(Some(j), Frame::Body);
                }
                j
            }
            "init" if self.at_member_level() && self.kind(i + 1) == b'{' => {
                self.push("<init>", 0, true, None);
                self.opens(Some(i + 1), Frame::Body);
                i + 1
            }
            "val" | "var"
                if !after_dot
                    && self.kind(i.wrapping_sub(1)) != b'('
                    && (self.frames.is_empty() || self.at_member_level()) =>
            {
                // The property's name: after a receiver (`val List<T>.x`) or type parameters.
                let mut j = i + 1;
                if self.kind(j) == b'<' {
                    j = self.group(j).0;
                }
                let mut name = self.word(j);
                loop {
                    let mut k = j + 1;
                    if self.kind(k) == b'<' {
                        k = self.group(k).0;
                    }
                    if self.kind(k) == b'?' {
                        k += 1;
                    }
                    if self.kind(k) == b'.' && self.word(k + 1).is_some() {
                        j = k + 1;
                        name = self.word(j);
                    } else {
                        break;
                    }
                }
                self.property = name.map(|n| (self.frames.len(), n));
                self.kotlin_property(i, j);
                j + 1
            }
            "get" | "set"
                if !after_dot
                    && self.kind(i + 1) == b'('
                    && (self.frames.is_empty() || self.at_member_level()) =>
            {
                let Some((_, prop)) = self.property.filter(|(l, _)| *l == self.frames.len()) else {
                    return i + 1;
                };
                let (j, n) = self.group(i + 1);
                // An accessor follows its property's header (`val x: Int get() = ..`); a call
                // `get(..)` in an initialiser does not.
                let header_end = matches!(self.kind(i - 1), b'a' | b'>' | b'?' | b')' | b']');
                if !header_end || n != usize::from(w == "set") {
                    return i + 1;
                }
                let name = format!("<{w}-{prop}>");
                let mut k = j;
                if self.kind(k) == b':' {
                    k += 2;
                }
                let has_body = matches!(self.kind(k), b'{' | b'=');
                self.push(name, n, has_body, Some(i + 1));
                if self.kind(k) == b'{' {
                    self.opens(Some(k), Frame::Body);
                }
                j
            }
            _ => i + 1,
        }
    }

    /// No primary constructor, but a superclass constructor called in the supertypes at
    /// `colon`: `class X : Base()`, `object T : Table("t")`, `companion object : Log()`: a
    /// constructor of no parameters.
    fn super_call(&mut self, colon: usize, name: &'a str) {
        let mut m = colon + 1;
        // (A declaration without a body ends before the next one's annotation or keyword.)
        while m < self.toks.len() && !matches!(self.kind(m), b'{' | b'}' | b';' | b'@' | b'=') {
            match self.kind(m) {
                b'(' => {
                    self.out.push(FnDecl {
                        name: name.into(),
                        arity: 0,
                        owner: Some(name),
                        owner_type: self.types.len().checked_sub(1),
                        has_body: true,
                        has_self: false,
                        varargs: false,
                    });
                    return;
                }
                b'<' => m = self.group(m).0,
                // Delegation (`: I by impl`) makes one too.
                b'a' if self.is(m, "by") => {
                    self.out.push(FnDecl {
                        name: name.into(),
                        arity: 0,
                        owner: Some(name),
                        owner_type: self.types.len().checked_sub(1),
                        has_body: true,
                        has_self: false,
                        varargs: false,
                    });
                    return;
                }
                b'a' if self.is(m, "where") => return,
                b'a' if is_kotlin_decl_start(self.word(m).unwrap_or("")) => return,
                _ => m += 1,
            }
        }
    }

    fn kotlin_fun(&mut self, i: usize) -> usize {
        let mut j = i + 1;
        if self.kind(j) == b'<' {
            j = self.group(j).0;
        }
        // A receiver written as a function type: `fun (suspend () -> T).retrying(..)`.
        if self.kind(j) == b'(' {
            let end = self.group(j).0;
            if self.kind(end) == b'.' {
                j = end + 1;
            }
        }
        // Up to the `(` of the parameters: a receiver type and `.`, then the name.
        let mut name = None;
        while j < self.toks.len() && self.kind(j) != b'(' {
            match self.kind(j) {
                b'a' => name = self.word(j),
                b'<' => {
                    j = self.group(j).0;
                    continue;
                }
                b'{' | b'}' | b';' | b'=' => return j,
                _ => {}
            }
            j += 1;
        }
        let Some(name) = name else {
            return j; // an anonymous function: a lambda
        };
        let (mut k, n) = self.group(j);
        // `: ReturnType`, `where T : ..`, up to the body.
        while k < self.toks.len() {
            match self.kind(k) {
                b'{' | b'=' => break,
                b'}' | b';' | b'@' => break,
                b'(' | b'<' => {
                    k = self.group(k).0;
                    continue;
                }
                b'a' if is_kotlin_decl_start(self.word(k).unwrap_or("")) => break,
                _ => k += 1,
            }
        }
        let has_body = matches!(self.kind(k), b'{' | b'=');
        self.push(name, n, has_body, Some(j));
        if self.kind(k) == b'{' {
            self.opens(Some(k), Frame::Body);
        }
        k
    }

    fn rust(&mut self, i: usize) -> usize {
        let w = self.word(i).unwrap_or("");
        match w {
            "use" if !matches!(self.kind(i.wrapping_sub(1)), b':' | b'.') => self.rust_use(i + 1),
            "crate" if self.is(i.wrapping_sub(1), "extern") => {
                if let Some(name) = self.word(i + 1) {
                    self.imports.push(name.into());
                }
                i + 2
            }
            "trait" => self
                .type_decl(i, TypeKind::Interface)
                .map_or(i + 1, |(j, _)| j),
            "struct" | "union" | "enum" if self.word(i + 1).is_some() => {
                let kind = if w == "enum" {
                    TypeKind::Enum
                } else {
                    TypeKind::Class
                };
                let Some((j, _)) = self.type_decl(i, kind) else {
                    return i + 1;
                };
                self.rust_fields(j, self.types.len() - 1);
                j
            }
            // (Not `const fn`, `impl const`, or a const generic parameter `<const N: usize>`.)
            "const" | "static"
                if !matches!(
                    self.word(i + 1),
                    Some("fn" | "unsafe" | "async" | "extern") | None
                ) && !self.is(i.wrapping_sub(1), "impl")
                    && !matches!(self.kind(i.wrapping_sub(1)), b'<' | b',') =>
            {
                self.rust_binding(i);
                i + 1
            }
            "impl" => {
                // The implementing type: after `for`, else the path after `impl<..>`.
                let mut j = i + 1;
                if self.kind(j) == b'<' {
                    j = self.group(j).0;
                }
                let mut name = None;
                let mut tr = None;
                while j < self.toks.len() && !matches!(self.kind(j), b'{' | b';') {
                    match self.kind(j) {
                        // `impl X for Arc<Handle>`: the facts name what the pointer points to.
                        b'<' if name
                            .is_some_and(|(n, _)| crate::facts::SMART_POINTERS.contains(&n)) => {}
                        b'<' => {
                            j = self.group(j).0;
                            continue;
                        }
                        b'a' if self.is(j, "for") => {
                            tr = name.take().map(|(_, p): (&str, &'a str)| p);
                        }
                        b'a' if self.is(j, "where") => {
                            while j < self.toks.len() && self.kind(j) != b'{' {
                                j += 1;
                            }
                            break;
                        }
                        b'a' if !matches!(self.word(j), Some("dyn" | "mut" | "const")) => {
                            // With its path, as the facts name it: `crate::Place`.
                            let mut first = j;
                            while first >= 3
                                && self.kind(first - 1) == b':'
                                && self.kind(first - 2) == b':'
                                && self.kind(first - 3) == b'a'
                            {
                                first -= 3;
                            }
                            let (a, b) = (self.toks[first].start, self.toks[j].end);
                            name = self.word(j).zip(self.text.get(a as usize..b as usize));
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if let Some((n, path)) = name
                    && self.kind(j) == b'{'
                {
                    let t = self.push_type(Some(path), TypeKind::Impl);
                    self.types[t].supertypes = tr.map(Into::into).into_iter().collect();
                    self.opens(Some(j), Frame::Type(n, t));
                }
                j
            }
            // A macro's definition is not code (what it expands to is not known here).
            "mod" if self.word(i + 1).is_some() && self.kind(i + 2) == b'{' => {
                self.opens(Some(i + 2), Frame::Module);
                i + 2
            }
            "macro_rules" if self.kind(i + 1) == b'!' => {
                let mut j = i + 2;
                while j < self.toks.len() && !matches!(self.kind(j), b'{' | b'(' | b'[') {
                    j += 1;
                }
                if j < self.toks.len() {
                    self.group(j).0
                } else {
                    j
                }
            }
            // Another macro's body: the front end lowers the expressions in it, not items, so
            // functions declared in it (`cfg_rt! { pub fn spawn(..) }`) are not in the facts.
            _ if self.kind(i + 1) == b'!' && matches!(self.kind(i + 2), b'{' | b'(' | b'[') => {
                self.group(i + 2).0
            }
            "fn" if self.word(i + 1).is_some() => {
                let name = self.word(i + 1).unwrap_or("");
                let mut j = i + 2;
                if self.kind(j) == b'<' {
                    j = self.group(j).0;
                }
                if self.kind(j) != b'(' {
                    return j;
                }
                let (mut k, _) = self.group(j);
                let n = self.rust_params(j, k - 1);
                while k < self.toks.len() && !matches!(self.kind(k), b'{' | b';' | b'}') {
                    if matches!(self.kind(k), b'(' | b'<' | b'[') {
                        k = self.group(k).0;
                        continue;
                    }
                    k += 1;
                }
                let has_body = self.kind(k) == b'{';
                if !name.starts_with('$') {
                    self.push(name, n, has_body, Some(j));
                }
                if has_body {
                    self.opens(Some(k), Frame::Body);
                }
                k
            }
            _ => i + 1,
        }
    }
}

impl<'a> Outline<'a, '_> {
    /// The parameters of a Rust function between the parentheses at `open` and `close`, as
    /// the facts count them: one per name its pattern binds (`(a, b): (A, B)` is two,
    /// `State(ctx): State<C>` one), at least one per parameter.
    fn rust_params(&self, open: usize, close: usize) -> usize {
        let mut total = 0;
        let mut j = open + 1;
        while j < close {
            // One parameter: its pattern runs to the first `:` at depth 0, the whole parameter
            // to the next `,` at depth 0.
            let mut names: Vec<&str> = Vec::new();
            let mut depth = 0usize;
            let mut in_pattern = true;
            let mut any = false;
            while j < close {
                let k = self.kind(j);
                match k {
                    b'(' | b'[' | b'{' | b'<' if !(k == b'<' && in_pattern) => depth += 1,
                    b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                    b'>' if !in_pattern && self.kind(j - 1) != b'-' => {
                        depth = depth.saturating_sub(1)
                    }
                    b',' if depth == 0 => break,
                    b':' if depth == 0
                        && in_pattern
                        && self.kind(j + 1) != b':'
                        && self.kind(j - 1) != b':' =>
                    {
                        in_pattern = false
                    }
                    b'a' if in_pattern => {
                        any = true;
                        let w = self.word(j).unwrap_or("");
                        let next = self.kind(j + 1);
                        let path = next == b':' && self.kind(j + 2) == b':'
                            || j > 0 && self.kind(j - 1) == b':' && self.kind(j - 2) == b':';
                        let field = next == b':' && self.kind(j + 2) != b':' && depth > 0;
                        if !matches!(w, "mut" | "ref" | "box" | "_")
                            && !matches!(next, b'(' | b'{')
                            && !path
                            && !field
                            && !names.contains(&w)
                        {
                            names.push(w);
                        }
                    }
                    _ => any = true,
                }
                j += 1;
            }
            if any {
                total += names.len().max(1);
            }
            j += 1;
        }
        total
    }
}

/// Tokens type arguments may span (`Map<String, List<Pair<A, B>>>`); a `<` with no `>` within
/// them is an operator.
const MAX_TYPE_ARGS: usize = 512;

/// The bracket that closes `open`.
fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        b'{' => b'}',
        _ => b'>',
    }
}

/// A Kotlin string literal's value: escapes decoded in an ordinary string, none in a raw one;
/// `None` when it has a template (`$name`, `${..}`).
fn kotlin_string(text: &str) -> Option<String> {
    // A multi-dollar string (`$$"$ref"`): only as many `$` as it starts with open a template.
    let dollars = text.len() - text.trim_start_matches('$').len();
    let text = &text[dollars..];
    let need = dollars.max(1) - 1;
    let template = |rest: &str| {
        let run = rest.len() - rest.trim_start_matches('$').len();
        let rest = &rest[run..];
        run == need
            && (rest.starts_with('{')
                || rest.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '`'))
    };
    if let Some(body) = text.strip_prefix("\"\"\"") {
        let body = body.strip_suffix("\"\"\"").unwrap_or(body);
        let held = body
            .match_indices('$')
            .any(|(i, _)| template(&body[i + 1..]));
        return (!held).then(|| body.to_string());
    }
    let body = text.strip_prefix('"').unwrap_or(text);
    let body = body.strip_suffix('"').unwrap_or(body);
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while let Some(c) = body[i..].chars().next() {
        match c {
            // (A `\\uXXXX` escape is not an escape token to the grammar: it stays as written.)
            '\\' => {
                let esc = body.get(i..(i + 2).min(body.len())).unwrap_or(&body[i..]);
                if esc == "\\u" {
                    out.push_str(esc);
                } else {
                    crate::lang::kotlin::unescape(esc, &mut out);
                }
                i += esc.len().max(1);
            }
            '$' if template(&body[i + 1..]) => return None,
            _ => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    Some(out)
}

/// A modifier of a Java member.
fn is_java_modifier(w: &str) -> bool {
    matches!(
        w,
        "public"
            | "private"
            | "protected"
            | "static"
            | "final"
            | "transient"
            | "volatile"
            | "abstract"
            | "synchronized"
            | "native"
            | "default"
            | "strictfp"
    )
}

/// A modifier of a Kotlin class declaration.
fn is_kotlin_modifier(w: &str) -> bool {
    matches!(
        w,
        "public"
            | "private"
            | "internal"
            | "protected"
            | "open"
            | "abstract"
            | "sealed"
            | "data"
            | "inner"
            | "enum"
            | "annotation"
            | "value"
            | "expect"
            | "actual"
            | "final"
    )
}

fn is_kotlin_keyword(w: &str) -> bool {
    matches!(w, "fun" | "val" | "var" | "class" | "object" | "interface")
}

/// A word that starts the next declaration (so a function before it has no body).
fn is_kotlin_decl_start(w: &str) -> bool {
    matches!(
        w,
        "fun"
            | "val"
            | "var"
            | "class"
            | "interface"
            | "object"
            | "override"
            | "private"
            | "public"
            | "protected"
            | "internal"
            | "abstract"
            | "open"
            | "companion"
            | "enum"
            | "data"
            | "sealed"
            | "inline"
            | "operator"
            | "infix"
            | "external"
            | "lateinit"
            | "const"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    type Decl = (String, usize, Option<String>, bool);

    /// The outline of `text`, checked against the facts of its parse (as a multiset).
    fn outline(lang: Lang, text: &str) -> Vec<Decl> {
        let owned = |d: FnDecl| {
            (
                d.name.into_owned(),
                d.arity,
                d.owner.map(str::to_string),
                d.has_body,
            )
        };
        let lexed = crate::lex::lex(lang, text);
        let got: Vec<Decl> = functions(lang, text, &lexed.tokens)
            .into_iter()
            .map(owned)
            .collect();
        let facts = crate::lang::parse_and_lower(lang, text).unwrap().facts;
        assert!(facts.syntax_errors.is_empty(), "{text}");
        let mut want: Vec<Decl> = of_facts(&facts, text).into_iter().map(owned).collect();
        want.sort();
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, want, "the outline differs from the facts");
        got
    }

    /// The outlined types of `text` as (name, kind, parent), checked against its facts in order.
    /// The outline of `text`, checked against the facts of its parse: its types (with their
    /// supertypes, fields and constants), file-level bindings and imports, in order.
    fn checked(lang: Lang, text: &str) -> Outlined<'_> {
        let lexed = crate::lex::lex(lang, text);
        let got = super::outline(lang, text, &lexed.tokens);
        let facts = crate::lang::parse_and_lower(lang, text).unwrap().facts;
        assert!(facts.syntax_errors.is_empty(), "{text}");
        assert_eq!(
            got.types,
            types_of_facts(&facts),
            "the outline differs from the facts"
        );
        assert_eq!(
            got.globals,
            globals_of_facts(&facts),
            "file-level bindings differ"
        );
        assert_eq!(got.imports, facts.imports, "imports differ");
        got
    }

    fn types(lang: Lang, text: &str) -> Vec<(Option<String>, TypeKind, Option<usize>)> {
        checked(lang, text)
            .types
            .into_iter()
            .map(|t| (t.name.map(str::to_string), t.kind, t.parent))
            .collect()
    }

    #[test]
    fn types_in_order_with_anonymous_ones_and_parents() {
        use TypeKind::*;
        let n = |s: &str| Some(s.to_string());
        let java = "class A extends B implements C {\n\
                    Runnable r = new Runnable() { public void run() {} };\n\
                    Object[] a = { new Object() {} };\n\
                    enum E { ONE { void f() {} }, TWO }\n\
                    record R(int x) {}\n\
                    void m() { class L {} new Thread() {}; }\n\
                    }\n@interface Ann {}\n";
        assert_eq!(
            types(Lang::Java, java),
            [
                (n("A"), Class, None),
                (None, Anonymous, Some(0)),
                (None, Anonymous, Some(0)),
                (n("E"), Enum, Some(0)),
                (None, Anonymous, Some(3)),
                (n("R"), Record, Some(0)),
                (n("L"), Class, None),
                (None, Anonymous, None),
                (n("Ann"), Interface, None),
            ]
        );
        // An object expression is a function's when it is in an expression body, a type's
        // when it initialises a property; an annotation class is an interface, and does not
        // make the class after it one.
        let kotlin = "class A {\n\
                      val p = object : Runnable { override fun run() {} }\n\
                      fun f(): Runnable = object : Runnable { override fun run() {} }\n\
                      companion object : Factory { }\n\
                      }\nannotation class Ann(val v: String)\nclass B(val x: Int)\n\
                      enum class E {\n ONE { override fun g() = 1 };\n open fun g() = 0\n}\n\
                      interface I\nobject O\n";
        assert_eq!(
            types(Lang::Kotlin, kotlin),
            [
                (n("A"), Class, None),
                (None, Anonymous, Some(0)),
                (None, Anonymous, None),
                (n("Companion"), Object, Some(0)),
                (n("Ann"), Interface, None),
                (n("B"), Class, None),
                (n("E"), Enum, None),
                (n("ONE"), Object, Some(6)),
                (n("I"), Interface, None),
                (n("O"), Object, None),
            ]
        );
        // An impl is named by its path, and through a smart pointer by what it points to.
        let rust = "struct S { a: i32 }\nenum E { A }\ntrait T: Clone {}\n\
                    impl<X: Clone> T for crate::m::S {}\nimpl std::fmt::Debug for Arc<Handle> {}\n\
                    union U { a: u8 }\n";
        assert_eq!(
            types(Lang::Rust, rust),
            [
                (n("S"), Class, None),
                (n("E"), Enum, None),
                (n("T"), Interface, None),
                (n("crate::m::S"), Impl, None),
                (n("Handle"), Impl, None),
                (n("U"), Class, None),
            ]
        );
    }

    /// The supertypes of each outlined type of `text`, checked against its facts.
    fn supertypes(lang: Lang, text: &str) -> Vec<Vec<String>> {
        checked(lang, text)
            .types
            .into_iter()
            .map(|t| t.supertypes.into_iter().map(|s| s.into_owned()).collect())
            .collect()
    }

    #[test]
    fn supertypes_as_the_facts_write_them() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            supertypes(
                Lang::Java,
                "sealed class A<T extends X> extends base.B<T> implements I1, p.I2<String> \
                 permits Q {\n Object o = new java.lang.Thread() {};\n\
                 enum E implements Z { ONE { } }\n}\nrecord R(int a) implements S {}\n"
            ),
            [
                v(&["base.B", "I1", "p.I2"]),
                v(&["java.lang.Thread"]),
                v(&["Z"]),
                v(&["E"]),
                v(&["S"]),
            ]
        );
        assert_eq!(
            supertypes(
                Lang::Kotlin,
                "class A(x: Int) : Base(x), I by d, (Int) -> String {\n\
                 companion object : Factory<A>()\n\
                 constructor(s: String) : this(1)\n}\n\
                 class B(val x: Int)\nfun interface F : suspend (List<Int>) -> Unit?\n\
                 val o = object : Runnable, Closeable {}\n"
            ),
            [
                v(&["Base", "I", "(Int) -> String"]),
                v(&["Factory"]),
                v(&[]),
                v(&["suspend (List"]),
                v(&["Runnable", "Closeable"]),
            ]
        );
        assert_eq!(
            supertypes(
                Lang::Rust,
                "trait T: Clone + ?Sized + fmt::Debug + 'static {}\n\
                 impl<X> Tr<X> for S {}\nimpl S {}\n"
            ),
            [v(&["Clone", "fmt::Debug"]), v(&["Tr"]), v(&[])]
        );
    }

    /// Each outlined type's fields and the file-level bindings of `text` as
    /// `name:type=` strings (`=` when initialised), checked against its facts.
    fn fields(lang: Lang, text: &str) -> (Vec<Vec<String>>, Vec<String>) {
        let got = checked(lang, text);
        let show = |f: &FieldDecl| {
            let init = if f.has_init { "=" } else { "" };
            format!("{}:{}{init}", f.name, f.ty.as_deref().unwrap_or(""))
        };
        (
            got.types
                .iter()
                .map(|t| t.fields.iter().map(show).collect())
                .collect(),
            got.globals.iter().map(show).collect(),
        )
    }

    #[test]
    fn fields_and_file_level_bindings_as_the_facts_write_them() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let java = "class A {\n\
                    private static final Map<String, String> M = ImmutableMap.<String, String>of(), N;\n\
                    int x, y[];\n var v = 1;\n String @Nullable [] q;\n\
                    A() {}\n void m() { int local = 1; }\n static { int s = 2; }\n\
                    enum E { @Deprecated ONE, TWO(2) { }; int w; }\n\
                    record R(int a, Class<?>... rest) {}\n}\n";
        assert_eq!(
            fields(Lang::Java, java).0,
            [
                v(&[
                    "M:Map=",
                    "N:Map",
                    "x:int",
                    "y:int",
                    "v:=",
                    "q:String@Nullable[]"
                ]),
                v(&["ONE:E=", "TWO:E=", "w:int"]),
                v(&[]),
                v(&["a:int", "rest:Class[]"]),
            ]
        );
        let kotlin = "class A(val x: Int, y: String, private var z: Long = 1, \
                      @field:Id val id: String, val f: suspend () -> Unit?) {\n\
                      val k = \"k\"\n var n: Int = 0\n val g: String get() = \"g\"\n\
                      val (a, b) = Pair(1, 2)\n val lz by lazy { val inner = 1; inner }\n\
                      val c: @Composable () -> Unit = {}\n\
                      fun m(r: Int) = when (val w = r) { else -> w }\n\
                      companion object : Log()\n val after = 1\n}\n\
                      enum class E(val v: Int) { ONE(1), TWO }\nval top = 1\n\
                      var topFn: suspend String.() -> Unit = {}\n";
        let (types, globals) = fields(Lang::Kotlin, kotlin);
        assert_eq!(
            types,
            [
                v(&[
                    "x:Int",
                    "z:Long=",
                    "id:String",
                    "f:() -> Unit",
                    "k:=",
                    "n:Int=",
                    "g:String",
                    "a:=",
                    "b:=",
                    "lz:=",
                    "c:@Composable () -> Unit=",
                    "after:="
                ]),
                v(&[]),
                v(&["v:Int", "ONE:E=", "TWO:E"]),
            ]
        );
        assert_eq!(globals, v(&["top:=", "topFn:suspend String.() -> Unit="]));
        let rust = "struct S { #[serde(default)] pub(crate) a: HashMap<String, u8>, b: &'a mut dyn Foo }\n\
                    struct T(pub &'static str, Arc<Mutex<X>>);\nenum E { A = 1, B(i32), C { x: i32 } }\n\
                    impl S { const IC: i32 = 1; }\nconst K: &str = \"k\";\n\
                    const V: &str = { const INNER: u8 = 1; \"v\" };\n\
                    mod m { pub static M: u8 = 0; fn f() { const L: u8 = 1; } }\n\
                    fn g<const N: usize>() {}\n";
        let (types, globals) = fields(Lang::Rust, rust);
        assert_eq!(
            types,
            [
                v(&["a:HashMap", "b:Foo"]),
                v(&["0:str", "1:Mutex"]),
                v(&["A:=", "B:", "C:"]),
                v(&["IC:i32="]),
            ]
        );
        assert_eq!(globals, v(&["K:str=", "V:str=", "M:u8="]));
    }

    #[test]
    fn constants_as_the_index_reads_them() {
        let constants = |lang: Lang, text: &str| {
            let got = checked(lang, text);
            got.types
                .iter()
                .flat_map(|t| t.fields.iter())
                .chain(got.globals.iter())
                .map(|f| match &f.constant {
                    Some(Constant::Str(s)) => format!("{}=\"{s}\"", f.name),
                    Some(Constant::Alias(a)) => format!("{}={a}", f.name),
                    None => format!("{}", f.name),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            constants(
                Lang::Java,
                "class A {\n static final String K = \"k\\t\", L = K;\n\
                 String H = HeaderName.of(\"x\");\n String F = Headers.KEY;\n\
                 String N = Foo.bar();\n String S = \"a\" + \"b\";\n char C = 'c';\n}\n"
            ),
            ["K=\"k\t\"", "L=K", "H=\"x\"", "F=KEY", "N", "S", "C"]
        );
        assert_eq!(
            constants(
                Lang::Kotlin,
                "class A {\n val k = \"a\\tb\"\n val t = \"$k!\"\n val d by Headers.Location\n\
                 val r = $$\"$ref\"\n val n: String? = null\n val s = 5.seconds\n\
                 val c = '['.code\n val q = 'q'\n}\nconst val TOP = \"top\"\n"
            ),
            [
                "k=\"a\tb\"",
                "t",
                "d=Location",
                "r=\"$ref\"",
                "n",
                "s=seconds",
                "c=code",
                "q",
                "TOP=\"top\""
            ]
        );
        assert_eq!(
            constants(
                Lang::Rust,
                "const K: &str = r#\"raw\"#;\nconst H: HeaderName = HeaderName::from_static(\"idem\");\n\
                 const A: &str = crate::K;\nconst B: u8 = 1;\n"
            ),
            ["K=\"raw\"", "H=\"idem\"", "A=K", "B"]
        );
    }

    #[test]
    fn imports_as_the_facts_write_them() {
        let imports = |lang: Lang, text: &str| {
            let got = checked(lang, text).imports;
            got.into_iter().map(|s| s.into_owned()).collect::<Vec<_>>()
        };
        assert_eq!(
            imports(
                Lang::Java,
                "package p;\nimport java.util.*;\nimport static x.Y.z;\nimport a . b;\nclass A {}\n"
            ),
            ["java.util.*", "x.Y.z", "a.b"]
        );
        assert_eq!(
            imports(
                Lang::Kotlin,
                "package p\nimport x.y.Z as W\nimport a.b.*\nimport `c`.d\nclass A\n"
            ),
            ["x.y.Z as W", "a.b.*", "c.d"]
        );
        assert_eq!(
            imports(
                Lang::Rust,
                "use std::{collections::HashMap, sync::{self, Arc}};\npub(crate) use crate::a::b as c;\n\
                 use tokio_stream::{self as stream, StreamExt};\nuse ::serde::Deserialize;\n\
                 use super::*;\nextern crate foo;\nfn f() { use z::w; }\n"
            ),
            [
                "std::collections::HashMap",
                "std::sync",
                "std::sync::Arc",
                "crate::a::b",
                "tokio_stream::self",
                "tokio_stream::StreamExt",
                "::serde::Deserialize",
                "super::*",
                "foo",
                "z::w",
            ]
        );
    }

    fn decl(name: &str, arity: usize, owner: Option<&str>, body: bool) -> Decl {
        (name.to_string(), arity, owner.map(str::to_string), body)
    }

    #[test]
    fn java_members_constructors_and_anonymous_classes() {
        let got = outline(
            Lang::Java,
            "class B<T> extends C {\n  private final int x = compute(1);\n  B(int a) { super(a); }\n\
             static { init(); }\n  { count++; }\n\
             @Override public void run() { new Runnable() { public void run() {} }; }\n\
             static <U> java.util.List<U> make(U a, int... rest) { return Builder.<U>of(a); }\n\
             record R(int a, String b) { R { } int extra() { return a; } }\n\
             interface J { void j(int a); default void k() {} }\n\
             enum E { A(1) { void f() {} }, B(2); E(int v) {} }\n\
             void record(String a, long b);\n}",
        );
        assert_eq!(
            got,
            [
                decl("B", 1, Some("B"), true),
                decl("<clinit>", 0, Some("B"), true),
                decl("<init>", 0, Some("B"), true),
                decl("run", 0, Some("B"), true),
                decl("run", 0, None, true),
                decl("make", 2, Some("B"), true),
                decl("R", 2, Some("R"), true),
                decl("extra", 0, Some("R"), true),
                decl("j", 1, Some("J"), false),
                decl("k", 0, Some("J"), true),
                decl("f", 0, None, true),
                decl("E", 1, Some("E"), true),
                decl("record", 2, Some("B"), false),
            ]
        );
    }

    #[test]
    fn kotlin_constructors_accessors_extensions_and_objects() {
        let got = outline(
            Lang::Kotlin,
            "data class D(val x: Int, var y: String) : I {\n  constructor(s: String) : this(1, s)\n\
             val total: Int\n    get() = x + 1\n  val other = get(1)\n\
             fun <T> List<T>.ext(a: Int, b: (Int) -> Unit = {}): Int = 1\n\
             private fun local() { fun inner(q: Int) {}; val o = object : Runnable { override fun run() {} } }\n\
             companion object : Log() { fun create() = D(1, \"\") }\n  init { println() }\n}\n\
             interface I { fun run(x: Int)\n fun dflt() {} }\nfun interface P { fun p() }\n\
             enum class E(val v: Int) {\n  A(1) {\n    override fun f() {}\n  },\n  B(2);\n  open fun f() {}\n}\n\
             fun (suspend () -> Unit).retrying(times: Int): suspend (String) -> Int = { 1 }\n\
             class X : Base() {}",
        );
        assert_eq!(
            got,
            [
                decl("D", 2, Some("D"), true),
                decl("D", 1, Some("D"), false),
                decl("<get-total>", 0, Some("D"), true),
                decl("ext", 2, Some("D"), true),
                decl("local", 0, Some("D"), true),
                decl("inner", 1, None, true),
                decl("run", 0, None, true),
                decl("Companion", 0, Some("Companion"), true),
                decl("create", 0, Some("Companion"), true),
                decl("<init>", 0, Some("D"), true),
                decl("run", 1, Some("I"), false),
                decl("dflt", 0, Some("I"), true),
                decl("p", 0, Some("P"), false),
                decl("E", 1, Some("E"), true),
                decl("f", 0, Some("A"), true),
                decl("f", 0, Some("E"), true),
                decl("retrying", 1, None, true),
                decl("X", 0, Some("X"), true),
            ]
        );
    }

    #[test]
    fn rust_impls_traits_patterns_and_macros() {
        let got = outline(
            Lang::Rust,
            "pub fn free(a: i32, (b, c): (u8, u8), State(ctx): State<C>) -> i32 { 1 }\n\
             impl<T: Clone> S<T> { pub fn new() -> Self { S } fn m(&self, x: i32) {} }\n\
             trait T { fn req(&self); fn prov(&self) {} }\nimpl T for S { fn req(&self) {} }\n\
             macro_rules! mk { ($n:ident) => { fn $n() {} } }\n\
             fn outer() { fn inner() {} let c = |x| x; }",
        );
        assert_eq!(
            got,
            [
                decl("free", 4, None, true),
                decl("new", 0, Some("S"), true),
                decl("m", 2, Some("S"), true),
                decl("req", 1, Some("T"), false),
                decl("prov", 1, Some("T"), true),
                decl("req", 1, Some("S"), true),
                decl("outer", 0, None, true),
                decl("inner", 0, None, true),
            ]
        );
    }
}
