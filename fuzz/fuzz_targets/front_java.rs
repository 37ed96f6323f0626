//! The java front end on arbitrary input: parse and lower must not panic or overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = idemlint::lang::parse_and_lower(idemlint::facts::Lang::Java, text);
    }
});
