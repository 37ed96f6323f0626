//! End-to-end tests of the `idemlint` binary: exit codes, formats, file selection.

mod common;

use common::{idemlint, stderr, stdout, write};

const BAD_JAVA: &str = r#"package com.acme.billing;

import java.io.IOException;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.Response;

public class KeyInterceptor implements Interceptor {
    @Override
    public Response intercept(Chain chain) throws IOException {
        String key = UUID.randomUUID().toString();
        return chain.proceed(chain.request().newBuilder()
                .header("Idempotency-Key", key)
                .build());
    }
}
"#;

const GOOD_KOTLIN: &str = r#"package com.acme.billing

import okhttp3.Interceptor
import okhttp3.Response
import java.util.UUID

class TracingInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val requestId = UUID.randomUUID().toString()
        return chain.proceed(chain.request().newBuilder().header("X-Request-Id", requestId).build())
    }
}
"#;

/// A key minted once per call in a plain service method: IDEM008 only.
const ONCE_PER_CALL_RUST: &str = r#"use uuid::Uuid;

pub async fn charge(client: &reqwest::Client, customer: &str) -> reqwest::Result<reqwest::Response> {
    client
        .post("https://api.stripe.com/v1/charges")
        .header("Idempotency-Key", Uuid::new_v4().to_string())
        .form(&[("customer", customer)])
        .send()
        .await
}
"#;

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "src/main/java/com/acme/billing/KeyInterceptor.java",
        BAD_JAVA,
    );
    write(
        d.path(),
        "src/main/kotlin/com/acme/billing/TracingInterceptor.kt",
        GOOD_KOTLIN,
    );
    write(d.path(), "charges/src/lib.rs", ONCE_PER_CALL_RUST);
    d
}

#[test]
fn findings_exit_1_and_human_output_names_the_problem() {
    let d = project();
    let o = idemlint(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("IDEM001"), "{out}");
    assert!(out.contains("UUID.randomUUID()"), "{out}");
    assert!(
        out.contains("src/main/java/com/acme/billing/KeyInterceptor.java:11:22"),
        "{out}"
    );
    assert!(out.contains("OkHttp application interceptor"), "{out}");
    assert!(
        out.contains("Found 1 finding (IDEM001: 1) in 3 files checked."),
        "{out}"
    );
    // The tracing interceptor's request id is not a key; IDEM008 is off by default.
    assert!(!out.contains("TracingInterceptor.kt"), "{out}");
    assert!(!out.contains("IDEM008"), "{out}");
}

#[test]
fn no_command_means_check_current_directory() {
    let d = project();
    let o = idemlint(d.path(), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("KeyInterceptor.java"));
}

#[test]
fn clean_code_exits_0() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "Tracing.kt", GOOD_KOTLIN);
    let o = idemlint(d.path(), &["check", "."]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("No findings in 1 file checked."));
}

