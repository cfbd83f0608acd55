//! The documentation as tests read it: the README and every page of `docs/`, and the
//! fenced code blocks of a page. Shared by the checks that keep the docs true to the
//! binary (commands parse, configs load, configs start the server).

use std::path::Path;

/// README.md and every Markdown page in `docs/` under `root` (the repository), sorted,
/// each as (file name, text).
///
/// # Panics
/// When a page cannot be read: a test has nothing to check then.
pub fn pages(root: &Path) -> Vec<(String, String)> {
    let mut paths = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/ can be read") {
        let path = entry.expect("a docs/ entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&p).expect("a page can be read");
            (name, text)
        })
        .collect()
}

/// The fenced code blocks of a page: (line of the first body line, info string, body
/// lines).
pub fn code_blocks(text: &str) -> Vec<(usize, String, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => open = Some((i + 2, info.trim().to_string(), Vec::new())),
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some((_, _, body)), None) => body.push(line.to_string()),
            (None, None) => {}
        }
    }
    blocks
}
