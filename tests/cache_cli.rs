//! The result cache (issue 16 item 3): `.idemlint_cache/` at the project root, reused only when
//! nothing the result depends on changed; a corrupt or foreign entry is a miss.

mod common;

use common::{code_paths as codes, fixture_repo, idemlint, source_files, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

const REFUND: &str = "src/main/java/com/acme/pay/refunds/RefundService.java";

/// The trial's Java service in a fresh repository, its files dated an hour back (so that their
/// modification times vouch for their content, as in a checkout some time ago).
fn repo() -> tempfile::TempDir {
    let d = fixture_repo("fixtures/context/java-service");
    for f in source_files(d.path()) {
        age(&f);
    }
    d
}

fn age(p: &Path) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "json"));
    v.sort();
    v
}

#[test]
fn a_warm_run_reads_the_result_and_says_the_same() {
    let d = repo();
    let cache = d.path().join(".idemlint_cache");
    let cold = idemlint(d.path(), &["check"]);
    assert_eq!(cold.status.code(), Some(1), "{}", stderr(&cold));
    let made = entries(&cache);
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(
        std::fs::read_to_string(cache.join(".gitignore")).unwrap(),
        "# Created by idemlint\n*\n"
    );
    let stamp = std::fs::metadata(&made[0]).unwrap().modified().unwrap();
    let warm = idemlint(d.path(), &["check"]);
    assert_eq!(stdout(&warm), stdout(&cold));
    assert_eq!(warm.status.code(), Some(1));
    // Read, not rewritten.
    assert_eq!(
        std::fs::metadata(&made[0]).unwrap().modified().unwrap(),
        stamp
    );
    // Every format, and one file alone, from the same entry.
    for args in [
        &["check", "--format", "sarif"][..],
        &["check", "--format", "json", REFUND],
    ] {
        let fresh = idemlint(d.path(), &[args, &["--no-cache"]].concat());
        assert_eq!(
            stdout(&idemlint(d.path(), args)),
            stdout(&fresh),
            "{args:?}"
        );
    }
    assert_eq!(entries(&cache), made);
}

#[test]
fn a_changed_file_is_analysed_again() {
    let d = repo();
    let before = codes(&idemlint(d.path(), &["check", "--format", "json"]));
    assert!(
        before.iter().any(|c| c.starts_with("IDEM002")),
        "{before:?}"
    );
    // Fix the bug: the key comes from the charge, made once.
    let p = d.path().join(REFUND);
    let text = std::fs::read_to_string(&p).unwrap().replace(
        "String key = UUID.randomUUID().toString(); // expect: IDEM002",
        "String key = \"refund-\" + chargeId;",
    );
    std::fs::write(&p, text).unwrap();
    let after = codes(&idemlint(d.path(), &["check", "--format", "json"]));
    assert!(!after.iter().any(|c| c.starts_with("IDEM002")), "{after:?}");
    // Only the modification time changed (a checkout, `touch`): the content decides, and the
    // result is reused.
    age(&p);
    let cache = d.path().join(".idemlint_cache");
    assert_eq!(
        codes(&idemlint(d.path(), &["check", "--format", "json"])),
        after
    );
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    assert_eq!(
        codes(&idemlint(d.path(), &["check", "--format", "json"])),
        after
    );
    // Options that change findings are part of the key: another rule selection is another
    // entry.
    let fewer = codes(&idemlint(
        d.path(),
        &["check", "--format", "json", "--ignore", "IDEM004"],
    ));
    assert!(fewer.is_empty(), "{fewer:?}");
    assert_eq!(entries(&cache).len(), 2);
    assert_eq!(
        codes(&idemlint(d.path(), &["check", "--format", "json"])),
        after
    );
}

