//! Elicitation forms as terminal prompts: a `requestedSchema` becomes one question per
//! property (strings, numbers, integers, booleans, single and multi-select enums), and
//! every answer is checked
//! against its property before the form is sent.

use serde_json::{json, Map, Number, Value};

/// What a property accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Free text with optional length limits.
    Text {
        /// Fewest characters.
        min: Option<u64>,
        /// Most characters.
        max: Option<u64>,
        /// `email`, `uri`, `date` or `date-time`: checked; other formats are not.
        format: Option<String>,
    },
    /// A number (`integer` when whole numbers only) with optional bounds.
    Number {
        /// Whole numbers only.
        integer: bool,
        /// Smallest value.
        min: Option<f64>,
        /// Largest value.
        max: Option<f64>,
    },
    /// Yes or no.
    Boolean,
    /// One of a list: (value, label).
    Choice(Vec<(String, String)>),
    /// Several of a list (an array of enum strings), with optional count limits.
    MultiChoice {
        /// (value, label).
        options: Vec<(String, String)>,
        /// Fewest choices.
        min: Option<u64>,
        /// Most choices.
        max: Option<u64>,
    },
}

/// One question of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name (the key in the answer).
    pub name: String,
    /// What to show: the title, else the name.
    pub label: String,
    /// The description, shown under the label.
    pub description: Option<String>,
    /// Whether an answer is needed.
    pub required: bool,
    /// The schema's default, used for an empty answer.
    pub default: Option<Value>,
    /// What it accepts.
    pub kind: Kind,
}

/// The fields of a `requestedSchema`, required ones first.
///
/// # Errors
/// A message when the schema has a property this terminal cannot ask for.
pub fn fields(schema: &Value) -> Result<Vec<Field>, String> {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (name, p) in props {
        let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
        let kind = kind(name, p)?;
        out.push(Field {
            name: name.clone(),
            label: text("title").unwrap_or_else(|| name.clone()),
            description: text("description"),
            required: required.contains(&name.as_str()),
            default: p.get("default").cloned(),
            kind,
        });
    }
    out.sort_by_key(|f| !f.required);
    Ok(out)
}

fn kind(name: &str, p: &Value) -> Result<Kind, String> {
    let num = |k: &str| p.get(k).and_then(Value::as_f64);
    let int = |k: &str| p.get(k).and_then(Value::as_u64);
    let choices = |list: &Vec<Value>, labels: Option<&Vec<Value>>| {
        list.iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let v = v.as_str()?.to_string();
                let label = labels
                    .and_then(|l| l.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| v.clone(), str::to_string);
                Some((v, label))
            })
            .collect::<Vec<_>>()
    };
    let titled = |list: &Vec<Value>| -> Vec<(String, String)> {
        list.iter()
            .filter_map(|o| {
                let v = o.get("const")?.as_str()?.to_string();
                let label = o
                    .get("title")
                    .and_then(Value::as_str)
                    .map_or_else(|| v.clone(), str::to_string);
                Some((v, label))
            })
            .collect()
    };
    if let Some(list) = p.get("enum").and_then(Value::as_array) {
        let labels = p.get("enumNames").and_then(Value::as_array);
        return Ok(Kind::Choice(choices(list, labels)));
    }
    if let Some(list) = p.get("oneOf").and_then(Value::as_array) {
        return Ok(Kind::Choice(titled(list)));
    }
    if p.get("type").and_then(Value::as_str) == Some("array") {
        let items = p.get("items").unwrap_or(&Value::Null);
        let options = if let Some(list) = items.get("enum").and_then(Value::as_array) {
            choices(list, None)
        } else if let Some(list) = items.get("anyOf").and_then(Value::as_array) {
            titled(list)
        } else {
            Vec::new()
        };
        if options.is_empty() {
            return Err(format!(
                "field '{name}' is a list without a fixed set of choices, which cannot be asked at the terminal"
            ));
        }
        return Ok(Kind::MultiChoice {
            options,
            min: int("minItems"),
            max: int("maxItems"),
        });
    }
    match p.get("type").and_then(Value::as_str) {
        Some("string") | None => Ok(Kind::Text {
            min: int("minLength"),
            max: int("maxLength"),
            format: p.get("format").and_then(Value::as_str).map(str::to_string),
        }),
        Some(t @ ("number" | "integer")) => Ok(Kind::Number {
            integer: t == "integer",
            min: num("minimum"),
            max: num("maximum"),
        }),
        Some("boolean") => Ok(Kind::Boolean),
        Some(other) => Err(format!(
            "field '{name}' has type '{other}', which cannot be asked at the terminal"
        )),
    }
}

