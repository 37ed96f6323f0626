//! idemlint: finds code that makes payment APIs charge a customer twice.
//!
//! Pipeline: [`discover`] files -> parse each once with tree-sitter and lower it to
//! [`facts`] ([`lang`]) -> build the [`project`] index -> run every enabled rule
//! ([`rules`]) over the shared analysis ([`flow`], [`scopes`]) -> sorted, deduplicated
//! [`Report`] rendered by [`report`].

pub mod baseline;
pub mod cache;
pub mod catalog;
pub mod catalog_ext;
pub mod config;
pub mod config_values;
pub mod conform;
pub mod constants;
pub mod context;
pub mod coord;
pub mod decls;
pub mod diff;
pub mod discover;
pub mod facts;
pub mod finding;
pub mod flow;
pub mod gate;
pub mod hash;
pub mod key_params;
pub mod lang;
pub mod lex;
pub mod literals;
pub mod methods;
pub mod name_map;
pub mod needles;
pub mod outbound;
pub mod outline;
pub mod project;
pub mod registrations;
pub mod report;
pub mod rules;
pub mod scopes;
pub mod shrink;
pub mod source;
pub mod suggest;
pub mod suppress;
pub mod walk;
pub mod wiring;

use crate::facts::Span;
use crate::finding::Finding;
use crate::project::{Project, Unit};
use crate::rules::Selection;
use crate::source::{LineCol, SourceFile};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to check and how.
#[derive(Clone, Debug)]
pub struct Options {
    pub selection: Selection,
    /// Check test sources too.
    pub include_tests: bool,
    /// Worker threads (0 = one per core).
    pub threads: usize,
    /// File selection, severities, per-file ignores and catalogue extensions.
    pub config: config::Config,
    /// Apply the configuration's `exclude` to files named on the command line too (for
    /// pre-commit, which names every staged file).
    pub force_exclude: bool,
    /// Benchmarking: discover, read and parse every file, run no rule (the parse floor).
    pub parse_only: bool,
    /// Where [`lint_project`] remembers results (off unless asked).
    pub cache: cache::CacheMode,
    /// Turn the evidence gates off: every function is looked at, as if any could hold
    /// evidence. Slower, and the findings must be the same (a check on the gates).
    pub exhaustive: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            selection: Selection::default_rules(),
            include_tests: false,
            threads: 0,
            config: config::Config::default(),
            force_exclude: false,
            parse_only: false,
            cache: cache::CacheMode::Off,
            exhaustive: false,
        }
    }
}

/// A problem with the input rather than with the code: unreadable paths, undecodable files.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ToolError {
    pub path: PathBuf,
    pub message: String,
}

/// A note about a file that was still analysed (syntax errors, nesting too deep).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Notice {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

/// A secondary location resolved to a path and line/column.
#[derive(Debug, Clone)]
pub struct ReportLabel {
    pub file: usize,
    pub span: Span,
    pub start: LineCol,
    pub end: LineCol,
    pub message: String,
}

/// A finding resolved to a path and line/column, ready to render.
#[derive(Debug, Clone)]
pub struct ReportFinding {
    pub rule: &'static rules::RuleMeta,
    /// Index into [`Report::files`].
    pub file: usize,
    pub span: Span,
    pub start: LineCol,
    pub end: LineCol,
    pub label: String,
    pub message: String,
    /// Why it happens, for this framework.
    pub note: Option<String>,
    pub help: String,
    pub labels: Vec<ReportLabel>,
    pub symbol: String,
    /// The level it is reported at (the rule's default unless the configuration says).
    pub level: config::Level,
    /// For a suppressed finding: the reason the suppression gives.
    pub justification: Option<String>,
    /// What the finding infers beyond the catalogue, and why (see [`finding::Finding`]).
    pub inferred: Option<String>,
}

