//! Front end placeholder: filled in by the java lowering.
use super::Lowerer;
use tree_sitter::Node;

pub fn lower(_lw: &mut Lowerer, _root: Node) {}
