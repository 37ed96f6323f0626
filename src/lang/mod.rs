//! Tree-sitter front ends. Each language module lowers its concrete syntax tree into the
//! language-neutral [`crate::facts`] model. A file is parsed exactly once.

pub mod java;
pub mod kotlin;
mod kotlin_patch;
pub mod rust;

use crate::facts::{FileFacts, FnId, Function, Lang, Span, TypeDecl, TypeId};
use tree_sitter::{Node, Parser, Tree};

/// Deepest syntax nesting the front ends follow. Deeper subtrees are skipped (and a syntax
/// note recorded) so that hostile input cannot overflow the stack.
pub const MAX_DEPTH: usize = 600;

/// Result of parsing and lowering one file.
pub struct Parsed {
    pub facts: FileFacts,
    /// True when the tree has ERROR or MISSING nodes (the recovered tree is still analysed).
    pub has_errors: bool,
    /// True when some subtree was deeper than [`MAX_DEPTH`] and was not analysed.
    pub too_deep: bool,
}

pub fn language(lang: Lang) -> tree_sitter::Language {
    match lang {
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
    }
}

/// Wall-clock budget for parsing one file, at most: pathological input stops here with a notice
/// instead of holding up the run (a 1.4 KB Kotlin file found by fuzzing sends the grammar's error
/// recovery into minutes and gigabytes).
pub const PARSE_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// The budget for a file of `len` bytes: 2 s plus 1 s per 64 KiB (real code parses at several
/// MB/s), at most [`PARSE_BUDGET`].
pub fn parse_budget(len: usize) -> std::time::Duration {
    (std::time::Duration::from_secs(2) + std::time::Duration::from_secs((len / 65536) as u64))
        .min(PARSE_BUDGET)
}

/// Parses `source` as `lang`. Returns `None` if tree-sitter gives up or the parse takes longer
/// than [`PARSE_BUDGET`].
pub fn parse_tree(lang: Lang, source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&language(lang)).ok()?;
    let start = std::time::Instant::now();
    let budget = parse_budget(source.len());
    let bytes = source.as_bytes();
    let mut halt = |_: &tree_sitter::ParseState| start.elapsed() > budget;
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut halt);
    parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(options),
    )
}

/// Parses and lowers one file.
pub fn parse_and_lower(lang: Lang, source: &str) -> Option<Parsed> {
    let mut parsed = lower_unshrunk(lang, source)?;
    // Every file's facts live until the rules are done: give back the lists' spare room.
    crate::shrink::shrink(&mut parsed.facts);
    Some(parsed)
}

/// [`parse_and_lower`] without giving back the spare capacity of the facts' lists.
pub(crate) fn lower_unshrunk(lang: Lang, source: &str) -> Option<Parsed> {
    let patched = match lang {
        Lang::Kotlin => kotlin_patch::patch(source),
        _ => None,
    };
    let source = patched.as_deref().unwrap_or(source);
    let tree = parse_tree(lang, source)?;
    let mut lw = Lowerer::new(source);
    match lang {
        Lang::Java => java::lower(&mut lw, tree.root_node()),
        Lang::Kotlin => kotlin::lower(&mut lw, tree.root_node()),
        Lang::Rust => rust::lower(&mut lw, tree.root_node()),
    }
    if tree.root_node().has_error() {
        collect_errors(tree.root_node(), &mut lw.facts.syntax_errors);
    }
    // Only errors that can be pointed at count (the Kotlin grammar flags some valid one-line
    // bodies without an ERROR or MISSING node).
    let has_errors = !lw.facts.syntax_errors.is_empty();
    let too_deep = lw.too_deep;
    Some(Parsed {
        facts: lw.facts,
        has_errors,
        too_deep,
    })
}

/// Collects ERROR / MISSING node spans without recursion.
fn collect_errors(root: Node, out: &mut Vec<Span>) {
    let mut cursor = root.walk();
    'outer: loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            out.push(span(node));
            if out.len() >= 50 {
                return;
            }
        } else if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'outer;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kotlin_suspend_blocks_parse_as_calls() {
        let src = "suspend fun f() = suspend { work() }.retrying(3)\nval x = suspendable {}\n";
        let patched = kotlin_patch::patch(src).unwrap();
        assert_eq!(patched.len(), src.len(), "offsets are kept");
        assert!(patched.starts_with("suspend fun f() = _uspend { work() }"));
        assert!(patched.contains("suspendable {}"), "only the whole word");
        let parsed = parse_and_lower(Lang::Kotlin, src).unwrap();
        assert!(!parsed.has_errors);
        assert!(kotlin_patch::patch("fun f() {}").is_none());
    }
}