impl Field {
    /// The prompt line: label, hint and default.
    pub fn prompt(&self) -> String {
        let hint = match &self.kind {
            Kind::Boolean => " [y/n]".to_string(),
            Kind::Number { integer: true, .. } => " (whole number)".to_string(),
            Kind::Number { .. } => " (number)".to_string(),
            Kind::MultiChoice { .. } => " (numbers or values, comma-separated)".to_string(),
            Kind::Text {
                format: Some(f), ..
            } => match f.as_str() {
                "email" => " (email address)".to_string(),
                "uri" => " (URL)".to_string(),
                "date" => " (YYYY-MM-DD)".to_string(),
                "date-time" => " (YYYY-MM-DDTHH:MM:SSZ)".to_string(),
                _ => String::new(),
            },
            Kind::Choice(_) | Kind::Text { .. } => String::new(),
        };
        let default = match &self.default {
            Some(Value::Bool(b)) => format!(" [default: {}]", if *b { "y" } else { "n" }),
            Some(Value::String(s)) => format!(" [default: {s}]"),
            Some(Value::Array(items)) => format!(
                " [default: {}]",
                items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(v) => format!(" [default: {v}]"),
            None if !self.required => " [optional]".to_string(),
            None => String::new(),
        };
        format!("{}{hint}{default}: ", self.label)
    }

    /// Reads one typed answer. `Ok(None)` leaves an optional field out.
    ///
    /// # Errors
    /// A message saying what is wrong, to show before asking again.
    pub fn accept(&self, input: &str) -> Result<Option<Value>, String> {
        let input = input.trim();
        if input.is_empty() {
            return match (&self.default, self.required) {
                (Some(d), _) => Ok(Some(d.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("an answer is required".into()),
            };
        }
        match &self.kind {
            Kind::Boolean => match input.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Ok(Some(json!(true))),
                "n" | "no" | "false" | "0" => Ok(Some(json!(false))),
                _ => Err("answer y or n".into()),
            },
            Kind::Choice(options) => pick(options, input).map(|v| Some(json!(v))),
            Kind::MultiChoice { options, min, max } => {
                let mut chosen: Vec<String> = Vec::new();
                for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let v = pick(options, part)?;
                    if !chosen.contains(&v) {
                        chosen.push(v);
                    }
                }
                let n = chosen.len() as u64;
                if let Some(m) = min.filter(|m| n < *m) {
                    return Err(format!("choose at least {m}"));
                }
                if let Some(m) = max.filter(|m| n > *m) {
                    return Err(format!("choose at most {m}"));
                }
                Ok(Some(json!(chosen)))
            }
            Kind::Number { integer, min, max } => {
                let n: f64 = input
                    .parse()
                    .map_err(|_| format!("'{input}' is not a number"))?;
                if !n.is_finite() {
                    return Err("give a finite number".into());
                }
                if *integer && n.fract() != 0.0 {
                    return Err("give a whole number".into());
                }
                if let Some(m) = min.filter(|m| n < *m) {
                    return Err(format!("must be at least {m}"));
                }
                if let Some(m) = max.filter(|m| n > *m) {
                    return Err(format!("must be at most {m}"));
                }
                let value = if *integer {
                    // Whole and finite, checked above.
                    Value::Number(Number::from(n as i64))
                } else {
                    Number::from_f64(n).map_or(Value::Null, Value::Number)
                };
                Ok(Some(value))
            }
            Kind::Text { min, max, format } => {
                let len = input.chars().count() as u64;
                if let Some(m) = min.filter(|m| len < *m) {
                    return Err(format!("give at least {m} characters"));
                }
                if let Some(m) = max.filter(|m| len > *m) {
                    return Err(format!("give at most {m} characters"));
                }
                if let Some(f) = format {
                    check_format(f, input)?;
                }
                Ok(Some(json!(input)))
            }
        }
    }
}

/// Checks the formats elicitation schemas may name; others pass.
fn check_format(format: &str, input: &str) -> Result<(), String> {
    let ok = match format {
        "email" => match input.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.')
                    && !input.contains(char::is_whitespace)
                    && !domain.contains('@')
            }
            None => false,
        },
        "uri" => match input.split_once(':') {
            Some((scheme, rest)) => {
                scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
                    && !rest.is_empty()
                    && !input.contains(char::is_whitespace)
            }
            None => false,
        },
        "date" => chrono::NaiveDate::parse_from_str(input, "%Y-%m-%d").is_ok(),
        "date-time" => chrono::DateTime::parse_from_rfc3339(input).is_ok(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        let want = match format {
            "email" => "an email address (name@example.com)",
            "uri" => "a URL with its scheme (https://example.com)",
            "date" => "a date as YYYY-MM-DD",
            _ => "a date and time as YYYY-MM-DDTHH:MM:SSZ",
        };
        Err(format!("give {want}"))
    }
}

