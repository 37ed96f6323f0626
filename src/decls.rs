//! What the project index files of one file (its declarations), read from the lexical outline,
//! and the parse whose facts agree with it.
//!
//! A file's facts are renumbered to its declarations' order when it is parsed
//! ([`crate::conform::parse`]), so an index built from [`Decls`] names the same functions and
//! types the facts hold: the `i`-th declared function is `FnId` `i`, the `i`-th type `TypeId`
//! `i`.

use crate::facts::{FileFacts, Lang, Text, TypeId, TypeKind};
use crate::outline::{Constant, FieldDecl, FnDecl, Outlined, TyDecl};

/// One file's declarations, in the facts' order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Decls {
    /// Declared (named, non-lambda) functions.
    pub functions: Vec<DeclFn>,
    /// Types, anonymous ones included.
    pub types: Vec<DeclType>,
    /// File-level bindings (Kotlin top-level properties, Rust `const`s and `static`s).
    pub globals: Vec<DeclField>,
    /// Imports as the facts write them (`java.util.*`, `x.Y as Z`, `std::sync::Arc`).
    pub imports: Imports,
}

/// A file's imports, in order, kept in one string (a file has dozens; each its own string
/// was 5 MB of the bench corpus's declarations).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Imports(Box<str>);

impl Imports {
    pub fn of<S: AsRef<str>>(imports: &[S]) -> Imports {
        let joined: Vec<&str> = imports.iter().map(|i| i.as_ref()).collect();
        Imports(joined.join("\n").into_boxed_str())
    }

    /// Each import, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + Clone {
        self.into_iter()
    }
}

impl<'a> IntoIterator for &'a Imports {
    type Item = &'a str;
    type IntoIter = std::iter::Filter<std::str::Split<'a, char>, fn(&&'a str) -> bool>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.split('\n').filter(|i| !i.is_empty())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclFn {
    pub name: Text,
    /// The type it is a member of.
    pub owner: Option<TypeId>,
    /// Parameters, not counting a Rust method's `self`.
    pub params: usize,
    /// It takes any number of arguments (Java `T...`, Kotlin `vararg`).
    pub varargs: bool,
    /// It has a body (not an interface's or an abstract method).
    pub has_body: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclType {
    /// `None` for an anonymous class; a Rust impl's self type.
    pub name: Option<Text>,
    pub kind: TypeKind,
    /// The enclosing type.
    pub parent: Option<TypeId>,
    /// Supertypes as written, minus type arguments.
    pub supertypes: Vec<String>,
    pub fields: Vec<DeclField>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclField {
    pub name: Text,
    /// It has an initialiser (`= ..`, an enum constant's arguments).
    pub has_init: bool,
    /// The string or constant name it is initialised with, as the index files it.
    pub constant: Option<Constant<'static>>,
}

impl Decls {
    /// The declarations an outline lists.
    pub fn of_outline(o: &Outlined) -> Decls {
        Decls::new(&o.functions, &o.types, &o.globals, &o.imports)
    }

    /// The declarations `facts` (lowered from `text`) hold, as the outline of the same text
    /// lists them.
    pub fn of_facts(facts: &FileFacts, text: &str) -> Decls {
        Decls::new(
            &crate::outline::of_facts(facts, text),
            &crate::outline::types_of_facts(facts),
            &crate::outline::globals_of_facts(facts),
            &facts.imports,
        )
    }

    fn new<S: AsRef<str>>(
        functions: &[FnDecl],
        types: &[TyDecl],
        globals: &[FieldDecl],
        imports: &[S],
    ) -> Decls {
        let field = |f: &FieldDecl| DeclField {
            name: Text::from(f.name.as_ref()),
            has_init: f.has_init,
            constant: f.constant.as_ref().map(|c| match c {
                Constant::Str(s) => Constant::Str(s.to_string().into()),
                Constant::Alias(a) => Constant::Alias(a.to_string().into()),
            }),
        };
        Decls {
            functions: functions
                .iter()
                .map(|f| DeclFn {
                    name: Text::from(f.name.as_ref()),
                    owner: f.owner_type,
                    params: f.arity - usize::from(f.has_self && f.arity > 0),
                    varargs: f.varargs,
                    has_body: f.has_body,
                })
                .collect(),
            types: types
                .iter()
                .map(|t| DeclType {
                    name: t.name.map(Text::from),
                    kind: t.kind,
                    parent: t.parent,
                    supertypes: t.supertypes.iter().map(|s| s.to_string()).collect(),
                    fields: t.fields.iter().map(field).collect(),
                })
                .collect(),
            globals: globals.iter().map(field).collect(),
            imports: Imports::of(imports),
        }
    }
}

/// What the lexical pass keeps of a file: its declarations and what the evidence gates read.
#[derive(Hash)]
pub struct Lexical {
    pub decls: Decls,
    /// Its string literals (quotes included), in order.
    pub literals: crate::literals::Literals,
    /// The identifiers in its code (not in comments or string literals), each once, in the
    /// order first written, one per line: every name its facts can hold but the made-up ones
    /// ([`crate::lex::MADE_UP_NAMES`]).
    pub names: Box<str>,
    /// Its code (outside comments and literals) writes a Java `\u` escape, which may spell a
    /// name in letters its text does not show. (Kotlin and Rust have such escapes only in
    /// string and character literals.)
    pub escapes: bool,
}

/// The declarations of `text`, from its outline (no parse), and what the gates read of it.
pub fn declared(lang: Lang, text: &str) -> Lexical {
    let lexed = crate::lex::lex(lang, text);
    let decls = Decls::of_outline(&crate::outline::outline(lang, text, &lexed.tokens));
    // Each once, in the order first written (hashing them is cheaper than sorting them).
    let mut seen: crate::hash::HashSet<&str> = crate::hash::HashSet::default();
    seen.reserve(lexed.idents.len() / 2);
    let names: Vec<&str> = lexed
        .idents
        .iter()
        .copied()
        .filter(|n| seen.insert(n))
        .collect();
    Lexical {
        decls,
        names: names.join("\n").into_boxed_str(),
        escapes: lang == Lang::Java && escape_in_code(text, &lexed),
        literals: crate::literals::Literals::of(text, &lexed.string_ranges()),
    }
}

/// Is there a `\u` in `text` outside its comments and its string and character literals?
fn escape_in_code(text: &str, lexed: &crate::lex::Lexed) -> bool {
    text.match_indices("\\u").any(|(at, _)| {
        let at = at as u32;
        // The last comment and the last token starting at or before `at` (both in order).
        let c = lexed.comments.partition_point(|&(s, _)| s <= at);
        let in_comment = c > 0 && at < lexed.comments[c - 1].1;
        let t = lexed.tokens.partition_point(|tok| tok.start <= at);
        let in_literal = t > 0
            && matches!(lexed.tokens[t - 1].kind, b'"' | b'\'')
            && at < lexed.tokens[t - 1].end;
        !in_comment && !in_literal
    })
}

/// A file's facts and how its parse went.
#[derive(Default)]
pub struct Parse {
    pub facts: FileFacts,
    /// Some subtree was deeper than [`crate::lang::MAX_DEPTH`] and was not analysed.
    pub too_deep: bool,
    /// The parser gave up (or ran out of time): nothing of the file was analysed.
    pub gave_up: bool,
}
