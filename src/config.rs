//! `idemlint.toml`: rule selection, severities, file selection, per-file ignores and
//! catalogue extensions.
//!
//! Found from the working directory upward: `idemlint.toml`, `.idemlint.toml`, or a
//! `Cargo.toml` with `[workspace.metadata.idemlint]` / `[package.metadata.idemlint]`; or named
//! with `--config FILE`. Unknown keys and bad values are errors that point at the TOML line.

use crate::rules::{self, Selection};
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The file as written.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigFile {
    /// Rules to run (replaces the default set; `ALL` for every rule).
    #[serde(default)]
    pub select: Option<Vec<Spanned<String>>>,
    /// Rules to add to the selected ones.
    #[serde(default)]
    pub extend_select: Vec<Spanned<String>>,
    /// Rules not to run.
    #[serde(default)]
    pub ignore: Vec<Spanned<String>>,
    /// Per-rule level: `IDEM008 = "error"`.
    #[serde(default)]
    pub severity: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Only check files matching one of these globs (relative to the config file).
    #[serde(default)]
    pub include: Vec<Spanned<String>>,
    /// Never check files matching one of these globs.
    #[serde(default)]
    pub exclude: Vec<Spanned<String>>,
    /// `"src/legacy/**" = ["IDEM001"]`: rules not reported in matching files.
    #[serde(default)]
    pub per_file_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
    /// Check test sources too.
    #[serde(default)]
    pub include_tests: Option<bool>,
    /// Framework knowledge to add to the built-in catalogue.
    #[serde(default)]
    pub catalog: CatalogExtension,
}

pub use crate::catalog_ext::{CatalogExtension, InterceptorExtension};

/// The level a rule reports at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// A configuration error: what is wrong and where in which file.
#[derive(Debug)]
pub struct ConfigError {
    pub path: PathBuf,
    pub source: String,
    pub message: String,
    pub span: Option<Range<usize>>,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// The effective configuration after validation.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// Directory globs are relative to.
    pub root: PathBuf,
    pub select: Option<Vec<String>>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
    pub severity: BTreeMap<String, Level>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub per_file_ignores: Vec<(String, Vec<String>)>,
    pub include_tests: bool,
    pub catalog: CatalogExtension,
    include_set: Option<GlobSet>,
    exclude_set: GlobSet,
    per_file_sets: Vec<(GlobSet, Vec<&'static str>)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            path: None,
            root: PathBuf::from("."),
            select: None,
            extend_select: Vec::new(),
            ignore: Vec::new(),
            severity: BTreeMap::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            per_file_ignores: Vec::new(),
            include_tests: false,
            catalog: CatalogExtension::default(),
            include_set: None,
            exclude_set: GlobSet::empty(),
            per_file_sets: Vec::new(),
        }
    }
}

/// Where a configuration lives, looking from `start` upward.
pub fn find(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(in_dir)
}

