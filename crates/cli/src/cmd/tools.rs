//! `mcp-tasks tools`: the server's tools, the arguments each takes, and whether a
//! call of it runs as a task.
//!
//! What "runs as a task" means depends on the wire. On 2025-11-25 the tool declares it
//! (`execution.taskSupport`: `required`, `optional`, or `forbidden`, the default when
//! absent) and the client chooses within that. On the Tasks extension (2026-07-28) the
//! server decides per call whether a call becomes a task; a declaration, if the server
//! sends one, is only a hint. The TASKS column says it in words: `always`, `optional`
//! (`call` asks for one), `never`, or `server decides`.

use console::style;
use mcp_tasks_client::{ToolInfo, Wire};
use serde_json::{json, Value};

use super::args::ServerArgs;
use super::exit::{fail, EXIT_OK};
use super::output::out;

/// Runs `tools`; returns the exit status.
pub async fn run(a: ServerArgs) -> u8 {
    a.run("tools", |client, _target, connect| async move {
        let wire = client.wire();
        match client.tools().await {
            Ok(tools) if connect.json => {
                let list: Vec<Value> = tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "title": t.title,
                            "description": t.description,
                            "taskSupport": declared(t).unwrap_or(match wire {
                                Wire::V2025_11_25 => t.task_support.as_str(),
                                _ => "",
                            }),
                            "tasks": tasks_column(wire, t),
                            "arguments": arguments(t).iter().map(Argument::json).collect::<Vec<_>>(),
                            "inputSchema": t.input_schema,
                        })
                    })
                    .map(|mut v| {
                        if v["taskSupport"] == "" {
                            v["taskSupport"] = Value::Null;
                        }
                        v
                    })
                    .collect();
                out(Value::Array(list));
                EXIT_OK
            }
            Ok(tools) => {
                for line in table(wire, &tools) {
                    out(line);
                }
                out(style(legend(wire)).dim().to_string());
                EXIT_OK
            }
            Err(e) => fail("listing tools", &e),
        }
    })
    .await
}

/// The human listing: TOOL, TASKS and DESCRIPTION columns, and under each tool that
/// takes arguments a line that says them as `--arg` takes them.
fn table(wire: Wire, tools: &[ToolInfo]) -> Vec<String> {
    let width = tools
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("TOOL".len());
    let column = tools
        .iter()
        .map(|t| tasks_column(wire, t).len())
        .max()
        .unwrap_or(0)
        .max("TASKS".len());
    let mut lines = vec![format!(
        "{:<width$}  {:<column$}  DESCRIPTION",
        "TOOL", "TASKS"
    )];
    for t in tools {
        let name = format!("{:<width$}", t.name);
        lines.push(
            format!(
                "{}  {:<column$}  {}",
                style(name).bold(),
                tasks_column(wire, t),
                t.description
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or(""),
            )
            .trim_end()
            .to_string(),
        );
        let args = arguments(t);
        if !args.is_empty() {
            let said: Vec<String> = args.iter().map(Argument::text).collect();
            lines.push(format!(
                "{:<width$}  {}",
                "",
                style(format!("--arg {}", said.join("  --arg "))).dim()
            ));
        }
    }
    lines
}

/// One argument of a tool, as its input schema declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Argument {
    name: String,
    /// The JSON type (`string`, `number`, ...), `any` when the schema names none.
    ty: String,
    required: bool,
}

impl Argument {
    /// `name=<type>`, with ` (required)` for a required one: how `--arg` takes it.
    fn text(&self) -> String {
        let ty = match self.ty.as_str() {
            "string" => "text",
            "integer" => "whole number",
            "boolean" => "true|false",
            "object" | "array" => "JSON",
            other => other,
        };
        let required = if self.required { " (required)" } else { "" };
        format!("{}=<{ty}>{required}", self.name)
    }

    fn json(&self) -> Value {
        json!({ "name": self.name, "type": self.ty, "required": self.required })
    }
}

/// The arguments `t`'s input schema declares, required ones first, each group in the
/// schema's order.
fn arguments(t: &ToolInfo) -> Vec<Argument> {
    let required: Vec<&str> = t.input_schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = t.input_schema["properties"].as_object() else {
        return Vec::new();
    };
    let mut args: Vec<Argument> = properties
        .iter()
        .map(|(name, p)| Argument {
            name: name.clone(),
            ty: type_of(&t.input_schema, p),
            required: required.contains(&name.as_str()),
        })
        .collect();
    args.sort_by_key(|a| !a.required);
    args
}

/// Most `$ref` hops followed when reading a property's type (a schema may refer to
/// itself).
const MAX_REF_DEPTH: usize = 8;

/// A property's type in a word: its choices (`enum`, or `oneOf`/`anyOf` of constants)
/// as `a|b|c`, else its `type` (the first non-null one of a list, or of `anyOf`/`oneOf`
/// alternatives), following `$ref`s into the schema's `$defs`; `any` when it names none.
fn type_of(root: &Value, p: &Value) -> String {
    type_within(root, p, 0)
}

