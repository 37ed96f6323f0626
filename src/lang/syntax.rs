//! What the three front ends share while they lower a tree: the lowering state, spans, the
//! tree-sitter languages and type-name cleaning. Its own module, so that the front ends and the
//! module that dispatches to them do not import each other.

use crate::facts::{FileFacts, FnId, Function, Lang, Span, TypeDecl, TypeId};
use tree_sitter::Node;

/// Deepest syntax nesting the front ends follow. Deeper subtrees are skipped (and a syntax
/// note recorded) so that hostile input cannot overflow the stack.
pub const MAX_DEPTH: usize = 600;

pub fn language(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
    }
}

pub fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Shared state for a front end while it lowers one file.
pub struct Lowerer<'s> {
    pub src: &'s str,
    pub facts: FileFacts,
    depth: usize,
    /// Set when a subtree was cut at [`MAX_DEPTH`].
    pub too_deep: bool,
}

impl<'s> Lowerer<'s> {
    pub fn new(src: &'s str) -> Self {
        Lowerer {
            src,
            facts: FileFacts::default(),
            depth: 0,
            too_deep: false,
        }
    }

    /// Source text of a node ("" if the node's range is not on char boundaries).
    pub fn text(&self, node: Node) -> &'s str {
        self.src
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    /// Enter one level of nesting; returns false (and records it) past [`MAX_DEPTH`]. Every
    /// recursive lowering function calls this first and [`Lowerer::leave`] when it returns.
    pub fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            self.too_deep = true;
            return false;
        }
        self.depth += 1;
        true
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Reserves a function slot (so nested lambdas can name their parent before the parent is
    /// complete) and returns its id.
    pub fn add_fn(&mut self, f: Function) -> FnId {
        self.facts.functions.push(f);
        self.facts.functions.len() - 1
    }

    pub fn add_type(&mut self, t: TypeDecl) -> TypeId {
        self.facts.types.push(t);
        self.facts.types.len() - 1
    }
}

/// Named children of a node, collected (tree-sitter cursors make borrowing awkward).
pub fn named_children(node: Node) -> Vec<Node> {
    let mut c = node.walk();
    node.named_children(&mut c).collect()
}

/// Strips generic arguments and whitespace/nullability from a type as written:
/// `List<String>` -> `List`, `Foo?` -> `Foo`, `&mut Bar<'a>` -> `Bar`, `dyn Middleware` -> `Middleware`.
pub fn clean_type(t: &str) -> String {
    let t = t.trim();
    let t = t.split('<').next().unwrap_or(t);
    let t = t
        .trim_start_matches('&')
        .trim_start_matches("mut ")
        .trim_start_matches("dyn ")
        .trim_start_matches("impl ")
        .trim();
    t.trim_end_matches(['?', '!']).trim().to_string()
}
