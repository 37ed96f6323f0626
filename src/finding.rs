//! Findings as rules produce them (spans) and as reports show them (lines and columns).

use crate::facts::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A secondary location with its explanation.
#[derive(Clone, Debug)]
pub struct Label {
    pub unit: usize,
    pub span: Span,
    pub message: String,
}

/// What a rule reports. Rules never print; the report modules render these.
#[derive(Clone, Debug)]
pub struct Finding {
    pub code: &'static str,
    pub unit: usize,
    /// The primary location: the expression to change.
    pub span: Span,
    /// Label text under the primary location.
    pub label: String,
    /// One-sentence statement of the problem.
    pub message: String,
    pub labels: Vec<Label>,
    /// Why the problem happens, for this framework (shown with the help).
    pub note: Option<String>,
    pub help: String,
    /// Qualified name of the enclosing function or class, for stable fingerprints.
    pub symbol: String,
    /// Where the fresh value is made when that is not the primary location (a helper that
    /// the reported call runs): no other rule reports that expression again.
    pub origin: Option<(usize, Span)>,
    /// Set when the finding rests on an inference (a retry scope, interceptor or scheduler
    /// idemlint does not know from its catalogue): what was inferred and why. Reports show it,
    /// and SARIF gives such a result a lower precision.
    pub inferred: Option<String>,
}

/// "a" or "an" for a word (framework names: "an OkHttp", "a Spring", "a ureq"; and the
/// inferred ones: "an unlisted HTTP client").
pub fn article(word: &str) -> &'static str {
    // `http4k`, `HTTP client`: an initialism read letter by letter ("aitch").
    let initialism = word
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("http"));
    if word.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o'])
        || word.starts_with("un")
        || initialism
    {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod article_tests {
    use super::article;

    #[test]
    fn article_follows_the_sound_of_the_first_letter() {
        assert_eq!(article("OkHttp"), "an");
        assert_eq!(article("Apache HttpClient 5"), "an");
        assert_eq!(article("Spring"), "a");
        assert_eq!(article("unlisted HTTP client"), "an");
        assert_eq!(article("ureq"), "a");
        assert_eq!(article("inferred retry"), "an");
        assert_eq!(article("http4k"), "an");
        assert_eq!(article("HttpClient"), "an");
        assert_eq!(article("hyper"), "a");
    }
}