/// One option by its number (1-based), value or label.
fn pick(options: &[(String, String)], input: &str) -> Result<String, String> {
    if let Ok(i) = input.parse::<usize>() {
        if let Some((v, _)) = i.checked_sub(1).and_then(|i| options.get(i)) {
            return Ok(v.clone());
        }
    }
    options
        .iter()
        .find(|(v, l)| v.eq_ignore_ascii_case(input) || l.eq_ignore_ascii_case(input))
        .map(|(v, _)| v.clone())
        .ok_or_else(|| format!("choose 1-{} or one of the listed values", options.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_becomes_fields_required_first() {
        let schema = json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "colour": {"type": "string", "enum": ["red", "green"]},
                "confirm": {"type": "boolean", "title": "Delete?"},
                "name": {"type": "string", "minLength": 2}
            },
            "required": ["confirm", "name"]
        });
        let f = fields(&schema).unwrap();
        assert_eq!(f.len(), 4);
        assert!(f[0].required && f[1].required && !f[2].required);
        assert_eq!(f[0].label, "Delete?");
        assert!(fields(&json!({"properties": {"x": {"type": "array"}}})).is_err());
    }

    #[test]
    fn formats_are_checked() {
        let f = fields(&json!({"properties": {
            "e": {"type": "string", "format": "email"},
            "u": {"type": "string", "format": "uri"},
            "d": {"type": "string", "format": "date"},
            "t": {"type": "string", "format": "date-time"}
        }}))
        .unwrap();
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert!(by("e").accept("ada@example.com").is_ok());
        assert!(by("e").accept("ada").is_err() && by("e").accept("a@b").is_err());
        assert!(by("u").accept("https://example.com/x").is_ok());
        assert!(by("u").accept("example dot com").is_err());
        assert!(by("d").accept("2024-02-29").is_ok());
        assert!(by("d").accept("2023-02-29").is_err() && by("d").accept("y").is_err());
        assert!(by("t").accept("2024-01-01T10:00:00Z").is_ok());
        assert!(by("t").accept("2024-01-01").is_err());
        assert!(by("d").prompt().contains("YYYY-MM-DD"));
    }

    #[test]
    fn multi_select_enums_take_several_choices() {
        let f = fields(&json!({
            "properties": {
                "plain": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]},
                          "minItems": 1, "maxItems": 2},
                "titled": {"type": "array", "items": {"anyOf": [
                    {"const": "g", "title": "Guitar"}, {"const": "p", "title": "Piano"}]},
                          "default": ["p"]}
            }
        }))
        .unwrap();
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(by("plain").accept("1, c"), Ok(Some(json!(["a", "c"]))));
        assert_eq!(
            by("plain").accept("b,b"),
            Ok(Some(json!(["b"]))),
            "repeats count once"
        );
        assert!(by("plain").accept("a,b,c").is_err(), "at most two");
        assert!(by("plain").accept("d").is_err());
        assert_eq!(by("titled").accept("guitar"), Ok(Some(json!(["g"]))));
        assert_eq!(
            by("titled").accept(""),
            Ok(Some(json!(["p"]))),
            "the default"
        );
        assert!(by("titled").prompt().contains("[default: p]"));
    }

    #[test]
    fn answers_are_checked_before_sending() {
        let f = fields(&json!({
            "properties": {
                "b": {"type": "boolean"},
                "c": {"type": "string", "enum": ["red", "green"]},
                "n": {"type": "integer", "minimum": 1, "maximum": 9},
                "s": {"type": "string", "maxLength": 3, "default": "abc"}
            },
            "required": ["b", "c", "n"]
        }))
        .unwrap();
        let by = |n: &str| f.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(by("b").accept("Y"), Ok(Some(json!(true))));
        assert!(by("b").accept("maybe").is_err());
        assert!(by("b").accept("").is_err());
        assert_eq!(by("c").accept("2"), Ok(Some(json!("green"))));
        assert_eq!(by("c").accept("RED"), Ok(Some(json!("red"))));
        assert!(by("c").accept("3").is_err());
        assert_eq!(by("n").accept("4"), Ok(Some(json!(4))));
        assert_eq!(
            by("n").accept("abc"),
            Err("'abc' is not a number".to_string())
        );
        assert!(by("n").accept("4.5").is_err());
        assert!(by("n").accept("10").is_err());
        assert_eq!(by("s").accept(""), Ok(Some(json!("abc"))));
        assert!(by("s").accept("abcd").is_err());
    }
}
