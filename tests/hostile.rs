//! Hostile input: each case sits next to a good file with a known finding. No case may crash,
//! hang, or hide the good file's finding; bad files are reported (exit 2 for files that cannot
//! be read or decoded), everything else is a notice.

mod common;

use common::{idemlint, stderr, stdout, write};
use std::path::Path;
use std::process::Output;

const GOOD: &str = r#"package a;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.Response;
public class Good implements Interceptor {
    public Response intercept(Chain chain) throws java.io.IOException {
        String key = UUID.randomUUID().toString();
        return chain.proceed(chain.request().newBuilder().header("Idempotency-Key", key).build());
    }
}
"#;

const DEPTH: usize = 200_000;

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

/// Lints `dir` (with the good file in it) and checks the good finding is there and the run
/// ended normally (exit 1 = findings, 2 = findings plus files it could not read).
fn check(dir: &Path, want_exit: i32) -> serde_json::Value {
    write(dir, "Good.java", GOOD);
    let o = idemlint(dir, &["check", "--select", "ALL", "--format", "json"]);
    assert_eq!(o.status.code(), Some(want_exit), "{}", stderr(&o));
    let v = json(&o);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "Good.java" && f["start"]["line"] == 7 && f["code"] == "IDEM001"),
        "good finding missing: {}",
        stdout(&o)
    );
    v
}

fn notices(v: &serde_json::Value) -> Vec<String> {
    v["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            format!(
                "{}: {}",
                n["path"].as_str().unwrap(),
                n["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn deep_parentheses_calls_lambdas_and_blocks() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    write(
        p,
        "Parens.java",
        &format!(
            "class A {{ int x = {}1{}; }}\n",
            "(".repeat(DEPTH),
            ")".repeat(DEPTH)
        ),
    );
    write(
        p,
        "Calls.java",
        &format!(
            "class B {{ void f() {{ {}1{}; }} }}\n",
            "g(".repeat(DEPTH),
            ")".repeat(DEPTH)
        ),
    );
    write(
        p,
        "Lambdas.kt",
        &format!("val f = {}1{}\n", "{ ".repeat(DEPTH), " }".repeat(DEPTH)),
    );
    write(
        p,
        "blocks.rs",
        &format!("fn f() {}1{}\n", "{ ".repeat(DEPTH), " }".repeat(DEPTH)),
    );
    write(
        p,
        "closures.rs",
        &format!("fn f() {{ let c = {}1; }}\n", "|| ".repeat(DEPTH)),
    );
    let v = check(p, 1);
    let n = notices(&v);
    for f in ["Calls.java", "Lambdas.kt", "blocks.rs"] {
        assert!(
            n.iter()
                .any(|m| m.starts_with(f) && m.contains("nesting deeper than")),
            "{f}: {n:?}"
        );
    }
}

#[test]
fn binary_invalid_utf8_and_empty_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut bin: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    bin.push(0);
    std::fs::write(p.join("Binary.java"), bin).unwrap();
    std::fs::write(p.join("Latin1.kt"), b"fun f() { val s = \"caf\xe9\" }\n").unwrap();
    std::fs::write(p.join("empty.rs"), b"").unwrap();
    std::fs::write(p.join("Empty.java"), b"").unwrap();
    let v = check(p, 2);
    let errors: Vec<String> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("binary file")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("not valid UTF-8")),
        "{errors:?}"
    );
    assert_eq!(errors.len(), 2, "empty files are fine: {errors:?}");
}

/// A NUL byte inside a string literal (a parser test's input written raw, as in ktor's
/// SSESessionParserTest.kt) does not make a source file binary: it is analysed and parsed
/// cleanly, and its finding reported. A file of mostly control bytes is still binary.
#[test]
fn a_nul_in_a_string_literal_is_text() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let with_nul = "package a\n\
        import java.util.UUID\n\
        import okhttp3.Interceptor\n\
        import okhttp3.Response\n\
        val frame = \"\"\"\n    data: a\0\n    id: 1\x002\n\"\"\"\n\
        class Nul : Interceptor {\n\
        \x20   override fun intercept(chain: Interceptor.Chain): Response {\n\
        \x20       val key = UUID.randomUUID().toString()\n\
        \x20       return chain.proceed(chain.request().newBuilder().header(\"Idempotency-Key\", key).build())\n\
        \x20   }\n\
        }\n";
    assert_eq!(with_nul.matches('\0').count(), 2);
    write(p, "Nul.kt", with_nul);
    write(p, "Ctl.java", "\0\x01\x02\x03class A {}\n");
    let v = check(p, 2);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "Nul.kt" && f["start"]["line"] == 11),
        "{v}"
    );
    let errors = v["errors"].to_string();
    assert!(!errors.contains("Nul.kt"), "{errors}");
    assert!(!notices(&v).iter().any(|m| m.starts_with("Nul.kt")), "{v}");
    assert!(
        errors.contains("Ctl.java") && errors.contains("binary file"),
        "{errors}"
    );
}

#[test]
fn crlf_and_bom_keep_columns_right() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let crlf = format!(
        "\u{feff}{}",
        GOOD.replace("Good", "Crlf").replace('\n', "\r\n")
    );
    write(p, "Crlf.java", &crlf);
    write(p, "Good.java", GOOD);
    let o = idemlint(p, &["check", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json(&o);
    let regions: Vec<(String, u64, u64, u64)> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            let reg = &loc["region"];
            (
                loc["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                reg["startLine"].as_u64().unwrap(),
                reg["startColumn"].as_u64().unwrap(),
                reg["endColumn"].as_u64().unwrap(),
            )
        })
        .collect();
    // `UUID.randomUUID()` starts at column 22 of line 7 in both files.
    assert!(
        regions.contains(&("Crlf.java".into(), 7, 22, 39)),
        "{regions:?}"
    );
    assert!(
        regions.contains(&("Good.java".into(), 7, 22, 39)),
        "{regions:?}"
    );
    let snippet =
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["snippet"]["text"]
            .as_str()
            .unwrap();
    assert!(!snippet.contains('\r'), "{snippet:?}");
}

