//! The result cache: `.idemlint_cache/` at the project root (like ruff's `.ruff_cache`).
//!
//! A run over a project is remembered as its whole-project result, under a fingerprint of
//! everything the result depends on: this build of idemlint (version, and the executable's
//! size and modification time, so a rebuilt binary never reads an older one's answers), the
//! effective configuration, the options that change findings, and every file the analysis read
//! (path, size, modification time, and whether it counts as test code; the text itself for an
//! editor's unsaved buffer). When nothing of that changed, the next run over the project, or
//! over any files in it, reads the result instead of analysing; the files it names are then
//! picked out of it, exactly as from a fresh whole-project run.
//!
//! Writes are atomic (a temporary file renamed into place), so concurrent runs never see half
//! an entry; the last writer wins. An entry that does not read, does not parse or belongs to
//! another fingerprint is a miss, never an error. A file modified in the last two seconds
//! before a run is not trusted to show a later change by its modification time (the "racy
//! git" problem), so such a run is not cached.
//!
//! A file the remembered run never opened (never parsed nor read again: it only learnt the
//! file's outline, [`crate::Report::outline_only`]) counts by the digest of that outline, not
//! by its content: an edit that leaves the outline as it was (a comment, a number, white
//! space) cannot change any answer, so the result is reused after outlining that one file
//! again. Any other change means a full run: per-file results and summaries that would let a
//! run re-derive only what an outline change touches are not built.

use crate::facts::Span;
use crate::source::{LineCol, SourceFile};
use crate::{Notice, Report, ReportFinding, ReportLabel, ToolError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The directory name at the project root.
pub const DIR_NAME: &str = ".idemlint_cache";

/// Bumped when the entry format changes (old entries are then misses).
const FORMAT: u32 = 2;

/// Where the cache lives for a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// No cache (`--no-cache`, and the library's default).
    #[default]
    Off,
    /// `.idemlint_cache/` at the project root.
    ProjectRoot,
    /// A directory of the user's choosing (`--cache-dir`, `IDEMLINT_CACHE_DIR`).
    Dir(PathBuf),
}

impl CacheMode {
    /// The cache directory for a project at `root`.
    pub fn dir_for(&self, root: &Path) -> Option<PathBuf> {
        match self {
            CacheMode::Off => None,
            CacheMode::ProjectRoot => Some(root.join(DIR_NAME)),
            CacheMode::Dir(d) => Some(d.clone()),
        }
    }
}

/// What a run depends on, gathered before it: settings, then one input per file or fact.
pub struct Inputs {
    head: String,
    items: Vec<Input>,
}

enum Input {
    /// A file on disk, keyed by its content (its size and modification time are the fast path).
    Disk {
        what: &'static str,
        path: PathBuf,
    },
    /// Text that is not on disk as analysed (an editor's buffer).
    Text {
        what: &'static str,
        path: PathBuf,
        hash: u128,
        text: String,
    },
    Line(String),
}

/// A file's content hash as last seen, with the metadata that vouches for it.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
struct Seen {
    path: PathBuf,
    size: u64,
    /// Nanoseconds since the epoch.
    modified: u128,
    hash: u128,
}

/// A file the entry's run knew only by its outline ([`crate::Report::outline_only`]): its
/// content hash then, and the digest of its outline.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
struct Outlined {
    path: PathBuf,
    hash: u128,
    digest: u128,
}

/// The digest of a file's outline from its bytes ([`crate::project::outline_digest`]), or
/// `None` where the run would not outline it (not text, too large).
pub type DigestOf<'a> = &'a (dyn Fn(&Path, &[u8]) -> Option<u128> + Sync);

/// One input as hashed.
enum Line {
    Plain(String),
    /// A file on disk. `digest`: its outline's, for a file the last run knew only by its
    /// outline (it then counts by that, not by its content).
    File {
        what: &'static str,
        path: PathBuf,
        hash: u128,
        digest: Option<u128>,
    },
}

/// The inputs of a run as hashed, and what was seen of each file to hash it.
struct Fingerprinted {
    head: String,
    lines: Vec<Line>,
    /// Every file on disk hashed, as it was then.
    stats: Vec<Stat>,
}

