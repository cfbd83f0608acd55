//! Command templates of `[[tools]]` entries: the words of a command with `{name}`
//! placeholders filled from a call's arguments. The config checks a template when it
//! is loaded ([`check`]); the command tool fills it for each call ([`expand`]). Both
//! sides read templates here, so neither imports the other.

use serde_json::{Map, Value};

/// One piece of a command word: literal text or a `{name}` placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Text passed as written.
    Text(String),
    /// The argument of this name.
    Arg(String),
}

/// Splits a command word into literal text and `{name}` placeholders, where `name` is
/// a letter or `_` followed by letters, digits, `_` or `-`. Other braces stay literal:
/// `${HOME}` (a shell's), `{ echo; }`, `{"json": 1}`.
fn pieces(word: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let (before, from_brace) = rest.split_at(open);
        text.push_str(before);
        let after = &from_brace[1..];
        let name = after.find('}').map(|close| &after[..close]).filter(|n| {
            let mut chars = n.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
        match name {
            Some(n) if !text.ends_with('$') => {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Arg(n.to_string()));
                rest = &after[n.len() + 1..];
            }
            _ => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

/// Checks a command template when the config is loaded: the program (first word) has
/// no placeholder, and every placeholder names a property of the input schema.
pub fn check(command: &[String], schema: &Value) -> Result<(), String> {
    let properties: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for (i, word) in command.iter().enumerate() {
        for piece in pieces(word) {
            let Piece::Arg(name) = piece else { continue };
            if i == 0 {
                return Err(format!(
                    "the program '{word}' contains the placeholder {{{name}}}: a call's \
                     arguments may not choose the program"
                ));
            }
            if !properties.contains(&name.as_str()) {
                let known = if properties.is_empty() {
                    "it has no properties".to_string()
                } else {
                    format!("its properties: {}", properties.join(", "))
                };
                return Err(format!(
                    "the command uses {{{name}}}, which is not a property of input_schema ({known})"
                ));
            }
        }
    }
    Ok(())
}

/// The text an argument value stands for in a command word.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The argv of one call: each word of `command` with its placeholders filled, never
/// split and never seen by a shell. A word that is only a placeholder whose argument
/// is absent (or null) is left out.
///
/// A value must not turn into an option of the program: before the first `--` word, a
/// word that starts with a placeholder (a positional value) must not expand to text
/// starting with `-`; such a call is refused with the returned message. After `--`,
/// and in words the template itself starts with `-` (`--file={path}`), any value goes.
pub fn expand(command: &[String], args: &Map<String, Value>) -> Result<Vec<String>, String> {
    let mut argv = Vec::with_capacity(command.len());
    let mut options_ended = false;
    for (i, word) in command.iter().enumerate() {
        let parts = pieces(word);
        if i == 0 && parts.iter().any(|p| matches!(p, Piece::Arg(_))) {
            return Err(format!(
                "the program '{word}' may not contain a placeholder"
            ));
        }
        if let [Piece::Arg(name)] = parts.as_slice() {
            if args.get(name).is_none_or(Value::is_null) {
                continue;
            }
        }
        let mut text = String::new();
        for p in &parts {
            match p {
                Piece::Text(t) => text.push_str(t),
                Piece::Arg(name) => text.push_str(&args.get(name).map(text_of).unwrap_or_default()),
            }
        }
        if let (false, Some(Piece::Arg(name))) = (options_ended, parts.first()) {
            if text.starts_with('-') {
                return Err(format!(
                    "argument '{name}' would start the word '{text}' with '-', which '{}' could \
                     read as an option; give a value that does not start with '-' (the tool's \
                     command must put \"--\" before {{{name}}} to accept such values)",
                    command.first().map(String::as_str).unwrap_or("the program"),
                ));
            }
        }
        if i > 0 && word == "--" {
            options_ended = true;
        }
        argv.push(text);
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|w| w.to_string()).collect()
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn placeholders_fill_one_word_each_and_shell_braces_stay() {
        let a = args(json!({"path": "/tmp/a b; rm -rf x", "n": 3, "opt": null}));
        let argv = expand(
            &words(&[
                "sh",
                "-c",
                "echo ${HOME} { x; }",
                "--",
                "{path}",
                "--file={path}",
                "n{n}",
                "{opt}",
                "{missing}",
            ]),
            &a,
        )
        .unwrap();
        assert_eq!(
            argv,
            words(&[
                "sh",
                "-c",
                "echo ${HOME} { x; }",
                "--",
                "/tmp/a b; rm -rf x",
                "--file=/tmp/a b; rm -rf x",
                "n3"
            ])
        );
    }

    #[test]
    fn a_value_never_becomes_an_option() {
        let a = args(json!({"path": "--version", "n": -5}));
        let err = expand(&words(&["du", "-sh", "{path}"]), &a).unwrap_err();
        assert!(err.contains("'path'") && err.contains("\"--\""), "{err}");
        assert!(expand(&words(&["seq", "{n}"]), &a).is_err());
        assert!(expand(&words(&["ls", "{path}x"]), &a).is_err());
        // After `--`, or as an option's own value, it is just a value.
        assert_eq!(
            expand(&words(&["du", "-sh", "--", "{path}"]), &a).unwrap(),
            words(&["du", "-sh", "--", "--version"])
        );
        assert_eq!(
            expand(&words(&["du", "--files0-from={path}"]), &a).unwrap(),
            words(&["du", "--files0-from=--version"])
        );
        assert!(expand(&words(&["{path}"]), &a).is_err());
    }

    #[test]
    fn templates_are_checked_against_the_schema() {
        let schema = json!({"properties": {"path": {"type": "string"}}});
        assert!(check(&words(&["du", "--", "{path}", "${HOME}"]), &schema).is_ok());
        let err = check(&words(&["du", "--", "{pth}"]), &schema).unwrap_err();
        assert!(err.contains("{pth}") && err.contains("path"), "{err}");
        assert!(check(&words(&["{path}"]), &schema).is_err());
        assert!(check(&words(&["true", "{x}"]), &json!({})).is_err());
    }
}