#[test]
fn huge_files_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    // 400k lines: over the per-file size limit, skipped with a notice.
    let mut big = String::from("class Big {\n");
    for i in 0..400_000 {
        big.push_str(&format!("    int f{i}() {{ return {i}; }}\n"));
    }
    big.push_str("}\n");
    write(p, "Big.java", &big);
    // 120k short lines: under the limit, analysed.
    let mut long = String::from("class Long {\n");
    for i in 0..120_000 {
        long.push_str(&format!("  int f{i};\n"));
    }
    long.push_str("}\n");
    write(p, "Long.java", &long);
    let v = check(p, 1);
    let n = notices(&v);
    assert!(
        n.iter()
            .any(|m| m.starts_with("Big.java") && m.contains("MiB limit")),
        "{n:?}"
    );
    assert!(!n.iter().any(|m| m.starts_with("Long.java")), "{n:?}");
}

#[test]
#[cfg(unix)]
fn symlink_loops_and_unreadable_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::create_dir_all(p.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", p.join("loop/up")).unwrap();
    std::os::unix::fs::symlink("nowhere/Missing.java", p.join("Dangling.java")).unwrap();
    write(p, "Secret.java", GOOD.replace("Good", "Secret").as_str());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        p.join("Secret.java"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    // Root reads anything: then the file is simply checked.
    let readable = std::fs::read(p.join("Secret.java")).is_ok();
    let v = check(p, if readable { 1 } else { 2 });
    if !readable {
        let errors = v["errors"].to_string();
        assert!(
            errors.contains("Secret.java") && errors.contains("permission denied"),
            "{errors}"
        );
    }
    std::fs::set_permissions(
        p.join("Secret.java"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
}

#[test]
fn grammar_gaps_are_still_analysed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let gap = GOOD.replace("Good", "Gap").replace(
        "public Response intercept(Chain chain)",
        "void log(String @Nullable ... args) {}\n    public Response intercept(Chain chain)",
    );
    write(p, "Gap.java", &gap);
    let v = check(p, 1);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "Gap.java" && f["start"]["line"] == 8),
        "{v}"
    );
    assert!(
        notices(&v)
            .iter()
            .any(|m| m.starts_with("Gap.java") && m.contains("syntax errors"))
    );
}

/// Found by fuzzing: 1.4 KB of mangled Kotlin sends the grammar's error recovery into minutes
/// and gigabytes. The parse budget stops it with a notice. (Its import after code is spelt
/// `import\tokhttp3..`: the source patch blanks `import okhttp3..` there, and the file then
/// parses in milliseconds, which would leave the budget untested.)
#[test]
fn pathological_parse_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let slow = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/slow_parse.kt"),
    )
    .unwrap();
    std::fs::write(p.join("Slow.kt"), slow).unwrap();
    let v = check(p, 1);
    assert!(
        notices(&v)
            .iter()
            .any(|m| m.starts_with("Slow.kt") && m.contains("parser gave up")),
        "{v}"
    );
}

/// A call chain thousands of functions long, and a cycle through thousands: answered without
/// recursion and without quadratic paths. Money more than 24 calls below a job is not
/// evidence against it; 10 calls below is. A cycle too large to walk from each function
/// answers calls into it with the money one of its functions moves through an SDK.
#[test]
fn long_call_chains_and_cycles_are_bounded() {
    const N: usize = 3000;
    let d = tempfile::tempdir().unwrap();
    let class = |name: &str, jobs: &str, back: bool| {
        let mut src = format!(
            "package a;\nimport com.stripe.model.Charge;\n\
             import org.springframework.scheduling.annotation.Scheduled;\n\
             public class {name} {{\n{jobs}"
        );
        for i in 0..N {
            // In the cycle, every 100th step also calls back to the start.
            let back = if back && i % 100 == 99 {
                "if (p.isEmpty()) step0(p); "
            } else {
                ""
            };
            src.push_str(&format!(
                "    void step{i}(String p) {{ {back}step{}(p); }}\n",
                i + 1
            ));
        }
        src.push_str(&format!(
            "    void step{N}(String p) {{ Charge.create(java.util.Map.of(\"amount\", 100)); }}\n}}\n"
        ));
        src
    };
    let chain_jobs = format!(
        "    @Scheduled(cron = \"0 0 2 * * *\") public void deep() {{ step0(\"x\"); }}\n\
         \x20   @Scheduled(cron = \"0 0 3 * * *\") public void shallow() {{ step{}(\"x\"); }}\n",
        N - 10
    );
    let cycle_jobs =
        "    @Scheduled(cron = \"0 0 4 * * *\") public void sweep() { step0(\"x\"); }\n";
    write(d.path(), "Chain.java", &class("Chain", &chain_jobs, false));
    write(d.path(), "Cycle.java", &class("Cycle", cycle_jobs, true));
    let v = check(d.path(), 1);
    let jobs: Vec<(String, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "IDEM004")
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        jobs,
        vec![("Chain.java".to_string(), 6), ("Cycle.java".to_string(), 5)],
        "{v}"
    );
}