/// The outcome of a run.
#[derive(Default)]
pub struct Report {
    /// Sorted by path, line, column, rule.
    pub findings: Vec<ReportFinding>,
    /// Files that findings point into (primary or secondary), with their text.
    pub files: Vec<Arc<SourceFile>>,
    pub errors: Vec<ToolError>,
    pub notices: Vec<Notice>,
    pub files_checked: usize,
    /// The files analysed (as many as `files_checked`).
    pub checked_paths: Vec<PathBuf>,
    /// Findings an inline suppression silenced (left out of the output by default).
    pub suppressed: Vec<ReportFinding>,
    /// Suppressions without a reason, naming unknown rules, or suppressing nothing.
    pub suppression_warnings: Vec<suppress::SuppressionWarning>,
    /// The level each rule reports at in this run.
    pub rule_levels: Vec<(&'static str, config::Level)>,
    /// Directories inside the scope of a [`lint_project`] run that hold a configuration file of
    /// their own: each is a project of its own, left out of this run, still to be checked.
    pub subprojects: Vec<PathBuf>,
    /// The files the run knew only by their outline, with its digest
    /// ([`project::Unit::outline_only`]): the cache keys them by it, so an edit that leaves a
    /// file's outline as it was reuses the result.
    pub outline_only: Vec<(PathBuf, u128)>,
}

impl Report {
    pub fn path(&self, file: usize) -> &Path {
        &self.files[file].path
    }

    /// Keeps only what lies in `scope`: a whole-project result narrowed to the named paths.
    pub fn retain_scope(&mut self, scope: &context::Scope) {
        let files = &self.files;
        self.findings
            .retain(|f| scope.contains(&files[f.file].path));
        self.suppressed
            .retain(|f| scope.contains(&files[f.file].path));
        self.errors.retain(|e| scope.contains(&e.path));
        self.notices.retain(|n| scope.contains(&n.path));
        self.suppression_warnings
            .retain(|w| scope.contains(&w.path));
        self.checked_paths.retain(|p| scope.contains(p));
        self.files_checked = self.checked_paths.len();
    }

    /// Adds the report of another project's run, keeping the order by path, line and rule.
    pub fn merge(&mut self, other: Report) {
        let offset = self.files.len();
        self.files.extend(other.files);
        let shift = |mut f: ReportFinding| {
            f.file += offset;
            for l in &mut f.labels {
                l.file += offset;
            }
            f
        };
        self.findings.extend(other.findings.into_iter().map(shift));
        self.suppressed
            .extend(other.suppressed.into_iter().map(shift));
        self.errors.extend(other.errors);
        self.notices.extend(other.notices);
        self.files_checked += other.files_checked;
        self.checked_paths.extend(other.checked_paths);
        self.suppression_warnings.extend(other.suppression_warnings);
        self.subprojects.extend(other.subprojects);
        if self.rule_levels.is_empty() {
            self.rule_levels = other.rule_levels;
        }
        let files = &self.files;
        let order = |a: &ReportFinding, b: &ReportFinding| {
            (files[a.file].path.as_path(), a.start, a.rule.code, a.end).cmp(&(
                files[b.file].path.as_path(),
                b.start,
                b.rule.code,
                b.end,
            ))
        };
        self.findings.sort_by(order);
        self.suppressed.sort_by(order);
        self.errors.sort_by(|a, b| a.path.cmp(&b.path));
        self.notices
            .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    }
}

/// `IDEMLINT_TIMINGS=1`: print how long each phase of the rule pass takes (for profiling).
pub fn timings_enabled() -> bool {
    std::env::var_os("IDEMLINT_TIMINGS").is_some()
}

/// For the timing lines: the process's resident memory now and at its peak so far, where the
/// system says (Linux's `/proc/self/status`), else nothing.
pub fn timing_memory() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    match (kb("VmRSS:"), kb("VmHWM:")) {
        (Some(now), Some(peak)) => format!(", RSS {} MiB, peak {} MiB", now >> 10, peak >> 10),
        _ => String::new(),
    }
}