fn type_within(root: &Value, p: &Value, depth: usize) -> String {
    if depth > MAX_REF_DEPTH {
        return "any".into();
    }
    if let Some(target) = p["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        if let Some(def) = root.pointer(target) {
            return type_within(root, def, depth + 1);
        }
    }
    if let Some(values) = p["enum"].as_array() {
        let words: Vec<String> = values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        if !words.is_empty() {
            return words.join("|");
        }
    }
    if let Some(c) = p.get("const") {
        return c.as_str().map_or_else(|| c.to_string(), str::to_string);
    }
    match &p["type"] {
        Value::String(t) => return t.clone(),
        Value::Array(ts) => {
            return ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .unwrap_or("any")
                .to_string()
        }
        _ => {}
    }
    let alternatives = p["oneOf"].as_array().or_else(|| p["anyOf"].as_array());
    let words: Vec<String> = alternatives
        .into_iter()
        .flatten()
        .filter(|alt| alt["type"] != "null")
        .map(|alt| type_within(root, alt, depth + 1))
        .filter(|t| t != "any")
        .collect();
    let consts = alternatives
        .into_iter()
        .flatten()
        .filter(|alt| alt["type"] != "null")
        .all(|alt| alt.get("const").is_some());
    match words.first() {
        Some(_) if consts => words.join("|"),
        Some(first) => first.clone(),
        None => "any".into(),
    }
}

/// The tool's own `execution.taskSupport`, when it sends one.
fn declared(t: &ToolInfo) -> Option<&str> {
    t.definition
        .get("execution")
        .and_then(|e| e.get("taskSupport"))
        .and_then(Value::as_str)
}

/// What the TASKS column says for a tool on this wire, in words: `always`, `optional`,
/// `never`, or (Tasks extension) `server decides` unless the tool forbids tasks.
fn tasks_column(wire: Wire, t: &ToolInfo) -> String {
    let word = |support: &str| match support {
        "required" => "always",
        "forbidden" => "never",
        _ => "optional",
    };
    match wire {
        Wire::V2025_11_25 => word(t.task_support.as_str()).to_string(),
        _ => match declared(t) {
            Some("forbidden") => "never".to_string(),
            _ => "server decides".to_string(),
        },
    }
}

/// One line under the table that says what the TASKS column means on this wire.
fn legend(wire: Wire) -> &'static str {
    match wire {
        Wire::V2025_11_25 => {
            "TASKS: whether a call runs as a task you can leave and follow later: always, \
             never, or optional (mcp-tasks call asks for one)"
        }
        _ => {
            "TASKS: the server decides per call whether it runs as a task you can leave \
             and follow later (mcp-tasks call follows it either way); never: it does not"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(v: Value) -> ToolInfo {
        ToolInfo::from_definition(&v).expect("tool")
    }

    #[test]
    fn each_wire_says_what_it_means_in_words() {
        let bare = tool(json!({"name": "echo", "inputSchema": {}}));
        let hinted = tool(json!({"name": "slow", "execution": {"taskSupport": "optional"}}));
        let always = tool(json!({"name": "x", "execution": {"taskSupport": "required"}}));
        let never = tool(json!({"name": "y", "execution": {"taskSupport": "forbidden"}}));
        assert_eq!(tasks_column(Wire::V2025_11_25, &bare), "never");
        assert_eq!(tasks_column(Wire::V2025_11_25, &hinted), "optional");
        assert_eq!(tasks_column(Wire::V2025_11_25, &always), "always");
        assert_eq!(tasks_column(Wire::V2026_07_28, &bare), "server decides");
        assert_eq!(tasks_column(Wire::V2026_07_28, &hinted), "server decides");
        assert_eq!(tasks_column(Wire::V2026_07_28, &never), "never");
        assert!(!legend(Wire::V2026_07_28).contains("wire"));
        assert!(!legend(Wire::V2025_11_25).contains("wire"));
    }

    #[test]
    fn arguments_say_name_type_and_whether_required() {
        let t = tool(json!({"name": "slow", "inputSchema": {
            "type": "object",
            "properties": {
                "label": {"type": ["string", "null"]},
                "seconds": {"type": "number"},
                "mode": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
                "free": {},
                "when": {"anyOf": [{"$ref": "#/$defs/When"}, {"type": "null"}]}
            },
            "$defs": {"When": {"oneOf": [
                {"type": "string", "const": "now"},
                {"type": "string", "const": "later"}
            ]}},
            "required": ["seconds"]
        }}));
        let args = arguments(&t);
        let texts: Vec<String> = args.iter().map(Argument::text).collect();
        assert_eq!(texts[0], "seconds=<number> (required)");
        assert!(texts.contains(&"label=<text>".to_string()), "{texts:?}");
        assert!(
            texts.contains(&"mode=<whole number>".to_string()),
            "{texts:?}"
        );
        assert!(texts.contains(&"free=<any>".to_string()), "{texts:?}");
        assert!(texts.contains(&"when=<now|later>".to_string()), "{texts:?}");
        let lines = table(Wire::V2026_07_28, &[t]);
        assert!(lines[0].starts_with("TOOL"), "{lines:?}");
        assert!(
            lines[2].contains("--arg seconds=<number> (required)"),
            "{lines:?}"
        );
    }
}