/// A file on disk as the fingerprint saw it.
struct Stat {
    seen: Seen,
    /// Modified too recently for its metadata to vouch for its content.
    racy: bool,
}

impl Fingerprinted {
    /// The fingerprint, counting a file by its outline's digest where `by_outline` gives one
    /// and by its content otherwise.
    fn render(&self, by_outline: impl Fn(&Path, Option<u128>) -> Option<u128>) -> String {
        let mut text = self.head.clone();
        for line in &self.lines {
            match line {
                Line::Plain(l) => text.push_str(l),
                Line::File {
                    what,
                    path,
                    hash,
                    digest,
                } => text.push_str(&match by_outline(path, *digest) {
                    Some(d) => format!("{what} {} outline {d:032x}", path.display()),
                    None => format!("{what} {} {hash:032x}", path.display()),
                }),
            }
            text.push('\n');
        }
        format!("{:032x}", hash128(text.as_bytes()))
    }

    /// The fingerprint as the last run's entry keyed it: a file it knew only by its outline
    /// counts by that outline.
    fn as_last_run_keyed(&self) -> String {
        self.render(|_, digest| digest)
    }

    /// Is every file on disk still as the fingerprint saw it: the same size and modification
    /// time, and for a file modified within [`RACY_NANOS`] of being seen, the same content?
    /// A file edited while the run read it may have given the run other text than the one
    /// hashed, and that result must not be remembered under this fingerprint.
    fn still_holds(&self) -> bool {
        use rayon::prelude::*;
        self.stats.par_iter().all(|Stat { seen: s, racy }| {
            let Ok(meta) = std::fs::metadata(&s.path) else {
                return false;
            };
            meta.len() == s.size
                && modified_nanos(&meta).unwrap_or(0) == s.modified
                && (!racy || std::fs::read(&s.path).is_ok_and(|b| hash128(&b) == s.hash))
        })
    }

    /// The files whose metadata vouches for their hash next time (not racy when seen).
    fn seen(&self) -> Vec<Seen> {
        self.stats
            .iter()
            .filter(|s| !s.racy)
            .map(|s| s.seen.clone())
            .collect()
    }

    /// The fingerprint of a run that knew `outline_only` files only by their outlines.
    fn keyed_by(&self, outline_only: &crate::hash::HashMap<&Path, u128>) -> String {
        self.render(|path, _| outline_only.get(path).copied())
    }
}

/// A file modified this close to the moment it was looked at may change again within the same
/// modification-time tick ("racy git"): its metadata does not vouch for its content next time.
const RACY_NANOS: u128 = 2_000_000_000;

fn modified_nanos(m: &std::fs::Metadata) -> Option<u128> {
    m.modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_nanos())
}

impl Inputs {
    pub fn new(root: &Path, settings: &str) -> Inputs {
        let mut head = format!(
            "idemlint-cache {FORMAT} {}\nroot {}\n{settings}\n",
            env!("CARGO_PKG_VERSION"),
            root.display()
        );
        match std::env::current_exe().and_then(std::fs::metadata) {
            Ok(m) => head.push_str(&format!("exe {} {:?}\n", m.len(), modified_nanos(&m))),
            // Without knowing which build this is, nothing may be reused.
            Err(_) => head.push_str(&format!("exe unknown {:?}\n", std::time::SystemTime::now())),
        }
        Inputs {
            head,
            items: Vec::new(),
        }
    }

    /// A file the run reads.
    pub fn file(&mut self, what: &'static str, path: &Path) {
        self.items.push(Input::Disk {
            what,
            path: path.to_path_buf(),
        });
    }

    /// Text the run analyses in place of a file (an editor's buffer).
    pub fn text(&mut self, what: &'static str, path: &Path, text: &str) {
        self.items.push(Input::Text {
            what,
            path: path.to_path_buf(),
            hash: hash128(text.as_bytes()),
            text: text.to_string(),
        });
    }

    /// Anything else the result depends on.
    pub fn line(&mut self, line: String) {
        self.items.push(Input::Line(line));
    }

