//! The hash maps and sets the analysis uses: std's tables with foldhash's fixed-seed hasher.
//! The index and the memo tables hash millions of short strings and small ids per run, where
//! SipHash (std's default, built to resist collision attacks on untrusted keys) showed up in
//! profiles; nothing here hashes attacker-chosen keys into a shared service. Iteration order
//! never reaches the output (findings are sorted), so the hasher cannot change results.

pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;
