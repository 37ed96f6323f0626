//! CI integration: configuration, suppressions, baselines, changed-lines mode, stdin, SARIF for
//! code scanning. Each test works in a scratch directory as a user's repository would.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BAD: &str = r#"package com.acme.pay;

import java.io.IOException;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.Response;

public class Keys implements Interceptor {
    @Override
    public Response intercept(Chain chain) throws IOException {
        String key = UUID.randomUUID().toString();
        return chain.proceed(chain.request().newBuilder().header("Idempotency-Key", key).build());
    }
}
"#;

use common::{idemlint as run, stderr as err, stdout as out, write};

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&out(o)).unwrap_or_else(|e| panic!("{e}: {}", out(o)))
}

fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "src/main/java/com/acme/pay/Keys.java", BAD);
    d
}

const KEYS: &str = "src/main/java/com/acme/pay/Keys.java";

#[test]
fn suppression_on_the_line_and_the_line_above() {
    let d = repo();
    let same = BAD.replace(
        "String key = UUID.randomUUID().toString();",
        "String key = UUID.randomUUID().toString(); // idemlint:ignore IDEM001 test double, never sent",
    );
    write(d.path(), KEYS, &same);
    let o = run(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(err(&o).is_empty(), "{}", err(&o));

    let above = BAD.replace(
        "        String key = UUID.randomUUID().toString();",
        "        // idemlint:ignore IDEM001 sandbox-only client\n        String key = UUID.randomUUID().toString();",
    );
    write(d.path(), KEYS, &above);
    let o = run(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json(&o)["summary"]["suppressed"], 1);
}

#[test]
fn file_and_annotation_suppressions() {
    let d = repo();
    write(
        d.path(),
        KEYS,
        &format!("// idemlint:ignore-file IDEM001 generated client\n{BAD}"),
    );
    assert_eq!(run(d.path(), &["check"]).status.code(), Some(0));

    write(
        d.path(),
        KEYS,
        &BAD.replace(
            "    @Override",
            "    @SuppressWarnings(\"idemlint:IDEM001\")\n    @Override",
        ),
    );
    assert_eq!(run(d.path(), &["check"]).status.code(), Some(0));

    let kt = r#"package com.acme.pay
import java.util.UUID
import okhttp3.Interceptor
import okhttp3.Response

@Suppress("idemlint:IDEM001")
class KtKeys : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response =
        chain.proceed(chain.request().newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build())
}
"#;
    std::fs::remove_file(d.path().join(KEYS)).unwrap();
    write(d.path(), "src/main/kotlin/KtKeys.kt", kt);
    assert_eq!(run(d.path(), &["check"]).status.code(), Some(0));
    write(
        d.path(),
        "src/main/kotlin/KtKeys.kt",
        &kt.replace("@Suppress(\"idemlint:IDEM001\")\n", ""),
    );
    assert_eq!(
        run(d.path(), &["check"]).status.code(),
        Some(1),
        "not vacuous"
    );
}

