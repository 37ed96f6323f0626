//! The `idemlint` command line.

use clap::{Parser, Subcommand, ValueEnum};
use idemlint::report::{github, human, json, sarif};
use idemlint::rules::{RULES, Selection};
use idemlint::{Options, lint};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "idemlint",
    version,
    about = "Finds code that makes payment APIs charge a customer twice",
    long_about = "Finds code that makes payment APIs charge a customer twice: idempotency keys made \
                  from random or time values inside code that runs once per attempt.\n\n\
                  `idemlint` with no command is `idemlint check .`"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Check files and directories (default: the current directory).
    Check(Box<CheckArgs>),
    /// List the rules.
    Rules {
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: RulesFormat,
    },
    /// Print a rule's documentation (by code or name, e.g. IDEM001 or key-generated-in-interceptor).
    Rule { code: String },
}

#[derive(clap::Args, Default)]
struct CheckArgs {
    /// Files or directories to check. Directories are walked, respecting .gitignore; files
    /// named here are always checked (unless --force-exclude).
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Run only these rules (comma-separated codes or prefixes; ALL for every rule).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    select: Option<Vec<String>>,
    /// Run these rules in addition to the selected ones (e.g. the pedantic IDEM008).
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    extend_select: Vec<String>,
    /// Do not run these rules.
    #[arg(long, value_delimiter = ',', value_name = "CODES")]
    ignore: Vec<String>,
    /// Exit 0 even when there are findings (tool errors still exit 2).
    #[arg(long)]
    exit_zero: bool,
    /// Also check test sources (src/test/**, *Test.java, tests/**, #[cfg(test)] modules).
    #[arg(long)]
    include_tests: bool,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0, value_name = "N")]
    threads: usize,
    /// Never use colour in human output (also: the NO_COLOR environment variable).
    #[arg(long)]
    no_color: bool,
    /// Use this configuration file instead of looking for idemlint.toml / Cargo.toml.
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Ignore configuration files.
    #[arg(long)]
    isolated: bool,
    /// Print the effective configuration and exit.
    #[arg(long)]
    show_config: bool,
    /// Apply the configuration's `exclude` to files named on the command line too (for
    /// pre-commit hooks, which name every staged file).
    #[arg(long)]
    force_exclude: bool,
    /// Report only findings not recorded in this baseline (see --write-baseline).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Record the current findings in FILE as a baseline and exit 0.
    #[arg(long, value_name = "FILE", conflicts_with = "baseline")]
    write_baseline: Option<PathBuf>,
    /// Report only findings on lines changed since the merge-base with REV (working tree
    /// included).
    #[arg(long, value_name = "REV")]
    diff_base: Option<String>,
    /// Read the source from standard input and report it as this path (for editors); the
    /// rest of its project is read from disk.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Analyse the named paths as part of the project at DIR. By default each path's project
    /// is found from the path: the directory of its idemlint.toml, else the repository root,
    /// else the outermost build root (settings.gradle, pom.xml, Cargo.toml).
    #[arg(long, value_name = "DIR")]
    project_root: Option<PathBuf>,
    /// Write the paths of SARIF and GitHub annotation output relative to DIR (by default the
    /// repository root of the working directory, else the working directory), as code scanning
    /// expects wherever idemlint runs from.
    #[arg(long, value_name = "DIR")]
    sarif_root: Option<PathBuf>,
    /// Neither read nor write the result cache (wins over --cache-dir).
    #[arg(long)]
    no_cache: bool,
    /// Keep the result cache in DIR instead of .idemlint_cache/ at the project root (also:
    /// the IDEMLINT_CACHE_DIR environment variable).
    #[arg(long, value_name = "DIR", env = "IDEMLINT_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Exit 1 when a suppression has no reason, names an unknown rule or suppresses nothing.
    #[arg(long)]
    strict_suppressions: bool,
    /// Include findings silenced by inline suppressions in SARIF and JSON output, marked as
    /// suppressed.
    #[arg(long)]
    include_suppressed: bool,
    /// Instead of each finding, how many there are of each rule (a table; a JSON list with
    /// --format json).
    #[arg(long)]
    statistics: bool,
    /// Look at every function, with the evidence gates off (no function is skipped for
    /// lacking money, key or other evidence). Slower; the findings are the same, so this is a
    /// check on idemlint itself.
    #[arg(long)]
    exhaustive: bool,
    /// Benchmarking only: discover and parse every file, run no rule.
    #[arg(long, hide = true)]
    parse_only: bool,
}