    /// Hashes every input; a file whose size and modification time match `previous` (and were
    /// not racy when seen) keeps the hash recorded there without being read. A file in
    /// `outlined` gets its outline's digest: the one recorded there while its content is the
    /// same, else one made now by `digest_of`.
    fn fingerprint(
        &self,
        previous: &[Seen],
        outlined: &[Outlined],
        digest_of: DigestOf,
    ) -> Fingerprinted {
        use rayon::prelude::*;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let known: crate::hash::HashMap<&Path, &Seen> =
            previous.iter().map(|s| (s.path.as_path(), s)).collect();
        let outlined: crate::hash::HashMap<&Path, &Outlined> =
            outlined.iter().map(|o| (o.path.as_path(), o)).collect();
        let lines: Vec<(Line, Option<Stat>)> = self
            .items
            .par_iter()
            .map(|item| match item {
                Input::Line(l) => (Line::Plain(l.clone()), None),
                // A buffer counts as the file would with that text: a saved buffer reuses
                // the result.
                Input::Text {
                    what,
                    path,
                    hash,
                    text,
                } => {
                    let digest = outlined
                        .get(path.as_path())
                        .and_then(|o| match o.hash == *hash {
                            true => Some(o.digest),
                            false => digest_of(path, text.as_bytes()),
                        });
                    let line = Line::File {
                        what,
                        path: path.clone(),
                        hash: *hash,
                        digest,
                    };
                    (line, None)
                }
                Input::Disk { what, path } => {
                    let unreadable = || {
                        (
                            Line::Plain(format!("{what} {} unreadable", path.display())),
                            None,
                        )
                    };
                    let Ok(meta) = std::fs::metadata(path) else {
                        return unreadable();
                    };
                    let modified = modified_nanos(&meta).unwrap_or(0);
                    let last = outlined.get(path.as_path());
                    let (hash, digest) = match known.get(path.as_path()) {
                        Some(s) if s.size == meta.len() && s.modified == modified => {
                            (s.hash, last.filter(|o| o.hash == s.hash).map(|o| o.digest))
                        }
                        _ => {
                            let Ok(bytes) = std::fs::read(path) else {
                                return unreadable();
                            };
                            let hash = hash128(&bytes);
                            let digest = last.and_then(|o| match o.hash == hash {
                                true => Some(o.digest),
                                false => digest_of(path, &bytes),
                            });
                            (hash, digest)
                        }
                    };
                    let stat = Stat {
                        seen: Seen {
                            path: path.clone(),
                            size: meta.len(),
                            modified,
                            hash,
                        },
                        racy: modified == 0 || now.saturating_sub(modified) <= RACY_NANOS,
                    };
                    let line = Line::File {
                        what,
                        path: path.clone(),
                        hash,
                        digest,
                    };
                    (line, Some(stat))
                }
            })
            .collect();
        let (lines, stats): (Vec<Line>, Vec<Option<Stat>>) = lines.into_iter().unzip();
        Fingerprinted {
            head: self.head.clone(),
            lines,
            stats: stats.into_iter().flatten().collect(),
        }
    }
}

/// A file's or a text's content hash (see [`crate::hash::digest128`]).
fn hash128(bytes: &[u8]) -> u128 {
    crate::hash::digest128(bytes)
}

#[derive(Serialize, Deserialize)]
struct Entry {
    fingerprint: String,
    seen: Vec<Seen>,
    outlined: Vec<Outlined>,
    checked: Vec<PathBuf>,
    findings: Vec<CachedFinding>,
    suppressed: Vec<CachedFinding>,
    errors: Vec<ToolError>,
    notices: Vec<Notice>,
    suppression_warnings: Vec<crate::suppress::SuppressionWarning>,
}

#[derive(Serialize, Deserialize)]
struct CachedLabel {
    path: PathBuf,
    span: Span,
    start: LineCol,
    end: LineCol,
    message: String,
}

