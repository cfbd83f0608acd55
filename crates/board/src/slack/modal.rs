//! The modals: a form question's fields as Slack inputs (built from its flat
//! `requestedSchema`, read back into the content a client would send), and the reason
//! asked for when an approval is rejected.
//!
//! | schema property | Slack element |
//! |---|---|
//! | `string` with `enum` / `oneOf` consts | `static_select` |
//! | `string` with `format: date` | `datepicker` |
//! | other `string` | `plain_text_input` (multiline past 200 characters) |
//! | `number` / `integer` | `number_input` |
//! | `boolean` | `checkboxes` with one box (unticked is `false`) |
//! | `array` of choices | `multi_static_select` |

use mcp_tasks_protocol::answer::{field_label, AnswerError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::blocks::{cut, QuestionRef};

/// `callback_id` of a form's modal.
pub(crate) const FORM: &str = "mcp_tasks.form";
/// `callback_id` of the modal asking why an approval is rejected.
pub(crate) const REASON: &str = "mcp_tasks.reason";
/// The `block_id` of the reason's input.
pub(crate) const REASON_BLOCK: &str = "reason";
/// The `action_id` of every input's element.
const VALUE: &str = "value";
/// Slack's bound on an option list.
const MAX_OPTIONS: usize = 100;

/// What a modal carries in its `private_metadata`: the question and the message to
/// update once it is answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ModalMeta {
    /// The question.
    #[serde(flatten)]
    pub(crate) question: QuestionRef,
    /// The message's channel.
    pub(crate) c: String,
    /// The message's timestamp.
    pub(crate) ts: String,
}

fn plain(text: &str, max: usize) -> Value {
    json!({"type": "plain_text", "text": cut(text, max)})
}

fn block_id(key: &str) -> String {
    format!("f.{}", cut(key, 200))
}

/// The choices of a property (or of an array's items): `(value, label)` pairs.
fn choices(property: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = property["enum"].as_array() {
        let names = property["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?.to_string();
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .unwrap_or(&value)
                        .to_string();
                    Some((value, label))
                })
                .collect(),
        );
    }
    let options = property["oneOf"]
        .as_array()
        .or_else(|| property["anyOf"].as_array())?;
    Some(
        options
            .iter()
            .filter_map(|o| {
                let value = o["const"].as_str()?.to_string();
                let label = o["title"].as_str().unwrap_or(&value).to_string();
                Some((value, label))
            })
            .collect(),
    )
}

fn options(choices: &[(String, String)]) -> Vec<Value> {
    choices
        .iter()
        .take(MAX_OPTIONS)
        .map(|(value, label)| json!({"text": plain(label, 75), "value": cut(value, 150)}))
        .collect()
}

/// The input element of one property.
fn element(property: &Value) -> Value {
    let kind = property["type"].as_str().unwrap_or("string");
    match kind {
        "boolean" => json!({
            "type": "checkboxes",
            "action_id": VALUE,
            "options": [{"text": plain("Yes", 75), "value": "true"}],
        }),
        "number" | "integer" => {
            let mut e = json!({
                "type": "number_input",
                "action_id": VALUE,
                "is_decimal_allowed": kind == "number",
            });
            for (bound, name) in [("minimum", "min_value"), ("maximum", "max_value")] {
                if let Some(n) = property[bound].as_f64() {
                    e[name] = json!(n.to_string());
                }
            }
            e
        }
        "array" => json!({
            "type": "multi_static_select",
            "action_id": VALUE,
            "options": options(&choices(&property["items"]).unwrap_or_default()),
        }),
        _ => match choices(property) {
            Some(choices) => json!({
                "type": "static_select",
                "action_id": VALUE,
                "options": options(&choices),
            }),
            None if property["format"] == "date" => {
                json!({"type": "datepicker", "action_id": VALUE})
            }
            None => json!({
                "type": "plain_text_input",
                "action_id": VALUE,
                "multiline": property["maxLength"].as_u64().is_none_or(|m| m > 200),
            }),
        },
    }
}