#[derive(Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
enum Format {
    #[default]
    Human,
    /// One line per finding: `path:line:col: CODE message`.
    Concise,
    Json,
    Sarif,
    Github,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum RulesFormat {
    Human,
    Json,
}

/// glibc grows its heaps 128 KiB at a time; a large run keeps every file's facts and grows them
/// by about a gigabyte, one system call and page-table change per step. Growing 64 MiB at a
/// time (address space only: pages are touched when used) makes a run on the bench corpus
/// 2% faster (6.97 -> 6.84 s, system time 1.17 -> 0.83 s) with the same peak RSS. mimalloc,
/// tried instead, was 3-8% slower and used 4% more memory.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    unsafe extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    const M_TOP_PAD: i32 = -2;
    // SAFETY: mallopt only sets an allocator parameter; it is called before any other thread
    // starts. A refusal (0) leaves the default, which is only slower.
    unsafe {
        mallopt(M_TOP_PAD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

fn main() -> ExitCode {
    tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors.
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli
        .command
        .unwrap_or_else(|| Command::Check(Box::default()))
    {
        Command::Check(args) => check(*args),
        Command::Rules { format } => emit(&rules_text(format)),
        Command::Rule { code } => match idemlint::rules::meta(&code).or_else(|| {
            RULES
                .iter()
                .copied()
                .find(|r| r.name.eq_ignore_ascii_case(&code))
        }) {
            Some(r) => emit(&format!("{}\n\nDocs: {}\n", r.doc.trim_end(), r.docs_url())),
            None => {
                eprintln!("error: {}", idemlint::rules::unknown_rule(&code, false));
                ExitCode::from(2)
            }
        },
    }
}

/// A progress line on stderr for a run that takes more than a second, when stderr is a
/// terminal (an editor, CI or a pipe never sees it); it is cleared before the results print.
struct Progress {
    done: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start() -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress {
                done: None,
                thread: None,
            };
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let wait = std::time::Duration::from_secs(1);
            if rx.recv_timeout(wait) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            let bar = indicatif::ProgressBar::new_spinner().with_elapsed(wait);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} idemlint: checking ({elapsed})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            let _ = rx.recv();
            bar.finish_and_clear();
        });
        Progress {
            done: Some(tx),
            thread: Some(thread),
        }
    }

    /// Clears the line (if it was drawn) and returns once it is gone.
    fn stop(mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes `text` to standard output. A reader that stops early (`idemlint rules | head -1`)
/// is not an error.
fn emit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            ExitCode::from(2)
        }
    }
}

/// Findings per rule, most first (then by code).
fn rule_counts(report: &idemlint::Report) -> Vec<(&'static idemlint::rules::RuleMeta, usize)> {
    let mut counts = idemlint::report::rule_counts(report);
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.code.cmp(b.0.code)));
    counts
}

/// `--statistics`: one line per rule with findings, as ruff prints it.
fn statistics_text(report: &idemlint::Report) -> String {
    let counts = rule_counts(report);
    let width = counts.first().map_or(1, |(_, k)| k.to_string().len());
    counts
        .iter()
        .map(|(r, k)| format!("{k:>width$}\t{}\t{}\n", r.code, r.name))
        .collect()
}

