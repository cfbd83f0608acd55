//! `bench` in a build without the `bench` feature: the subcommand stays (so that it
//! can say what is missing) and refuses whatever it is given.

/// Whatever `bench` was given; nothing of it is read.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// This build has no `bench` feature.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<String>,
}

/// Refuses: this build has no `bench` feature. (An `io::Error` as the bench crate's
/// `run` returns an error of its own that `main` converts.)
///
/// # Errors
/// Always, naming the feature.
pub async fn run(_args: BenchArgs) -> std::io::Result<()> {
    let missing = crate::features::missing("`mcp-tasks bench`", "bench");
    Err(std::io::Error::other(missing.to_string()))
}
