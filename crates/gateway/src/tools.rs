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
    // A tool the upstream runs only as a task is called as one (and followed).
    let as_upstream_task = info.task_support == UpstreamSupport::Required;
    let mut tool = Tool::new(
        exposed,
        info.description.clone().unwrap_or_default(),
        info.input_schema.clone(),
        move |args: Map<String, Value>, ctx| {
            let target = Arc::clone(&target);
            let name = upstream_name.clone();
            Box::pin(async move {
                target
                    .call(&name, Value::Object(args), as_upstream_task, &ctx)
                    .await
            })
        },
    )?;
    let support = match config.task_support.get(&info.name) {
        Some(setting) => (*setting).into(),
        // An upstream tool that only runs as an upstream task is followed to its end
        // by the gateway, so it is one call for us: optional like every other.
        None => TaskSupport::Optional,
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
    if let Some(policy) = config.retry.as_ref().and_then(|r| r.policy().ok()) {
        tool = tool.retry_policy(policy);
    }
    Ok(tool)
}
