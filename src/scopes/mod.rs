//! Scopes that decide how often code runs: interceptor bodies (and, later, retry scopes and
//! per-process schedulers).

pub mod interceptors;
pub mod retry;
