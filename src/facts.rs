//! The language-neutral model every rule reads.
//!
//! Each front end (`lang::java`, `lang::kotlin`, `lang::rust`) lowers its tree-sitter tree into
//! these types. Rules are written once against this model. The model is deliberately small:
//! it keeps what the rules need to follow a value from where it is made to where it is used
//! (calls, bindings, literals, lambdas) and the scopes that decide how often code runs
//! (functions, lambdas, loops, try/catch, classes and their supertypes).
//!
//! Conventions every front end follows:
//! - Spans are byte ranges into the file's source text.
//! - Names are as written in the source, without generic arguments (`List<String>` -> `List`)
//!   but with qualification kept (`okhttp3.Interceptor` stays as written; use
//!   [`simple_name`] to compare).
//! - Unknown syntax becomes [`ExprKind::Other`] with its children lowered, so a value nested in
//!   something the front end does not model is still seen.

use std::fmt;

/// Index into [`FileFacts::functions`].
pub type FnId = usize;
/// Index into [`FileFacts::types`].
pub type TypeId = usize;

/// A byte range in the file's source text.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    pub fn contains(&self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
    pub fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Java,
    Kotlin,
    Rust,
}

impl Lang {
    pub fn from_path(path: &std::path::Path) -> Option<Lang> {
        match path.extension()?.to_str()? {
            "java" => Some(Lang::Java),
            "kt" | "kts" => Some(Lang::Kotlin),
            "rs" => Some(Lang::Rust),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Lang::Java => "java",
            Lang::Kotlin => "kotlin",
            Lang::Rust => "rust",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name, operator or literal in the facts: most are short, and a string of up to 24 bytes
/// is kept inline instead of in a heap block of its own (millions of them on a large
/// project).
pub type Text = compact_str::CompactString;

/// Everything one source file lowers to.
#[derive(Clone, Debug, Default)]
pub struct FileFacts {
    /// Classes, interfaces, objects, enums, Rust `impl` blocks and anonymous classes
    /// (`new X() { .. }`, `object : X { .. }`).
    pub types: Vec<TypeDecl>,
    /// Every function-like scope: methods, free functions, constructors, lambdas, closures,
    /// local functions. A lambda's body is a function here; the expression where it stands is
    /// [`ExprKind::Lambda`] pointing at it.
    pub functions: Vec<Function>,
    /// Top-level statements that are not in any function (Kotlin scripts, field initialisers
    /// are in [`TypeDecl::fields`] instead).
    pub top_level: Vec<Stmt>,
    /// Top-level (file-level) bindings: Kotlin top-level `val`, Rust `const`/`static`.
    pub globals: Vec<Binding>,
    /// Imports as written (`okhttp3.Interceptor`, `reqwest_middleware::Middleware`,
    /// `java.util.*`).
    pub imports: Vec<String>,
    /// Spans of regions that are test code inside a non-test file (Rust `#[cfg(test)]` modules,
    /// `#[test]` functions).
    pub test_regions: Vec<Span>,
    /// Spans of syntax errors (ERROR / MISSING nodes) in the recovered tree.
    pub syntax_errors: Vec<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Class,
    Interface,
    Object,
    Enum,
    Record,
    /// Rust `impl Trait for Type` / `impl Type`.
    Impl,
    /// `new X() { .. }` in Java, `object : X { .. }` in Kotlin.
    Anonymous,
}

#[derive(Clone, Debug)]
pub struct TypeDecl {
    /// The declared name; for a Rust impl, the self type (`impl Middleware for IdemKey` -> `IdemKey`);
    /// `None` for anonymous classes.
    pub name: Option<String>,
    pub kind: TypeKind,
    /// Extended classes and implemented interfaces / the implemented trait, as written minus
    /// generics (`Interceptor`, `okhttp3.Interceptor`, `reqwest_middleware::Middleware`).
    pub supertypes: Vec<String>,
    pub annotations: Vec<Annotation>,
    pub fields: Vec<Binding>,
    pub methods: Vec<FnId>,
    /// Nested and companion types declared inside this one.
    pub nested: Vec<TypeId>,
    pub span: Span,
    /// The name token, or for anonymous classes the `new X` / `object : X` head.
    pub name_span: Span,
    /// The enclosing type for nested types and companions.
    pub parent_type: Option<TypeId>,
    /// The function an anonymous or local class appears in.
    pub parent_fn: Option<FnId>,
}

#[derive(Clone, Debug)]
pub struct Annotation {
    /// Simple name without `@` / `#[..]` and without package (`Retryable`, `Scheduled`, `test`,
    /// `cfg`, `async_trait`).
    pub name: String,
    pub args: Vec<Arg>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// A method or associated function of a type (including interface default methods and
    /// Rust impl functions).
    Method,
    /// A free / top-level / local named function.
    Function,
    Constructor,
    /// A lambda, closure, anonymous function, Kotlin trailing lambda, Rust closure or
    /// `async` block.
    Lambda,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Option<String>,
    pub annotations: Vec<Annotation>,
    pub span: Span,
    /// Kotlin default value (`idempotencyKey: String = UUID.randomUUID().toString()`),
    /// evaluated on every call that leaves the parameter out.
    pub default: Option<Expr>,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: Option<String>,
    pub kind: FnKind,
    pub params: Vec<Param>,
    pub annotations: Vec<Annotation>,
    /// Lower-case modifiers as written: `override`, `private`, `public`, `static`, `suspend`,
    /// `async`, `pub`, `open`, `final`, `abstract`.
    pub modifiers: Vec<String>,
    pub return_type: Option<String>,
    /// The type whose member this is (methods, constructors, Rust impl fns).
    pub owner: Option<TypeId>,
    /// The lexically enclosing function for lambdas and local functions.
    pub parent: Option<FnId>,
    /// Statements of the body. An expression body (`fun f() = expr`, a lambda or closure whose
    /// body is an expression) is a single [`Stmt::Expr`] holding that expression; its value is
    /// the function's value, as in Kotlin lambdas and Rust blocks, whose last expression is
    /// their value too.
    pub body: Vec<Stmt>,
    /// Whether there is a body at all (abstract / interface methods have none).
    pub has_body: bool,
    pub span: Span,
    /// The name token; for lambdas, the start of the lambda (`{`, `|`, `(x) ->`).
    pub name_span: Span,
}

impl Function {
    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }
    pub fn annotation(&self, name: &str) -> Option<&Annotation> {
        self.annotations.iter().find(|a| a.name == name)
    }
    /// A function of a file, not a method, a lambda or a local function.
    pub fn is_free_fn(&self) -> bool {
        self.kind == FnKind::Function && self.owner.is_none()
    }
}

/// A local variable, field, property, constant or parameter default.
#[derive(Clone, Debug)]
pub struct Binding {
    /// Bound name. Destructuring binds several names: one `Binding` each, all with the whole
    /// initialiser.
    pub name: String,
    pub ty: Option<String>,
    pub init: Option<Expr>,
    pub annotations: Vec<Annotation>,
    pub modifiers: Vec<String>,
    pub mutable: bool,
    pub span: Span,
    pub name_span: Span,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Let(Box<Binding>),
    Expr(Expr),
    /// A local function or lambda-free nested function declaration.
    LocalFn(FnId),
    /// A local class / anonymous object declared as a statement.
    LocalType(TypeId),
}

#[derive(Clone, Debug)]
pub struct Arg {
    /// Kotlin named argument, Rust struct-literal field, annotation element name,
    /// JSON/map key given as a literal (`json!({"idempotency_key": k})`).
    pub name: Option<String>,
    pub value: Expr,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub span: Span,
    pub kind: ExprKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    While,
    DoWhile,
    /// C-style `for (init; cond; step)`.
    For,
    /// `for (x in xs)`, `for x in xs`, `for (X x : xs)`.
    ForEach,
    /// Rust `loop { }`.
    Loop,
}

#[derive(Clone, Debug)]
pub struct Catch {
    /// Caught exception types as written (`IOException`, `IOException | TimeoutException` gives
    /// two entries).
    pub types: Vec<String>,
    pub name: Option<String>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct MatchArm {
    /// Pattern / condition expressions of this arm (`Err(e)`, `is IOException`, `else` gives none).
    pub patterns: Vec<Expr>,
    /// The pattern text as written, for quick checks like `Err(`.
    pub pattern_text: String,
    pub guard: Option<Expr>,
    pub body: Expr,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A plain identifier, `this`, `self`, `super`, `it`.
    Name(Text),
    /// Member access without a call: `a.b`, `a?.b`, `a::b` in Rust paths (`Uuid::nil` without
    /// call), `Foo.BAR`.
    Field {
        receiver: Box<Expr>,
        name: Text,
    },
    /// A call. `receiver` is the expression before the dot / `::` (`UUID` in
    /// `UUID.randomUUID()`, `Uuid` in `Uuid::new_v4()`, `builder` in `builder.header(..)`).
    /// Kotlin trailing lambdas are appended to `args`. Java/Kotlin generic arguments are dropped.
    Call {
        receiver: Option<Box<Expr>>,
        name: Text,
        args: Vec<Arg>,
    },
    /// Rust macro invocation (`format!`, `vec!`, `json!`, `tokio::select!`); `name` without `!`,
    /// `args` are the macro's arguments parsed as expressions where possible.
    Macro {
        name: Text,
        args: Vec<Arg>,
    },
    /// `new T(args)` / `new T(args) { body }` in Java, Rust struct literals `T { a: x, .. }`
    /// (fields as named args). Kotlin constructor calls are plain [`ExprKind::Call`]s, since the
    /// syntax does not tell them apart.
    New {
        ty: Text,
        args: Vec<Arg>,
        body: Option<TypeId>,
    },
    /// Kotlin `object : X { }` expression.
    Object(TypeId),
    /// A string literal's content (escapes decoded where simple).
    Str(Text),
    /// A string with interpolation (Kotlin `"a$b${c}"`, Java text with `+` is [`ExprKind::Binary`]).
    /// Literal pieces are [`ExprKind::Str`], holes are their expressions.
    Template(Vec<Expr>),
    /// Number, boolean, char, null literals, as written.
    Lit(Text),
    /// Binary operation; `op` as written: `+`, `==`, `&&`, `?:` (Kotlin elvis), `..`.
    Binary {
        op: Text,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// Prefix or postfix operation: `!x`, `-x`, `x!!`, `x?` (Rust), `&x`, `*x`, `x++`.
    Unary {
        op: Text,
        operand: Box<Expr>,
    },
    /// `x as T`, `(T) x`, `x as? T`.
    Cast {
        expr: Box<Expr>,
        ty: Text,
    },
    /// `a[i]`.
    Index {
        receiver: Box<Expr>,
        index: Box<Expr>,
    },
    /// `x.await` (Rust).
    Await(Box<Expr>),
    /// A lambda / closure / anonymous function; its body is [`FileFacts::functions`]`[id]`.
    Lambda(FnId),
    /// Method or constructor reference: `this::charge`, `Foo::bar`, `Foo::new`, `::charge`.
    MethodRef {
        receiver: Option<Box<Expr>>,
        name: Text,
    },
    Assign {
        target: Box<Expr>,
        /// `=`, `+=`, ...
        op: Text,
        value: Box<Expr>,
    },
    /// `if` statement or expression; also Java's `c ? a : b`, Rust `if let`.
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Option<Box<Expr>>,
    },
    /// Kotlin `when`, Rust `match`, Java `switch`.
    Match {
        subject: Option<Box<Expr>>,
        arms: Vec<MatchArm>,
    },
    /// A `{ .. }` block: Java block, Kotlin block, Rust block / `unsafe` block, Kotlin `run {}` is
    /// a call with a lambda instead.
    Block(Vec<Stmt>),
    Loop {
        kind: LoopKind,
        /// Loop variable names for foreach loops. (Boxed slices here keep every [`Expr`] small.)
        vars: Box<[String]>,
        /// Condition for while loops; iterable for foreach; Java `for` init/cond/update in order.
        header: Box<[Expr]>,
        body: Box<Expr>,
        /// Rust loop label / Kotlin label, without `'`/`@`.
        label: Option<Box<str>>,
    },
    Try {
        body: Box<Expr>,
        catches: Vec<Catch>,
        finally: Option<Box<Expr>>,
        /// Java try-with-resources bindings.
        resources: Vec<Binding>,
    },
    Return(Option<Box<Expr>>),
    Throw(Box<Expr>),
    Break(Option<String>),
    Continue(Option<String>),
    /// Anything else, with its sub-expressions lowered in source order.
    Other(Vec<Expr>),
}

impl Expr {
    pub fn new(span: Span, kind: ExprKind) -> Self {
        Expr { span, kind }
    }

    /// Calls `f` on every direct sub-expression (not into lambda bodies or class bodies, which
    /// are separate functions).
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        use ExprKind::*;
        let arg = |a: &'a [Arg], f: &mut dyn FnMut(&'a Expr)| a.iter().for_each(|a| f(&a.value));
        match &self.kind {
            Name(_) | Str(_) | Lit(_) | Lambda(_) | Object(_) | Break(_) | Continue(_) => {}
            Field { receiver, .. } => f(receiver),
            Call { receiver, args, .. } => {
                if let Some(r) = receiver {
                    f(r);
                }
                arg(args, &mut f);
            }
            Macro { args, .. } | New { args, .. } => arg(args, &mut f),
            Template(parts) | Other(parts) => parts.iter().for_each(f),
            Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Unary { operand: e, .. } | Cast { expr: e, .. } | Await(e) | Throw(e) => f(e),
            Index { receiver, index } => {
                f(receiver);
                f(index);
            }
            MethodRef { receiver, .. } => {
                if let Some(r) = receiver {
                    f(r);
                }
            }
            Assign { target, value, .. } => {
                f(target);
                f(value);
            }
            If { cond, then, els } => {
                f(cond);
                f(then);
                if let Some(e) = els {
                    f(e);
                }
            }
            Match { subject, arms } => {
                if let Some(s) = subject {
                    f(s);
                }
                for a in arms {
                    a.patterns.iter().for_each(&mut f);
                    if let Some(g) = &a.guard {
                        f(g);
                    }
                    f(&a.body);
                }
            }
            Block(stmts) => {
                for s in stmts {
                    match s {
                        Stmt::Let(b) => {
                            if let Some(i) = &b.init {
                                f(i)
                            }
                        }
                        Stmt::Expr(e) => f(e),
                        Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
                    }
                }
            }
            Loop { header, body, .. } => {
                header.iter().for_each(&mut f);
                f(body);
            }
            Try {
                body,
                catches,
                finally,
                resources,
            } => {
                for r in resources {
                    if let Some(i) = &r.init {
                        f(i);
                    }
                }
                f(body);
                for c in catches {
                    f(&c.body);
                }
                if let Some(e) = finally {
                    f(e);
                }
            }
            Return(e) => {
                if let Some(e) = e {
                    f(e);
                }
            }
        }
    }

    /// [`Expr::for_each_child`], for changing the children.
    pub fn for_each_child_mut<'a>(&'a mut self, mut f: impl FnMut(&'a mut Expr)) {
        use ExprKind::*;
        let arg = |a: &'a mut [Arg], f: &mut dyn FnMut(&'a mut Expr)| {
            a.iter_mut().for_each(|a| f(&mut a.value))
        };
        match &mut self.kind {
            Name(_) | Str(_) | Lit(_) | Lambda(_) | Object(_) | Break(_) | Continue(_) => {}
            Field { receiver, .. } => f(receiver),
            Call { receiver, args, .. } => {
                if let Some(r) = receiver {
                    f(r);
                }
                arg(args, &mut f);
            }
            Macro { args, .. } | New { args, .. } => arg(args, &mut f),
            Template(parts) | Other(parts) => parts.iter_mut().for_each(f),
            Binary { lhs, rhs, .. } => {
                f(lhs);
                f(rhs);
            }
            Unary { operand: e, .. } | Cast { expr: e, .. } | Await(e) | Throw(e) => f(e),
            Index { receiver, index } => {
                f(receiver);
                f(index);
            }
            MethodRef { receiver, .. } => {
                if let Some(r) = receiver {
                    f(r);
                }
            }
            Assign { target, value, .. } => {
                f(target);
                f(value);
            }
            If { cond, then, els } => {
                f(cond);
                f(then);
                if let Some(e) = els {
                    f(e);
                }
            }
            Match { subject, arms } => {
                if let Some(s) = subject {
                    f(s);
                }
                for MatchArm {
                    patterns,
                    guard,
                    body,
                    ..
                } in arms
                {
                    patterns.iter_mut().for_each(&mut f);
                    if let Some(g) = guard {
                        f(g);
                    }
                    f(body);
                }
            }
            Block(stmts) => {
                for s in stmts {
                    match s {
                        Stmt::Let(b) => {
                            if let Some(i) = &mut b.init {
                                f(i)
                            }
                        }
                        Stmt::Expr(e) => f(e),
                        Stmt::LocalFn(_) | Stmt::LocalType(_) => {}
                    }
                }
            }
            Loop { header, body, .. } => {
                header.iter_mut().for_each(&mut f);
                f(body);
            }
            Try {
                body,
                catches,
                finally,
                resources,
            } => {
                for r in resources {
                    if let Some(i) = &mut r.init {
                        f(i);
                    }
                }
                f(body);
                for c in catches {
                    f(&mut c.body);
                }
                if let Some(e) = finally {
                    f(e);
                }
            }
            Return(e) => {
                if let Some(e) = e {
                    f(e);
                }
            }
        }
    }

    /// The callee name if this is a call or macro.
    pub fn call_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Call { name, .. } | ExprKind::Macro { name, .. } => Some(name),
            _ => None,
        }
    }

    /// Dotted text of a name/field/path chain (`okhttp3.Interceptor`, `uuid::Uuid`), or `None`
    /// when the expression is not a plain chain of names.
    pub fn path_text(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Name(n) => Some(n.to_string()),
            ExprKind::Field { receiver, name } => {
                let mut s = receiver.path_text()?;
                s.push('.');
                s.push_str(name);
                Some(s)
            }
            _ => None,
        }
    }
}

/// The last segment of a qualified name: `okhttp3.Interceptor` -> `Interceptor`,
/// `reqwest_middleware::Middleware` -> `Middleware`, `Interceptor.Chain` -> `Chain`.
/// Rust's standard smart pointers: a method called on one runs on what it points to.
pub const SMART_POINTERS: &[&str] = &["Arc", "Rc", "Box", "Pin"];

pub fn simple_name(name: &str) -> &str {
    let name = name.trim();
    let name = name.split('<').next().unwrap_or(name);
    name.rsplit(['.', ':']).next().unwrap_or(name).trim()
}
