//! Resources, prompts and completions of the upstreams, offered as ours: lists are
//! merged (prompt names get the upstream's prefix, as tool names do), and a read, get,
//! subscribe or completion goes to the upstream that listed the item (or, for an item
//! never listed, to each upstream offering that capability until one answers).

use async_trait::async_trait;
use mcp_tasks_protocol::error_code::METHOD_NOT_FOUND;
use mcp_tasks_protocol::RpcError;
use mcp_tasks_server::Passthrough;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

use crate::upstream::Upstream;

/// Most pages read from one upstream for one list.
const MAX_PAGES: usize = 100;

/// The gateway's [`Passthrough`].
#[derive(Debug)]
pub struct UpstreamPassthrough {
    upstreams: Vec<Arc<Upstream>>,
    /// Resource URI -> index of the upstream that listed it.
    resources: Mutex<HashMap<String, usize>>,
}

impl UpstreamPassthrough {
    /// Hands requests on to `upstreams`.
    pub fn new(upstreams: Vec<Arc<Upstream>>) -> Self {
        UpstreamPassthrough {
            upstreams,
            resources: Mutex::new(HashMap::new()),
        }
    }

    /// The upstreams that declared `capability`, with their index.
    fn offering(&self, capability: &str) -> Vec<(usize, &Arc<Upstream>)> {
        self.upstreams
            .iter()
            .enumerate()
            .filter(|(_, u)| !u.capabilities()[capability].is_null())
            .collect()
    }

    /// Every page of `method` from every upstream offering `capability`, the items
    /// under `key` concatenated; `rename` may change each item (prefixes).
    async fn merged_list(
        &self,
        capability: &str,
        method: &str,
        key: &str,
        rename: impl Fn(&Upstream, &mut Value),
    ) -> Result<Value, RpcError> {
        let mut items = Vec::new();
        for (index, upstream) in self.offering(capability) {
            let mut cursor: Option<Value> = None;
            for _ in 0..MAX_PAGES {
                let params = match &cursor {
                    Some(c) => json!({ "cursor": c }),
                    None => json!({}),
                };
                let page = upstream.request(method, params).await?;
                for mut item in page[key].as_array().cloned().unwrap_or_default() {
                    if let Some(uri) = item["uri"].as_str() {
                        self.resources.lock().insert(uri.to_string(), index);
                    }
                    rename(upstream, &mut item);
                    items.push(item);
                }
                match page.get("nextCursor").filter(|c| !c.is_null()) {
                    Some(c) => cursor = Some(c.clone()),
                    None => break,
                }
            }
        }
        let mut out = Map::new();
        out.insert(key.to_string(), Value::Array(items));
        Ok(Value::Object(out))
    }

    /// A request about the resource `uri`: to the upstream that listed it, else to
    /// each upstream offering resources until one answers.
    async fn about_resource(
        &self,
        uri: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let known = self.resources.lock().get(uri).copied();
        if let Some(upstream) = known.and_then(|i| self.upstreams.get(i)) {
            return upstream.request(method, params).await;
        }
        let mut last = RpcError::invalid_params(format!("no upstream offers the resource '{uri}'"));
        for (_, upstream) in self.offering("resources") {
            match upstream.request(method, params.clone()).await {
                Ok(v) => return Ok(v),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The upstream whose prefixed prompt name `exposed` is, and the upstream's name.
    fn prompt_owner(&self, exposed: &str) -> Option<(&Arc<Upstream>, String)> {
        self.offering("prompts")
            .into_iter()
            .find_map(|(_, u)| match &u.config().prefix {
                Some(p) => exposed.strip_prefix(p.as_str()).map(|n| (u, n.to_string())),
                None => Some((u, exposed.to_string())),
            })
    }

    /// A request about the prompt whose (prefixed) name is at the JSON pointer
    /// `name_at` of `params`: the name is put back as the upstream knows it.
    async fn prompt_request(
        &self,
        method: &str,
        mut params: Value,
        name_at: &str,
    ) -> Result<Value, RpcError> {
        let exposed = params
            .pointer(name_at)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let (upstream, name) = self.prompt_owner(&exposed).ok_or_else(|| {
            RpcError::invalid_params(format!("no upstream offers the prompt '{exposed}'"))
        })?;
        if let Some(slot) = params.pointer_mut(name_at) {
            *slot = json!(name);
        }
        upstream.request(method, params).await
    }
}

#[async_trait]
impl Passthrough for UpstreamPassthrough {
    fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        for u in &self.upstreams {
            if let Some(theirs) = u.capabilities().as_object() {
                for key in ["resources", "prompts", "completions"] {
                    if let Some(v) = theirs.get(key).filter(|v| !v.is_null()) {
                        caps.entry(key.to_string()).or_insert_with(|| v.clone());
                    }
                }
            }
        }
        Value::Object(caps)
    }

    fn handles(&self, method: &str) -> bool {
        method.starts_with("resources/")
            || method.starts_with("prompts/")
            || method == "completion/complete"
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "resources/list" => {
                self.merged_list("resources", method, "resources", |_, _| {})
                    .await
            }
            "resources/templates/list" => {
                self.merged_list("resources", method, "resourceTemplates", |_, _| {})
                    .await
            }
            "prompts/list" => {
                self.merged_list("prompts", method, "prompts", |u, item| {
                    if let (Some(p), Some(name)) = (&u.config().prefix, item["name"].as_str()) {
                        item["name"] = json!(format!("{p}{name}"));
                    }
                })
                .await
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                let uri = params["uri"].as_str().unwrap_or_default().to_string();
                self.about_resource(&uri, method, params).await
            }
            "prompts/get" => self.prompt_request(method, params, "/name").await,
            "completion/complete" => match params["ref"]["type"].as_str() {
                Some("ref/prompt") => self.prompt_request(method, params, "/ref/name").await,
                _ => {
                    let uri = params["ref"]["uri"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    self.about_resource(&uri, method, params).await
                }
            },
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method '{other}' is not offered by any upstream"),
            )),
        }
    }
}
