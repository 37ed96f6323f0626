//! Tree-sitter front ends. Each language module lowers its concrete syntax tree into the
//! language-neutral [`crate::facts`] model. A file is parsed exactly once.

pub(crate) mod fn_order;
pub mod java;
pub mod kotlin;
mod kotlin_patch;
pub mod rust;
pub mod syntax;

pub use syntax::{Lowerer, MAX_DEPTH, clean_type, language, named_children, span};

use crate::facts::{FileFacts, Lang, Span};
use tree_sitter::{Node, Parser, Tree};

/// Result of parsing and lowering one file.
pub struct Parsed {
    pub facts: FileFacts,
    /// True when the tree has ERROR or MISSING nodes (the recovered tree is still analysed).
    pub has_errors: bool,
    /// True when some subtree was deeper than [`MAX_DEPTH`] and was not analysed.
    pub too_deep: bool,
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
    // The grammar reads the rewritten text; names and literals are read from the text as
    // written (the rewrites keep every offset), so `inner` as a name stays `inner`.
    let tree = parse_tree(lang, patched.as_deref().unwrap_or(source))?;
    let mut lw = Lowerer::new(source);
    match lang {
        Lang::Java => java::lower(&mut lw, tree.root_node()),
        Lang::Kotlin => kotlin::lower(&mut lw, tree.root_node()),
        Lang::Rust => rust::lower(&mut lw, tree.root_node()),
    }
    // Declared functions take the first ids, in the outline's order.
    fn_order::declared_first(&mut lw.facts);
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

/// Every fixture source file, sorted by path: its language, path and text (for unit tests
/// that check a property of the lowering on all of them).
#[cfg(test)]
pub(crate) fn fixture_sources() -> Vec<(Lang, std::path::PathBuf, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(Lang, std::path::PathBuf, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if let Some(lang) = Lang::from_path(&p) {
                let text = std::fs::read_to_string(&p).unwrap();
                out.push((lang, p, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        &mut out,
    );
    out
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

    #[test]
    fn rewritten_kotlin_names_keep_their_written_spelling() {
        // The grammar reads `_nner` and `_uspend`; the facts name what the code says.
        let src = "enum class M {\n    outer,\n    inner,\n}\nfun f() = suspend { work() }\n";
        assert!(kotlin_patch::patch(src).is_some_and(|p| p.contains("_nner")));
        let facts = parse_and_lower(Lang::Kotlin, src).unwrap().facts;
        let entries: Vec<&str> = facts.types[0]
            .fields
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(entries, ["outer", "inner"]);
        let f = facts
            .functions
            .iter()
            .find(|f| f.name.as_deref() == Some("f"))
            .unwrap();
        let mut calls = Vec::new();
        crate::walk::walk_stmts(&f.body, &mut |e| calls.extend(e.call_name()));
        assert_eq!(calls, ["suspend"]);
    }
}