#[test]
fn exit_zero_and_selection() {
    let d = project();
    assert_eq!(
        idemlint(d.path(), &["check", "--exit-zero"]).status.code(),
        Some(0)
    );
    assert_eq!(
        idemlint(d.path(), &["check", "--ignore", "IDEM001"])
            .status
            .code(),
        Some(0)
    );
    let o = idemlint(
        d.path(),
        &["check", "--extend-select", "IDEM008", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        vec!["IDEM008", "IDEM001"],
        "sorted by path: charges/ before src/"
    );
    let o = idemlint(
        d.path(),
        &[
            "check", "--select", "ALL", "--ignore", "IDEM001", "--format", "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    assert_eq!(v["findings"][0]["code"], "IDEM008");
}

#[test]
fn unknown_rule_is_a_usage_error() {
    let d = project();
    let o = idemlint(d.path(), &["check", "--select", "IDEM999"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown rule `IDEM999` (known rules: IDEM001,"),
        "{}",
        stderr(&o)
    );
    // A near miss names the rule meant.
    let o = idemlint(d.path(), &["check", "--select", "IDEM0004"]);
    assert!(
        stderr(&o).contains("unknown rule `IDEM0004`; did you mean `IDEM004`?"),
        "{}",
        stderr(&o)
    );
    let o = idemlint(d.path(), &["rule", "key-generated-in-retry"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("did you mean `key-generated-in-retry-scope`?"),
        "{}",
        stderr(&o)
    );
    let o = idemlint(d.path(), &["check", "--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn unreadable_input_exits_2_but_other_findings_are_reported() {
    let d = project();
    std::fs::write(
        d.path().join("Broken.java"),
        b"class A { String s = \"\xff\xfe\"; }",
    )
    .unwrap();
    std::fs::write(d.path().join("Binary.kt"), b"\x00\x01\x02ELF").unwrap();
    let o = idemlint(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["findings"].as_array().unwrap().len(),
        1,
        "the good file's finding is kept"
    );
    let errs = stderr(&o);
    assert!(
        errs.contains("Broken.java: cannot decode: not valid UTF-8"),
        "{errs}"
    );
    assert!(
        errs.contains("Binary.kt: cannot decode: binary file"),
        "{errs}"
    );
    let o = idemlint(d.path(), &["check", "does/not/exist"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does/not/exist: no such file or directory"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn syntax_errors_are_noted_and_the_file_is_still_analysed() {
    let d = tempfile::tempdir().unwrap();
    let broken = BAD_JAVA.replace(
        "public class KeyInterceptor",
        "public class KeyInterceptor extends {{ ;",
    );
    write(
        d.path(),
        "KeyInterceptor.java",
        &format!("{broken}\nclass Tail {{ void f( }}\n"),
    );
    let o = idemlint(d.path(), &["check"]);
    assert!(stderr(&o).contains("syntax errors"), "{}", stderr(&o));
    assert_ne!(o.status.code(), Some(101), "no panic");
}

#[test]
fn json_output_is_complete() {
    let d = project();
    let o = idemlint(d.path(), &["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["code"], "IDEM001");
    assert_eq!(f["name"], "key-generated-in-interceptor");
    assert_eq!(
        f["path"],
        "src/main/java/com/acme/billing/KeyInterceptor.java"
    );
    assert_eq!(f["start"]["line"], 11);
    assert_eq!(f["start"]["column"], 22);
    assert_eq!(f["snippet"], "UUID.randomUUID()");
    assert_eq!(f["symbol"], "KeyInterceptor.intercept");
    assert!(
        f["labels"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`KeyInterceptor` is an OkHttp application interceptor")
    );
    assert_eq!(v["summary"]["files_checked"], 3);
}

#[test]
fn github_annotations() {
    let d = project();
    let o = idemlint(d.path(), &["check", "--format", "github"]);
    let out = stdout(&o);
    let line = out.lines().next().unwrap();
    assert!(
        line.starts_with("::error file=src/main/java/com/acme/billing/KeyInterceptor.java,line=11,col=22,endLine=11,endColumn=39,title=IDEM001::"),
        "{line}"
    );
    assert_eq!(out.lines().count(), 1);
}

#[test]
fn sarif_and_annotation_paths_are_relative_to_the_repository_root_wherever_run_from() {
    let d = project();
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let sub = d.path().join("src/main");
    let sarif = |dir: &std::path::Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["check", "--format", "sarif"];
        args.extend_from_slice(extra);
        let o = idemlint(dir, &args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(!text.contains("file:"), "an absolute URI: {text}");
        serde_json::from_str(&text).unwrap()
    };
    let location = |v: &serde_json::Value| {
        v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"].clone()
    };
    let from_sub = sarif(&sub, &["java"]);
    let from_root = sarif(d.path(), &["src/main/java"]);
    assert_eq!(
        location(&from_sub)["uri"],
        "src/main/java/com/acme/billing/KeyInterceptor.java"
    );
    assert_eq!(location(&from_sub)["uriBaseId"], "%SRCROOT%");
    assert_eq!(location(&from_sub), location(&from_root));
    // Code scanning matches results across runs by their fingerprints: the same from anywhere.
    let prints = |v: &serde_json::Value| v["runs"][0]["results"][0]["partialFingerprints"].clone();
    assert_eq!(prints(&from_sub), prints(&from_root));
    let o = idemlint(&sub, &["check", "java", "--format", "github"]);
    assert!(
        stdout(&o).starts_with("::error file=src/main/java/com/acme/billing/KeyInterceptor.java,"),
        "{}",
        stdout(&o)
    );
    // --sarif-root says where the paths start.
    let here = sarif(&sub, &["java", "--sarif-root", "."]);
    assert_eq!(
        location(&here)["uri"],
        "java/com/acme/billing/KeyInterceptor.java"
    );
}

#[test]
fn output_file() {
    let d = project();
    let o = idemlint(
        d.path(),
        &["check", "--format", "sarif", "--output", "out.sarif"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out.sarif")).unwrap())
            .unwrap();
    assert_eq!(v["version"], "2.1.0");
    // A report directory that does not exist yet is made.
    let o = idemlint(
        d.path(),
        &[
            "check",
            "--format",
            "sarif",
            "--output",
            "build/reports/idemlint/out.sarif",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(d.path().join("build/reports/idemlint/out.sarif").is_file());
}

#[test]
fn tests_are_skipped_unless_asked_and_gitignore_is_respected() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "src/test/java/KeyInterceptorTest.java", BAD_JAVA);
    write(d.path(), "generated/KeyInterceptor.java", BAD_JAVA);
    write(d.path(), "build/KeyInterceptor.java", BAD_JAVA);
    write(d.path(), ".hidden/KeyInterceptor.java", BAD_JAVA);
    write(d.path(), ".gitignore", "generated/\n");
    let o = idemlint(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = idemlint(d.path(), &["check", "--include-tests", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["src/test/java/KeyInterceptorTest.java"]);
    // A file named on the command line is always checked.
    let o = idemlint(d.path(), &["check", "generated/KeyInterceptor.java"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn the_same_file_named_twice_is_checked_once() {
    let d = project();
    let rel = "src/main/java/com/acme/billing/KeyInterceptor.java";
    let o = idemlint(
        d.path(),
        &["check", "--format", "json", rel, &format!("./{rel}")],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    assert_eq!(v["summary"]["files_checked"], 1);
}

#[test]
fn output_is_deterministic_across_threads_and_runs() {
    let d = project();
    for i in 0..6 {
        write(
            d.path(),
            &format!("svc{i}/KeyInterceptor{i}.java"),
            &BAD_JAVA.replace("KeyInterceptor", &format!("KeyInterceptor{i}")),
        );
    }
    let one = stdout(&idemlint(
        d.path(),
        &[
            "check",
            "--select",
            "ALL",
            "--format",
            "sarif",
            "--threads",
            "1",
        ],
    ));
    let many = stdout(&idemlint(
        d.path(),
        &[
            "check",
            "--select",
            "ALL",
            "--format",
            "sarif",
            "--threads",
            "4",
        ],
    ));
    let again = stdout(&idemlint(
        d.path(),
        &["check", "--select", "ALL", "--format", "sarif"],
    ));
    assert_eq!(one, many);
    assert_eq!(one, again);
    assert!(one.matches("\"ruleId\"").count() >= 8);
}

/// IDEM004 and IDEM005 reuse each other's answers about what a function reaches, and IDEM005
/// looks at the project's files in parallel pieces that reuse each other's answers too: on a
/// project large enough to be split, with call cycles across many files, the findings are the
/// same on 1 and 4 threads, run after run, and the same as each rule's alone.
#[test]
fn shared_reach_answers_do_not_depend_on_threads() {
    let d = tempfile::tempdir().unwrap();
    // A fixed pseudo-random call graph: 700 classes of three methods, each calling up to
    // three methods of other classes (so most of them are in call cycles); some check
    // "already done?" first, some charge, some take a lock, some mark done, some are jobs.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let n = 700;
    for i in 0..n {
        let mut src = format!(
            "package p;\n\nimport org.springframework.scheduling.annotation.Scheduled;\n\npublic class C{i} {{\n    private Repo repo;\n    private Stripe stripe;\n"
        );
        for k in 0..3 {
            if next(20) == 0 {
                src.push_str("    @Scheduled(fixedRate = 60000)\n");
            }
            src.push_str(&format!(
                "    public static void step{i}x{k}(String id) {{\n"
            ));
            if next(10) < 3 {
                src.push_str("        if (repo.isDone(id)) {\n            return;\n        }\n");
            }
            for _ in 0..next(4) {
                let (c, m) = (next(n), next(3));
                src.push_str(&format!("        C{c}.step{c}x{m}(id);\n"));
            }
            match next(40) {
                0 | 1 => src.push_str("        stripe.charges().create(params(id));\n"),
                2 | 3 => src.push_str("        chargeCustomer(id);\n"),
                4 => src.push_str("        lock.tryLock();\n"),
                _ => {}
            }
            if next(10) < 3 {
                src.push_str("        repo.markDone(id);\n");
            }
            src.push_str("    }\n");
        }
        src.push_str("}\n");
        write(d.path(), &format!("src/p/C{i}.java"), &src);
    }
    let run = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json", "--exit-zero"];
        all.extend_from_slice(args);
        stdout(&idemlint(d.path(), &all))
    };
    let one = run(&["--select", "ALL", "--threads", "1"]);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    let codes: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    let count = |c: &str| codes.iter().filter(|x| **x == c).count();
    assert!(
        count("IDEM004") >= 20 && count("IDEM005") >= 20,
        "IDEM004 {}, IDEM005 {}",
        count("IDEM004"),
        count("IDEM005")
    );
    for _ in 0..3 {
        assert_eq!(one, run(&["--select", "ALL", "--threads", "4"]));
    }
    let only = |code: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&run(&["--select", code])).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fingerprint"].to_string())
            .collect()
    };
    for code in ["IDEM004", "IDEM005"] {
        let within: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == code)
            .map(|f| f["fingerprint"].to_string())
            .collect();
        assert_eq!(only(code), within, "{code} alone vs with every rule");
    }
}

/// A rule's findings do not depend on which other rules run beside it: the project-wide rules
/// share memoised walks, and a call cycle (fixtures/java/reach_cycles) entered at different
/// functions by different rules once gave IDEM005 a different answer with IDEM004 on.
#[test]
fn findings_do_not_depend_on_which_rules_run() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let codes_in = |args: &[&str]| -> Vec<(String, String, u64)> {
        let mut all = vec![
            "check",
            "--format",
            "json",
            "--include-tests",
            "--exit-zero",
        ];
        all.extend_from_slice(args);
        let v: serde_json::Value = serde_json::from_str(&stdout(&idemlint(&root, &all))).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["path"].as_str().unwrap().to_string(),
                    f["start"]["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let everything = codes_in(&["--select", "ALL"]);
    let cycle = |c: &str| {
        everything
            .iter()
            .any(|(code, path, _)| code == c && path.contains("reach_cycles"))
    };
    assert!(cycle("IDEM004") && cycle("IDEM005"), "{everything:?}");
    for code in ["IDEM004", "IDEM005", "IDEM006", "IDEM007"] {
        let alone = codes_in(&["--select", code]);
        let within: Vec<_> = everything.iter().filter(|f| f.0 == code).cloned().collect();
        assert!(!alone.is_empty(), "{code}: no findings in the fixtures");
        assert_eq!(alone, within, "{code} alone vs with every rule");
    }
}

#[test]
fn rules_and_rule_docs() {
    let d = tempfile::tempdir().unwrap();
    let o = idemlint(d.path(), &["rules"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("IDEM001  key-generated-in-interceptor"),
        "{out}"
    );
    assert!(
        out.contains("IDEM008  nondeterministic-idempotency-key"),
        "{out}"
    );
    let o = idemlint(d.path(), &["rule", "IDEM001"]);
    assert_eq!(o.status.code(), Some(0));
    let doc = stdout(&o);
    for heading in [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Fix",
    ] {
        assert!(doc.contains(heading), "{heading}");
    }
    let o = idemlint(d.path(), &["rule", "key-generated-in-interceptor"]);
    assert_eq!(stdout(&o), doc);
    let o = idemlint(d.path(), &["rule", "IDEM404"]);
    assert_eq!(o.status.code(), Some(2));
}

/// The README's first command: the bundled demo reports what `demo/README.md` says.
#[test]
fn demo_reports_what_its_readme_says() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = idemlint(root, &["check", "demo", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let got: Vec<(String, String, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let file = path.rsplit('/').next().unwrap().to_string();
            (
                f["code"].as_str().unwrap().to_string(),
                file,
                f["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, u64)> = [
        ("IDEM001", "HttpClients5Config.java", 36),
        ("IDEM001", "StripeIdempotencyInterceptor.java", 19),
        ("IDEM004", "MonthlyInvoiceJob.java", 25),
        ("IDEM005", "MonthlyInvoiceJob.java", 29),
        ("IDEM006", "MonthlyInvoiceJob.java", 47),
        ("IDEM007", "Payouts.kt", 15),
        ("IDEM002", "RefundRetries.kt", 29),
        ("IDEM001", "StripeHttp.kt", 27),
        ("IDEM001", "lib.rs", 21),
    ]
    .iter()
    .map(|(c, f, l)| (c.to_string(), f.to_string(), *l))
    .collect();
    assert_eq!(got, want);
}

/// A configured header name outside ASCII is found in every language: the gate that picks the
/// files to analyse and the catalogue's matcher normalise names the same way (both once dropped
/// `ü`, and the gate then never matched). An unconfigured name next to it stays clean.
#[test]
fn configured_non_ascii_header_names_are_reported() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "idemlint.toml",
        "[catalog]\nidempotency-headers = [\"Zahlungs-Schlüssel\"]\n",
    );
    write(
        d.path(),
        "src/main/java/shop/Pay.java",
        r#"package shop;

import java.util.UUID;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.retry.annotation.Retryable;
import org.springframework.web.client.RestTemplate;

public class Pay {
    private final RestTemplate rest = new RestTemplate();

    @Retryable
    public void charge(String order) {
        HttpHeaders h = new HttpHeaders();
        h.set("Zahlungs-Schlüssel", UUID.randomUUID().toString());
        h.set("Zahlungs-Referenz", UUID.randomUUID().toString());
        rest.postForEntity("https://api.psp.example/v1/charges", new HttpEntity<>(order, h), String.class);
    }
}
"#,
    );
    write(
        d.path(),
        "src/main/kotlin/shop/KeyInterceptor.kt",
        r#"package shop

import java.util.UUID
import okhttp3.Interceptor
import okhttp3.Response

class KeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response =
        chain.proceed(
            chain.request().newBuilder()
                .header("ZAHLUNGS-SCHLÜSSEL", UUID.randomUUID().toString())
                .header("Zahlungs-Referenz", UUID.randomUUID().toString())
                .build()
        )
}
"#,
    );
    let o = idemlint(d.path(), &["check", "--format", "github"]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(
        out.contains("file=src/main/java/shop/Pay.java,line=15,col=37")
            && out.contains("title=IDEM002"),
        "{out}"
    );
    assert!(
        out.contains("file=src/main/kotlin/shop/KeyInterceptor.kt,line=11,col=47")
            && out.contains("title=IDEM001"),
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.starts_with("::")).count(),
        2,
        "{out}"
    );
}

/// The SDK messages say what a keyless repeat does for that call: a second payment intent is
/// not a second charge until it is confirmed; a refund is simply paid twice.
#[test]
fn sdk_messages_say_what_a_repeat_does() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "src/main/java/shop/Checkout.java",
        r#"package shop;

import com.stripe.exception.StripeException;
import com.stripe.model.PaymentIntent;
import com.stripe.model.Refund;
import com.stripe.param.PaymentIntentCreateParams;
import com.stripe.param.RefundCreateParams;

public class Checkout {
    public PaymentIntent start(long amount) throws StripeException {
        return PaymentIntent.create(PaymentIntentCreateParams.builder().setAmount(amount).setCurrency("eur").setConfirm(true).build());
    }

    public Refund refund(String pi) throws StripeException {
        return Refund.create(RefundCreateParams.builder().setPaymentIntent(pi).build());
    }
}
"#,
    );
    let o = idemlint(d.path(), &["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let msgs: Vec<(u64, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["start"]["line"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].0 == 11 && msgs[0].1.contains("Stripe creates a second payment intent"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].0 == 15
            && msgs[1]
                .1
                .contains("Stripe charges, refunds or pays out twice"),
        "{msgs:?}"
    );
}

/// `--exhaustive` turns the evidence gates off: the same findings, and the cache does not
/// answer it with a gated run's result (it is part of the fingerprint).
#[test]
fn exhaustive_gives_the_same_findings_and_is_not_answered_from_the_cache() {
    let dir = common::fixture_repo("fixtures/context/java-service");
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_idemlint"))
            .current_dir(dir.path())
            .args(["check", "--select", "ALL", "--format", "json", "."])
            .args(extra)
            .env("IDEMLINT_TIMINGS", "1")
            .output()
            .unwrap()
    };
    let findings = |o: &std::process::Output| {
        let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
        v["findings"].clone()
    };
    let ran_rules = |o: &std::process::Output| stderr(o).contains("timing: project rules");
    let gated = run(&[]);
    assert!(ran_rules(&gated) && stderr(&gated).contains("money gate"));
    assert!(!findings(&gated).as_array().unwrap().is_empty());
    let exhaustive = run(&["--exhaustive"]);
    assert!(ran_rules(&exhaustive), "{}", stderr(&exhaustive));
    assert!(!stderr(&exhaustive).contains("money gate"));
    assert_eq!(findings(&gated), findings(&exhaustive));
    // Each is remembered apart.
    let again = run(&[]);
    assert!(!ran_rules(&again), "{}", stderr(&again));
    assert_eq!(findings(&again), findings(&gated));
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    // The reading end is closed before idemlint writes (as `idemlint rules | head -1` may be).
    for args in [
        &["rules"][..],
        &["rules", "--format", "json"],
        &["rule", "IDEM004"],
        &["check", "--format", "json", "--no-cache"],
    ] {
        let d = project();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_idemlint"))
            .args(args)
            .current_dir(d.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let want = if args[0] == "check" { 1 } else { 0 };
        assert_eq!(o.status.code(), Some(want), "{args:?}: {err}");
    }
}

#[test]
fn a_rule_names_its_documentation() {
    let d = project();
    let o = idemlint(d.path(), &["rule", "IDEM002"]);
    assert!(stdout(&o).trim_end().ends_with(
        "Docs: https://github.com/idemlint/idemlint/blob/main/src/rules/key_in_retry/IDEM002.md"
    ));
}

#[test]
fn nothing_checked_is_a_warning_and_an_error_is_never_no_findings() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "README.md", "no code here\n");
    write(d.path(), "src/test/java/KeyInterceptorTest.java", BAD_JAVA);
    let o = idemlint(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("warning: no Java, Kotlin or Rust source file was checked"),
        "{}",
        stderr(&o)
    );
    // A checked file: no warning.
    let o = idemlint(d.path(), &["check", "--include-tests"]);
    assert!(!stderr(&o).contains("warning: no Java"), "{}", stderr(&o));
    // A file that cannot be read: exit 2, and the summary does not say "No findings".
    std::fs::write(
        d.path().join("Broken.java"),
        b"class B { String s = \"\xff\"; }",
    )
    .unwrap();
    let o = idemlint(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(!out.contains("No findings"), "{out}");
    assert!(
        out.contains("Checked 0 files; 1 error: see above."),
        "{out}"
    );
    assert!(!stderr(&o).contains("warning: no Java"), "{}", stderr(&o));
    // With findings too, the summary says some files could not be checked.
    write(d.path(), "src/main/java/KeyInterceptor.java", BAD_JAVA);
    let out = stdout(&idemlint(d.path(), &["check"]));
    assert!(
        out.contains("Found 1 finding (IDEM001: 1) in 1 file checked; 1 error: see above."),
        "{out}"
    );
}

#[test]
fn concise_is_one_line_per_finding_then_the_summary() {
    let d = project();
    let o = idemlint(
        d.path(),
        &["check", "--format", "concise", "--select", "ALL"],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "charges/src/lib.rs:6:36: IDEM008 idempotency key made from `Uuid::new_v4()`: it protects \
         only retries of this one request, not a restart, another replica or a retry of the \
         whole operation",
        "{out}"
    );
    assert!(
        lines[1].starts_with("src/main/java/com/acme/billing/KeyInterceptor.java:11:22: IDEM001 "),
        "{out}"
    );
    assert_eq!(
        lines[2],
        "Found 2 findings (IDEM001: 1, IDEM008: 1) in 3 files checked."
    );
    assert_eq!(lines.len(), 3);
}

#[test]
fn statistics_count_findings_per_rule() {
    let d = project();
    write(
        d.path(),
        "src/main/java/com/acme/billing/Other.java",
        &BAD_JAVA.replace("KeyInterceptor", "Other"),
    );
    let o = idemlint(d.path(), &["check", "--select", "ALL", "--statistics"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "2\tIDEM001\tkey-generated-in-interceptor\n1\tIDEM008\tnondeterministic-idempotency-key\n"
    );
    let o = idemlint(
        d.path(),
        &[
            "check",
            "--select",
            "ALL",
            "--statistics",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v,
        serde_json::json!([
            {"code": "IDEM001", "name": "key-generated-in-interceptor", "count": 2},
            {"code": "IDEM008", "name": "nondeterministic-idempotency-key", "count": 1},
        ])
    );
    let o = idemlint(d.path(), &["check", "--statistics", "--format", "sarif"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--statistics prints a table or JSON"),
        "{}",
        stderr(&o)
    );
}