/// Lints `paths` (files or directories), which are the whole context: nothing around them is
/// read. The command line uses [`lint_project`], which widens named files to their project.
pub fn lint(paths: &[PathBuf], opts: &Options) -> Report {
    let (candidates, walk_errors, configs) = discover::discover_all(paths);
    lint_discovered(candidates, walk_errors, configs, &[], opts)
}

/// Lints the project at `root` (absolute) as a whole and reports only what lies in `scope`
/// (absolute paths: named files, and directories whose files are reported). Named files are
/// checked even where the walk would skip them (ignored, excluded, tests) unless
/// `force_exclude`; `overrides` replace a file's text (an editor's unsaved buffer, which need not
/// exist on disk). For each file in scope the findings are those of a run on `root`.
pub fn lint_project(
    root: &Path,
    scope: &context::Scope,
    overrides: &[(PathBuf, String)],
    opts: &Options,
) -> Report {
    let clock = std::time::Instant::now();
    let lap = |what: &str| {
        if timings_enabled() {
            eprintln!(
                "timing: {what} at {:.3} s ({} files parsed so far{})",
                clock.elapsed().as_secs_f64(),
                conform::parses_so_far(),
                timing_memory()
            );
        }
    };
    let found = project_files(root, scope, overrides);
    lap("walk and nested projects");
    let candidates = select(found.candidates, opts);
    let configs = select_configs(found.configs, opts);
    let mut report = run_cached(root, candidates, found.errors, configs, overrides, opts);
    lap("result");
    // Only what lies in the named paths is reported (the rest of the project was context).
    report.retain_scope(scope);
    report.subprojects = found
        .nested
        .into_iter()
        .filter(|n| scope.dirs().iter().any(|d| n.starts_with(d)))
        .collect();
    report
}

/// The files of the project at `root` that a run reads, whatever the scope reports on.
struct ProjectFiles {
    candidates: Vec<discover::Candidate>,
    errors: Vec<discover::WalkError>,
    configs: Vec<(PathBuf, bool)>,
    /// Directories below the root with a configuration file of their own (left out).
    nested: Vec<PathBuf>,
}

/// Walks the project at `root`, adds the named paths the walk skipped (ignored, hidden, build
/// output) and the buffers not on disk, and leaves out the projects nested in it. Test files
/// are judged from the project root, as the walk judges them; named files are marked
/// explicit.
fn project_files(
    root: &Path,
    scope: &context::Scope,
    overrides: &[(PathBuf, String)],
) -> ProjectFiles {
    let found = discover::discover_files(&[root.to_path_buf()]);
    let (mut candidates, mut errors) = (found.candidates, found.errors);
    let mut extra: Vec<PathBuf> = scope
        .dirs()
        .iter()
        .filter(|d| d.as_path() != root)
        .cloned()
        .collect();
    extra.extend(
        scope
            .files()
            .iter()
            .filter(|f| {
                candidates
                    .binary_search_by(|c| c.path.as_path().cmp(f))
                    .is_err()
            })
            .filter(|f| f.exists() || !overrides.iter().any(|(p, _)| p == *f))
            .cloned(),
    );
    if !extra.is_empty() {
        let (more, more_errors, _) = discover::discover_all(&extra);
        errors.extend(more_errors);
        candidates.extend(more);
    }
    for (path, _) in overrides.iter().filter(|(p, _)| !p.exists()) {
        match facts::Lang::from_path(path) {
            Some(lang) => candidates.push(discover::Candidate {
                path: path.clone(),
                lang,
                is_test: false,
                explicit: true,
            }),
            None => errors.push(discover::WalkError {
                path: path.clone(),
                message: discover::NOT_SOURCE.into(),
            }),
        }
    }
    candidates.sort_by(|a, b| a.path.cmp(&b.path).then(b.explicit.cmp(&a.explicit)));
    candidates.dedup_by(|a, b| a.path == b.path);
    // Directories below the root with a configuration file of their own are projects of
    // their own: a run on the root leaves them out, and so does a run on a file beside them.
    let nested = nested_projects(root, &found.settings);
    let outside = |p: &Path| nested.iter().any(|n| p.starts_with(n));
    candidates.retain(|c| !outside(&c.path));
    for c in &mut candidates {
        c.is_test = discover::is_test_path(c.path.strip_prefix(root).unwrap_or(&c.path));
        c.explicit = scope.files().binary_search(&c.path).is_ok();
    }
    errors.retain(|e| !outside(&context::absolute(&e.path, root)));
    let configs = found
        .configs
        .into_iter()
        .filter(|(p, _)| !outside(p))
        .collect();
    ProjectFiles {
        candidates,
        errors,
        configs,
        nested,
    }
}

