//! The lexical pass on arbitrary input, as each language: it must not panic, and every
//! identifier and string piece it returns is a slice of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let range = text.as_ptr() as usize..text.as_ptr() as usize + text.len() + 1;
        for lang in [
            idemlint::facts::Lang::Java,
            idemlint::facts::Lang::Kotlin,
            idemlint::facts::Lang::Rust,
        ] {
            let l = idemlint::lex::lex(lang, text);
            for s in l.idents.iter().chain(&l.strings) {
                assert!(range.contains(&(s.as_ptr() as usize)));
            }
        }
    }
});
