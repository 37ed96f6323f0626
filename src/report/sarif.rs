//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF consumers.
//!
//! What code scanning reads is all here: rule descriptors with help, tags, precision and
//! `security-severity`; results with `%SRCROOT%`-relative URIs (relative to the `base` given,
//! the repository root from the command line; no absolute URI, so the file can be uploaded from
//! another machine), regions and snippets;
//! `partialFingerprints` (`primaryLocationLineHash` computed as the upload action does, and a
//! line-independent `idemlint/v1`); related locations and, where a value is followed into a
//! helper, a code flow; `automationDetails`; and tool notifications for files that could not
//! be read or parsed.

use super::{display_path, fingerprint, fingerprints, uri_encode};
use crate::config::Level;
use crate::hash::HashMap;
use crate::rules::{RULES, RuleMeta};
use crate::{Report, ReportFinding};
use serde_json::{Value, json};
use std::path::Path;

pub const INFORMATION_URI: &str = env!("CARGO_PKG_REPOSITORY");

/// Options for [`render`].
#[derive(Debug, Clone, Default)]
pub struct SarifOptions {
    /// Include findings silenced by inline suppressions, marked as suppressed.
    pub include_suppressed: bool,
    /// `automationDetails.id` (GitHub's analysis category); `idemlint/` by default.
    pub automation_id: Option<String>,
}

/// The "What it does" section of a rule's documentation, as one paragraph.
fn full_description(r: &RuleMeta) -> String {
    let mut in_section = false;
    let mut out = String::new();
    for line in r.doc.lines() {
        if line.starts_with("## ") {
            if in_section {
                break;
            }
            in_section = line.trim() == "## What it does";
            continue;
        }
        if in_section {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(line.trim());
        }
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if out.is_empty() {
        r.summary.to_string()
    } else {
        out
    }
}

/// The rule's documentation as plain text.
fn doc_text(r: &RuleMeta) -> String {
    r.doc.replace("```", "").trim().to_string()
}

fn rule_descriptor(r: &RuleMeta, level: Level) -> Value {
    json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": full_description(r)},
        "help": {"text": doc_text(r), "markdown": r.doc},
        "helpUri": r.docs_url(),
        "defaultConfiguration": {"level": level.as_str(), "enabled": r.default_enabled},
        "properties": {
            "tags": r.tags,
            "precision": r.precision,
            "security-severity": r.security_severity,
            "problem.severity": match level { Level::Error => "error", Level::Warning => "warning", Level::Note => "recommendation" },
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

fn location(report: &Report, base: &Path, file: usize, region_: Value) -> Value {
    json!({
        "artifactLocation": {
            "uri": uri_encode(&display_path(&report.files[file].path, base)),
            "uriBaseId": "%SRCROOT%",
        },
        "region": region_,
    })
}

/// The precision one step below `p` (`very-high` > `high` > `medium` > `low`).
fn lower_precision(p: &str) -> &'static str {
    match p {
        "very-high" => "high",
        "high" => "medium",
        _ => "low",
    }
}

/// "Made here → used there" as a SARIF code flow, when the value comes from a helper.
fn code_flow(report: &Report, base: &Path, f: &ReportFinding) -> Option<Value> {
    let made = f
        .labels
        .iter()
        .find(|l| l.message.contains("makes a new value here"))?;
    let step = |file: usize, r: Value, text: &str| json!({"location": {"physicalLocation": location(report, base, file, r), "message": {"text": text}}});
    let mut steps = vec![step(
        made.file,
        region(&report.files[made.file], made.start, made.end, made.span),
        &made.message,
    )];
    steps.push(step(
        f.file,
        region(&report.files[f.file], f.start, f.end, f.span),
        &f.label,
    ));
    if let Some(sink) = f
        .labels
        .iter()
        .find(|l| l.message.contains("used as the idempotency key"))
    {
        steps.push(step(
            sink.file,
            region(&report.files[sink.file], sink.start, sink.end, sink.span),
            &sink.message,
        ));
    }
    Some(json!([{ "threadFlows": [{ "locations": steps }] }]))
}

fn result(
    report: &Report,
    base: &Path,
    f: &ReportFinding,
    fp: &str,
    line_hashes: &mut HashMap<usize, HashMap<usize, String>>,
) -> Value {
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
                "physicalLocation": location(report, base, l.file, region(&report.files[l.file], l.start, l.end, l.span)),
            })
        })
        .collect();
    let hashes = line_hashes
        .entry(f.file)
        .or_insert_with(|| fingerprint::line_hashes(src.text()));
    let mut partial = json!({"idemlint/v1": fp});
    if let Some(h) = hashes.get(&f.start.line) {
        partial["primaryLocationLineHash"] = Value::from(h.clone());
    }
    let mut result = json!({
        "ruleId": f.rule.code,
        "ruleIndex": rule_index,
        "level": f.level.as_str(),
        "message": {"text": super::message_text(f)},
        "locations": [{
            "physicalLocation": location(report, base, f.file, region(src, f.start, f.end, f.span)),
            "logicalLocations": [{"fullyQualifiedName": f.symbol}],
        }],
        "partialFingerprints": partial,
    });
    if !related.is_empty() {
        result["relatedLocations"] = Value::Array(related);
    }
    // An inferred finding is one step less precise than its rule. GitHub code scanning reads
    // `precision` only from the rule descriptor, so the message also says what was inferred;
    // other SARIF consumers can read the result's own property.
    if let Some(i) = &f.inferred {
        result["properties"] = json!({
            "precision": lower_precision(f.rule.precision),
            "idemlint/inferred": i,
        });
    }
    if let Some(flow) = code_flow(report, base, f) {
        result["codeFlows"] = flow;
    }
    if let Some(j) = &f.justification {
        result["suppressions"] = json!([{
            "kind": "inSource",
            "justification": if j.is_empty() { "(no reason given)" } else { j.as_str() },
        }]);
    }
    result
}