/// Runs over the selected files of the project at `root`, or reads the result the cache
/// remembers for exactly these inputs (and remembers a new one).
fn run_cached(
    root: &Path,
    candidates: Vec<discover::Candidate>,
    walk_errors: Vec<discover::WalkError>,
    configs: Vec<PathBuf>,
    overrides: &[(PathBuf, String)],
    opts: &Options,
) -> Report {
    // (The parse floor is a benchmark: it is never answered from memory.)
    let cache = (!opts.parse_only)
        .then(|| opts.cache.dir_for(root).map(cache::Cache::new))
        .flatten();
    let Some(cache) = cache else {
        return run_selected(&candidates, walk_errors, &configs, overrides, opts);
    };
    let settings = settings_line(opts);
    let slot = format!("{}\n{settings}", root.display());
    let mut inputs = cache::Inputs::new(root, &settings);
    for c in &candidates {
        let what = if c.is_test { "test" } else { "src" };
        match overrides.iter().find(|(p, _)| *p == c.path) {
            Some((p, text)) => inputs.text(what, p, text),
            None => inputs.file(what, &c.path),
        }
    }
    for p in &configs {
        inputs.file("config", p);
    }
    for e in &walk_errors {
        inputs.line(format!("walk-error {} {}", e.path.display(), e.message));
    }
    // A file's outline as the run would read it from these bytes.
    let digest_of = |path: &Path, bytes: &[u8]| {
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return None;
        }
        let text = decode_source(path, bytes.to_vec()).ok()?;
        Some(project::outline_digest(
            facts::Lang::from_path(path)?,
            &text,
        ))
    };
    match cache.load(
        &slot,
        &inputs,
        overrides,
        rule_levels(&opts.config),
        &digest_of,
    ) {
        Ok((mut report, checked)) => {
            report.checked_paths = checked;
            report
        }
        Err(miss) => {
            let report = run_selected(&candidates, walk_errors, &configs, overrides, opts);
            cache.store(&slot, miss, &report);
            report
        }
    }
}

/// Everything in the options that changes findings, as one line of the cache fingerprint.
fn settings_line(opts: &Options) -> String {
    format!(
        "settings tests={} force_exclude={} parse_only={} exhaustive={} config_root={}\n{}",
        opts.include_tests,
        opts.force_exclude,
        opts.parse_only,
        opts.exhaustive,
        opts.config.root.display(),
        opts.config.to_toml(&opts.selection)
    )
}

/// The directories strictly below `root` that hold a configuration file (of the `settings`
/// files the walk saw), outermost first (one inside another is the outer one's business).
fn nested_projects(root: &Path, settings: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = settings
        .iter()
        .filter_map(|f| f.parent())
        .filter(|d| *d != root && d.starts_with(root))
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        // Sorted, so an outer directory comes before the ones inside it.
        if out.iter().any(|o| d.starts_with(o)) {
            continue;
        }
        if config::in_dir(d).is_some() {
            out.push(d.to_path_buf());
        }
    }
    out
}

/// The files a run analyses: tests and excluded files out, unless named (and not forced out).
/// A named test file is analysed as the test code it is (as in a run with `--include-tests`).
fn select(candidates: Vec<discover::Candidate>, opts: &Options) -> Vec<discover::Candidate> {
    candidates
        .into_iter()
        .filter(|c| opts.include_tests || (c.explicit && !opts.force_exclude) || !c.is_test)
        .filter(|c| (c.explicit && !opts.force_exclude) || opts.config.selects(&c.path))
        .collect()
}

