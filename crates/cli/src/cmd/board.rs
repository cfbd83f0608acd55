//! Where a task's people answer it: the server's task board, found at the address the
//! person gave (`--public-url`) or next to the MCP URL.

use mcp_tasks_client::Target;
use std::time::Duration;

/// How long the look for a board next to the MCP URL may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The root of the server's task board (ending in `/board`, no slash after): under
/// `public_url` when given, else next to an HTTP target's MCP URL when the board's
/// `/board/api/me` answers there (one GET: 200 signed in, 401 or 403 not). `None` for
/// a stdio server, or when no board answers.
pub async fn board_root(target: &Target, public_url: Option<&str>) -> Option<String> {
    if let Some(url) = public_url {
        return Some(format!("{}/board", url.trim_end_matches('/')));
    }
    let Target::Http(url) = target else {
        return None;
    };
    let origin = origin(url)?;
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let answered = client
        .get(format!("{origin}/board/api/me"))
        .send()
        .await
        .ok()?;
    matches!(answered.status().as_u16(), 200 | 401 | 403).then(|| format!("{origin}/board"))
}

/// `scheme://host[:port]` of `url`.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_is_scheme_and_host() {
        assert_eq!(
            origin("http://127.0.0.1:8080/mcp").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin("https://tasks.example.com").as_deref(),
            Some("https://tasks.example.com")
        );
        assert_eq!(origin("nope"), None);
    }

    #[tokio::test]
    async fn a_public_url_names_the_board() {
        let t = Target::Http("http://127.0.0.1:1/mcp".into());
        assert_eq!(
            board_root(&t, Some("https://tasks.example.com/"))
                .await
                .as_deref(),
            Some("https://tasks.example.com/board")
        );
    }
}