/// The modal of a form question (`params` of an `elicitation/create`).
pub(crate) fn form_view(params: &Value, meta: &ModalMeta) -> Value {
    let schema = &params["requestedSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let message = params["message"].as_str().unwrap_or("The task asks:");
    let mut blocks = vec![json!({"type": "section", "text": plain(message, 2900)})];
    for (key, property) in schema["properties"].as_object().into_iter().flatten() {
        let mut input = json!({
            "type": "input",
            "block_id": block_id(key),
            "label": plain(field_label(key, property), 2000),
            "element": element(property),
            // A box left unticked is an answer (false), not a missing one.
            "optional": property["type"] == "boolean" || !required.contains(&key.as_str()),
        });
        if let Some(hint) = property["description"].as_str() {
            input["hint"] = plain(hint, 2000);
        }
        blocks.push(input);
    }
    json!({
        "type": "modal",
        "callback_id": FORM,
        "private_metadata": serde_json::to_string(meta).unwrap_or_default(),
        "title": plain("Answer", 24),
        "submit": plain("Send", 24),
        "close": plain("Cancel", 24),
        "blocks": blocks,
    })
}

/// The modal asking why an approval is rejected.
pub(crate) fn reason_view(question: &str, meta: &ModalMeta) -> Value {
    json!({
        "type": "modal",
        "callback_id": REASON,
        "private_metadata": serde_json::to_string(meta).unwrap_or_default(),
        "title": plain("Reject", 24),
        "submit": plain("Reject", 24),
        "close": plain("Cancel", 24),
        "blocks": [
            {"type": "section", "text": plain(question, 2900)},
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "label": plain("Why? (the agent is told)", 2000),
                "element": {"type": "plain_text_input", "action_id": VALUE, "multiline": true},
            },
        ],
    })
}

/// The value of the input in `block` of a submitted view's `state.values`.
fn submitted<'a>(values: &'a Value, block: &str) -> &'a Value {
    &values[block][VALUE]
}

/// The reason typed into the reason modal, trimmed; `None` when blank.
pub(crate) fn reason(values: &Value) -> Option<String> {
    submitted(values, REASON_BLOCK)["value"]
        .as_str()
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_string)
}

/// The form's content as a client would send it, from a submitted view's
/// `state.values`: each field of its schema's type; empty fields left out. A number
/// that does not parse stays text, for the answer's check to name.
pub(crate) fn content(schema: &Value, values: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    for (key, property) in schema["properties"].as_object().into_iter().flatten() {
        let state = submitted(values, &block_id(key));
        let value = match state["type"].as_str().unwrap_or("") {
            "checkboxes" => Some(Value::Bool(
                state["selected_options"]
                    .as_array()
                    .is_some_and(|o| !o.is_empty()),
            )),
            "multi_static_select" => state["selected_options"]
                .as_array()
                .map(|o| Value::Array(o.iter().map(|o| o["value"].clone()).collect())),
            "static_select" => state["selected_option"]["value"].as_str().map(|v| json!(v)),
            "datepicker" => state["selected_date"].as_str().map(|v| json!(v)),
            "number_input" => state["value"].as_str().map(|text| {
                let text = text.trim();
                let number = match property["type"].as_str() {
                    Some("integer") => text.parse::<i64>().ok().map(Value::from),
                    _ => text
                        .parse::<f64>()
                        .ok()
                        .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number)),
                };
                number.unwrap_or_else(|| json!(text))
            }),
            _ => state["value"]
                .as_str()
                .filter(|v| !v.is_empty())
                .map(|v| json!(v)),
        };
        if let Some(value) = value {
            content.insert(key.clone(), value);
        }
    }
    content
}