fn statistics_json(report: &idemlint::Report) -> String {
    let v: Vec<serde_json::Value> = rule_counts(report)
        .iter()
        .map(|(r, k)| serde_json::json!({"code": r.code, "name": r.name, "count": k}))
        .collect();
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

fn rules_text(format: RulesFormat) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    match format {
        RulesFormat::Human => {
            let _ = writeln!(
                s,
                "{:<8} {:<36} {:<8} {:<8} summary",
                "code", "name", "level", "default"
            );
            for r in RULES {
                let _ = writeln!(
                    s,
                    "{:<8} {:<36} {:<8} {:<8} {}",
                    r.code,
                    r.name,
                    r.severity.as_str(),
                    if r.default_enabled { "on" } else { "off" },
                    r.summary
                );
            }
        }
        RulesFormat::Json => {
            let v: Vec<serde_json::Value> = RULES
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "code": r.code, "name": r.name, "severity": r.severity.as_str(),
                        "default_enabled": r.default_enabled, "summary": r.summary,
                        "docs": r.docs_url(),
                    })
                })
                .collect();
            s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
        }
    }
    s
}

/// Prints a configuration error as a diagnostic pointing at the TOML.
fn config_error(e: &idemlint::config::ConfigError) {
    let base = std::env::current_dir().unwrap_or_default();
    let name = idemlint::report::display_path(&e.path, &base);
    match &e.span {
        Some(span) if !e.source.is_empty() => {
            let diag =
                miette::MietteDiagnostic::new(format!("invalid configuration: {}", e.message))
                    .with_code("idemlint::config")
                    .with_labels(vec![miette::LabeledSpan::new_primary_with_span(
                        Some(e.message.clone()),
                        span.clone(),
                    )]);
            let report = miette::Report::new(diag)
                .with_source_code(miette::NamedSource::new(name.clone(), e.source.clone()));
            let mut out = String::new();
            let handler = miette::GraphicalReportHandler::new_themed(
                miette::GraphicalTheme::unicode_nocolor(),
            );
            if handler.render_report(&mut out, report.as_ref()).is_ok() {
                eprint!("{out}");
            } else {
                eprintln!("error: {name}: {}", e.message);
            }
        }
        _ => eprintln!("error: {name}: {}", e.message),
    }
}

/// One run of the analysis: a project (or, outside any project, the named paths alone) with
/// its configuration, reporting on the named paths in it.
struct Job {
    root: Option<PathBuf>,
    config: Option<PathBuf>,
    named: Vec<PathBuf>,
}

/// Groups the named (absolute) paths by project and configuration, in the order first named.
fn plan(named: &[PathBuf], args: &CheckArgs, cwd: &std::path::Path) -> Result<Vec<Job>, String> {
    let forced_root = args
        .project_root
        .as_ref()
        .map(|r| idemlint::context::absolute(r, cwd));
    if let Some(r) = &forced_root
        && !r.is_dir()
    {
        return Err(format!("--project-root {}: not a directory", r.display()));
    }
    let mut jobs: Vec<Job> = Vec::new();
    for p in named {
        let found = idemlint::config::find(idemlint::context::config_start(p));
        let root = match &forced_root {
            Some(r) if p.starts_with(r) => Some(r.clone()),
            Some(r) => {
                return Err(format!(
                    "{} is not inside the project root {}",
                    p.display(),
                    r.display()
                ));
            }
            None => idemlint::context::project_root(p, found.as_deref()),
        };
        let config = if args.isolated {
            None
        } else if let Some(c) = &args.config {
            Some(c.clone())
        } else if let Some(r) = &forced_root {
            idemlint::config::find(r)
        } else {
            found
        };
        match jobs
            .iter_mut()
            .find(|j| j.root == root && j.config == config)
        {
            Some(j) => j.named.push(p.clone()),
            None => jobs.push(Job {
                root,
                config,
                named: vec![p.clone()],
            }),
        }
    }
    Ok(jobs)
}