/// The configuration file in directory `d` itself, if it has one.
pub fn in_dir(d: &Path) -> Option<PathBuf> {
    for name in ["idemlint.toml", ".idemlint.toml"] {
        let p = d.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    let cargo = d.join("Cargo.toml");
    // (Most manifests say nothing of idemlint: those are not parsed.)
    (cargo.is_file()
        && std::fs::read_to_string(&cargo)
            .is_ok_and(|t| t.contains("idemlint") && cargo_section(&t).is_some()))
    .then_some(cargo)
}

/// The `[workspace.metadata.idemlint]` / `[package.metadata.idemlint]` table of a Cargo.toml,
/// as TOML text of its own (so that error spans can be mapped back).
fn cargo_section(text: &str) -> Option<toml::Value> {
    let v: toml::Value = toml::from_str(text).ok()?;
    ["workspace", "package"]
        .iter()
        .find_map(|k| v.get(k)?.get("metadata")?.get("idemlint").cloned())
}

/// Loads and validates a configuration file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let source = std::fs::read_to_string(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        source: String::new(),
        message: format!("cannot read: {e}"),
        span: None,
    })?;
    let root = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let is_cargo = path.file_name().is_some_and(|n| n == "Cargo.toml");
    let parsed: Result<ConfigFile, toml::de::Error> = if is_cargo {
        // Parse the whole manifest with the section typed, so spans point into the file.
        #[derive(Deserialize)]
        struct Meta {
            idemlint: Option<ConfigFile>,
        }
        #[derive(Deserialize)]
        struct Section {
            metadata: Option<Meta>,
        }
        #[derive(Deserialize)]
        struct Manifest {
            workspace: Option<Section>,
            package: Option<Section>,
        }
        toml::from_str::<Manifest>(&source).map(|m| {
            m.workspace
                .and_then(|s| s.metadata)
                .and_then(|m| m.idemlint)
                .or_else(|| m.package.and_then(|s| s.metadata).and_then(|m| m.idemlint))
                .unwrap_or_default()
        })
    } else {
        toml::from_str(&source)
    };
    let file = parsed.map_err(|e| ConfigError {
        path: path.to_path_buf(),
        source: source.clone(),
        message: crate::suggest::unknown_field(e.message()),
        span: e.span(),
    })?;
    validate(file, path, &source, root)
}

fn validate(
    file: ConfigFile,
    path: &Path,
    source: &str,
    root: PathBuf,
) -> Result<Config, ConfigError> {
    let err = |span: Range<usize>, message: String| ConfigError {
        path: path.to_path_buf(),
        source: source.to_string(),
        message,
        span: Some(span),
    };
    let code = |s: &Spanned<String>| -> Result<String, ConfigError> {
        let v = s.get_ref();
        if v.eq_ignore_ascii_case("ALL")
            || rules::RULES.iter().any(|r| {
                r.code.len() >= v.len()
                    && !v.is_empty()
                    && r.code[..v.len()].eq_ignore_ascii_case(v)
                    || r.name.eq_ignore_ascii_case(v)
            })
        {
            Ok(v.clone())
        } else {
            Err(err(s.span(), rules::unknown_rule(v, true)))
        }
    };
    let codes = |v: &[Spanned<String>]| v.iter().map(code).collect::<Result<Vec<_>, _>>();
    let glob = |s: &Spanned<String>| -> Result<Glob, ConfigError> {
        Glob::new(s.get_ref()).map_err(|e| {
            err(
                s.span(),
                format!("bad glob `{}`: {}", s.get_ref(), e.kind()),
            )
        })
    };
    let set = |v: &[Spanned<String>]| -> Result<GlobSet, ConfigError> {
        let mut b = GlobSetBuilder::new();
        for s in v {
            b.add(glob(s)?);
        }
        b.build().map_err(|e| ConfigError {
            path: path.to_path_buf(),
            source: source.to_string(),
            message: e.to_string(),
            span: None,
        })
    };
    let mut severity = BTreeMap::new();
    for (k, v) in &file.severity {
        let c = code(k)?;
        let level = match v.get_ref().to_ascii_lowercase().as_str() {
            "error" => Level::Error,
            "warning" | "warn" => Level::Warning,
            "note" | "info" => Level::Note,
            other => {
                return Err(err(
                    v.span(),
                    format!(
                        "bad level `{other}` for {c} (expected \"error\", \"warning\" or \"note\")"
                    ),
                ));
            }
        };
        for r in Selection::from_lists(Some(std::slice::from_ref(&c)), &[], &[])
            .map_err(|m| err(k.span(), m))?
            .enabled
        {
            severity.insert(r.to_string(), level);
        }
    }
    let mut per_file_ignores = Vec::new();
    let mut per_file_sets = Vec::new();
    for (g, cs) in &file.per_file_ignores {
        let mut b = GlobSetBuilder::new();
        b.add(glob(g)?);
        let gs = b.build().map_err(|e| err(g.span(), e.to_string()))?;
        let list = codes(cs)?;
        let enabled = Selection::from_lists(Some(&list), &[], &[])
            .map_err(|m| err(g.span(), m))?
            .enabled;
        per_file_ignores.push((g.get_ref().clone(), list));
        per_file_sets.push((gs, enabled));
    }
    for ext in &file.catalog.interceptors {
        if ext.supertype.trim().is_empty() || ext.method.trim().is_empty() {
            return Err(ConfigError {
                path: path.to_path_buf(),
                source: source.to_string(),
                message: "catalog.interceptors entries need a non-empty `supertype` and `method`"
                    .into(),
                span: None,
            });
        }
    }
    Ok(Config {
        path: Some(path.to_path_buf()),
        root,
        select: file.select.as_deref().map(codes).transpose()?,
        extend_select: codes(&file.extend_select)?,
        ignore: codes(&file.ignore)?,
        severity,
        include: file.include.iter().map(|s| s.get_ref().clone()).collect(),
        exclude: file.exclude.iter().map(|s| s.get_ref().clone()).collect(),
        include_set: if file.include.is_empty() {
            None
        } else {
            Some(set(&file.include)?)
        },
        exclude_set: set(&file.exclude)?,
        per_file_ignores,
        per_file_sets,
        include_tests: file.include_tests.unwrap_or(false),
        catalog: file.catalog,
    })
}

