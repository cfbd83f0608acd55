//! The task list rendered on the server, so the board shows the tasks without
//! JavaScript (a locked-down browser, a text browser, a screen reader that runs no
//! script, the first paint before the script loads). The script then only refreshes
//! what is already there. A row here has the same cells as the script's `rowCells`;
//! every piece of task data goes through [`escape`].

use chrono::{TimeZone, Utc};
use serde_json::Value;

use crate::html::escape;

/// The list's `<tbody>` content: one row per task, or the empty-list row.
pub(crate) fn rows(tasks: &[Value], operator: bool) -> String {
    if tasks.is_empty() {
        return format!(
            "<tr class=\"empty\"><td colspan=\"{}\">No tasks yet.</td></tr>",
            if operator { 6 } else { 5 }
        );
    }
    tasks.iter().map(|t| row(t, operator)).collect()
}

/// The tabs above the list: All and one per state, each a link to the list filtered
/// by it (keeping the tool and search), with its count from
/// [`crate::console::counts_json`] (none when the counts could not be read). The
/// chosen one (`status`, empty for All) is marked `aria-current`.
pub(crate) fn tabs(status: &str, tool: &str, q: &str, counts: Option<&Value>) -> String {
    let tabs = std::iter::once(("", "All")).chain(
        crate::console::TAB_STATES
            .iter()
            .map(|s| (s.as_str(), tab_label(s.as_str()))),
    );
    let links: String = tabs
        .map(|(value, label)| {
            let mut query = Vec::new();
            for (name, v) in [("status", value), ("tool", tool), ("q", q)] {
                if !v.is_empty() {
                    query.push((name, v));
                }
            }
            let href = match serde_urlencoded::to_string(&query) {
                Ok(encoded) if !encoded.is_empty() => format!("/board?{encoded}"),
                _ => "/board".to_string(),
            };
            let key = if value.is_empty() { "all" } else { value };
            let count = counts
                .and_then(|c| c[key].as_u64())
                .map(|n| {
                    // A zero is not coloured: only what is there draws the eye.
                    let zero = if n == 0 { " zero" } else { "" };
                    let at_least = key == "failed"
                        && counts.is_some_and(|c| c["failedAtLeast"] == true)
                        && n <= crate::console::COUNT_CAP as u64;
                    format!(
                        " <span class=\"count{zero}\">{}{}</span>",
                        crate::console::count_text(n),
                        if at_least { "+" } else { "" }
                    )
                })
                .unwrap_or_default();
            let current = if value == status {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!(
                "<a class=\"tab tab-{key}\" data-status=\"{value}\" href=\"{href}\"{current}>{label}{count}</a>",
                href = escape(&href),
            )
        })
        .collect();
    format!("<nav id=\"tabs\" aria-label=\"Tasks by state\">{links}</nav>")
}

/// A tab's name: what a person calls the state.
fn tab_label(status: &str) -> &'static str {
    match status {
        "working" => "Working",
        "input_required" => "Waiting",
        "completed" => "Completed",
        "failed" => "Failed",
        "cancelled" => "Cancelled",
        _ => "Other",
    }
}

pub(crate) fn text<'a>(task: &'a Value, field: &str) -> &'a str {
    task[field].as_str().unwrap_or("")
}

/// One row; the tool's name links to the task's page.
fn row(task: &Value, operator: bool) -> String {
    let id = text(task, "id");
    let status = text(task, "status");
    let questions = match task["questions"].as_u64().unwrap_or(0) {
        0 => String::new(),
        1 => " <span class=\"badge\">1 question</span>".to_string(),
        n => format!(" <span class=\"badge\">{n} questions</span>"),
    };
    let progress = match progress_text(&task["progress"]) {
        Some(p) => format!("<span class=\"progress\">{}</span>", escape(&p)),
        None => String::new(),
    };
    let owner = if operator {
        format!("<td class=\"owner\">{}</td>", escape(text(task, "owner")))
    } else {
        String::new()
    };
    let badge = badge(task, "");
    format!(
        "<tr data-id=\"{id}\" data-status=\"{status}\" data-updated=\"{updated_ms}\" tabindex=\"0\">\
         <td>{badge}{questions}</td>\
         <td class=\"tool\"><a href=\"/board/tasks/{id}\">{tool}</a></td>\
         <td class=\"message\">{message}{progress}</td>\
         <td class=\"time created\">{created}</td><td class=\"time updated\">{updated}</td>{owner}</tr>",
        id = escape(id),
        status = escape(status),
        tool = escape(text(task, "tool")),
        message = escape(text(task, "statusMessage")),
        updated_ms = task["updatedAt"].as_i64().unwrap_or(0),
        created = when(&task["createdAt"]),
        updated = when(&task["updatedAt"]),
    )
}

