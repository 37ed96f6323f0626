//! `--format json`: one JSON document with findings, errors and notices.

use super::{display_path, fingerprints};
use crate::Report;
use serde_json::{Value, json};
use std::path::Path;

pub fn render(report: &Report, base: &Path) -> String {
    let fps = fingerprints(report, base);
    let path = |f: usize| display_path(&report.files[f].path, base);
    let findings: Vec<Value> = report
        .findings
        .iter()
        .zip(&fps)
        .map(|(f, fp)| {
            let mut v = json!({
                "code": f.rule.code,
                "name": f.rule.name,
                "severity": f.level.as_str(),
                "message": f.message,
                "path": path(f.file),
                "start": {"line": f.start.line, "column": f.start.column},
                "end": {"line": f.end.line, "column": f.end.column},
                "snippet": report.files[f.file].slice(f.span),
                "symbol": f.symbol,
                "label": f.label,
                "note": f.note,
                "help": f.help,
                "labels": f.labels.iter().map(|l| json!({
                    "path": path(l.file),
                    "start": {"line": l.start.line, "column": l.start.column},
                    "end": {"line": l.end.line, "column": l.end.column},
                    "message": l.message,
                })).collect::<Vec<_>>(),
                "fingerprint": fp,
            });
            // Only inferred findings carry the field: what was inferred and why.
            if let Some(i) = &f.inferred {
                v["inferred"] = Value::from(i.as_str());
            }
            v
        })
        .collect();
    let doc = json!({
        "tool": "idemlint",
        "version": env!("CARGO_PKG_VERSION"),
        "findings": findings,
        "errors": report.errors.iter().map(|e| json!({
            "path": display_path(&e.path, base),
            "message": e.message,
        })).collect::<Vec<_>>(),
        "notices": report.notices.iter().map(|n| json!({
            "path": display_path(&n.path, base),
            "line": n.line,
            "message": n.message,
        })).collect::<Vec<_>>(),
        "suppressed": report.suppressed.iter().map(|f| json!({
            "code": f.rule.code,
            "path": path(f.file),
            "start": {"line": f.start.line, "column": f.start.column},
            "justification": f.justification,
        })).collect::<Vec<_>>(),
        "suppression_warnings": report.suppression_warnings.iter().map(|w| json!({
            "path": display_path(&w.path, base),
            "line": w.line,
            "message": w.message,
        })).collect::<Vec<_>>(),
        "summary": {
            "files_checked": report.files_checked,
            "findings": report.findings.len(),
            "suppressed": report.suppressed.len(),
            "errors": report.errors.len(),
        },
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
