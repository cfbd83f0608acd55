//! [`Server::builder`]: the one-stop way to embed a task-capable MCP server.
//!
//! ```no_run
//! use mcp_tasks_server::{Server, TaskSupport, Tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Echo { text: String }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder()
//!     .name("echo-server")
//!     .store_url("sqlite://./tasks.db")
//!     .tool(Tool::from_fn("echo", "Repeats the text.", |a: Echo| async move { a.text })
//!         .task_support(TaskSupport::Optional))
//!     .build()
//!     .await?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```

use mcp_tasks_engine::EngineConfig;
use mcp_tasks_store::TaskStore;
use std::sync::Arc;

use super::{Server, ServerConfig};
use crate::tools::registry::{RegistryError, Tool, ToolRegistry};

/// Why a server could not be built or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A tool could not be registered (invalid schema, duplicate name).
    #[error(transparent)]
    Tool(#[from] RegistryError),
    /// The store URL could not be opened.
    #[error("could not open the task store '{url}': {source}")]
    Store {
        /// The URL as given (credentials included only if you put them there).
        url: String,
        /// What the store said.
        source: mcp_tasks_store::StoreError,
    },
    /// The engine could not start (its recovery step reads the store).
    #[error("could not start the task engine: {0}")]
    Engine(#[from] mcp_tasks_engine::EngineError),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

enum StoreChoice {
    Url(String),
    Value(Arc<dyn TaskStore>),
}

/// Collects tools, the store and settings; [`ServerBuilder::build`] starts the engine.
/// Made by [`Server::builder`].
pub struct ServerBuilder {
    tools: Vec<Tool>,
    store: StoreChoice,
    engine: EngineConfig,
    config: ServerConfig,
}

impl std::fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let store = match &self.store {
            StoreChoice::Url(u) => u.as_str(),
            StoreChoice::Value(_) => "<custom TaskStore>",
        };
        f.debug_struct("ServerBuilder")
            .field("tools", &self.tools)
            .field("store", &store)
            .field("engine", &self.engine)
            .field("config", &self.config)
            .finish()
    }
}

impl ServerBuilder {
    /// Sets `serverInfo.name` (default `mcp-tasks`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.config.name = name.into();
        self
    }

    /// Sets `serverInfo.version` (default: this crate's version).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.config.version = version.into();
        self
    }

    /// Sets the `instructions` returned by `initialize`: how a model should use the tools.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.config.instructions = Some(text.into());
        self
    }

    /// How long a plain call (the client asked for no task) of an `optional` task
    /// tool may hold its connection before its client gets a handle to the task the
    /// call became (default 45 s; zero runs plain calls inline). See
    /// [`ServerConfig::sync_budget`].
    pub fn sync_budget(mut self, budget: std::time::Duration) -> Self {
        self.config.sync_budget = budget;
        self
    }

    /// Approval rules and groups: calls that wait for people before their tool runs
    /// (see [`crate::approvals`]).
    pub fn approvals(mut self, approvals: crate::approvals::Approvals) -> Self {
        self.config.approvals = approvals;
        self
    }

    /// Who is offered the task tools (`task_wait`, ...; default: clients that declared
    /// no task support). See [`ServerConfig::task_tools`].
    pub fn task_tools(mut self, offered: crate::server::TaskTools) -> Self {
        self.config.task_tools = offered;
        self
    }

    /// Adds a tool (see [`Tool::from_fn`]). Problems with it (an invalid schema, a name
    /// used twice) are reported by [`ServerBuilder::build`].
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Chooses the task store by URL: `memory:` (the default: nothing survives the
    /// process), `sqlite://path/to/tasks.db` (embedded and durable; created if missing),
    /// or with the `postgres` feature `postgres://…` (several replicas share the tasks).
    pub fn store_url(mut self, url: impl Into<String>) -> Self {
        self.store = StoreChoice::Url(url.into());
        self
    }

    /// Uses a store you built, or your own backend: anything implementing
    /// [`TaskStore`]. Sessions that several replicas share and the board's webhook
    /// outbox are optional parts of a store ([`TaskStore::sessions`],
    /// [`TaskStore::outbox`]); without them sessions stay in this process's memory.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = StoreChoice::Value(store);
        self
    }

    /// Replaces the engine settings (TTLs, poll interval, quotas, leases...).
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// Replaces the server settings (body limit, origins, authentication...). Keeps the
    /// name, version and instructions set on this builder when `config` leaves them at
    /// their defaults.
    pub fn server_config(mut self, config: ServerConfig) -> Self {
        let defaults = ServerConfig::default();
        let (name, version, instructions) = (
            std::mem::take(&mut self.config.name),
            std::mem::take(&mut self.config.version),
            self.config.instructions.take(),
        );
        self.config = config;
        if self.config.name == defaults.name {
            self.config.name = name;
        }
        if self.config.version == defaults.version {
            self.config.version = version;
        }
        if self.config.instructions.is_none() {
            self.config.instructions = instructions;
        }
        self
    }

    /// Opens the store, starts the engine (failing tasks an earlier process left
    /// running, unless they are external jobs), registers the tools and starts the
    /// expiry sweeper. Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// [`BuildError`] naming the tool, store or engine that failed.
    pub async fn build(self) -> Result<Server, BuildError> {
        let mut registry = ToolRegistry::new();
        for tool in self.tools {
            registry.register(tool)?;
        }
        let store = match self.store {
            StoreChoice::Value(store) => store,
            StoreChoice::Url(url) => mcp_tasks_store::open(&url)
                .await
                .map_err(|source| BuildError::Store { url, source })?,
        };
        Ok(Server::start(store, self.engine, registry, self.config, Vec::new()).await?)
    }
}

impl Server {
    /// Starts a builder: no tools, the `memory:` store, default settings.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            tools: Vec::new(),
            store: StoreChoice::Url("memory:".into()),
            engine: EngineConfig::default(),
            config: ServerConfig::default(),
        }
    }
}
