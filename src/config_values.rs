//! Values of Spring / Micronaut / Quarkus configuration keys, read from the
//! `application*.properties` and `application*.yml` files next to the sources: enough to know
//! where a `@Value("${psp.base-url}") String baseUrl` points. Only plain `key=value` lines and
//! block-style YAML maps of scalars are read; anything else is not found (a miss, never an
//! error).

/// The value of `key` (`psp.base-url`) in any of `texts`, first found.
pub fn lookup<'t>(texts: &'t [String], key: &str) -> Option<&'t str> {
    texts
        .iter()
        .find_map(|t| properties(t, key).or_else(|| yaml(t, key)))
        .and_then(placeholder_default)
}

/// A value that is a placeholder (`${APP_TOSS_URL:https://api.tosspayments.com/v1}`) stands for
/// its default; one without a default (`${PSP_URL}`) is not known here.
fn placeholder_default(v: &str) -> Option<&str> {
    match v.strip_prefix("${").and_then(|s| s.strip_suffix('}')) {
        Some(inner) => inner.split_once(':').map(|(_, d)| d),
        None => Some(v),
    }
}

fn properties<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| {
        let l = l.trim_start();
        let rest = l.strip_prefix(key)?;
        let rest = rest.trim_start();
        let v = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':'))?;
        // `psp:` opening a YAML map is not a value.
        Some(unquote(v.trim())).filter(|v| !v.is_empty())
    })
}

/// Block-style YAML: `psp:\n  base-url: https://..` gives `psp.base-url`.
fn yaml<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    // The keys of the enclosing maps, with their indentation.
    let mut path: Vec<(usize, &str)> = Vec::new();
    for line in text.lines() {
        let body = line.split(" #").next().unwrap_or(line);
        let trimmed = body.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('-') {
            continue;
        }
        let indent = body.len() - trimmed.len();
        let Some((k, v)) = trimmed.split_once(':') else {
            continue;
        };
        while path.last().is_some_and(|(i, _)| *i >= indent) {
            path.pop();
        }
        let k = unquote(k.trim());
        let v = v.trim();
        if v.is_empty() {
            path.push((indent, k));
            continue;
        }
        let full_matches = {
            let mut parts = path.iter().map(|(_, p)| *p).chain(std::iter::once(k));
            let mut rest = key;
            parts.all(|p| {
                let r = rest.strip_prefix(p);
                match r {
                    Some(r) => {
                        rest = r.strip_prefix('.').unwrap_or(r);
                        true
                    }
                    None => false,
                }
            }) && rest.is_empty()
        };
        if full_matches {
            return Some(unquote(v));
        }
    }
    None
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(s)
}

/// The configuration key an annotation argument names: `"${psp.base-url}"`,
/// `"${psp.base-url:https://..}"` (default after the colon), or a bare `psp.base-url`
/// (Quarkus `@ConfigProperty(name = ..)`, Micronaut `@Property(name = ..)`).
pub fn key_of(arg: &str) -> &str {
    let k = arg
        .strip_prefix("${")
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(arg);
    k.split(':').next().unwrap_or(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_properties_and_nested_yaml() {
        let texts = vec![
            "server.port=8080\npsp.token = abc\n".to_string(),
            "# payments\npsp:\n  base-url: \"https://checkout-test.adyen.com/v71\"\n  retries: 3\nother:\n  base-url: https://internal\n".to_string(),
        ];
        assert_eq!(lookup(&texts, "psp.token"), Some("abc"));
        assert_eq!(
            lookup(&texts, "psp.base-url"),
            Some("https://checkout-test.adyen.com/v71")
        );
        assert_eq!(lookup(&texts, "other.base-url"), Some("https://internal"));
        assert_eq!(lookup(&texts, "psp.missing"), None);
        assert_eq!(lookup(&texts, "psp"), None);
        assert_eq!(key_of("${psp.base-url:https://x}"), "psp.base-url");
        let env = vec![
            "toss:\n  approve-url: ${APP_TOSS_APPROVE_URL:https://api.tosspayments.com/v1/billing}\n  key: ${TOSS_KEY}\n".to_string(),
        ];
        assert_eq!(
            lookup(&env, "toss.approve-url"),
            Some("https://api.tosspayments.com/v1/billing")
        );
        assert_eq!(lookup(&env, "toss.key"), None);
        assert_eq!(key_of("psp.base-url"), "psp.base-url");
    }
}
