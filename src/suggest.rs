//! "Did you mean": the closest of the names a user could have meant, for misspelt rule codes,
//! rule names and configuration keys.

/// The candidate most like `given` (case ignored), if any is close enough to be what was meant:
/// at most about one edit in five (normalised Damerau-Levenshtein similarity of at least 0.8:
/// `selct` -> `select`, `IDEM0004` -> `IDEM004`, but not `IDEM999` -> `IDEM008`), or a
/// candidate that starts with what was given (`key-generated-in-retry`).
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let given = given.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            let lower = c.to_ascii_lowercase();
            let prefix = given.len() >= 5 && lower.starts_with(&given);
            let score = strsim::normalized_damerau_levenshtein(&given, &lower);
            (if prefix { score.max(0.8) } else { score }, c)
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `message` with ` (did you mean `x`?)` added when serde reports an unknown field
/// (`unknown field `selct`, expected one of `select`, `ignore``) and one of the expected names
/// is close to it.
pub fn unknown_field(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return message.to_string();
    };
    let Some((given, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    let names = expected.split('`').skip(1).step_by(2);
    match closest(given, names) {
        Some(m) => format!("{message} (did you mean `{m}`?)"),
        None => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_are_not() {
        let codes = ["IDEM001", "IDEM004", "key-generated-in-retry-scope"];
        assert_eq!(closest("IDEM0004", codes), Some("IDEM004"));
        assert_eq!(closest("idem004", codes), Some("IDEM004"));
        assert_eq!(
            closest("key-generated-in-retry", codes),
            Some("key-generated-in-retry-scope")
        );
        assert_eq!(closest("pylint", codes), None);
        assert_eq!(closest("IDEM999", codes), None);
        assert_eq!(closest("ignroe", ["ignore", "include"]), Some("ignore"));
        assert_eq!(
            unknown_field("unknown field `selct`, expected one of `select`, `ignore`, `exclude`"),
            "unknown field `selct`, expected one of `select`, `ignore`, `exclude` (did you mean \
             `select`?)"
        );
        assert_eq!(
            unknown_field("unknown field `zzz`, expected one of `select`, `ignore`"),
            "unknown field `zzz`, expected one of `select`, `ignore`"
        );
        assert_eq!(
            unknown_field("invalid type: integer"),
            "invalid type: integer"
        );
    }
}
