//! One module per subcommand.

pub mod call;
pub mod cancel;
pub mod client;
mod follow;
pub mod get;
pub mod list;
mod output;
mod prompt;
pub mod serve;
mod terminal;
pub mod tools;
pub mod watch;
