//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.

use super::{display_path, fingerprints, uri_encode};
use crate::Report;
use crate::rules::{RULES, RuleMeta};
use serde_json::{Value, json};
use std::path::Path;

pub const INFORMATION_URI: &str = "https://github.com/idemlint/idemlint";

pub fn help_uri(r: &RuleMeta) -> String {
    format!("{INFORMATION_URI}/blob/main/rules/{}.md", r.code)
}

fn level(r: &RuleMeta) -> &'static str {
    match r.severity {
        crate::finding::Severity::Error => "error",
        crate::finding::Severity::Warning => "warning",
    }
}

/// The rule's documentation without its first heading line, as plain text.
fn doc_text(r: &RuleMeta) -> String {
    r.doc.replace("```", "").trim().to_string()
}

fn rule_descriptor(r: &RuleMeta) -> Value {
    json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.summary},
        "help": {"text": doc_text(r), "markdown": r.doc},
        "helpUri": help_uri(r),
        "defaultConfiguration": {"level": level(r), "enabled": r.default_enabled},
        "properties": {
            "tags": r.tags,
            "precision": r.precision,
            "security-severity": r.security_severity,
            "problem.severity": if r.severity == crate::finding::Severity::Error { "error" } else { "warning" },
        },
    })
}

fn region(
    src: &crate::source::SourceFile,
    start: crate::source::LineCol,
    end: crate::source::LineCol,
    span: crate::facts::Span,
) -> Value {
    json!({
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
        "snippet": {"text": src.slice(span)},
    })
}

pub fn render(report: &Report, base: &Path) -> String {
    let fps = fingerprints(report, base);
    let uri = |f: usize| uri_encode(&display_path(&report.files[f].path, base));
    let results: Vec<Value> = report
        .findings
        .iter()
        .zip(&fps)
        .map(|(f, fp)| {
            let src = &report.files[f.file];
            let rule_index = RULES
                .iter()
                .position(|r| r.code == f.rule.code)
                .unwrap_or(0);
            let related: Vec<Value> = f
                .labels
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    json!({
                        "id": i + 1,
                        "message": {"text": l.message},
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri(l.file), "uriBaseId": "%SRCROOT%"},
                            "region": region(&report.files[l.file], l.start, l.end, l.span),
                        },
                    })
                })
                .collect();
            let mut result = json!({
                "ruleId": f.rule.code,
                "ruleIndex": rule_index,
                "level": level(f.rule),
                "message": {"text": match &f.note {
                    Some(n) => format!("{}. {} Fix: {}.", f.message, n, f.help),
                    None => format!("{}. Fix: {}.", f.message, f.help),
                }},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri(f.file), "uriBaseId": "%SRCROOT%"},
                        "region": region(src, f.start, f.end, f.span),
                    },
                    "logicalLocations": [{"fullyQualifiedName": f.symbol}],
                }],
                "partialFingerprints": {"idemlint/v1": fp},
            });
            if !related.is_empty() {
                result["relatedLocations"] = Value::Array(related);
            }
            result
        })
        .collect();
    let mut notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            json!({
                "level": "error",
                "message": {"text": e.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri_encode(&display_path(&e.path, base)), "uriBaseId": "%SRCROOT%"}}}],
            })
        })
        .collect();
    notifications.extend(report.notices.iter().map(|n| {
        json!({
            "level": "warning",
            "message": {"text": n.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": uri_encode(&display_path(&n.path, base)), "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": n.line},
            }}],
        })
    }));
    let base_uri = format!(
        "file://{}/",
        uri_encode(base.to_string_lossy().trim_end_matches('/'))
    );
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "idemlint",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": INFORMATION_URI,
                "rules": RULES.iter().map(rule_descriptor).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": base_uri}},
            "columnKind": "unicodeCodePoints",
            "invocations": [{
                "executionSuccessful": report.errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