#[derive(Serialize, Deserialize)]
struct CachedFinding {
    code: String,
    path: PathBuf,
    span: Span,
    start: LineCol,
    end: LineCol,
    label: String,
    message: String,
    note: Option<String>,
    help: String,
    labels: Vec<CachedLabel>,
    symbol: String,
    level: crate::config::Level,
    justification: Option<String>,
    inferred: Option<String>,
}

fn cached(report: &Report, f: &ReportFinding) -> CachedFinding {
    CachedFinding {
        code: f.rule.code.to_string(),
        path: report.path(f.file).to_path_buf(),
        span: f.span,
        start: f.start,
        end: f.end,
        label: f.label.clone(),
        message: f.message.clone(),
        note: f.note.clone(),
        help: f.help.clone(),
        labels: f
            .labels
            .iter()
            .map(|l| CachedLabel {
                path: report.path(l.file).to_path_buf(),
                span: l.span,
                start: l.start,
                end: l.end,
                message: l.message.clone(),
            })
            .collect(),
        symbol: f.symbol.clone(),
        level: f.level,
        justification: f.justification.clone(),
        inferred: f.inferred.clone(),
    }
}

/// A cache directory for one project.
pub struct Cache {
    dir: PathBuf,
}

/// What a lookup leaves for the store that follows a miss.
pub struct Miss(Fingerprinted);

impl Cache {
    pub fn new(dir: PathBuf) -> Cache {
        Cache { dir }
    }

    /// One entry per project and set of options: a new fingerprint for the same slot
    /// replaces the old entry.
    fn entry_path(&self, slot: &str) -> PathBuf {
        self.dir.join(format!(
            "result-{:016x}.json",
            hash128(slot.as_bytes()) as u64
        ))
    }

