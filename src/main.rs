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
    Check(CheckArgs),
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
    /// named here are always checked.
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
}

#[derive(Clone, Copy, ValueEnum, Default, PartialEq, Eq)]
enum Format {
    #[default]
    Human,
    Json,
    Sarif,
    Github,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum RulesFormat {
    Human,
    Json,
}

fn main() -> ExitCode {
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
    match cli.command.unwrap_or(Command::Check(CheckArgs::default())) {
        Command::Check(args) => check(args),
        Command::Rules { format } => {
            print_rules(format);
            ExitCode::SUCCESS
        }
        Command::Rule { code } => match idemlint::rules::meta(&code)
            .or_else(|| RULES.iter().find(|r| r.name.eq_ignore_ascii_case(&code)))
        {
            Some(r) => {
                println!("{}", r.doc.trim_end());
                ExitCode::SUCCESS
            }
            None => {
                let known: Vec<&str> = RULES.iter().map(|r| r.code).collect();
                eprintln!(
                    "error: unknown rule `{code}` (known rules: {})",
                    known.join(", ")
                );
                ExitCode::from(2)
            }
        },
    }
}

fn print_rules(format: RulesFormat) {
    match format {
        RulesFormat::Human => {
            println!(
                "{:<8} {:<36} {:<8} {:<8} summary",
                "code", "name", "level", "default"
            );
            for r in RULES {
                println!(
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
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let selection =
        match Selection::from_lists(args.select.as_deref(), &args.extend_select, &args.ignore) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let opts = Options {
        selection,
        include_tests: args.include_tests,
        threads: args.threads,
    };
    let report = lint(&paths, &opts);
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));

    let to_terminal = args.output.is_none() && std::io::stdout().is_terminal();
    let color = to_terminal && !args.no_color && std::env::var_os("NO_COLOR").is_none();
    let mut body = match args.format {
        Format::Human => human::render(&report, &base, color),
        Format::Json => json::render(&report, &base),
        Format::Sarif => sarif::render(&report, &base),
        Format::Github => github::render(&report, &base),
    };
    if args.format == Format::Human {
        body.push_str(&human::summary(&report));
        body.push('\n');
    }

    // Tool errors and notices go to stderr in every format.
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
    for e in &report.errors {
        let _ = writeln!(
            stderr,
            "error: {}: {}",
            idemlint::report::display_path(&e.path, &base),
            e.message
        );
    }

    let written = match &args.output {
        Some(path) => std::fs::write(path, body.as_bytes()).map_err(|e| (path.clone(), e)),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(body.as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| (PathBuf::from("<stdout>"), e))
        }
    };
    if let Err((path, e)) = written {
        // A closed pipe (`idemlint check | head`) is not worth an error message.
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(stderr, "error: cannot write {}: {e}", path.display());
        }
        return ExitCode::from(2);
    }

    if !report.errors.is_empty() {
        ExitCode::from(2)
    } else if !report.findings.is_empty() && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