/// The configuration files the rules read (a clustered Quartz job store, the URL a `@Value`
/// field is configured with); small files only.
fn select_configs(configs: Vec<(PathBuf, bool)>, opts: &Options) -> Vec<PathBuf> {
    configs
        .into_iter()
        .filter(|(_, test)| opts.include_tests || !test)
        .filter(|(p, _)| std::fs::metadata(p).is_ok_and(|m| m.len() < 1 << 20))
        .map(|(p, _)| p)
        .collect()
}

fn lint_discovered(
    candidates: Vec<discover::Candidate>,
    walk_errors: Vec<discover::WalkError>,
    configs: Vec<(PathBuf, bool)>,
    overrides: &[(PathBuf, String)],
    opts: &Options,
) -> Report {
    let candidates = select(candidates, opts);
    let configs = select_configs(configs, opts);
    run_selected(&candidates, walk_errors, &configs, overrides, opts)
}

fn run_selected(
    candidates: &[discover::Candidate],
    walk_errors: Vec<discover::WalkError>,
    configs: &[PathBuf],
    overrides: &[(PathBuf, String)],
    opts: &Options,
) -> Report {
    let config_texts: Vec<String> = configs
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|t| !t.is_empty())
        .collect();
    let mut report = Report {
        rule_levels: rule_levels(&opts.config),
        errors: walk_errors
            .into_iter()
            .map(|e| ToolError {
                path: e.path,
                message: e.message,
            })
            .collect(),
        ..Report::default()
    };
    let mut run = || lint_candidates(candidates, &config_texts, overrides, opts, &mut report);
    match rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .stack_size(64 << 20)
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
    report
}

/// Lints in-memory sources (used by tests and `--stdin-filename`).
pub fn lint_sources(sources: Vec<(PathBuf, String)>, opts: &Options) -> Report {
    let mut report = Report {
        rule_levels: rule_levels(&opts.config),
        ..Report::default()
    };
    let eager = opts.exhaustive || opts.parse_only;
    let units: Vec<Result<(Unit, Vec<Notice>), ToolError>> = sources
        .into_par_iter()
        .map(|(path, text)| match facts::Lang::from_path(&path) {
            Some(lang) => {
                let is_test = discover::is_test_path(&path);
                Ok(parse_unit(path, text, lang, is_test, eager))
            }
            None => Err(ToolError {
                path,
                message: discover::NOT_SOURCE.into(),
            }),
        })
        .collect();
    finish(units, Vec::new(), opts, &mut report);
    report
}

fn lint_candidates(
    candidates: &[discover::Candidate],
    config_texts: &[String],
    overrides: &[(PathBuf, String)],
    opts: &Options,
    report: &mut Report,
) {
    let clock = std::time::Instant::now();
    let eager = opts.exhaustive || opts.parse_only;
    let units: Vec<Result<(Unit, Vec<Notice>), ToolError>> = candidates
        .par_iter()
        .map(|c| {
            if let Some((_, text)) = overrides.iter().find(|(p, _)| *p == c.path) {
                return Ok(parse_unit(
                    c.path.clone(),
                    text.clone(),
                    c.lang,
                    c.is_test,
                    eager,
                ));
            }
            if let Ok(meta) = std::fs::metadata(&c.path)
                && meta.len() > MAX_FILE_BYTES
            {
                return Ok(too_big(c, meta.len()));
            }
            let text = read_source(&c.path)?;
            let (mut unit, notices) = parse_unit(c.path.clone(), text, c.lang, c.is_test, eager);
            // Read again from disk if some analysis asks for it (a file parsed, or reported).
            if !eager {
                unit.src.release();
            }
            Ok((unit, notices))
        })
        .collect();
    if timings_enabled() {
        eprintln!(
            "timing: {} files read and parsed in {:.3} s{}",
            units.len(),
            clock.elapsed().as_secs_f64(),
            timing_memory()
        );
    }
    finish(units, config_texts.to_vec(), opts, report);
}