#[test]
fn a_corrupt_or_foreign_entry_is_a_miss() {
    let d = repo();
    let want = stdout(&idemlint(d.path(), &["check", "--format", "json"]));
    let cache = d.path().join(".idemlint_cache");
    let entry = entries(&cache).pop().unwrap();
    for junk in [
        &b"{not json"[..],
        b"",
        b"\x00\xff\x00binary",
        br#"{"fingerprint":"00","seen":[],"checked":[],"findings":[],"suppressed":[],"errors":[],"notices":[],"suppression_warnings":[]}"#,
    ] {
        std::fs::write(&entry, junk).unwrap();
        let o = idemlint(d.path(), &["check", "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(stdout(&o), want);
        assert!(stderr(&o).is_empty(), "{}", stderr(&o));
        // Rewritten as a good entry.
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
        assert!(v["fingerprint"].as_str().unwrap().len() == 32);
    }
    // A cache directory that cannot be written is not an error either.
    std::fs::remove_dir_all(&cache).unwrap();
    std::fs::write(&cache, "a file where the directory would be").unwrap();
    let o = idemlint(d.path(), &["check", "--format", "json"]);
    assert_eq!(stdout(&o), want);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn no_cache_and_other_cache_directories() {
    let d = repo();
    idemlint(d.path(), &["check", "--no-cache"]);
    assert!(!d.path().join(".idemlint_cache").exists());
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().join("by-flag");
    idemlint(d.path(), &["check", "--cache-dir", dir.to_str().unwrap()]);
    assert_eq!(entries(&dir).len(), 1);
    let by_env = elsewhere.path().join("by-env");
    let o = Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .arg("check")
        .current_dir(d.path())
        .env("IDEMLINT_CACHE_DIR", &by_env)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(entries(&by_env).len(), 1);
    // --no-cache wins over the environment.
    let unused = elsewhere.path().join("unused");
    Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .args(["check", "--no-cache"])
        .current_dir(d.path())
        .env("IDEMLINT_CACHE_DIR", &unused)
        .output()
        .unwrap();
    assert!(!unused.exists());
    assert!(!d.path().join(".idemlint_cache").exists());
}

#[test]
fn concurrent_runs_agree_and_leave_one_good_entry() {
    let d = repo();
    let want = stdout(&idemlint(
        d.path(),
        &["check", "--format", "json", "--no-cache"],
    ));
    let children: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_idemlint"))
                .args(["check", "--format", "json"])
                .current_dir(d.path())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(stdout(&o), want);
    }
    let cache = d.path().join(".idemlint_cache");
    let left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".gitignore")
        .collect();
    assert_eq!(left.len(), 1, "temporary files left behind: {left:?}");
    assert_eq!(
        stdout(&idemlint(d.path(), &["check", "--format", "json"])),
        want
    );
}

/// Did the run analyse (rather than read its result from the cache)? A run that analyses says
/// how long reading the files took when asked for its timings.
fn analysed(o: &std::process::Output) -> bool {
    stderr(o).contains("files read and parsed in")
}

fn timed(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .args(["check", "--format", "json"])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("IDEMLINT_TIMINGS", "1")
        .output()
        .unwrap()
}

/// Sets a file's text, dated a minute back (not so recent that its date cannot vouch for it).
fn edit(p: &Path, text: impl AsRef<[u8]>) {
    std::fs::write(p, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
}

#[test]
fn an_edit_that_leaves_an_unopened_file_as_outlined_reuses_the_result() {
    let d = fixture_repo("fixtures/java/lock_helper_jdbc");
    // A file the lock rule has no cause to open: the run learns only its outline.
    let cents = d.path().join("Cents.java");
    let text = "package com.example.exports;\n\nfinal class Cents {\n    static String show(long c) {\n        return c / 100 + \".\" + c % 100;\n    }\n}\n";
    std::fs::write(&cents, text).unwrap();
    // A file it opens (it takes a lock) and finds nothing in.
    let stable = d.path().join("Stable.java");
    let stable_text = "package com.example.exports;\n\nimport java.sql.Connection;\n\nclass Stable {\n    private final ExportLocks locks;\n\n    Stable(ExportLocks locks) {\n        this.locks = locks;\n    }\n\n    void run(Connection conn) throws Exception {\n        locks.tryAdvisoryLock(conn, \"settlement-export\".hashCode());\n    }\n}\n";
    std::fs::write(&stable, stable_text).unwrap();
    for f in source_files(d.path()) {
        age(&f);
    }
    let only = ["--select", "IDEM006"];
    let cold = timed(d.path(), &only);
    assert!(analysed(&cold));
    assert!(
        stderr(&cold).contains("2 of 3 files parsed"),
        "{}",
        stderr(&cold)
    );
    let before = codes(&cold);
    assert_eq!(before.len(), 2, "{before:?}");
    // A comment and another number: the same outline, so the result is read, not made.
    edit(
        &cents,
        text.replace("c % 100;", "c % 100; // two digits")
            .replace("/ 100", "/ 100L"),
    );
    let warm = timed(d.path(), &only);
    assert!(!analysed(&warm), "{}", stderr(&warm));
    assert_eq!(stdout(&warm), stdout(&cold));
    // A method added changes the outline: analysed again, with the same findings.
    let more = text.replace(
        "    static String show",
        "    static long of(long c) { return c; }\n    static String show",
    );
    edit(&cents, &more);
    let changed = timed(d.path(), &only);
    assert!(analysed(&changed));
    assert_eq!(codes(&changed), before);
    // A file the run opened counts by its content, findings or not: a comment is a change.
    edit(&stable, format!("{stable_text}// reviewed\n"));
    assert!(analysed(&timed(d.path(), &only)));
    // So does the file with the findings (its lines moved: the findings say so).
    let locks = d.path().join("ExportLocks.java");
    let t = std::fs::read_to_string(&locks).unwrap();
    edit(&locks, format!("// reviewed\n{t}"));
    let commented = timed(d.path(), &only);
    assert!(analysed(&commented));
    assert_eq!(codes(&commented), before);
    assert_ne!(
        stdout(&commented),
        stdout(&cold),
        "the findings moved a line down"
    );
}

/// An unopened file that no longer reads as source (invalid UTF-8) is not taken for its old
/// outline: the run analyses again and reports it as a tool error.
#[test]
fn an_unopened_file_that_stops_decoding_is_analysed_again_and_reported() {
    let d = fixture_repo("fixtures/java/lock_helper_jdbc");
    let cents = d.path().join("Cents.java");
    std::fs::write(&cents, "final class Cents {\n    static long c = 1;\n}\n").unwrap();
    for f in source_files(d.path()) {
        age(&f);
    }
    let only = ["--select", "IDEM006"];
    let cold = timed(d.path(), &only);
    assert_eq!(cold.status.code(), Some(1), "{}", stderr(&cold));
    // The same outline, with a byte that is not UTF-8 in a comment.
    edit(
        &cents,
        b"final class Cents {\n    static long c = 1; // \xff\n}\n",
    );
    let broken = timed(d.path(), &only);
    assert!(analysed(&broken), "{}", stderr(&broken));
    assert_eq!(broken.status.code(), Some(2), "{}", stderr(&broken));
    assert!(
        stdout(&broken).contains("not valid UTF-8"),
        "{}",
        stdout(&broken)
    );
    assert_eq!(
        codes(&broken),
        codes(&cold),
        "the other file's findings stay"
    );
}
