//! The whole rule pass (every rule) on arbitrary input: the first byte picks the language, the
//! rest is split into two files of one project so that cross-file resolution runs too.
#![no_main]

use idemlint::rules::Selection;
use idemlint::{Options, lint_sources};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let ext = ["java", "kt", "rs"][first as usize % 3];
    let cut = (0..=text.len() / 2).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let (a, b) = text.split_at(cut);
    let opts = Options {
        selection: Selection::all(),
        threads: 1,
        ..Options::default()
    };
    let _ = lint_sources(
        vec![
            (PathBuf::from(format!("src/A.{ext}")), a.to_string()),
            (PathBuf::from(format!("src/B.{ext}")), b.to_string()),
        ],
        &opts,
    );
});
