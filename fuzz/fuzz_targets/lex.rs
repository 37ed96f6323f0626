//! The lexical pass and the declaration outline on arbitrary input, as each language: neither
//! may panic, every identifier and string piece is a slice of the input, and every token lies
//! in it.
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
            for t in &l.tokens {
                assert!(t.start <= t.end && t.end as usize <= text.len());
            }
            let _ = idemlint::outline::functions(lang, text, &l.tokens);
        }
    }
});