#[test]
fn bad_suppressions_are_warned_about() {
    let d = repo();
    let no_reason = BAD.replace(
        "String key = UUID.randomUUID().toString();",
        "String key = UUID.randomUUID().toString(); // idemlint:ignore IDEM001",
    );
    write(d.path(), KEYS, &no_reason);
    write(
        d.path(),
        "src/main/java/Other.java",
        "class Other {\n    // idemlint:ignore IDEM001 nothing to see here\n    void f() {}\n}\n",
    );
    let o = run(d.path(), &["check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "warnings do not change the exit code"
    );
    let e = err(&o);
    assert!(
        e.contains("Keys.java:11: suppression of IDEM001 has no reason"),
        "{e}"
    );
    assert!(
        e.contains("Other.java:2: suppression of IDEM001 suppresses nothing"),
        "{e}"
    );
    assert_eq!(
        run(d.path(), &["check", "--strict-suppressions"])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn suppressed_findings_stay_out_of_sarif_unless_asked() {
    let d = repo();
    write(
        d.path(),
        KEYS,
        &format!("// idemlint:ignore-file IDEM001 generated client\n{BAD}"),
    );
    let o = run(d.path(), &["check", "--format", "sarif"]);
    assert_eq!(json(&o)["runs"][0]["results"].as_array().unwrap().len(), 0);
    let o = run(
        d.path(),
        &["check", "--format", "sarif", "--include-suppressed"],
    );
    let r = &json(&o)["runs"][0]["results"][0];
    assert_eq!(r["suppressions"][0]["kind"], "inSource");
    assert_eq!(r["suppressions"][0]["justification"], "generated client");
}

#[test]
fn config_ignores_rules_and_rejects_typos() {
    let d = repo();
    write(d.path(), "idemlint.toml", "ignore = [\"IDEM001\"]\n");
    assert_eq!(run(d.path(), &["check"]).status.code(), Some(0));

    write(
        d.path(),
        "idemlint.toml",
        "# team config\nignroe = [\"IDEM001\"]\n",
    );
    let o = run(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(e.contains("unknown field `ignroe`"), "{e}");
    assert!(e.contains("idemlint.toml:2:1"), "points at the line: {e}");

    write(
        d.path(),
        "idemlint.toml",
        "[severity]\nIDEM001 = \"loud\"\n",
    );
    let o = run(d.path(), &["check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("bad level `loud`"), "{}", err(&o));
}

#[test]
fn config_severity_per_file_ignores_exclude_and_show_config() {
    let d = repo();
    write(
        d.path(),
        "legacy/Old.java",
        &BAD.replace("class Keys", "class Old"),
    );
    write(
        d.path(),
        "generated/Gen.java",
        &BAD.replace("class Keys", "class Gen"),
    );
    write(
        d.path(),
        "idemlint.toml",
        "exclude = [\"generated/**\"]\n\n[severity]\nIDEM001 = \"warning\"\n\n[per-file-ignores]\n\"legacy/**\" = [\"IDEM001\"]\n",
    );
    let o = run(d.path(), &["check", "--format", "json"]);
    let v = json(&o);
    let paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec![KEYS]);
    assert_eq!(v["findings"][0]["severity"], "warning");
    let o = run(d.path(), &["check", "--format", "sarif"]);
    assert_eq!(json(&o)["runs"][0]["results"][0]["level"], "warning");
    // Named explicitly, an excluded file is checked unless --force-exclude.
    assert_eq!(
        run(d.path(), &["check", "generated/Gen.java"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        run(
            d.path(),
            &["check", "--force-exclude", "generated/Gen.java"]
        )
        .status
        .code(),
        Some(0)
    );
    let o = run(d.path(), &["check", "--show-config"]);
    let shown = out(&o);
    assert!(
        shown.contains("config-file = ") && shown.contains("idemlint.toml"),
        "{shown}"
    );
    assert!(shown.contains("IDEM001 = \"warning\""), "{shown}");
    assert!(shown.contains("\"legacy/**\""), "{shown}");
}

#[test]
fn config_from_cargo_metadata_and_explicit_file() {
    let d = repo();
    write(
        d.path(),
        "Cargo.toml",
        "[package]\nname = \"pay\"\nversion = \"0.1.0\"\n\n[package.metadata.idemlint]\nignore = [\"IDEM001\"]\n",
    );
    assert_eq!(run(d.path(), &["check"]).status.code(), Some(0));
    write(d.path(), "strict.toml", "select = [\"ALL\"]\n");
    assert_eq!(
        run(d.path(), &["check", "--config", "strict.toml"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        run(d.path(), &["check", "--isolated"]).status.code(),
        Some(1)
    );
}

#[test]
fn config_catalog_extensions_apply() {
    let d = tempfile::tempdir().unwrap();
    let src = r#"package com.acme;
import okhttp3.Interceptor;
import okhttp3.Response;
public class Dedup implements Interceptor {
    public Response intercept(Chain chain) throws java.io.IOException {
        return chain.proceed(chain.request().newBuilder().header("X-Acme-Dedup", IdGen.next()).build());
    }
}
"#;
    write(d.path(), "Dedup.java", src);
    assert_eq!(
        run(d.path(), &["check"]).status.code(),
        Some(0),
        "unknown header and source"
    );
    write(
        d.path(),
        "idemlint.toml",
        "[catalog]\nidempotency-headers = [\"X-Acme-Dedup\"]\nnondeterministic-sources = [\"IdGen.next\"]\n",
    );
    let o = run(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(json(&o)["findings"][0]["snippet"], "IdGen.next()");
}

/// The coordination rules read `scheduler-apis`, `money-calls`, `lock-apis` and
/// `money-endpoints` from the configuration.
#[test]
fn config_coordination_catalogue_applies() {
    let d = tempfile::tempdir().unwrap();
    let job = r#"package com.acme;
public class Nightly {
    private final JobRunner runner;
    private final Ledger ledger;
    private final Gateway gateway;
    public void start() {
        runner.every(3600, () -> ledger.settleInvoice(42));
    }
    public void locked() {
        runner.every(3600, () -> {
            cluster.withClusterLock("nightly");
            ledger.settleInvoice(43);
        });
    }
    public void post(java.net.http.HttpClient http) throws Exception {
        var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create("https://pay.acme.test/v2/payments/77/capture"))
            .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
            .build();
        http.send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
    }
}
"#;
    write(d.path(), "Nightly.java", job);
    let codes = |o: &Output| -> Vec<(String, u64)> {
        json(o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["start"]["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // Unknown scheduler, money call and endpoint: nothing to say.
    let o = run(d.path(), &["check", "--format", "json"]);
    assert_eq!(codes(&o), vec![], "{}", out(&o));
    write(
        d.path(),
        "idemlint.toml",
        "[catalog]\nscheduler-apis = [\"JobRunner.every\"]\nmoney-calls = [\"settleInvoice\"]\nlock-apis = [\"withClusterLock\"]\nmoney-endpoints = [\"/v2/payments/*/capture\"]\n",
    );
    let o = run(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    // The unlocked job and the keyless capture; the job that takes the cluster lock is clean.
    assert_eq!(
        codes(&o),
        vec![("IDEM004".to_string(), 7), ("IDEM007".to_string(), 16)],
        "{}",
        out(&o)
    );
}

#[test]
fn baseline_survives_moved_lines_and_catches_new_copies() {
    let d = repo();
    let o = run(
        d.path(),
        &["check", "--write-baseline", "idemlint-baseline.json"],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(err(&o).contains("Wrote 1 finding to the baseline"));
    assert_eq!(
        run(d.path(), &["check", "--baseline", "idemlint-baseline.json"])
            .status
            .code(),
        Some(0)
    );

    // Unrelated lines above move the finding down: still baselined.
    write(
        d.path(),
        KEYS,
        &BAD.replace(
            "public class Keys",
            "// Stamps keys.\n// See BILL-1234.\n\npublic class Keys",
        ),
    );
    assert_eq!(
        run(d.path(), &["check", "--baseline", "idemlint-baseline.json"])
            .status
            .code(),
        Some(0)
    );

    // A second copy of the bad pattern in the same method is new.
    let twice = BAD.replace(
        "        return chain.proceed(",
        "        String key2 = UUID.randomUUID().toString();\n        chain.request().newBuilder().header(\"X-Idempotency-Key\", key2);\n        return chain.proceed(",
    );
    write(d.path(), KEYS, &twice);
    let o = run(
        d.path(),
        &[
            "check",
            "--baseline",
            "idemlint-baseline.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["findings"].as_array().unwrap().len(), 1);
    // So is a copy of the whole interceptor in another file.
    write(d.path(), KEYS, BAD);
    write(
        d.path(),
        "src/main/java/com/acme/pay/Keys2.java",
        &BAD.replace("class Keys", "class Keys2"),
    );
    let o = run(
        d.path(),
        &[
            "check",
            "--baseline",
            "idemlint-baseline.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        json(&o)["findings"][0]["path"],
        "src/main/java/com/acme/pay/Keys2.java"
    );

    write(d.path(), "broken.json", "{}");
    assert_eq!(
        run(d.path(), &["check", "--baseline", "broken.json"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn diff_base_reports_changed_lines_only() {
    let d = repo();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(d.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    assert_eq!(
        run(d.path(), &["check", "--diff-base", "HEAD"])
            .status
            .code(),
        Some(0),
        "nothing changed"
    );
    // A new file (untracked) and an edit to the old one (uncommitted).
    write(
        d.path(),
        "src/main/java/com/acme/pay/More.java",
        &BAD.replace("class Keys", "class More"),
    );
    let o = run(
        d.path(),
        &["check", "--diff-base", "HEAD", "--format", "json"],
    );
    let v = json(&o);
    let paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["src/main/java/com/acme/pay/More.java"]);
    write(
        d.path(),
        KEYS,
        &BAD.replace(
            "UUID.randomUUID().toString();",
            "UUID.randomUUID().toString().trim();",
        ),
    );
    let o = run(
        d.path(),
        &["check", "--diff-base", "main", "--format", "json"],
    );
    assert_eq!(json(&o)["findings"].as_array().unwrap().len(), 2);
    assert_eq!(
        run(d.path(), &["check", "--diff-base", "no-such-rev"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn stdin_filename_lints_standard_input() {
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .args([
            "check",
            "--stdin-filename",
            "src/Keys.java",
            "--format",
            "json",
        ])
        .current_dir(d.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(BAD.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["findings"][0]["path"], "src/Keys.java");
}

#[test]
fn sarif_is_ready_for_code_scanning() {
    let d = repo();
    let o = run(d.path(), &["check", "--format", "sarif"]);
    let v = json(&o);
    let run0 = &v["runs"][0];
    assert_eq!(run0["automationDetails"]["id"], "idemlint/");
    let r = &run0["results"][0];
    let hash = r["partialFingerprints"]["primaryLocationLineHash"]
        .as_str()
        .unwrap();
    assert!(hash.contains(':'), "{hash}");
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    for rule in rules {
        assert_ne!(
            rule["fullDescription"]["text"],
            rule["shortDescription"]["text"]
        );
        assert!(!rule["properties"]["tags"].as_array().unwrap().is_empty());
    }
    // Moving unrelated lines keeps both fingerprints.
    write(
        d.path(),
        KEYS,
        &BAD.replace("public class Keys", "// A comment.\n\npublic class Keys"),
    );
    let v2 = json(&run(d.path(), &["check", "--format", "sarif"]));
    assert_eq!(
        v2["runs"][0]["results"][0]["partialFingerprints"],
        r["partialFingerprints"]
    );
}

#[test]
fn pre_commit_hook_is_declared() {
    let hooks = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    for needle in [
        "- id: idemlint",
        "language: rust",
        "types_or: [java, kotlin, rust]",
        "entry: idemlint check",
    ] {
        assert!(hooks.contains(needle), "{needle}");
    }
}

#[test]
fn packages_named_like_build_directories_are_scanned() {
    // `target`, `build` and `out` are build output at a project's top, but ordinary Java
    // packages inside a source tree (spring-aop has `org/springframework/aop/target`).
    let d = tempfile::tempdir().unwrap();
    for pkg in ["target", "build", "out"] {
        write(
            d.path(),
            &format!("src/main/java/com/acme/{pkg}/Keys.java"),
            &BAD.replace("com.acme.pay", &format!("com.acme.{pkg}")),
        );
    }
    write(d.path(), "target/classes/Keys.java", BAD);
    write(d.path(), "build/generated/Keys.java", BAD);
    let o = run(d.path(), &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    let v = json(&o);
    let mut files: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().replace('\\', "/"))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "src/main/java/com/acme/build/Keys.java",
            "src/main/java/com/acme/out/Keys.java",
            "src/main/java/com/acme/target/Keys.java"
        ]
    );
}

/// Issue 15 item 4: a production key kept in our own row is not sent because a test hands
/// the row to an assertion library; with `--include-tests` the answer for the production file
/// is the same as without. The test's own key, sent on a header, is the test file's finding.
#[test]
fn test_callers_do_not_send_production_keys() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "src/main/java/com/acme/pay/Commands.java",
        r#"package com.acme.pay;

import java.util.UUID;
import org.springframework.retry.annotation.Retryable;

record CommandRow(String name, String idempotencyKey) {}

interface CommandRows { void save(CommandRow row); }

class CommandFactory {
    static CommandRow row(String name) { return new CommandRow(name, UUID.randomUUID().toString()); }
}

public class Commands {
    private final CommandRows rows;
    Commands(CommandRows rows) { this.rows = rows; }

    @Retryable
    public void record(String name) {
        rows.save(CommandFactory.row(name));
    }
}
"#,
    );
    write(
        d.path(),
        "src/test/java/com/acme/pay/CommandsTest.java",
        r#"package com.acme.pay;

import static org.assertj.core.api.Assertions.assertThat;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.UUID;

class CommandsTest {
    void rowHasAKey() {
        assertThat(CommandFactory.row("x")).isNotNull();
    }

    HttpRequest request() {
        return HttpRequest.newBuilder(URI.create("https://api.example.com/v1/charges"))
            .header("Idempotency-Key", UUID.randomUUID().toString())
            .build();
    }
}
"#,
    );
    let paths = common::code_paths;
    let plain = run(d.path(), &["check", "--select", "ALL", "--format", "json"]);
    assert_eq!(paths(&plain), Vec::<String>::new(), "{}", out(&plain));
    let with_tests = run(
        d.path(),
        &[
            "check",
            "--select",
            "ALL",
            "--include-tests",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        paths(&with_tests),
        vec!["IDEM008 src/test/java/com/acme/pay/CommandsTest.java".to_string()],
        "{}",
        out(&with_tests)
    );
}

/// Issue 15 item 4: a check-then-act or scheduler path whose payment request sends an
/// idempotency key is still reported (the race runs every other side effect twice), and the
/// finding says what the key settles and what it does not. One without a key says nothing of it.
#[test]
fn keyed_money_calls_say_what_the_key_settles() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/projects10");
    let notes = |dir: &str, code: &str| -> Vec<(u64, String)> {
        let o = run(
            &fixtures.join(dir),
            &["check", "--select", code, "--isolated", "--format", "json"],
        );
        json(&o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["start"]["line"].as_u64().unwrap(),
                    f["note"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    // `gateway.chargeCard(.., "invoice-" + invoice.getId())`: keyed by the invoice.
    let keyed = notes("p8-billing-guards", "IDEM005");
    let (_, note) = keyed
        .iter()
        .find(|(l, _)| *l == 140)
        .expect("IDEM005 at 140");
    assert!(note.contains("sends an idempotency key"), "{note}");
    assert!(note.contains("retention window"), "{note}");
    // async-stripe `PaymentIntent::create` with no key.
    let plain = notes("p6-rust-jobs", "IDEM005");
    let (_, note) = plain.iter().find(|(l, _)| *l == 13).expect("IDEM005 at 13");
    assert!(note.is_empty(), "{note}");
    // IDEM004 keeps its note either way, and names the key when the request has one.
    let jobs = notes("p8-billing-guards", "IDEM004");
    assert!(
        jobs.iter()
            .any(|(_, n)| n.starts_with("the payment request sends an idempotency key")),
        "{jobs:?}"
    );
}