/// The options for a run with this configuration file (or none).
fn options_for(
    config_path: Option<&std::path::Path>,
    args: &CheckArgs,
) -> Result<Options, ExitCode> {
    let config = match config_path {
        Some(p) => match idemlint::config::load(p) {
            Ok(c) => c,
            Err(e) => {
                config_error(&e);
                return Err(ExitCode::from(2));
            }
        },
        None => idemlint::config::Config::default(),
    };
    let select = args.select.clone().or_else(|| config.select.clone());
    let extend: Vec<String> = config
        .extend_select
        .iter()
        .chain(&args.extend_select)
        .cloned()
        .collect();
    let ignore: Vec<String> = config.ignore.iter().chain(&args.ignore).cloned().collect();
    let selection = match Selection::from_lists(select.as_deref(), &extend, &ignore) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::from(2));
        }
    };
    Ok(Options {
        selection,
        include_tests: args.include_tests || config.include_tests,
        threads: args.threads,
        force_exclude: args.force_exclude,
        parse_only: args.parse_only,
        exhaustive: args.exhaustive,
        cache: match (&args.cache_dir, args.no_cache) {
            (_, true) => idemlint::cache::CacheMode::Off,
            (Some(d), false) => idemlint::cache::CacheMode::Dir(idemlint::context::absolute(
                d,
                &std::env::current_dir().unwrap_or_default(),
            )),
            (None, false) => idemlint::cache::CacheMode::ProjectRoot,
        },
        config,
    })
}

/// Runs the jobs, then the projects of their own found inside named directories.
fn run_jobs(
    mut jobs: Vec<Job>,
    args: &CheckArgs,
    stdin: Option<&(PathBuf, String)>,
) -> Result<idemlint::Report, ExitCode> {
    let mut report: Option<idemlint::Report> = None;
    let mut done: Vec<PathBuf> = Vec::new();
    while !jobs.is_empty() {
        let job = jobs.remove(0);
        let opts = options_for(job.config.as_deref(), args)?;
        let r = match (&job.root, stdin) {
            (Some(root), _) => {
                done.push(root.clone());
                let scope = idemlint::context::Scope::new(&job.named);
                let overrides: Vec<(PathBuf, String)> = stdin.into_iter().cloned().collect();
                idemlint::lint_project(root, &scope, &overrides, &opts)
            }
            (None, Some((name, text))) => {
                if args.force_exclude && !opts.config.selects(name) {
                    idemlint::Report::default()
                } else {
                    idemlint::lint_sources(vec![(name.clone(), text.clone())], &opts)
                }
            }
            (None, None) => lint(&job.named, &opts),
        };
        for sub in &r.subprojects {
            if !done.contains(sub) {
                jobs.push(Job {
                    root: Some(sub.clone()),
                    config: if args.isolated {
                        None
                    } else {
                        args.config
                            .clone()
                            .or_else(|| idemlint::config::in_dir(sub))
                    },
                    named: vec![sub.clone()],
                });
            }
        }
        match &mut report {
            Some(all) => all.merge(r),
            None => report = Some(r),
        }
    }
    Ok(report.unwrap_or_default())
}