impl Config {
    /// The path relative to the config root, for glob matching.
    fn rel<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, Path> {
        let abs = |p: &Path| -> PathBuf {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                std::env::current_dir().unwrap_or_default().join(p)
            }
        };
        let root = abs(&self.root);
        let p = abs(path);
        match p.strip_prefix(&root) {
            Ok(r) => std::borrow::Cow::Owned(
                r.components()
                    .filter(|c| !matches!(c, std::path::Component::CurDir))
                    .collect(),
            ),
            Err(_) => std::borrow::Cow::Borrowed(path),
        }
    }

    /// Is a discovered file selected by `include` / `exclude`?
    pub fn selects(&self, path: &Path) -> bool {
        let rel = self.rel(path);
        if self.exclude_set.is_match(rel.as_ref()) {
            return false;
        }
        self.include_set
            .as_ref()
            .is_none_or(|s| s.is_match(rel.as_ref()))
    }

    /// Is `code` ignored for `path` by `per-file-ignores`?
    pub fn ignored_in(&self, path: &Path, code: &str) -> bool {
        if self.per_file_sets.is_empty() {
            return false;
        }
        let rel = self.rel(path);
        self.per_file_sets
            .iter()
            .any(|(s, codes)| codes.contains(&code) && s.is_match(rel.as_ref()))
    }

    /// The effective configuration as TOML (for `--show-config`).
    pub fn to_toml(&self, selection: &Selection) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "kebab-case")]
        struct Shown<'a> {
            config_file: String,
            enabled_rules: &'a [&'static str],
            severity: BTreeMap<&'static str, &'static str>,
            include: &'a [String],
            exclude: &'a [String],
            include_tests: bool,
            per_file_ignores: BTreeMap<&'a str, &'a [String]>,
            catalog: &'a CatalogExtension,
        }
        let severity = rules::RULES
            .iter()
            .map(|r| (r.code, self.level_of(r.code, r.severity).as_str()))
            .collect();
        let shown = Shown {
            config_file: self
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(none: defaults)".into()),
            enabled_rules: &selection.enabled,
            severity,
            include: &self.include,
            exclude: &self.exclude,
            include_tests: self.include_tests,
            per_file_ignores: self
                .per_file_ignores
                .iter()
                .map(|(g, c)| (g.as_str(), c.as_slice()))
                .collect(),
            catalog: &self.catalog,
        };
        toml::to_string_pretty(&shown).unwrap_or_default()
    }

    /// The level `code` reports at.
    pub fn level_of(&self, code: &str, default: crate::finding::Severity) -> Level {
        self.severity.get(code).copied().unwrap_or(match default {
            crate::finding::Severity::Error => Level::Error,
            crate::finding::Severity::Warning => Level::Warning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_str(text: &str) -> Result<Config, ConfigError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("idemlint.toml");
        std::fs::write(&p, text).unwrap();
        load(&p)
    }

    #[test]
    fn full_config_loads() {
        let c = load_str(
            r#"
select = ["ALL"]
ignore = ["IDEM008"]
include-tests = true
exclude = ["generated/**"]

[severity]
IDEM001 = "warning"

[per-file-ignores]
"src/legacy/**" = ["IDEM001"]

[catalog]
idempotency-headers = ["X-Acme-Dedup"]
nondeterministic-sources = ["IdGen.next"]
interceptors = [{ supertype = "AcmeHook", method = "before" }]
"#,
        )
        .unwrap();
        assert_eq!(c.select.as_deref(), Some(&["ALL".to_string()][..]));
        assert_eq!(c.severity.get("IDEM001"), Some(&Level::Warning));
        assert!(c.include_tests);
        assert!(c.ignored_in(&c.root.join("src/legacy/A.java"), "IDEM001"));
        assert!(!c.ignored_in(&c.root.join("src/main/A.java"), "IDEM001"));
        assert!(!c.selects(&c.root.join("generated/A.java")));
        assert!(c.selects(&c.root.join("src/A.java")));
        assert_eq!(c.catalog.idempotency_headers, vec!["X-Acme-Dedup"]);
    }

    #[test]
    fn misspelled_key_points_at_its_line() {
        let e = load_str("selct = [\"IDEM001\"]\n").unwrap_err();
        assert!(e.message.contains("unknown field `selct`"), "{}", e.message);
        assert!(
            e.message.ends_with("(did you mean `select`?)"),
            "{}",
            e.message
        );
        assert_eq!(e.span, Some(0..5));
        let e = load_str("select = [\"IDEM04\"]\n").unwrap_err();
        assert!(
            e.message
                .starts_with("unknown rule `IDEM04`; did you mean `IDEM004`?"),
            "{}",
            e.message
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let e = load_str("ignore = [\"IDEM999\"]\n").unwrap_err();
        assert!(e.message.contains("unknown rule `IDEM999`"));
        assert_eq!(&e.source[e.span.clone().unwrap()], "\"IDEM999\"");
        let e = load_str("[severity]\nIDEM001 = \"fatal\"\n").unwrap_err();
        assert!(e.message.contains("bad level `fatal`"));
        let e = load_str("exclude = [\"src/[\"]\n").unwrap_err();
        assert!(e.message.contains("bad glob"));
        let e = load_str("select = \"IDEM001\"\n").unwrap_err();
        assert!(e.message.contains("invalid type"), "{}", e.message);
    }

    #[test]
    fn found_upward_and_in_cargo_metadata() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("a/b")).unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[package]\nname = \"x\"\n\n[package.metadata.idemlint]\nignore = [\"IDEM008\"]\n",
        )
        .unwrap();
        let found = find(&d.path().join("a/b")).unwrap();
        assert_eq!(found, d.path().join("Cargo.toml"));
        let c = load(&found).unwrap();
        assert_eq!(c.ignore, vec!["IDEM008"]);
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[package]\nname = \"x\"\n\n[package.metadata.idemlint]\nignroe = [\"IDEM008\"]\n",
        )
        .unwrap();
        let e = load(&found).unwrap_err();
        assert!(e.message.contains("unknown field `ignroe`"));
        let line = e.source[..e.span.unwrap().start].matches('\n').count() + 1;
        assert_eq!(line, 5, "the span points into the manifest");
        std::fs::write(d.path().join("a/idemlint.toml"), "").unwrap();
        assert_eq!(
            find(&d.path().join("a/b")).unwrap(),
            d.path().join("a/idemlint.toml")
        );
    }
}