/// The status badge, as the script's `statusBadge`: a tool error is called one, with
/// the tool's words; `attrs` adds attributes (an `id`).
pub(crate) fn badge(task: &Value, attrs: &str) -> String {
    let status = text(task, "status");
    match task["toolError"].as_str() {
        Some(words) => format!(
            "<span class=\"status status-tool-error\" title=\"{}\"{attrs}>tool error</span>",
            escape(words)
        ),
        None => format!(
            "<span class=\"status status-{}\"{attrs}>{}</span>",
            escape(status),
            escape(&status.replace('_', " "))
        ),
    }
}

/// A time in milliseconds since the epoch, as UTC (the script shows local time).
pub(crate) fn when(ms: &Value) -> String {
    ms.as_i64()
        .and_then(|ms| Utc.timestamp_millis_opt(ms).single())
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

/// `3/10 message`, as the script's `progressText`.
fn progress_text(p: &Value) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let number = |v: &Value| match v.as_f64() {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => x.to_string(),
        None => String::new(),
    };
    let amount = match p.get("total").filter(|t| !t.is_null()) {
        Some(total) => format!("{}/{}", number(&p["progress"]), number(total)),
        None => number(&p["progress"]),
    };
    Some(match p["message"].as_str() {
        Some(m) if !m.is_empty() => format!("{amount} {m}"),
        _ => amount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_show_the_cells_and_escape_task_data() {
        let task = json!({"id": "abc", "status": "input_required", "tool": "<b>x</b>",
            "statusMessage": "waiting & \"quoted\"", "createdAt": 0, "updatedAt": 1000,
            "questions": 2, "progress": {"progress": 3, "total": 10, "message": "rows"},
            "owner": "alice"});
        let html = rows(std::slice::from_ref(&task), true);
        assert!(html.contains("data-id=\"abc\""), "{html}");
        assert!(html.contains("href=\"/board/tasks/abc\""), "{html}");
        assert!(html.contains("input required"), "{html}");
        assert!(html.contains("2 questions"), "{html}");
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert!(html.contains("waiting &amp; &quot;quoted&quot;"), "{html}");
        assert!(html.contains("3/10 rows"), "{html}");
        assert!(html.contains("1970-01-01 00:00:01 UTC"), "{html}");
        assert!(html.contains("<td class=\"owner\">alice</td>"), "{html}");
        assert!(!rows(&[task], false).contains("alice"));
        assert!(rows(&[], false).contains("No tasks yet."));
        let failed = json!({"id": "t", "status": "completed", "tool": "x",
            "toolError": "disk <full>", "createdAt": 0, "updatedAt": 0});
        let html = rows(&[failed], false);
        assert!(html.contains("status-tool-error"), "{html}");
        assert!(html.contains(">tool error</span>"), "{html}");
        assert!(html.contains("title=\"disk &lt;full&gt;\""), "{html}");
    }

    #[test]
    fn tabs_link_each_state_with_its_count_keeping_the_filter() {
        let counts = json!({"all": 1001, "working": 2, "input_required": 1, "completed": 0,
            "failed": 3, "cancelled": 0, "cap": 1000});
        let html = tabs("failed", "fs <x>", "", Some(&counts));
        assert!(
            html.contains(">All <span class=\"count\">1000+</span></a>"),
            "{html}"
        );
        assert!(
            html.contains(">Waiting <span class=\"count\">1</span>"),
            "{html}"
        );
        assert!(
            html.contains("data-status=\"failed\" href=\"/board?status=failed&amp;tool=fs+%3Cx%3E\" aria-current=\"page\""),
            "{html}"
        );
        assert!(
            html.contains("data-status=\"\" href=\"/board?tool=fs+%3Cx%3E\">"),
            "{html}"
        );
        assert_eq!(html.matches("aria-current").count(), 1, "{html}");
        assert!(!tabs("", "", "", None).contains("count"));
        assert!(tabs("", "", "", None).contains("href=\"/board\" aria-current"));
    }
}
