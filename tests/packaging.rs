//! The release's packaging agrees with itself: one version (Cargo.toml's), one licence, a wheel
//! that carries the binary, a stripped release build.

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn toml(path: &str) -> toml::Table {
    read(path).parse().unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_wheel_takes_its_version_from_cargo_and_carries_the_binary() {
    let py = toml("pyproject.toml");
    let project = py["project"].as_table().unwrap();
    assert!(
        !project.contains_key("version"),
        "the version lives in Cargo.toml only"
    );
    assert_eq!(
        project["dynamic"].as_array().unwrap(),
        &vec![toml::Value::from("version")]
    );
    assert_eq!(project["name"].as_str(), Some(env!("CARGO_PKG_NAME")));
    let maturin = py["tool"]["maturin"].as_table().unwrap();
    assert_eq!(maturin["bindings"].as_str(), Some("bin"));
    assert_eq!(
        py["build-system"]["build-backend"].as_str(),
        Some("maturin")
    );
}

#[test]
fn the_changelog_has_an_entry_for_this_version() {
    let heading = format!("## {} ", env!("CARGO_PKG_VERSION"));
    assert!(
        read("CHANGELOG.md")
            .lines()
            .any(|l| l.starts_with(&heading)),
        "CHANGELOG.md has no `{heading}...` entry"
    );
}

#[test]
fn one_licence_everywhere_with_its_texts() {
    let cargo = toml("Cargo.toml");
    let licence = cargo["package"]["license"].as_str().unwrap();
    assert_eq!(licence, "MIT OR Apache-2.0");
    assert_eq!(
        toml("pyproject.toml")["project"]["license"].as_str(),
        Some(licence)
    );
    assert!(read("LICENSE-MIT").starts_with("MIT License"));
    assert!(
        read("LICENSE-APACHE").contains("Apache License\n                           Version 2.0")
    );
    assert!(cargo["package"]["rust-version"].as_str().is_some());
}

#[test]
fn the_release_build_is_stripped_and_profiling_keeps_symbols() {
    let cargo = toml("Cargo.toml");
    let release = cargo["profile"]["release"].as_table().unwrap();
    assert_eq!(release["strip"].as_bool(), Some(true));
    assert_eq!(release["debug"].as_bool(), Some(false));
    let profiling = cargo["profile"]["profiling"].as_table().unwrap();
    assert_eq!(profiling["inherits"].as_str(), Some("release"));
    assert_eq!(profiling["strip"].as_bool(), Some(false));
}

#[test]
fn the_pre_commit_mirror_pins_this_release_and_runs_the_same_hook() {
    let mirror = toml("pre-commit-mirror/pyproject.toml");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(mirror["project"]["version"].as_str(), Some(version));
    assert_eq!(
        mirror["project"]["dependencies"].as_array().unwrap(),
        &vec![toml::Value::from(format!("idemlint=={version}"))]
    );
    // The mirror's hook is the repository's own, installed from the wheel instead of built.
    let hook_lines = |path: &str| -> Vec<String> {
        read(path)
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(str::to_string)
            .collect()
    };
    let own = hook_lines(".pre-commit-hooks.yaml");
    let mirrored = hook_lines("pre-commit-mirror/.pre-commit-hooks.yaml");
    assert!(mirrored.iter().any(|l| l == "  language: python"));
    assert!(own.iter().any(|l| l == "  language: rust"));
    let without_language = |v: &[String]| -> Vec<String> {
        v.iter()
            .filter(|l| !l.contains("language:"))
            .cloned()
            .collect()
    };
    assert_eq!(without_language(&own), without_language(&mirrored));
    assert!(own.iter().any(|l| l == "  require_serial: true"));
}
