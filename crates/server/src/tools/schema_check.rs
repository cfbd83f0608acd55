//! Arguments checked against a tool's JSON Schema before it runs (the `inputSchema`
//! of `tools/list`, and an approver's changed arguments). With the `validate` feature
//! (a default) every keyword is checked with the `jsonschema` crate and each problem
//! named with its JSON pointer. Without it only the schema's shape is checked here;
//! a typed tool's arguments still pass through serde, which refuses a missing field
//! or a wrong type, naming the field.

use serde_json::Value;

/// A compiled schema.
pub(crate) struct SchemaCheck {
    #[cfg(feature = "validate")]
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for SchemaCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaCheck").finish_non_exhaustive()
    }
}

impl SchemaCheck {
    /// Compiles `schema`.
    ///
    /// # Errors
    /// Why the schema cannot be used.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        #[cfg(feature = "validate")]
        {
            jsonschema::validator_for(schema)
                .map(|validator| SchemaCheck { validator })
                .map_err(|e| e.to_string())
        }
        #[cfg(not(feature = "validate"))]
        {
            if schema.is_object() || schema.is_boolean() {
                Ok(SchemaCheck {})
            } else {
                Err("a JSON Schema must be an object or a boolean".into())
            }
        }
    }

    /// Every way `value` breaks the schema, each with its JSON pointer; empty when it
    /// fits (always, without the `validate` feature).
    pub(crate) fn problems(&self, value: &Value) -> Vec<String> {
        #[cfg(feature = "validate")]
        {
            self.validator
                .iter_errors(value)
                .map(|e| {
                    let at = e.instance_path.to_string();
                    if at.is_empty() {
                        e.to_string()
                    } else {
                        format!("{at}: {e}")
                    }
                })
                .collect()
        }
        #[cfg(not(feature = "validate"))]
        {
            let _ = value;
            Vec::new()
        }
    }
}
