//! Upstream tools as tools of ours: the same name (with the upstream's prefix),
//! description, schemas and annotations; task support `optional` unless the entry
//! says otherwise; a handler that runs the upstream call for the task.

use mcp_tasks_client::{TaskSupport as UpstreamSupport, ToolInfo};
use mcp_tasks_server::{RegistryError, TaskSupport, Tool};
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::upstream::Upstream;

/// Our tool for `info` of `upstream`.
///
/// # Errors
/// When the upstream's input schema does not compile.
pub fn proxy_tool(upstream: &Arc<Upstream>, info: &ToolInfo) -> Result<Tool, RegistryError> {
    let config = upstream.config();
    let exposed = config.exposed_name(&info.name);
    let upstream_name = info.name.clone();
    let target = Arc::clone(upstream);
    let mut tool = Tool::new(
        exposed,
        info.description.clone().unwrap_or_default(),
        info.input_schema.clone(),
        move |args: Map<String, Value>, ctx| {
            let target = Arc::clone(&target);
            let name = upstream_name.clone();
            Box::pin(async move { target.call(&name, Value::Object(args), &ctx).await })
        },
    )?;
    let support = match config.task_support.get(&info.name) {
        Some(setting) => (*setting).into(),
        // An upstream tool that only runs as an upstream task is still one call for
        // us; everything else defaults to optional.
        None => match info.task_support {
            UpstreamSupport::Forbidden | UpstreamSupport::Optional | UpstreamSupport::Required => {
                TaskSupport::Optional
            }
        },
    };
    tool = tool.task_support(support);
    if let Some(title) = &info.title {
        tool = tool.title(title.clone());
    }
    let def = &info.definition;
    if let Some(schema) = def.get("outputSchema").filter(|v| v.is_object()) {
        tool = tool.output_schema(schema.clone());
    }
    if let Some(a) = def.get("annotations").filter(|v| v.is_object()) {
        tool = tool.annotations(a.clone());
    }
    if config.resumable {
        tool = tool.resumable();
    }
    Ok(tool)
}
