//! Baselines: record today's findings, then report only new ones.
//!
//! Findings are matched by a line-independent key (rule, file, enclosing symbol, the
//! expression's text without whitespace), counted as a multiset: moving code does not bring a
//! baselined finding back, and a new copy of the same bad pattern in the same place shows.

use crate::Report;
use crate::hash::HashMap;
use crate::report::{display_path, finding_key};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    pub tool: String,
    pub version: u32,
    pub findings: Vec<BaselineEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// The matching key.
    pub fingerprint: String,
    /// For people reading the file; not used for matching.
    pub code: String,
    pub path: String,
    pub line: usize,
    pub message: String,
}

/// Writes the report's findings as a baseline.
pub fn write(report: &Report, base: &Path, path: &Path) -> Result<usize, String> {
    let findings: Vec<BaselineEntry> = report
        .findings
        .iter()
        .map(|f| BaselineEntry {
            fingerprint: format!("{:016x}", finding_key(report, f, base)),
            code: f.rule.code.to_string(),
            path: display_path(&report.files[f.file].path, base),
            line: f.start.line,
            message: f.message.clone(),
        })
        .collect();
    let n = findings.len();
    let file = BaselineFile {
        tool: "idemlint".into(),
        version: 1,
        findings,
    };
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())? + "\n";
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(n)
}

/// Loads a baseline written by [`write`].
pub fn load(path: &Path) -> Result<BaselineFile, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read baseline {}: {e}", path.display()))?;
    let file: BaselineFile = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not an idemlint baseline: {e}", path.display()))?;
    if file.tool != "idemlint" || file.version != 1 {
        return Err(format!(
            "{} is not an idemlint baseline of version 1",
            path.display()
        ));
    }
    Ok(file)
}

/// Drops findings the baseline already has; returns how many were dropped.
pub fn filter(report: &mut Report, baseline: &BaselineFile, base: &Path) -> usize {
    let mut budget: HashMap<&str, usize> = HashMap::default();
    for e in &baseline.findings {
        *budget.entry(e.fingerprint.as_str()).or_insert(0) += 1;
    }
    let keys: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{:016x}", finding_key(report, f, base)))
        .collect();
    let mut keep = Vec::with_capacity(keys.len());
    for k in &keys {
        match budget.get_mut(k.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                keep.push(false);
            }
            _ => keep.push(true),
        }
    }
    let before = report.findings.len();
    let mut i = 0;
    report.findings.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    before - report.findings.len()
}
