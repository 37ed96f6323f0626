//! The hash maps and sets the analysis uses: std's tables with foldhash's fixed-seed hasher.
//! The index and the memo tables hash millions of short strings and small ids per run, where
//! SipHash (std's default, built to resist collision attacks on untrusted keys) showed up in
//! profiles; nothing here hashes attacker-chosen keys into a shared service. Iteration order
//! never reaches the output (findings are sorted), so the hasher cannot change results.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;

/// 128 bits of two fixed-seed foldhash passes over `value`: the same for the same value in
/// one build, and wide enough that two values never share one by accident (the cache keys
/// files and results by it).
pub fn digest128<T: std::hash::Hash + ?Sized>(value: &T) -> u128 {
    use std::hash::BuildHasher;
    let half = |seed: u64| foldhash::quality::FixedState::with_seed(seed).hash_one(value);
    (u128::from(half(0x1de3_11a7)) << 64) | u128::from(half(0x5eed_cafe))
}