/// A refused answer as Slack's `response_action: errors`: each problem under the
/// input of its field (by label), problems of the whole form under the first input.
pub(crate) fn errors(schema: &Value, error: &AnswerError) -> Value {
    let properties = schema["properties"].as_object();
    let first = first_block(schema);
    let mut errors: Map<String, Value> = Map::new();
    for problem in &error.problems {
        let block = problem
            .field
            .as_deref()
            .and_then(|label| {
                properties?
                    .iter()
                    .find(|(k, p)| field_label(k, p) == label)
                    .map(|(k, _)| block_id(k))
            })
            .unwrap_or_else(|| first.clone());
        let text = problem.to_string();
        let joined = match errors.get(&block).and_then(Value::as_str) {
            Some(before) => format!("{before}; {text}"),
            None => text,
        };
        errors.insert(block, json!(joined));
    }
    json!({"response_action": "errors", "errors": errors})
}

/// A refusal of a whole submission (not of one field) shown in the modal under
/// `block`.
pub(crate) fn refusal(block: &str, text: &str) -> Value {
    json!({"response_action": "errors", "errors": {block: cut(text, 1900)}})
}

/// The block a refusal of a whole form is shown under: its first input's.
pub(crate) fn first_block(schema: &Value) -> String {
    schema["properties"]
        .as_object()
        .and_then(|p| p.keys().next())
        .map(|k| block_id(k))
        .unwrap_or_else(|| REASON_BLOCK.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tasks_protocol::answer::validate_answer;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Your name", "maxLength": 50},
            "colour": {"type": "string", "enum": ["red", "green"]},
            "age": {"type": "integer", "minimum": 18},
            "ok": {"type": "boolean"},
            "day": {"type": "string", "format": "date"},
            "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}
        }, "required": ["name", "age"]})
    }

    fn meta() -> ModalMeta {
        ModalMeta {
            question: QuestionRef {
                t: "t".into(),
                k: "k".into(),
                q: "q".into(),
            },
            c: "C1".into(),
            ts: "1.2".into(),
        }
    }

    #[test]
    fn a_form_becomes_inputs_and_back() {
        let view = form_view(
            &json!({"message": "Who?", "requestedSchema": schema()}),
            &meta(),
        );
        let blocks = view["blocks"].as_array().unwrap();
        let types: Vec<&str> = blocks[1..]
            .iter()
            .map(|b| b["element"]["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "plain_text_input",
                "static_select",
                "number_input",
                "checkboxes",
                "datepicker",
                "multi_static_select"
            ]
        );
        assert_eq!(blocks[1]["label"]["text"], "Your name");
        assert_eq!(blocks[1]["optional"], false);
        assert_eq!(blocks[2]["optional"], true);
        let meta_back: ModalMeta =
            serde_json::from_str(view["private_metadata"].as_str().unwrap()).unwrap();
        assert_eq!(meta_back, meta());

        let values = json!({
            "f.name": {"value": {"type": "plain_text_input", "value": "Ada"}},
            "f.colour": {"value": {"type": "static_select", "selected_option": {"value": "red"}}},
            "f.age": {"value": {"type": "number_input", "value": "12"}},
            "f.ok": {"value": {"type": "checkboxes", "selected_options": []}},
            "f.day": {"value": {"type": "datepicker", "selected_date": null}},
            "f.tags": {"value": {"type": "multi_static_select", "selected_options": [{"value": "a"}]}}
        });
        let content = content(&schema(), &values);
        assert_eq!(
            Value::Object(content.clone()),
            json!({"name": "Ada", "colour": "red", "age": 12, "ok": false, "tags": ["a"]})
        );
        let error = validate_answer(&schema(), &content).unwrap_err();
        let errors = errors(&schema(), &error);
        assert_eq!(errors["response_action"], "errors");
        assert!(
            errors["errors"]["f.age"]
                .as_str()
                .unwrap()
                .contains("at least 18"),
            "{errors}"
        );
    }

    #[test]
    fn a_reason_is_read_trimmed() {
        let values =
            json!({"reason": {"value": {"type": "plain_text_input", "value": "  too risky "}}});
        assert_eq!(reason(&values).as_deref(), Some("too risky"));
        assert_eq!(reason(&json!({})), None);
        let view = reason_view("Deploy?", &meta());
        assert_eq!(view["callback_id"], REASON);
    }
}
