//! Answers checked against their question: the values a person (or a client) sends for
//! an elicitation form must fit the form's `requestedSchema` before any tool sees them.
//!
//! An elicitation form is a restricted JSON Schema: a flat object whose properties are
//! primitives (string with `minLength`/`maxLength`/`format`, number or integer with
//! `minimum`/`maximum`, boolean, a single-select enum as `enum` or `oneOf` of `const`s,
//! a multi-select enum as an array of those) and a `required` list. This module checks
//! an answer against that restricted shape by hand rather than through a general JSON
//! Schema validator: the error must speak to the person who filled in the form, naming
//! the field by the title they saw ("Duration (minutes) must be a number, not \"abc\"")
//! instead of an instance path ("/duration: \"abc\" is not of type number"), and the
//! restricted shape is small enough that the whole check reads in one page.
//!
//! Every path that takes an answer uses [`check_elicit_result`]: the engine's one answer
//! entry point (through the server's reader), the stateless wire's MRTR round, and the
//! CLI before it sends what was typed.

use serde_json::{Map, Value};
use std::fmt;

/// One thing wrong with an answer: the field (by its title, else its key) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field's title, or its key when it has none; `None` for the answer as a whole.
    pub field: Option<String>,
    /// What is wrong, in words for the person who answered.
    pub problem: String,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "'{field}' {}", self.problem),
            None => f.write_str(&self.problem),
        }
    }
}

/// Why an answer does not fit its question: every problem found, in the form's order,
/// so a person fixes them all at once. Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerError {
    /// The problems, at least one.
    pub problems: Vec<FieldProblem>,
}

impl AnswerError {
    fn whole(problem: impl Into<String>) -> Self {
        AnswerError {
            problems: vec![FieldProblem {
                field: None,
                problem: problem.into(),
            }],
        }
    }
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AnswerError {}

/// The name a person knows a field by: its `title`, else its key.
pub fn field_label<'a>(key: &'a str, property: &'a Value) -> &'a str {
    property
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .unwrap_or(key)
}

/// Checks the `content` of an accepted form answer against `schema` (the question's
/// `requestedSchema`): every required field present, every value of its type, within
/// its bounds, one of its choices, in its format; a `null` stands for an unanswered
/// optional field. Values the form does not name pass, as in JSON Schema, unless the
/// form says `"additionalProperties": false`.
///
/// # Errors
/// Every problem found, each naming its field by its title.
pub fn validate_answer(schema: &Value, content: &Map<String, Value>) -> Result<(), AnswerError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut note = |field: &str, problem: String| {
        problems.push(FieldProblem {
            field: Some(field.to_string()),
            problem,
        })
    };
    // Missing fields first, in the order `required` lists them.
    for key in &required {
        if content.get(*key).is_none_or(Value::is_null) {
            let label = properties
                .and_then(|p| p.get(*key))
                .map_or(*key, |property| field_label(key, property));
            note(label, "is required".into());
        }
    }
    for (key, property) in properties.into_iter().flatten() {
        if let Some(value) = content.get(key).filter(|v| !v.is_null()) {
            if let Err(problem) = check_value(property, value) {
                note(field_label(key, property), problem);
            }
        }
    }
    // Values the form does not name are left alone, as JSON Schema has it (clients
    // send what their form library keeps), unless the form closes itself.
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        for extra in content
            .keys()
            .filter(|k| properties.is_none_or(|p| !p.contains_key(*k)))
        {
            note(extra, "is not a field of this form".into());
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(AnswerError { problems })
    }
}

