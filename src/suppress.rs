//! Inline suppressions.
//!
//! - `// idemlint:ignore IDEM001 <reason>` on the reported line, or alone on the line directly
//!   above it (several codes: `IDEM001,IDEM008`; `ALL` for every rule);
//! - `// idemlint:ignore-file IDEM004 <reason>` anywhere in the file;
//! - on the JVM, `@SuppressWarnings("idemlint:IDEM001")` (Java) or `@Suppress("idemlint:IDEM001")`
//!   (Kotlin) on the enclosing class, method, field or local declaration.
//!
//! A comment suppression without a reason, one that names an unknown rule, and any suppression
//! that suppresses nothing are reported as warnings.

use crate::facts::{Annotation, Expr, ExprKind, FileFacts, Span};
use crate::finding::Finding;
use crate::project::Project;
use crate::rules::{RULES, Selection};
use crate::source::SourceFile;

/// A problem with a suppression itself.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SuppressionWarning {
    pub path: std::path::PathBuf,
    pub line: usize,
    pub message: String,
}

#[derive(Debug)]
struct Directive {
    line: usize,
    /// Lines whose findings it covers (empty for file-level).
    covers: Vec<usize>,
    file_level: bool,
    codes: Vec<String>,
    reason: Option<String>,
    /// Declaration span for annotation suppressions.
    span: Option<Span>,
    used: Vec<bool>,
}

impl Directive {
    fn matches(&self, code: &str) -> Option<usize> {
        self.codes
            .iter()
            .position(|c| c.eq_ignore_ascii_case("ALL") || c.eq_ignore_ascii_case(code))
    }
}

/// Splits `IDEM001,IDEM008 because ...` into codes and the reason.
fn codes_and_reason(rest: &str) -> (Vec<String>, Option<String>) {
    let mut codes = Vec::new();
    let mut rest = rest.trim_start();
    loop {
        let tok_end = rest
            .find(|c: char| c.is_whitespace() || c == ',' || c == ':')
            .unwrap_or(rest.len());
        let tok = &rest[..tok_end];
        let is_code = tok.eq_ignore_ascii_case("ALL")
            || (tok.len() > 4
                && tok[..4].eq_ignore_ascii_case("IDEM")
                && tok[4..].chars().all(|c| c.is_ascii_digit()));
        if tok.is_empty() || !is_code {
            break;
        }
        codes.push(tok.to_ascii_uppercase());
        rest = rest[tok_end..].trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    }
    let reason = rest
        .trim()
        .trim_start_matches([':', '-', '—', '–'])
        .trim()
        .trim_end_matches("*/")
        .trim();
    (codes, (!reason.is_empty()).then(|| reason.to_string()))
}

/// Comment directives of one file.
fn comment_directives(src: &SourceFile) -> Vec<Directive> {
    let mut out = Vec::new();
    if !src.text().contains("idemlint:ignore") {
        return out;
    }
    for (i, line) in src.text().lines().enumerate() {
        let Some(at) = line.find("idemlint:ignore") else {
            continue;
        };
        // Only inside a comment: `//`, `/*` or a `*` continuation before the marker.
        let before = &line[..at];
        let comment_start = before.rfind("//").or_else(|| before.rfind("/*"));
        let in_comment = comment_start.is_some() || before.trim_start().starts_with('*');
        if !in_comment {
            continue;
        }
        let after = &line[at + "idemlint:ignore".len()..];
        let (file_level, rest) = match after.strip_prefix("-file") {
            Some(r) => (true, r),
            None => (false, after),
        };
        if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let (codes, reason) = codes_and_reason(rest);
        let line_no = i + 1;
        let code_before = comment_start
            .map(|c| !line[..c].trim().is_empty())
            .unwrap_or(false);
        let covers = if file_level {
            Vec::new()
        } else if code_before {
            vec![line_no]
        } else {
            vec![line_no, line_no + 1]
        };
        let n = codes.len();
        out.push(Directive {
            line: line_no,
            covers,
            file_level,
            codes,
            reason,
            span: None,
            used: vec![false; n],
        });
    }
    out
}

/// `@SuppressWarnings("idemlint:IDEM001")` / `@Suppress("idemlint:IDEM001")` on declarations.
fn annotation_directives(facts: &FileFacts, src: &SourceFile) -> Vec<Directive> {
    let mut out = Vec::new();
    let mut add = |annotations: &[Annotation], span: Span| {
        for a in annotations {
            if a.name != "SuppressWarnings" && a.name != "Suppress" {
                continue;
            }
            let mut strings = Vec::new();
            for arg in &a.args {
                collect_strings(&arg.value, &mut strings);
            }
            for s in strings {
                let Some(rest) = s.strip_prefix(crate::project::DIRECTIVE_MARKER) else {
                    continue;
                };
                let (codes, reason) = codes_and_reason(rest);
                let n = codes.len();
                out.push(Directive {
                    line: src.line_col(a.span.start).line,
                    covers: Vec::new(),
                    file_level: false,
                    codes,
                    reason,
                    span: Some(span),
                    used: vec![false; n],
                });
            }
        }
    };
    for f in &facts.functions {
        add(&f.annotations, f.span);
        crate::flow::walk_lets(&f.body, &mut |b| add(&b.annotations, b.span));
    }
    for t in &facts.types {
        add(&t.annotations, t.span);
        for b in &t.fields {
            add(&b.annotations, b.span);
        }
    }
    for b in &facts.globals {
        add(&b.annotations, b.span);
    }
    out
}

