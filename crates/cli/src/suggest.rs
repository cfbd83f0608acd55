//! "Did you mean …?": a misspelt key of the config file is named with the table it
//! is in and the nearest valid key, instead of serde's list of every field.

use std::ops::Range;

/// The candidate closest to `word`, when one is close enough to be what was meant:
/// the gateway's rule for misspelt tool names (`mcp_tasks_gateway::config::nearest`),
/// so both say "did you mean" alike. Its own copy: the config file is read in builds
/// without the `gateway` feature too.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A TOML error of the config file said for a person: `LINE: unknown key `pol_interval`
/// in [server]; did you mean `poll_interval`?` for a misspelt key (serde's
/// `deny_unknown_fields`), the nearest value for an unknown one (`auth = "requried"`),
/// and toml's own message with the line for anything else.
pub fn explain_toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    let line = e.span().map(|s| line_of(text, s.start));
    let at = line.map(|n| format!("line {n}: ")).unwrap_or_default();
    if let Some((key, expected)) = unknown(message, "unknown field `") {
        let table = e
            .span()
            .map(|s| table_of(text, s))
            .unwrap_or_else(|| "this table".to_string());
        let hint = match nearest(&key, expected.iter().map(String::as_str)) {
            Some(near) => format!("did you mean `{near}`?"),
            None if expected.is_empty() => "this table takes no keys".to_string(),
            None => format!("valid keys: {}", quoted(&expected)),
        };
        return format!("{at}unknown key `{key}` {table}; {hint}");
    }
    if let Some((value, expected)) = unknown(message, "unknown variant `") {
        let hint = match nearest(&value, expected.iter().map(String::as_str)) {
            Some(near) => format!("did you mean `{near}`?"),
            None => format!("valid values: {}", quoted(&expected)),
        };
        return format!("{at}unknown variant `{value}`; {hint}");
    }
    format!("{at}{message}")
}

/// From serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or
/// `b`", or "there are no fields"): `x` and the expected names.
fn unknown(message: &str, lead: &str) -> Option<(String, Vec<String>)> {
    let rest = message.split_once(lead)?.1;
    let (word, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((word.to_string(), expected))
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.get(..at).unwrap_or(text).matches('\n').count() + 1
}

/// Where the key at `span` sits, for the message: "in [server]", "in [[upstream]]", or
/// "at the top level". A key that is itself a table header (`[sever]`) belongs to the
/// table its name extends (`[upstream.task_suport]`: `[[upstream]]`).
fn table_of(text: &str, span: Range<usize>) -> String {
    let start = text
        .get(..span.start)
        .map_or(0, |t| t.rfind('\n').map_or(0, |i| i + 1));
    let own = text
        .get(start..)
        .unwrap_or("")
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    let header = |line: &str| -> Option<(String, bool)> {
        let line = line.trim();
        let array = line.starts_with("[[");
        let name = line
            .strip_prefix('[')?
            .trim_start_matches('[')
            .split(']')
            .next()?
            .trim()
            .to_string();
        Some((name, array))
    };
    let show = |name: &str, array: bool| {
        if array {
            format!("in [[{name}]]")
        } else {
            format!("in [{name}]")
        }
    };
    if let Some((name, _)) = header(own) {
        return match name.rsplit_once('.') {
            Some((parent, _)) => {
                let array = text.contains(&format!("[[{parent}]]"));
                show(parent, array)
            }
            None => "at the top level".to_string(),
        };
    }
    let before = text.get(..start).unwrap_or("");
    before
        .lines()
        .rev()
        .find_map(header)
        .map(|(name, array)| show(&name, array))
        .unwrap_or_else(|| "at the top level".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_name_is_suggested_and_a_far_one_is_not() {
        let keys = ["listen", "poll_interval", "database"];
        assert_eq!(nearest("pol_interval", keys), Some("poll_interval"));
        assert_eq!(nearest("databse", keys), Some("database"));
        assert_eq!(nearest("zzz", keys), None);
    }

    #[test]
    fn the_table_of_a_key_is_named() {
        let text = "[server]\nlisten = 'a'\n\n[[upstream]]\nname = 'x'\ncomand = []\n";
        let at = text.find("comand").unwrap();
        assert_eq!(table_of(text, at..at + 6), "in [[upstream]]");
        let at = text.find("listen").unwrap();
        assert_eq!(table_of(text, at..at + 6), "in [server]");
        let text = "[sever]\nlisten = 'a'\n";
        assert_eq!(table_of(text, 1..6), "at the top level");
    }
}
