//! What a rule is, as the registry and the driver see it: its identity, its description and
//! the shared analyses it needs. A module of its own, so that the rules do not import the
//! registry that lists them.

use crate::finding::Severity;

/// A rule's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    KeyInInterceptor,
    KeyInRetryScope,
    RetryCallsKeyMinter,
    SchedulerLock,
    CheckThenAct,
    UnstableLockKey,
    PaymentPost,
    NondeterministicKey,
}

/// A shared analysis a rule starts from; the driver builds only what the enabled rules need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Per-file key flows: the sink gate, then the interceptor and retry scopes.
    KeyFlows,
    /// The project's POSTs to money endpoints and payment SDK calls, and the ordered
    /// guard/money walk over them.
    PostSites,
    /// Distributed locks and their keys.
    LockKeys,
}

/// Static description of a rule.
#[derive(Debug)]
pub struct RuleMeta {
    pub id: Rule,
    pub code: &'static str,
    pub name: &'static str,
    /// One line: what the rule reports.
    pub summary: &'static str,
    pub severity: Severity,
    /// On unless selected away; off (pedantic) rules need `--select` / `--extend-select`.
    pub default_enabled: bool,
    /// `src/rules/<rule>/IDEMnnn.md`: What it does / Why is this bad? / Example / Fix / References.
    pub doc: &'static str,
    /// GitHub code scanning `precision` (`very-high`, `high`, `medium`, `low`).
    pub precision: &'static str,
    /// GitHub code scanning `security-severity` (0.0 to 10.0).
    pub security_severity: &'static str,
    pub tags: &'static [&'static str],
    /// The shared analyses the rule starts from.
    pub needs: &'static [Need],
    /// The rule's module (`module_path!()`), whose directory holds its code and documentation.
    pub home: &'static str,
}

impl RuleMeta {
    /// The documentation file, relative to the repository root
    /// (`src/rules/scheduler_lock/IDEM004.md`).
    pub fn doc_path(&self) -> String {
        let dir = self.home.split("::").skip(1).collect::<Vec<_>>().join("/");
        format!("src/{dir}/{}.md", self.code)
    }

    /// Where its documentation is read on the web (SARIF `helpUri`, the human output's
    /// `docs:`, `idemlint rule`).
    pub fn docs_url(&self) -> String {
        format!(
            "{}/blob/main/{}",
            env!("CARGO_PKG_REPOSITORY"),
            self.doc_path()
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_documents_itself_in_its_own_directory() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for r in super::super::RULES {
            let path = root.join(r.doc_path());
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(text, r.doc, "{}", r.code);
            assert!(
                text.starts_with(&format!("# {} {}", r.code, r.name)),
                "{}",
                r.code
            );
        }
    }
}