/// Checks an `ElicitResult` (`{action, content?}`) sent for an `elicitation/create`
/// whose params are `request`: `action` must be `accept`, `decline` or `cancel`; only an
/// accepted form answer carries content, checked with [`validate_answer`] (a missing
/// `content` is an empty form). A URL-mode question has no form to check.
///
/// # Errors
/// An unknown or missing `action`, `content` that is not an object, or the first
/// problem [`validate_answer`] finds.
pub fn check_elicit_result(request: &Value, result: &Value) -> Result<(), AnswerError> {
    let action = result.get("action").and_then(Value::as_str);
    match action {
        Some("decline" | "cancel") => return Ok(()),
        Some("accept") => {}
        Some(other) => {
            return Err(AnswerError::whole(format!(
                "the answer's action must be accept, decline or cancel, not '{other}'"
            )))
        }
        None => return Err(AnswerError::whole(
            "the answer has no 'action': send accept (with the form's values), decline or cancel",
        )),
    }
    let is_url = request.get("mode").and_then(Value::as_str) == Some("url");
    let Some(schema) = request.get("requestedSchema").filter(|_| !is_url) else {
        return Ok(());
    };
    let empty = Map::new();
    let content = match result.get("content") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(c)) => c,
        Some(_) => {
            return Err(AnswerError::whole(
                "the answer's content must be an object of the form's fields",
            ))
        }
    };
    validate_answer(schema, content)
}

/// What a value shows as in a message: a string quoted, anything else as JSON.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// The choices of a single-select enum: `enum` values or `oneOf`/`anyOf` `const`s.
fn choices(property: &Value) -> Option<Vec<&Value>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(values.iter().collect());
    }
    let options = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)?;
    let consts: Vec<&Value> = options.iter().filter_map(|o| o.get("const")).collect();
    (!consts.is_empty()).then_some(consts)
}

fn choice_list(choices: &[&Value]) -> String {
    choices
        .iter()
        .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks one present value against its property; the error is the problem alone.
fn check_value(property: &Value, value: &Value) -> Result<(), String> {
    let kind = property.get("type").and_then(Value::as_str);
    if kind == Some("array") {
        return check_multi(property, value);
    }
    if let Some(choices) = choices(property) {
        if !choices.contains(&value) {
            return Err(format!(
                "must be one of: {} (got {})",
                choice_list(&choices),
                shown(value)
            ));
        }
        return Ok(());
    }
    match kind {
        Some("string") => check_string(property, value),
        Some("number") => check_number(property, value, false),
        Some("integer") => check_number(property, value, true),
        Some("boolean") if value.is_boolean() => Ok(()),
        Some("boolean") => Err(format!("must be true or false, not {}", shown(value))),
        // A type the restricted schema does not have: nothing to hold the value to.
        _ => Ok(()),
    }
}

fn check_string(property: &Value, value: &Value) -> Result<(), String> {
    let Some(text) = value.as_str() else {
        return Err(format!("must be text, not {}", shown(value)));
    };
    let length = text.chars().count() as u64;
    if let Some(min) = property.get("minLength").and_then(Value::as_u64) {
        if length < min {
            return Err(if min == 1 {
                "must not be empty".to_string()
            } else {
                format!("must be at least {min} characters long (got {length})")
            });
        }
    }
    if let Some(max) = property.get("maxLength").and_then(Value::as_u64) {
        if length > max {
            return Err(format!(
                "must be at most {max} characters long (got {length})"
            ));
        }
    }
    match property.get("format").and_then(Value::as_str) {
        Some("email") if !is_email(text) => Err(format!(
            "must be an email address like name@example.com, not {}",
            shown(value)
        )),
        Some("uri") if !is_uri(text) => Err(format!(
            "must be an absolute URI like https://example.com, not {}",
            shown(value)
        )),
        Some("date") if chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_err() => Err(
            format!("must be a date like 2025-11-25, not {}", shown(value)),
        ),
        Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => Err(format!(
            "must be a date and time like 2025-11-25T10:30:00Z, not {}",
            shown(value)
        )),
        _ => Ok(()),
    }
}

fn is_email(text: &str) -> bool {
    match text.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !text.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// An absolute URI: a scheme (a letter, then letters, digits, `+`, `-`, `.`), a colon
/// and something after it, with no whitespace.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !text.chars().any(char::is_whitespace)
}

fn check_number(property: &Value, value: &Value, integer: bool) -> Result<(), String> {
    let Some(n) = value.as_f64().filter(|_| value.is_number()) else {
        return Err(format!(
            "must be {}, not {}",
            if integer {
                "a whole number"
            } else {
                "a number"
            },
            shown(value)
        ));
    };
    if integer && n.fract() != 0.0 {
        return Err(format!("must be a whole number, not {}", shown(value)));
    }
    let bound = |key: &str| property.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum") {
        if n < min {
            return Err(format!("must be at least {min} (got {})", shown(value)));
        }
    }
    if let Some(max) = bound("maximum") {
        if n > max {
            return Err(format!("must be at most {max} (got {})", shown(value)));
        }
    }
    Ok(())
}