fn rule_levels(config: &config::Config) -> Vec<(&'static str, config::Level)> {
    rules::RULES
        .iter()
        .map(|r| (r.code, config.level_of(r.code, r.severity)))
        .collect()
}

/// Files larger than this are not parsed (generated code, data dumps): a notice says so.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// An empty unit for a file over [`MAX_FILE_BYTES`], with the notice that says why.
fn too_big(c: &discover::Candidate, len: u64) -> (Unit, Vec<Notice>) {
    let notice = Notice {
        path: c.path.clone(),
        line: 1,
        message: format!(
            "{:.1} MiB is over the {} MiB limit for one source file (generated code?); it was not analysed",
            len as f64 / (1024.0 * 1024.0),
            MAX_FILE_BYTES >> 20
        ),
    };
    let unit = Unit::empty(
        SourceFile::new(c.path.clone(), String::new()),
        c.lang,
        c.is_test,
    );
    (unit, vec![notice])
}

/// NUL bytes mark a binary file (as git and ripgrep judge), unless they are rare: a source file
/// may hold one in a string literal (a parser test's `"""data\u0000"""` written raw). Binary
/// here: NULs and more than one byte in 32 a control character other than tab, line feed, form
/// feed and carriage return.
fn looks_binary(head: &[u8]) -> bool {
    if !head.contains(&0) {
        return false;
    }
    let controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r'))
        .count();
    controls * 32 > head.len()
}

/// Reads a file as UTF-8 text; binary or undecodable files are tool errors.
fn read_source(path: &Path) -> Result<String, ToolError> {
    let bytes = std::fs::read(path).map_err(|e| ToolError {
        path: path.to_path_buf(),
        message: format!("cannot read: {}", discover::io_message(&e)),
    })?;
    decode_source(path, bytes)
}