fn check(args: CheckArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let stdin = match &args.stdin_filename {
        Some(name) if !args.show_config => {
            let mut text = String::new();
            if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                eprintln!("error: cannot read standard input: {e}");
                return ExitCode::from(2);
            }
            Some((idemlint::context::absolute(name, &cwd), text))
        }
        _ => None,
    };
    let named: Vec<PathBuf> = match (&args.stdin_filename, args.paths.is_empty()) {
        (Some(name), _) => vec![name.clone()],
        (None, true) => vec![PathBuf::from(".")],
        (None, false) => args.paths.clone(),
    }
    .iter()
    .map(|p| idemlint::context::absolute(p, &cwd))
    .collect();
    let jobs = match plan(&named, &args, &cwd) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.show_config {
        let config = jobs.first().and_then(|j| j.config.clone());
        return match options_for(config.as_deref(), &args) {
            Ok(opts) => emit(&opts.config.to_toml(&opts.selection)),
            Err(code) => code,
        };
    }
    if args.statistics && matches!(args.format, Format::Sarif | Format::Github) {
        eprintln!(
            "error: --statistics prints a table or JSON: use --format human, concise or json"
        );
        return ExitCode::from(2);
    }
    let progress = Progress::start();
    let ran = run_jobs(jobs, &args, stdin.as_ref());
    progress.stop();
    let mut report = match ran {
        Ok(r) => r,
        Err(code) => return code,
    };
    let base = cwd.clone();
    // Code scanning reads SARIF paths (and annotation paths) from the repository root.
    let report_root = match &args.sarif_root {
        Some(dir) => cwd.join(dir),
        None => idemlint::context::vcs_root(&cwd).unwrap_or_else(|| cwd.clone()),
    };

    if let Some(path) = &args.write_baseline {
        return match idemlint::baseline::write(&report, &base, path) {
            Ok(n) => {
                eprintln!(
                    "Wrote {n} finding{} to the baseline {}.",
                    if n == 1 { "" } else { "s" },
                    path.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
    if let Some(path) = &args.baseline {
        match idemlint::baseline::load(path) {
            Ok(b) => {
                idemlint::baseline::filter(&mut report, &b, &base);
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(rev) = &args.diff_base {
        match idemlint::diff::changed_lines(rev, &cwd) {
            Ok(changed) => report
                .findings
                .retain(|f| changed.contains(&report.files[f.file].path, f.start.line)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let color = to_terminal && !args.no_color && std::env::var_os("NO_COLOR").is_none();
    // (--statistics with another format was refused before the run.)
    let mut body = if args.statistics && args.format == Format::Json {
        statistics_json(&report)
    } else if args.statistics {
        statistics_text(&report)
    } else {
        match args.format {
            Format::Human => human::render(&report, &base, color),
            Format::Concise => idemlint::report::concise::render(&report, &base),
            Format::Json => json::render(&report, &base),
            Format::Sarif => sarif::render_with(
                &report,
                &report_root,
                &sarif::SarifOptions {
                    include_suppressed: args.include_suppressed,
                    automation_id: None,
                },
            ),
            Format::Github => github::render(&report, &report_root),
        }
    };
    if matches!(args.format, Format::Human | Format::Concise) && !args.statistics {
        body.push_str(&human::summary(&report));
        body.push('\n');
    }

    // Tool errors, notices and suppression warnings go to stderr in every format.
    let mut stderr = std::io::stderr().lock();
    for n in &report.notices {
        let _ = writeln!(
            stderr,
            "warning: {}:{}: {}",
            idemlint::report::display_path(&n.path, &base),
            n.line,
            n.message
        );
    }
    for w in &report.suppression_warnings {
        let _ = writeln!(
            stderr,
            "warning: {}:{}: {}",
            idemlint::report::display_path(&w.path, &base),
            w.line,
            w.message
        );
    }
    for e in &report.errors {
        let _ = writeln!(
            stderr,
            "error: {}: {}",
            idemlint::report::display_path(&e.path, &base),
            e.message
        );
    }
    if report.files_checked == 0 && report.errors.is_empty() {
        let _ = writeln!(
            stderr,
            "warning: no Java, Kotlin or Rust source file was checked: the paths hold none, or \
             every one is excluded (test sources are skipped without --include-tests)"
        );
    }

    let written = match &args.output {
        // Its directory is made if missing (`build/reports/idemlint/` in a fresh build).
        Some(path) => path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(path, body.as_bytes()))
            .map_err(|e| (path.clone(), e)),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(body.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| (PathBuf::from("<stdout>"), e))
        }
    };
    // A reader that stops early (`idemlint check | head`) is neither an error nor a reason to
    // change the exit code, which still says what was found.
    if let Err((path, e)) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = writeln!(stderr, "error: cannot write {}: {e}", path.display());
        return ExitCode::from(2);
    }

    let strict_failure = args.strict_suppressions && !report.suppression_warnings.is_empty();
    if !report.errors.is_empty() {
        ExitCode::from(2)
    } else if (!report.findings.is_empty() || strict_failure) && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