pub fn render(report: &Report, base: &Path) -> String {
    render_with(report, base, &SarifOptions::default())
}

pub fn render_with(report: &Report, base: &Path, opts: &SarifOptions) -> String {
    let fps = fingerprints(report, base);
    let mut line_hashes: HashMap<usize, HashMap<usize, String>> = HashMap::default();
    let mut results: Vec<Value> = report
        .findings
        .iter()
        .zip(&fps)
        .map(|(f, fp)| result(report, base, f, fp, &mut line_hashes))
        .collect();
    if opts.include_suppressed {
        for f in &report.suppressed {
            let key = format!("{:016x}:s", super::finding_key(report, f, base));
            results.push(result(report, base, f, &key, &mut line_hashes));
        }
    }
    let notification = |level: &str, text: &str, path: &Path, line: Option<usize>| {
        let mut loc = json!({"artifactLocation": {"uri": uri_encode(&display_path(path, base)), "uriBaseId": "%SRCROOT%"}});
        if let Some(l) = line {
            loc["region"] = json!({"startLine": l});
        }
        json!({"level": level, "message": {"text": text}, "locations": [{"physicalLocation": loc}]})
    };
    let mut notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| notification("error", &e.message, &e.path, None))
        .collect();
    notifications.extend(
        report
            .notices
            .iter()
            .map(|n| notification("warning", &n.message, &n.path, Some(n.line))),
    );
    notifications.extend(
        report
            .suppression_warnings
            .iter()
            .map(|w| notification("warning", &w.message, &w.path, Some(w.line))),
    );
    let level_of = |r: &RuleMeta| {
        report
            .rule_levels
            .iter()
            .find(|(c, _)| *c == r.code)
            .map(|(_, l)| *l)
            .unwrap_or(match r.severity {
                crate::finding::Severity::Error => Level::Error,
                crate::finding::Severity::Warning => Level::Warning,
            })
    };
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "idemlint",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "informationUri": INFORMATION_URI,
                "rules": RULES.iter().map(|r| rule_descriptor(r, level_of(r))).collect::<Vec<_>>(),
            }},
            "automationDetails": {"id": opts.automation_id.clone().unwrap_or_else(|| "idemlint/".to_string())},
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