/// A multi-select enum: an array of choices from `items`, within `minItems`/`maxItems`.
fn check_multi(property: &Value, value: &Value) -> Result<(), String> {
    let Some(picked) = value.as_array() else {
        return Err(format!("must be a list of choices, not {}", shown(value)));
    };
    let count = picked.len() as u64;
    if let Some(min) = property.get("minItems").and_then(Value::as_u64) {
        if count < min {
            return Err(format!("needs at least {min} choices (got {count})"));
        }
    }
    if let Some(max) = property.get("maxItems").and_then(Value::as_u64) {
        if count > max {
            return Err(format!("allows at most {max} choices (got {count})"));
        }
    }
    if let Some(choices) = property.get("items").and_then(choices) {
        if let Some(bad) = picked.iter().find(|p| !choices.contains(p)) {
            return Err(format!(
                "must be chosen from: {} (got {})",
                choice_list(&choices),
                shown(bad)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({
            "type": "object",
            "properties": {
                "subject": {"type": "string", "title": "Subject", "minLength": 1, "maxLength": 10},
                "minutes": {"type": "integer", "title": "Duration (minutes)", "minimum": 15, "maximum": 240},
                "budget": {"type": "number"},
                "remote": {"type": "boolean", "title": "Remote?"},
                "room": {"type": "string", "title": "Room", "enum": ["red", "blue"]},
                "level": {"type": "string", "oneOf": [{"const": "low", "title": "Low"}, {"const": "high", "title": "High"}]},
                "tags": {"type": "array", "title": "Tags", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1},
                "email": {"type": "string", "title": "Email", "format": "email"},
                "day": {"type": "string", "format": "date"},
                "site": {"type": "string", "format": "uri"},
                "at": {"type": "string", "format": "date-time"}
            },
            "required": ["subject", "minutes"]
        })
    }

    fn check(content: Value) -> Result<(), String> {
        let Value::Object(content) = content else {
            panic!("test content must be an object")
        };
        validate_answer(&form(), &content).map_err(|e| e.to_string())
    }

    #[test]
    fn a_complete_answer_passes() {
        check(json!({
            "subject": "plan", "minutes": 30, "budget": 12.5, "remote": true, "room": "red",
            "level": "high", "tags": ["a"], "email": "a@b.example", "day": "2025-11-25",
            "site": "https://example.com/x", "at": "2025-11-25T10:30:00Z"
        }))
        .unwrap();
        // Optional fields may be absent or null; an integer may be written 30.0.
        check(json!({"subject": "plan", "minutes": 30.0, "budget": null})).unwrap();
    }

    #[test]
    fn every_problem_is_named_at_once() {
        let e = check(json!({"subject": "", "minutes": "abc", "room": "green"})).unwrap_err();
        assert_eq!(
            e,
            "'Subject' must not be empty; 'Duration (minutes)' must be a whole number, not \"abc\"; 'Room' must be one of: red, blue (got \"green\")"
        );
    }

    #[test]
    fn a_field_the_form_does_not_name_passes_unless_the_form_is_closed() {
        check(json!({"subject": "x", "minutes": 30, "extra": 1})).unwrap();
        let mut closed = form();
        closed["additionalProperties"] = json!(false);
        let content = json!({"subject": "x", "minutes": 30, "extra": 1});
        let e = validate_answer(&closed, content.as_object().unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "'extra' is not a field of this form");
    }

    #[test]
    fn required_fields_are_named_by_title() {
        assert_eq!(
            check(json!({})).unwrap_err(),
            "'Subject' is required; 'Duration (minutes)' is required"
        );
        assert_eq!(
            check(json!({"subject": "x", "minutes": null})).unwrap_err(),
            "'Duration (minutes)' is required"
        );
    }

    #[test]
    fn types_are_checked() {
        let e = check(json!({"subject": "x", "minutes": "abc"})).unwrap_err();
        assert_eq!(
            e,
            "'Duration (minutes)' must be a whole number, not \"abc\""
        );
        let e = check(json!({"subject": "x", "minutes": 30.5})).unwrap_err();
        assert!(e.contains("whole number"), "{e}");
        // No title: the key names the field.
        let e = check(json!({"subject": "x", "minutes": 30, "budget": "12"})).unwrap_err();
        assert_eq!(e, "'budget' must be a number, not \"12\"");
        let e = check(json!({"subject": 5, "minutes": 30})).unwrap_err();
        assert_eq!(e, "'Subject' must be text, not 5");
        let e = check(json!({"subject": "x", "minutes": 30, "remote": "yes"})).unwrap_err();
        assert_eq!(e, "'Remote?' must be true or false, not \"yes\"");
    }

    #[test]
    fn bounds_are_checked() {
        let e = check(json!({"subject": "x", "minutes": 5})).unwrap_err();
        assert_eq!(e, "'Duration (minutes)' must be at least 15 (got 5)");
        let e = check(json!({"subject": "x", "minutes": 500})).unwrap_err();
        assert_eq!(e, "'Duration (minutes)' must be at most 240 (got 500)");
        let e = check(json!({"subject": "", "minutes": 30})).unwrap_err();
        assert_eq!(e, "'Subject' must not be empty");
        let e = check(json!({"subject": "much too long", "minutes": 30})).unwrap_err();
        assert_eq!(e, "'Subject' must be at most 10 characters long (got 13)");
        let e = check(json!({"subject": "x", "minutes": 30, "tags": ["a", "b"]})).unwrap_err();
        assert_eq!(e, "'Tags' allows at most 1 choices (got 2)");
    }

    #[test]
    fn choices_are_checked() {
        let e = check(json!({"subject": "x", "minutes": 30, "room": "green"})).unwrap_err();
        assert_eq!(e, "'Room' must be one of: red, blue (got \"green\")");
        let e = check(json!({"subject": "x", "minutes": 30, "level": "mid"})).unwrap_err();
        assert_eq!(e, "'level' must be one of: low, high (got \"mid\")");
        let e = check(json!({"subject": "x", "minutes": 30, "tags": ["c"]})).unwrap_err();
        assert_eq!(e, "'Tags' must be chosen from: a, b (got \"c\")");
    }

    #[test]
    fn formats_are_checked() {
        for (field, bad) in [
            ("email", "not-an-address"),
            ("day", "25/11/2025"),
            ("site", "example dot com"),
            ("at", "tomorrow"),
        ] {
            let mut answer = json!({"subject": "x", "minutes": 30});
            answer[field] = json!(bad);
            let e = check(answer).unwrap_err();
            assert!(e.contains(bad) && e.contains("must be"), "{field}: {e}");
        }
    }

    #[test]
    fn only_accepted_answers_carry_content_to_check() {
        let request = json!({"mode": "form", "message": "m", "requestedSchema": form()});
        assert!(check_elicit_result(&request, &json!({"action": "decline"})).is_ok());
        assert!(check_elicit_result(&request, &json!({"action": "cancel"})).is_ok());
        // An empty accept of a form with required fields is refused.
        let e = check_elicit_result(&request, &json!({"action": "accept"})).unwrap_err();
        assert_eq!(e.problems[0].field.as_deref(), Some("Subject"));
        assert_eq!(
            e.to_string(),
            "'Subject' is required; 'Duration (minutes)' is required"
        );
        let e = check_elicit_result(&request, &json!({"action": "ok"})).unwrap_err();
        assert!(e.to_string().contains("accept, decline or cancel"), "{e}");
        assert!(check_elicit_result(&request, &json!({})).is_err());
        let e = check_elicit_result(&request, &json!({"action": "accept", "content": [1]}));
        assert!(e.is_err());
        let good = json!({"action": "accept", "content": {"subject": "x", "minutes": 15}});
        assert!(check_elicit_result(&request, &good).is_ok());
        // A URL-mode question has no form.
        let url = json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "1"});
        assert!(check_elicit_result(&url, &json!({"action": "accept"})).is_ok());
    }
}
