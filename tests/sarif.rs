//! SARIF output validates against the official SARIF 2.1.0 schema (the copy serde-sarif ships,
//! in tests/data) and carries what GitHub code scanning reads.

use idemlint::rules::Selection;
use idemlint::{Options, lint_sources};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn schema() -> jsonschema::Validator {
    let text = include_str!("data/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(text).unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn sources() -> Vec<(PathBuf, String)> {
    vec![
        (
            PathBuf::from("/repo/src/main/java/acme/Keys.java"),
            r#"package acme;
import java.util.UUID;
import org.apache.hc.core5.http.HttpRequestInterceptor;
import org.apache.hc.client5.http.impl.classic.HttpClients;
class Clients {
    Object client() {
        return HttpClients.custom()
            .addRequestInterceptorLast((request, entity, context) ->
                request.setHeader("Idempotency-Key", UUID.randomUUID().toString()))
            .build();
    }
}
"#
            .to_string(),
        ),
        (
            PathBuf::from("/repo/src/main/kotlin/acme/Charges.kt"),
            "package acme\nimport java.util.UUID\nfun charge(api: Api) = api.charge(idempotencyKey = UUID.randomUUID().toString())\n".to_string(),
        ),
        (PathBuf::from("/repo/src/main/kotlin/acme/Broken.kt"), "class A { fun f( }\n".to_string()),
    ]
}

fn render() -> Value {
    let opts = Options {
        selection: Selection::all(),
        ..Options::default()
    };
    let report = lint_sources(sources(), &opts);
    let text = idemlint::report::sarif::render(&report, Path::new("/repo"));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn sarif_is_valid_against_the_schema() {
    let doc = render();
    let v = schema();
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The validator is not vacuous: a broken document is rejected.
    let mut bad = doc.clone();
    bad["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!v.is_valid(&bad));
}

#[test]
fn sarif_carries_what_code_scanning_reads() {
    let doc = render();
    let run = &doc["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "idemlint");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), idemlint::rules::RULES.len());
    for r in rules {
        for key in [
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "helpUri",
            "defaultConfiguration",
        ] {
            assert!(!r[key].is_null(), "rule lacks {key}: {r}");
        }
        let sev: f64 = r["properties"]["security-severity"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((0.0..=10.0).contains(&sev));
    }
    let results = run["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec!["IDEM001", "IDEM008"],
        "java (HC5 lambda) then kotlin, by path"
    );
    let r0 = &results[0];
    let loc = &r0["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "src/main/java/acme/Keys.java"
    );
    assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert_eq!(loc["region"]["startLine"], 9);
    assert_eq!(loc["region"]["snippet"]["text"], "UUID.randomUUID()");
    assert_eq!(
        rules[r0["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "IDEM001"
    );
    assert!(r0["partialFingerprints"]["idemlint/v1"].is_string());
    assert!(
        r0["relatedLocations"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Apache HttpClient 5")
    );
    // The file with a syntax error is noted, and the run still succeeded.
    let inv = &run["invocations"][0];
    assert_eq!(inv["executionSuccessful"], true);
    assert!(
        inv["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .iter()
            .any(
                |n| n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    == "src/main/kotlin/acme/Broken.kt"
            )
    );
}

#[test]
fn fingerprints_survive_unrelated_lines_moving() {
    let fp = |srcs: Vec<(PathBuf, String)>| {
        let report = lint_sources(srcs, &Options::default());
        let doc: Value = serde_json::from_str(&idemlint::report::sarif::render(
            &report,
            Path::new("/repo"),
        ))
        .unwrap();
        doc["runs"][0]["results"][0]["partialFingerprints"]["idemlint/v1"].clone()
    };
    let before = fp(sources());
    let mut moved = sources();
    moved[0].1 = moved[0]
        .1
        .replace("class Clients {", "// a new comment\n\nclass Clients {");
    let after = fp(moved);
    assert!(before.is_string());
    assert_eq!(before, after);
}

/// A finding that rests on an inferred retry scope (a library call idemlint does not list)
/// says what was inferred, and its result is one precision step below its rule; a finding
/// through a catalogued retry API carries neither.
#[test]
fn inferred_findings_say_so_and_are_less_precise() {
    let src = r#"package acme;
import com.acme.resilience.RetryKit;
import io.github.resilience4j.retry.Retry;
import java.util.UUID;
class Charges {
    void a(Api api) {
        RetryKit.withBackoff(5, () -> api.charge(UUID.randomUUID().toString()));
    }
    void b(Api api, Retry retry) {
        Retry.decorateRunnable(retry, () -> api.charge(UUID.randomUUID().toString())).run();
    }
}
interface Api { void charge(String idempotencyKey); }
"#;
    let opts = Options {
        selection: Selection::all(),
        ..Options::default()
    };
    let report = lint_sources(
        vec![(PathBuf::from("/repo/src/Charges.java"), src.to_string())],
        &opts,
    );
    let doc: Value = serde_json::from_str(&idemlint::report::sarif::render(
        &report,
        Path::new("/repo"),
    ))
    .unwrap();
    let run = &doc["runs"][0];
    let results = run["results"].as_array().unwrap();
    let at = |line: u64| {
        results
            .iter()
            .find(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == line)
            .unwrap_or_else(|| panic!("no result on line {line}: {results:#?}"))
    };
    let (inferred, listed) = (at(7), at(10));
    assert_eq!(inferred["ruleId"], "IDEM002");
    assert_eq!(listed["ruleId"], "IDEM002");
    let rule = &run["tool"]["driver"]["rules"][inferred["ruleIndex"].as_u64().unwrap() as usize];
    assert_eq!(rule["properties"]["precision"], "high");
    assert_eq!(inferred["properties"]["precision"], "medium");
    assert!(
        inferred["properties"]["idemlint/inferred"]
            .as_str()
            .unwrap()
            .contains("`RetryKit.withBackoff` is not a retry API idemlint knows")
    );
    assert!(
        inferred["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Inferred: ")
    );
    assert!(listed["properties"].is_null(), "{listed:#}");
    assert!(
        !listed["message"]["text"]
            .as_str()
            .unwrap()
            .contains("Inferred")
    );
    assert!(schema().is_valid(&doc));
}