/// A file's bytes as UTF-8 text; binary or undecodable files are tool errors.
fn decode_source(path: &Path, bytes: Vec<u8>) -> Result<String, ToolError> {
    let err = |message: String| ToolError {
        path: path.to_path_buf(),
        message,
    };
    if looks_binary(&bytes[..bytes.len().min(8192)]) {
        return Err(err("cannot decode: binary file (contains NUL bytes)".into()));
    }
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "cannot decode: not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// A file read: outlined now; parsed now when `eager` (`--exhaustive`, `--parse-only`),
/// else when an analysis first asks for its facts.
fn parse_unit(
    path: PathBuf,
    text: String,
    lang: facts::Lang,
    is_test: bool,
    eager: bool,
) -> (Unit, Vec<Notice>) {
    let unit = Unit::new(SourceFile::new(path, text), lang, is_test);
    if eager {
        unit.parsed();
    }
    (unit, Vec::new())
}

/// What the parse of a file that was parsed says about it: syntax errors (the recovered tree
/// was analysed), nesting too deep, the parser giving up.
fn parse_notices(unit: &Unit) -> Vec<Notice> {
    let mut notices = Vec::new();
    let Some(parsed) = unit.parse_if_done() else {
        return notices;
    };
    let src = &unit.src;
    if parsed.gave_up {
        notices.push(Notice {
            path: src.path.clone(),
            line: 1,
            message: format!(
                "the parser gave up on this file (or it took longer than {} s); it was not analysed",
                lang::parse_budget(src.text().len()).as_secs()
            ),
        });
        return notices;
    }
    let errors = &parsed.facts.syntax_errors;
    if let Some(first) = errors.first() {
        notices.push(Notice {
            path: src.path.clone(),
            line: src.line_col(first.start).line,
            message: format!(
                "syntax errors ({} region{}); the recovered tree was analysed",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ),
        });
    }
    if parsed.too_deep {
        notices.push(Notice {
            path: src.path.clone(),
            line: 1,
            message: format!(
                "nesting deeper than {} levels; the deepest parts were not analysed",
                lang::MAX_DEPTH
            ),
        });
    }
    notices
}

fn finish(
    units: Vec<Result<(Unit, Vec<Notice>), ToolError>>,
    config_texts: Vec<String>,
    opts: &Options,
    report: &mut Report,
) {
    let mut ok = Vec::new();
    for u in units {
        match u {
            Ok((unit, notices)) => {
                report.notices.extend(notices);
                report.checked_paths.push(unit.src.path.clone());
                ok.push(unit);
            }
            Err(e) => report.errors.push(e),
        }
    }
    report.files_checked = ok.len();
    if opts.parse_only {
        report.notices.extend(ok.iter().flat_map(parse_notices));
        return;
    }
    let timings = timings_enabled();
    let clock = std::time::Instant::now();
    let lap = |what: &str| {
        if timings {
            eprintln!(
                "timing: {what} at {:.3} s ({} files parsed so far{})",
                clock.elapsed().as_secs_f64(),
                conform::parses_so_far(),
                timing_memory()
            );
        }
    };
    let mut project = Project::new(ok);
    project.config_texts = config_texts;
    if opts.exhaustive {
        project.open_gates();
    }
    lap("index");
    let cat = catalog::Catalog::extended(&opts.config.catalog);
    let flows = flow::Caches::new(opts.exhaustive);
    let ctx = rules::Ctx::new(&project, cat, &flows);
    // The per-file rules (in parallel over files) and the project-wide rules (one or two
    // threads) run side by side; their findings are joined in a fixed order.
    let (mut findings, project_findings) = rayon::join(
        || {
            // Built before the file rules, on every thread the project rules leave free,
            // rather than by the first file rule to need them while the others wait: the sink
            // gate, then (when some file can hold a key sink) the interceptor and retry scopes.
            if opts.selection.needs(rules::Need::KeyFlows) {
                let gate = flow::Flow::new(&project, cat, &flows).sink_gate();
                lap("sink gate");
                if (0..project.units.len()).any(|u| gate.may_hold_sink(u)) {
                    ctx.find_scopes();
                    lap("scopes");
                }
            }
            let v: Vec<Finding> = (0..project.units.len())
                .into_par_iter()
                .map_init(
                    || flow::Flow::new(&project, cat, &flows),
                    |flow, u| {
                        let mut out = Vec::new();
                        rules::check_unit(&ctx, flow, u, &opts.selection, &mut out);
                        out
                    },
                )
                .flatten()
                .collect();
            lap("file rules");
            v
        },
        || {
            let mut v = Vec::new();
            rules::check_project(&ctx, &opts.selection, &mut v);
            v
        },
    );
    findings.extend(project_findings);
    lap("project rules");
    rules::nondeterministic_key::drop_claimed(&mut findings);
    // Test regions inside non-test files (`#[cfg(test)] mod tests`).
    if !opts.include_tests {
        findings.retain(|f| {
            !project.units[f.unit]
                .facts()
                .test_regions
                .iter()
                .any(|r| r.contains(f.span))
        });
    }
    findings.retain(|f| {
        !opts
            .config
            .ignored_in(&project.units[f.unit].src.path, f.code)
    });
    let outcome = suppress::apply(&project, findings, &opts.selection);
    report.suppression_warnings = outcome.warnings;
    let all: Vec<(Finding, Option<String>)> = outcome
        .kept
        .into_iter()
        .map(|f| (f, None))
        .chain(outcome.suppressed.into_iter().map(|(f, r)| (f, Some(r))))
        .collect();
    lap("findings filtered");
    // Only a file some analysis read was parsed; what its parse says is noted.
    let parsed = project
        .units
        .iter()
        .filter(|u| u.parse_if_done().is_some())
        .count();
    if timings {
        eprintln!("timing: {parsed} of {} files parsed", project.units.len());
    }
    report
        .notices
        .extend(project.units.iter().flat_map(parse_notices));
    // What the run learnt of a file it never opened is its outline (a file a finding points
    // into was opened to find it).
    let mut opened = vec![false; project.units.len()];
    for (f, _) in &all {
        opened[f.unit] = true;
        for l in &f.labels {
            opened[l.unit] = true;
        }
    }
    report.outline_only = project
        .units
        .iter()
        .zip(&opened)
        .filter(|(_, opened)| !**opened)
        .filter_map(|(u, _)| Some((u.src.path.clone(), u.outline_only()?)))
        .collect();
    // A file read again that changed meanwhile read as empty: what it holds is not known.
    report.errors.extend(project.units.iter().filter_map(|u| {
        u.src.read_back_error().map(|why| ToolError {
            path: u.src.path.clone(),
            message: why.to_string(),
        })
    }));
    resolve(project, all, &opts.config, report);
    lap("report built, project dropped");
}

/// Turns spans into lines/columns, keeps the source of files findings point into, sorts and
/// deduplicates.
fn resolve(
    project: Project,
    findings: Vec<(Finding, Option<String>)>,
    config: &config::Config,
    report: &mut Report,
) {
    let mut file_of_unit: Vec<Option<usize>> = vec![None; project.units.len()];
    let mut needed: Vec<usize> = findings
        .iter()
        .flat_map(|(f, _)| std::iter::once(f.unit).chain(f.labels.iter().map(|l| l.unit)))
        .collect();
    needed.sort_by(|a, b| project.units[*a].src.path.cmp(&project.units[*b].src.path));
    needed.dedup();
    let mut project = project;
    let mut units: Vec<Option<Unit>> = std::mem::take(&mut project.units)
        .into_iter()
        .map(Some)
        .collect();
    for u in needed {
        if let Some(unit) = units[u].take() {
            file_of_unit[u] = Some(report.files.len());
            report.files.push(Arc::new(unit.src));
        }
    }
    // Freeing every file's facts takes a noticeable part of a large run (0.5 s on 2.2 M
    // lines): it happens on a thread of its own while the report is written (a process that
    // exits meanwhile does not wait for it).
    // (If no thread can be started, the closure and what it owns are freed right here.)
    let rest = (project, units);
    let _ = std::thread::Builder::new().spawn(move || drop(rest));
    let rf = |u: usize| file_of_unit[u].unwrap_or(0);
    let mut out: Vec<ReportFinding> = findings
        .into_iter()
        .filter_map(|(f, justification)| {
            let file = rf(f.unit);
            let src = report.files[file].clone();
            let rule = rules::meta(f.code)?;
            Some(ReportFinding {
                rule,
                file,
                span: f.span,
                start: src.line_col(f.span.start),
                end: src.line_col(f.span.end),
                label: f.label,
                message: f.message,
                note: f.note,
                help: f.help,
                labels: f
                    .labels
                    .into_iter()
                    .map(|l| {
                        let lf = rf(l.unit);
                        let ls = &report.files[lf];
                        ReportLabel {
                            file: lf,
                            span: l.span,
                            start: ls.line_col(l.span.start),
                            end: ls.line_col(l.span.end),
                            message: l.message,
                        }
                    })
                    .collect(),
                symbol: f.symbol,
                level: config.level_of(rule.code, rule.severity),
                justification,
                inferred: f.inferred,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        (report.files[a.file].path.as_path(), a.start, a.rule.code)
            .cmp(&(report.files[b.file].path.as_path(), b.start, b.rule.code))
            .then(a.end.cmp(&b.end))
    });
    out.dedup_by(|a, b| a.file == b.file && a.span == b.span && a.rule.code == b.rule.code);
    let (suppressed, kept): (Vec<ReportFinding>, Vec<ReportFinding>) =
        out.into_iter().partition(|f| f.justification.is_some());
    report.findings = kept;
    report.suppressed = suppressed;
    report.errors.sort_by(|a, b| a.path.cmp(&b.path));
    report
        .notices
        .sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
}
