//! `--format human` (the default): miette diagnostics with the offending expression, the
//! interceptor / scope that makes it re-run, and the fix.

use super::display_path;
use crate::Report;
use crate::source::SourceFile;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, MietteError,
    NamedSource, SourceCode, SourceSpan, SpanContents,
};
use std::path::Path;
use std::sync::Arc;

/// Shares the file text with miette without copying it.
struct Src(Arc<SourceFile>);

impl SourceCode for Src {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        self.0
            .text()
            .read_span(span, context_lines_before, context_lines_after)
    }
}

pub fn render(report: &Report, base: &Path, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_width(110)
        .with_context_lines(1);
    let mut out = String::new();
    for f in &report.findings {
        let src = report.files[f.file].clone();
        let path = display_path(&src.path, base);
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            Some(f.label.clone()),
            (f.span.start, f.span.len()),
        )];
        let mut elsewhere = Vec::new();
        for l in &f.labels {
            if l.file == f.file {
                labels.push(LabeledSpan::new_with_span(
                    Some(l.message.clone()),
                    (l.span.start, l.span.len()),
                ));
            } else {
                elsewhere.push(format!(
                    "{}:{}:{}: {}",
                    display_path(&report.files[l.file].path, base),
                    l.start.line,
                    l.start.column,
                    l.message
                ));
            }
        }
        let mut help = match &f.note {
            Some(n) => format!("{n}\nfix: {}", f.help),
            None => f.help.clone(),
        };
        if let Some(i) = &f.inferred {
            help.push_str("\ninferred: ");
            help.push_str(i);
        }
        for e in elsewhere {
            help.push_str("\nnote: ");
            help.push_str(&e);
        }
        help.push_str("\ndocs: ");
        help.push_str(&f.rule.docs_url());
        let severity = match f.level {
            crate::config::Level::Error => miette::Severity::Error,
            crate::config::Level::Warning => miette::Severity::Warning,
            crate::config::Level::Note => miette::Severity::Advice,
        };
        let diag = MietteDiagnostic::new(f.message.clone())
            .with_code(format!("{}({})", f.rule.code, f.rule.name))
            .with_severity(severity)
            .with_help(help)
            .with_labels(labels);
        let report_ = miette::Report::new(diag).with_source_code(NamedSource::new(path, Src(src)));
        if handler.render_report(&mut out, report_.as_ref()).is_err() {
            out.push_str(&format!("{}: {}\n", f.rule.code, f.message));
        }
        out.push('\n');
    }
    out
}

/// The closing summary line: `Found 3 findings (IDEM001: 3) in 12 files.`
pub fn summary(report: &Report) -> String {
    let n = report.findings.len();
    let files = report.files_checked;
    let fs = if files == 1 { "file" } else { "files" };
    let suppressed = match report.suppressed.len() {
        0 => String::new(),
        k => format!(" ({k} suppressed)"),
    };
    // After a tool error "no findings" would be a claim about files that were not checked.
    let errors = match report.errors.len() {
        0 => String::new(),
        1 => "; 1 error: see above".to_string(),
        e => format!("; {e} errors: see above"),
    };
    if n == 0 {
        return match errors.is_empty() {
            true => format!("No findings in {files} {fs} checked{suppressed}."),
            false => format!("Checked {files} {fs}{suppressed}{errors}."),
        };
    }
    let detail: Vec<String> = super::rule_counts(report)
        .iter()
        .map(|(r, k)| format!("{}: {k}", r.code))
        .collect();
    format!(
        "Found {n} finding{} ({}) in {files} {fs} checked{suppressed}{errors}.",
        if n == 1 { "" } else { "s" },
        detail.join(", ")
    )
}
