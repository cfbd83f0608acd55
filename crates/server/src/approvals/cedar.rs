//! The Cedar side of a call: the request and entities Cedar authorizes, built from
//! the caller, the tool and the arguments, and Cedar's parse errors with their place.

use cedar_policy::{
    Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, Request, RestrictedExpression,
};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::str::FromStr;

/// The Cedar request and entities for one call.
pub(super) fn request(
    principal: &str,
    groups: &[String],
    tool: &str,
    args: &Map<String, Value>,
) -> Result<(Request, Entities), String> {
    let uid = |ty: &str, id: &str| -> Result<EntityUid, String> {
        let ty = EntityTypeName::from_str(ty).map_err(|e| e.to_string())?;
        Ok(EntityUid::from_type_name_and_id(ty, EntityId::new(id)))
    };
    let group_uids = groups
        .iter()
        .map(|g| uid("Group", g))
        .collect::<Result<HashSet<_>, _>>()?;
    let user = uid("User", principal)?;
    let mut entities: Vec<Entity> = group_uids
        .iter()
        .map(|g| Entity::new_no_attrs(g.clone(), HashSet::new()))
        .collect();
    entities.push(Entity::new_no_attrs(user.clone(), group_uids));
    let resource = uid("Tool", tool)?;
    entities.push(Entity::new_no_attrs(resource.clone(), HashSet::new()));
    let arguments = to_cedar(&Value::Object(args.clone()))
        .unwrap_or_else(|| RestrictedExpression::new_set(Vec::new()));
    let context =
        Context::from_pairs([("arguments".to_string(), arguments)]).map_err(|e| e.to_string())?;
    let request = Request::new(user, uid("Action", "call")?, resource, context, None)
        .map_err(|e| e.to_string())?;
    let entities = Entities::from_entities(entities, None).map_err(|e| e.to_string())?;
    Ok((request, entities))
}

/// A JSON value as a Cedar value built directly (never read as Cedar's JSON, so an
/// argument spelt `__entity` is only a string): whole numbers as `Long`, other numbers
/// as their decimal text, arrays as sets, `null` left out.
fn to_cedar(value: &Value) -> Option<RestrictedExpression> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => RestrictedExpression::new_long(i),
            None => RestrictedExpression::new_string(n.to_string()),
        },
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Array(items) => RestrictedExpression::new_set(items.iter().filter_map(to_cedar)),
        Value::Object(fields) => RestrictedExpression::new_record(
            fields
                .iter()
                .filter_map(|(k, v)| to_cedar(v).map(|v| (k.clone(), v))),
        )
        .ok()?,
    })
}

/// Cedar's own message for a file that does not parse, with its place: `FILE:LINE:COL:
/// message (help)`, one line per error.
pub(super) fn parse_error(file: &str, text: &str, errors: &cedar_policy::ParseErrors) -> String {
    use miette::Diagnostic;
    errors
        .iter()
        .map(|e| {
            let place = e
                .labels()
                .and_then(|mut labels| labels.next())
                .map(|l| line_col(text, l.offset()))
                .map_or_else(|| file.to_string(), |(l, c)| format!("{file}:{l}:{c}"));
            let help = e
                .help()
                .map(|h| format!(" (help: {h})"))
                .unwrap_or_default();
            format!("{place}: {e}{help}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