    /// The remembered result for these inputs, if there is one and every file it quotes
    /// still reads; otherwise what [`Cache::store`] needs. `overrides` supply the text of files
    /// that are not on disk as analysed. A file the remembered run knew only by its outline
    /// counts by that outline: an edit that leaves it as it was reuses the result.
    pub fn load(
        &self,
        slot: &str,
        inputs: &Inputs,
        overrides: &[(PathBuf, String)],
        rule_levels: Vec<(&'static str, crate::config::Level)>,
        digest_of: DigestOf,
    ) -> Result<(Report, Vec<PathBuf>), Miss> {
        let entry: Option<Entry> = std::fs::read(self.entry_path(slot))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let fp = match &entry {
            Some(e) => inputs.fingerprint(&e.seen, &e.outlined, digest_of),
            None => inputs.fingerprint(&[], &[], digest_of),
        };
        match entry {
            Some(mut e) if e.fingerprint == fp.as_last_run_keyed() => {
                // A file edited without changing its outline: remember its new content, so the
                // next run need not outline it again.
                let outlined: Vec<Outlined> = fp
                    .lines
                    .iter()
                    .filter_map(|l| match l {
                        Line::File {
                            path,
                            hash,
                            digest: Some(digest),
                            ..
                        } => Some(Outlined {
                            path: path.clone(),
                            hash: *hash,
                            digest: *digest,
                        }),
                        _ => None,
                    })
                    .collect();
                let seen = fp.seen();
                if outlined != e.outlined || seen != e.seen {
                    e.outlined = outlined;
                    e.seen = seen;
                    self.write(slot, &e);
                }
                rebuild(e, overrides, rule_levels).ok_or(Miss(fp))
            }
            _ => Err(Miss(fp)),
        }
    }

    /// Remembers `report` (a whole-project result), unless a file changed since the lookup
    /// hashed it (the run may have read the new text). Failing to write is not an error: the
    /// next run analyses again.
    pub fn store(&self, slot: &str, miss: Miss, report: &Report) {
        let Miss(fp) = miss;
        if !fp.still_holds() {
            return;
        }
        let outline_only: crate::hash::HashMap<&Path, u128> = report
            .outline_only
            .iter()
            .map(|(p, d)| (p.as_path(), *d))
            .collect();
        let outlined = fp
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::File { path, hash, .. } => Some(Outlined {
                    path: path.clone(),
                    hash: *hash,
                    digest: *outline_only.get(path.as_path())?,
                }),
                Line::Plain(_) => None,
            })
            .collect();
        let entry = Entry {
            fingerprint: fp.keyed_by(&outline_only),
            seen: fp.seen(),
            outlined,
            checked: report.checked_paths.clone(),
            findings: report.findings.iter().map(|f| cached(report, f)).collect(),
            suppressed: report
                .suppressed
                .iter()
                .map(|f| cached(report, f))
                .collect(),
            errors: report.errors.clone(),
            notices: report.notices.clone(),
            suppression_warnings: report.suppression_warnings.clone(),
        };
        self.write(slot, &entry);
    }

    /// Writes an entry atomically (a temporary file renamed into place).
    fn write(&self, slot: &str, entry: &Entry) {
        let Ok(bytes) = serde_json::to_vec(entry) else {
            return;
        };
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        // Git never sees the cache (as ruff does it).
        let ignore = self.dir.join(".gitignore");
        if !ignore.exists() {
            let _ = std::fs::write(&ignore, "# Created by idemlint\n*\n");
        }
        let dest = self.entry_path(slot);
        let tmp = self.dir.join(format!(
            ".tmp-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        if std::fs::write(&tmp, &bytes).is_err() || std::fs::rename(&tmp, &dest).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// A report from an entry, reading the text of the files its findings point into.
fn rebuild(
    entry: Entry,
    overrides: &[(PathBuf, String)],
    rule_levels: Vec<(&'static str, crate::config::Level)>,
) -> Option<(Report, Vec<PathBuf>)> {
    let mut report = Report {
        rule_levels,
        errors: entry.errors,
        notices: entry.notices,
        suppression_warnings: entry.suppression_warnings,
        files_checked: entry.checked.len(),
        ..Report::default()
    };
    let mut file_of: crate::hash::HashMap<PathBuf, usize> = Default::default();
    let mut file = |report: &mut Report, path: &Path| -> Option<usize> {
        if let Some(i) = file_of.get(path) {
            return Some(*i);
        }
        let text = match overrides.iter().find(|(p, _)| p == path) {
            Some((_, t)) => t.clone(),
            None => std::fs::read_to_string(path).ok()?,
        };
        report
            .files
            .push(Arc::new(SourceFile::new(path.to_path_buf(), text)));
        file_of.insert(path.to_path_buf(), report.files.len() - 1);
        Some(report.files.len() - 1)
    };
    for (list, suppressed) in [(entry.findings, false), (entry.suppressed, true)] {
        for f in list {
            let rule = crate::rules::meta(&f.code)?;
            let at = file(&mut report, &f.path)?;
            let mut labels = Vec::new();
            for l in f.labels {
                labels.push(ReportLabel {
                    file: file(&mut report, &l.path)?,
                    span: l.span,
                    start: l.start,
                    end: l.end,
                    message: l.message,
                });
            }
            let rf = ReportFinding {
                rule,
                file: at,
                span: f.span,
                start: f.start,
                end: f.end,
                label: f.label,
                message: f.message,
                note: f.note,
                help: f.help,
                labels,
                symbol: f.symbol,
                level: f.level,
                justification: f.justification,
                inferred: f.inferred,
            };
            if suppressed {
                report.suppressed.push(rf);
            } else {
                report.findings.push(rf);
            }
        }
    }
    Some((report, entry.checked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    const NO_DIGEST: DigestOf = &|_, _| None;

    fn aged(p: &Path, text: &str, age: u64) {
        std::fs::write(p, text).unwrap();
        let f = std::fs::File::options().write(true).open(p).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(age))
            .unwrap();
    }

    fn inputs(root: &Path, files: &[&Path]) -> Inputs {
        let mut i = Inputs::new(root, "settings");
        for f in files {
            i.file("src", f);
        }
        i
    }

    #[test]
    fn content_decides_and_metadata_is_only_the_fast_path() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("A.java");
        aged(&a, "class A {}", 3600);
        let first = inputs(d.path(), &[&a]).fingerprint(&[], &[], NO_DIGEST);
        assert_eq!(
            first.seen().len(),
            1,
            "an old file is vouched for by its metadata"
        );
        // The same content with another modification time: the same fingerprint.
        aged(&a, "class A {}", 60);
        let touched = inputs(d.path(), &[&a]).fingerprint(&first.seen(), &[], NO_DIGEST);
        assert_eq!(touched.as_last_run_keyed(), first.as_last_run_keyed());
        // Other content: another fingerprint.
        aged(&a, "class B {}", 60);
        let edited = inputs(d.path(), &[&a]).fingerprint(&touched.seen(), &[], NO_DIGEST);
        assert_ne!(edited.as_last_run_keyed(), first.as_last_run_keyed());
        // Settings and buffers are part of it too.
        let mut other = Inputs::new(d.path(), "other settings");
        other.file("src", &a);
        assert_ne!(
            other.fingerprint(&[], &[], NO_DIGEST).as_last_run_keyed(),
            edited.as_last_run_keyed()
        );
        // An editor's buffer counts by its text: the file's own text is the same input (so a
        // saved buffer reuses the result), other text is not.
        let buffer = |text: &str| {
            let mut b = inputs(d.path(), &[]);
            b.text("src", &a, text);
            b.fingerprint(&[], &[], NO_DIGEST).as_last_run_keyed()
        };
        assert_eq!(buffer("class B {}"), edited.as_last_run_keyed());
        assert_ne!(buffer("class C {}"), edited.as_last_run_keyed());
    }

    #[test]
    fn a_file_just_written_is_not_vouched_for() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("A.java");
        std::fs::write(&a, "class A {}").unwrap();
        let fp = inputs(d.path(), &[&a]).fingerprint(&[], &[], NO_DIGEST);
        assert!(fp.seen().is_empty(), "modified within {RACY_NANOS} ns");
        // So a later edit in the same clock tick is still seen: the file is hashed again.
        std::fs::write(&a, "class B {}").unwrap();
        assert_ne!(
            inputs(d.path(), &[&a])
                .fingerprint(&fp.seen(), &[], NO_DIGEST)
                .as_last_run_keyed(),
            fp.as_last_run_keyed()
        );
    }

    #[test]
    fn an_entry_is_read_back_only_for_its_own_fingerprint() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("A.java");
        aged(&a, "class A {}", 3600);
        let cache = Cache::new(d.path().join(DIR_NAME));
        let report = Report {
            checked_paths: vec![a.clone()],
            files_checked: 1,
            ..Report::default()
        };
        let Err(miss) = cache.load("slot", &inputs(d.path(), &[&a]), &[], Vec::new(), NO_DIGEST)
        else {
            panic!("an empty cache answered");
        };
        cache.store("slot", miss, &report);
        let (back, checked) = cache
            .load("slot", &inputs(d.path(), &[&a]), &[], Vec::new(), NO_DIGEST)
            .ok()
            .expect("a stored entry is read back");
        assert_eq!(checked, vec![a.clone()]);
        assert_eq!(back.files_checked, 1);
        // Another slot, or other inputs, miss.
        assert!(
            cache
                .load(
                    "other",
                    &inputs(d.path(), &[&a]),
                    &[],
                    Vec::new(),
                    NO_DIGEST
                )
                .is_err()
        );
        aged(&a, "class Changed {}", 3600);
        assert!(
            cache
                .load("slot", &inputs(d.path(), &[&a]), &[], Vec::new(), NO_DIGEST)
                .is_err()
        );
    }

    #[test]
    fn a_file_edited_while_the_run_reads_it_is_not_remembered_under_its_old_hash() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("A.java");
        aged(&a, "class A {}", 3600);
        let cache = Cache::new(d.path().join(DIR_NAME));
        let load = || cache.load("slot", &inputs(d.path(), &[&a]), &[], Vec::new(), NO_DIGEST);
        let report = Report {
            checked_paths: vec![a.clone()],
            files_checked: 1,
            ..Report::default()
        };
        // The lookup hashed A; A is edited before the run reads it, so the run's result is
        // the edited text's.
        let Err(miss) = load() else {
            panic!("an empty cache answered");
        };
        aged(&a, "class Edited {}", 60);
        cache.store("slot", miss, &report);
        // A back as the lookup hashed it: that result must not answer for this text.
        aged(&a, "class A {}", 30);
        assert!(
            load().is_err(),
            "a result stored under a hash it was not made from"
        );
        // A run during which nothing changed is remembered.
        let Err(miss) = load() else {
            panic!("nothing was stored, yet the cache answered");
        };
        cache.store("slot", miss, &report);
        assert!(load().is_ok());
    }

    #[test]
    fn a_file_edited_within_its_clock_tick_is_caught_by_its_content() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("A.java");
        // Just written: its metadata vouches for nothing.
        std::fs::write(&a, "class A {}").unwrap();
        let when = std::fs::metadata(&a).unwrap().modified().unwrap();
        let same_tick = |text: &str| {
            std::fs::write(&a, text).unwrap();
            let f = std::fs::File::options().write(true).open(&a).unwrap();
            f.set_modified(when).unwrap();
        };
        let cache = Cache::new(d.path().join(DIR_NAME));
        let load = || cache.load("slot", &inputs(d.path(), &[&a]), &[], Vec::new(), NO_DIGEST);
        let report = Report {
            checked_paths: vec![a.clone()],
            ..Report::default()
        };
        let Err(miss) = load() else {
            panic!("an empty cache answered");
        };
        // The same size and modification time, other content.
        same_tick("class B {}");
        cache.store("slot", miss, &report);
        same_tick("class A {}");
        assert!(
            load().is_err(),
            "a result stored under a hash it was not made from"
        );
    }

    #[test]
    fn a_file_the_run_knew_only_by_its_outline_counts_by_it() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("A.java"), d.path().join("B.java"));
        aged(&a, "class A { void run() { pay(); } }", 3600);
        aged(&b, "class B { int n() { return 1; } }", 3600);
        let outlines = AtomicUsize::new(0);
        let digest_of = |p: &Path, bytes: &[u8]| {
            outlines.fetch_add(1, Ordering::Relaxed);
            let lang = crate::facts::Lang::from_path(p)?;
            Some(crate::project::outline_digest(
                lang,
                std::str::from_utf8(bytes).ok()?,
            ))
        };
        let cache = Cache::new(d.path().join(DIR_NAME));
        let load = || {
            cache.load(
                "slot",
                &inputs(d.path(), &[&a, &b]),
                &[],
                Vec::new(),
                &digest_of,
            )
        };
        // The run opened A (a finding points into it) and knew B by its outline only.
        let report = Report {
            checked_paths: vec![a.clone(), b.clone()],
            files_checked: 2,
            outline_only: vec![(
                b.clone(),
                digest_of(&b, b"class B { int n() { return 1; } }").unwrap(),
            )],
            ..Report::default()
        };
        let Err(miss) = load() else {
            panic!("an empty cache answered");
        };
        cache.store("slot", miss, &report);
        assert!(load().is_ok());
        // B edited, its outline the same (a comment, another number): the result stands. B
        // is outlined once to know it, and its new content is remembered.
        aged(&b, "class B { int n() { return 2; } } // two", 60);
        outlines.store(0, Ordering::Relaxed);
        assert!(load().is_ok(), "an edit that leaves B's outline as it was");
        assert_eq!(outlines.load(Ordering::Relaxed), 1);
        assert!(load().is_ok());
        assert_eq!(
            outlines.load(Ordering::Relaxed),
            1,
            "the entry was brought up to date"
        );
        // An editor's buffer of B with the same outline: the same.
        let mut buffer = inputs(d.path(), &[&a]);
        buffer.text("src", &b, "class B { int n() { return 3; } }");
        assert!(
            cache
                .load("slot", &buffer, &[], Vec::new(), &digest_of)
                .is_ok()
        );
        // B's outline changed (a method added): analysed again.
        aged(&b, "class B { int n() { return 2; } void pay() {} }", 60);
        assert!(load().is_err());
        // A, which the run opened, counts by its content: a comment is a change.
        aged(&b, "class B { int n() { return 2; } } // two", 60);
        assert!(load().is_ok());
        aged(&a, "class A { void run() { pay(); } } // now", 60);
        assert!(load().is_err());
    }
}
