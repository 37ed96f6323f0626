//! Output formats. Each renders a [`Report`] to a string; none of them analyses anything.

pub mod concise;
pub mod fingerprint;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

use crate::Report;
use std::path::{Path, PathBuf};

/// A path as shown to users and in machine output: relative to `base` when it is inside it,
/// with `/` separators and no leading `./`.
pub fn display_path(path: &Path, base: &Path) -> String {
    let abs = |p: &Path| -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        }
    };
    let p = abs(path);
    let rel = p.strip_prefix(base).map(Path::to_path_buf).unwrap_or(p);
    let s: Vec<String> = rel
        .components()
        .filter(|c| {
            !matches!(
                c,
                std::path::Component::CurDir | std::path::Component::RootDir
            )
        })
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let joined = s.join("/");
    if rel.is_absolute() && !joined.starts_with('/') && cfg!(unix) {
        format!("/{}", joined.trim_start_matches('/'))
    } else {
        joined
    }
}

/// Percent-encodes a path for use in a URI (keeps `/` and unreserved characters).
pub fn uri_encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The line-independent identity of a finding: rule, file, enclosing symbol and the primary
/// expression's text with whitespace removed.
pub fn finding_key(report: &Report, f: &crate::ReportFinding, base: &Path) -> u64 {
    let src = &report.files[f.file];
    let text: String = src.slice(f.span).split_whitespace().collect();
    let key = format!(
        "{}\u{0}{}\u{0}{}\u{0}{}",
        f.rule.code,
        display_path(&src.path, base),
        f.symbol,
        text
    );
    fnv1a(key.as_bytes())
}

/// `idemlint/v1` fingerprints: [`finding_key`] plus an occurrence counter for identical ones.
pub fn fingerprints(report: &Report, base: &Path) -> Vec<String> {
    let mut counts: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    report
        .findings
        .iter()
        .map(|f| {
            let h = finding_key(report, f, base);
            let n = counts.entry(h).or_insert(0);
            *n += 1;
            format!("{h:016x}:{n}")
        })
        .collect()
}

/// FNV-1a, 64 bit: small, stable across platforms and releases.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// How many findings each rule has, in rule code order (the summary line, `--statistics`).
pub fn rule_counts(report: &Report) -> Vec<(&'static crate::rules::RuleMeta, usize)> {
    let mut counts: Vec<(&'static crate::rules::RuleMeta, usize)> = Vec::new();
    for f in &report.findings {
        match counts.iter_mut().find(|(r, _)| r.code == f.rule.code) {
            Some((_, k)) => *k += 1,
            None => counts.push((f.rule, 1)),
        }
    }
    counts.sort_by_key(|(r, _)| r.code);
    counts
}

/// The one-paragraph text of a finding for the GitHub and SARIF formats: the message, the
/// framework's reason, what was inferred (for a finding beyond the catalogue), and the fix.
pub fn message_text(f: &crate::ReportFinding) -> String {
    let mut s = sentence(&f.message);
    if let Some(n) = &f.note {
        s.push(' ');
        s.push_str(&sentence(n));
    }
    if let Some(i) = &f.inferred {
        s.push_str(&format!(" Inferred: {}", sentence(i)));
    }
    s.push_str(&format!(" Fix: {}", sentence(&f.help)));
    s
}

/// `text` ending as a sentence does: with a full stop unless it has one (or `?`, `!`).
fn sentence(text: &str) -> String {
    let t = text.trim_end();
    match t.ends_with(['.', '?', '!']) {
        true => t.to_string(),
        false => format!("{t}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_of_a_message_ends_as_a_sentence_once() {
        assert_eq!(sentence("every replica runs it"), "every replica runs it.");
        assert_eq!(
            sentence("identical in every replica."),
            "identical in every replica."
        );
        assert_eq!(sentence("is it locked? "), "is it locked?");
    }

    #[test]
    fn paths_are_relative_with_slashes() {
        let base = Path::new("/work/repo");
        assert_eq!(
            display_path(Path::new("/work/repo/src/A.java"), base),
            "src/A.java"
        );
        assert_eq!(display_path(Path::new("./src/A.java"), base), "src/A.java");
        assert_eq!(
            display_path(Path::new("/elsewhere/B.kt"), base),
            "/elsewhere/B.kt"
        );
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri_encode("src/My File#1.kt"), "src/My%20File%231.kt");
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