fn collect_strings(e: &Expr, out: &mut Vec<String>) {
    crate::project::walk_expr(e, &mut |x: &Expr| {
        if let ExprKind::Str(s) = &x.kind {
            out.push(s.to_string());
        }
    });
}

/// What [`apply`] leaves: the findings still reported, the suppressed ones with their
/// justification, and warnings about the suppressions.
pub struct Outcome {
    pub kept: Vec<Finding>,
    pub suppressed: Vec<(Finding, String)>,
    pub warnings: Vec<SuppressionWarning>,
}

/// Removes suppressed findings. Warnings about unused suppressions only concern rules that
/// ran (`selection`).
pub fn apply(project: &Project, findings: Vec<Finding>, selection: &Selection) -> Outcome {
    let mut per_unit: Vec<Option<Vec<Directive>>> =
        (0..project.units.len()).map(|_| None).collect();
    let load = |u: usize| {
        let unit = &project.units[u];
        let mut d = comment_directives(&unit.src);
        if unit.may_hold_directives() {
            d.extend(annotation_directives(unit.facts(), &unit.src));
        }
        d
    };
    let mut kept = Vec::new();
    let mut suppressed = Vec::new();
    for f in findings {
        let line = project.units[f.unit].src.line_col(f.span.start).line;
        let ds = per_unit[f.unit].get_or_insert_with(|| load(f.unit));
        let hit = ds.iter_mut().find_map(|d| {
            let applies = d.file_level
                || d.covers.contains(&line)
                || d.span.is_some_and(|s| s.contains(f.span));
            if !applies {
                return None;
            }
            let i = d.matches(f.code)?;
            d.used[i] = true;
            Some(d.reason.clone().unwrap_or_default())
        });
        match hit {
            Some(reason) => suppressed.push((f, reason)),
            None => kept.push(f),
        }
    }
    let mut warnings = Vec::new();
    for (u, ds) in per_unit.into_iter().enumerate() {
        // Files with no findings were never looked at: scan them for suppressions too.
        let ds = match ds {
            Some(ds) => ds,
            None if project.units[u].may_hold_directives() => load(u),
            None => continue,
        };
        let path = &project.units[u].src.path;
        for d in ds {
            let mut warn = |message: String| {
                warnings.push(SuppressionWarning {
                    path: path.clone(),
                    line: d.line,
                    message,
                })
            };
            if d.codes.is_empty() {
                warn("`idemlint:ignore` names no rule: write the code, e.g. `idemlint:ignore IDEM001 <reason>`".into());
                continue;
            }
            for (i, c) in d.codes.iter().enumerate() {
                let known = c == "ALL" || RULES.iter().any(|r| r.code == c);
                if !known {
                    warn(format!("suppression names unknown rule `{c}`"));
                } else if !d.used[i] && (c == "ALL" || selection.is_enabled(c)) {
                    warn(format!("suppression of {c} suppresses nothing: remove it"));
                }
            }
            if d.reason.is_none() && d.span.is_none() {
                warn(format!(
                    "suppression of {} has no reason: say why it is safe, e.g. `idemlint:ignore {} key is set by the caller`",
                    d.codes.join(","),
                    d.codes[0]
                ));
            }
        }
    }
    warnings.sort_by(|a, b| (&a.path, a.line, &a.message).cmp(&(&b.path, b.line, &b.message)));
    Outcome {
        kept,
        suppressed,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_codes_and_reasons() {
        assert_eq!(
            codes_and_reason(" IDEM001 the key comes from the caller"),
            (
                vec!["IDEM001".to_string()],
                Some("the key comes from the caller".to_string())
            )
        );
        assert_eq!(
            codes_and_reason(" IDEM001,IDEM008: legacy"),
            (
                vec!["IDEM001".to_string(), "IDEM008".to_string()],
                Some("legacy".to_string())
            )
        );
        assert_eq!(
            codes_and_reason(" idem001 */"),
            (vec!["IDEM001".to_string()], None)
        );
        assert_eq!(
            codes_and_reason(" because"),
            (vec![], Some("because".to_string()))
        );
    }

    #[test]
    fn directives_cover_their_line_or_the_next() {
        let src = SourceFile::new(
            "A.java".into(),
            "a(); // idemlint:ignore IDEM001 ok\n// idemlint:ignore IDEM008\nb();\nString s = \"idemlint:ignore IDEM001\";\n// idemlint:ignore-file IDEM004 jobs are locked elsewhere\n"
                .into(),
        );
        let d = comment_directives(&src);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].covers, vec![1]);
        assert_eq!(d[1].covers, vec![2, 3]);
        assert!(d[1].reason.is_none());
        assert!(d[2].file_level);
    }
}
