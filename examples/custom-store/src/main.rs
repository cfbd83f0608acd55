//! Serves one task tool over stdio with tasks kept in [`JournalStore`], and prints the
//! journal to stderr when the client disconnects.

use example_custom_store::JournalStore;
use mcp_tasks::prelude::*;
use std::sync::Arc;

#[derive(Deserialize, JsonSchema)]
struct Note {
    /// What to remember.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), BuildError> {
    let store = JournalStore::new();
    let remember = Tool::from_fn(
        "remember",
        "Stores a note as a task result.",
        |n: Note| async move { format!("noted: {}", n.text) },
    )
    .task_support(TaskSupport::Optional);
    let server = Server::builder()
        .name("journal-example")
        .store(Arc::new(store.clone()))
        .tool(remember)
        .build()
        .await?;
    server.serve_stdio().await?;
    for line in store.journal() {
        eprintln!("journal: {line}");
    }
    Ok(())
}
