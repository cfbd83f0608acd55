//! A task's detail rendered on the server, for `/board/tasks/{id}` without JavaScript
//! (the list links there): status, message, the outcome, open questions and the
//! timeline. Answering and cancelling need the script, which replaces this pane with
//! its own live one.

use serde_json::Value;

use crate::html::escape;
use crate::list_html::{badge, text, when};

/// The pane's content for `task` (the JSON of [`crate::view::detail`]).
pub(crate) fn pane(task: &Value) -> String {
    let mut out = format!(
        "<h2><span class=\"tool\">{}</span> {}</h2>\
         <p class=\"meta\">Task <code id=\"detail-id\">{}</code>{} · created {} · updated {}</p>",
        escape(text(task, "tool")),
        badge(task, " id=\"detail-status\""),
        escape(text(task, "id")),
        match task["owner"].as_str() {
            Some(owner) => format!(" · owner {}", escape(owner)),
            None => String::new(),
        },
        when(&task["createdAt"]),
        when(&task["updatedAt"]),
    );
    // A tool error is said once, in its own words (not again as the status message).
    if let Some(message) = task["statusMessage"]
        .as_str()
        .filter(|_| task["toolError"].is_null())
    {
        out.push_str(&format!(
            "<p class=\"status-message\">{}</p>",
            escape(message)
        ));
    }
    if let Some(words) = task["toolError"].as_str() {
        out.push_str(&format!(
            "<p class=\"tool-error\">Tool error: {}</p>",
            escape(words)
        ));
    } else if let Some(content) = task["result"]["content"].as_array() {
        out.push_str("<section class=\"result\"><h3>Result</h3>");
        for item in content {
            match item["text"].as_str() {
                Some(t) => out.push_str(&format!("<pre>{}</pre>", escape(t))),
                None => out.push_str(&format!(
                    "<p class=\"hint\">({} content: see it with JavaScript on)</p>",
                    escape(item["type"].as_str().unwrap_or("other"))
                )),
            }
        }
        out.push_str("</section>");
    }
    if let Some(message) = task["error"]["message"].as_str() {
        out.push_str(&format!("<p class=\"error\">{}</p>", escape(message)));
    }
    for question in task["questions"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "<section class=\"question\"><h3>{}</h3><p class=\"hint\">Answering a question \
             needs JavaScript: turn it on, or answer with a client \
             (<code>mcp-tasks watch</code>).</p></section>",
            escape(text(question, "message"))
        ));
    }
    let related: String = task["relatedTaskIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|id| {
            format!(
                "<li><a href=\"/board/tasks/{id}\"><code>{id}</code></a></li>",
                id = escape(id)
            )
        })
        .collect();
    if !related.is_empty() {
        out.push_str(&format!(
            "<h3>Related tasks</h3><ul class=\"related\">{related}</ul>"
        ));
    }
    let timeline = task["timeline"].as_array().into_iter().flatten();
    let entries: String = timeline
        .map(|entry| {
            format!(
                "<li>{} {}{}</li>",
                when(&entry["at"]),
                escape(&text(entry, "status").replace('_', " ")),
                match entry["statusMessage"].as_str() {
                    Some(m) => format!(": {}", escape(m)),
                    None => String::new(),
                }
            )
        })
        .collect();
    if !entries.is_empty() {
        out.push_str(&format!(
            "<h3>Timeline</h3><ol class=\"timeline\">{entries}</ol>"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn asking_none() -> Value {
        json!({"id": "t5", "tool": "x", "status": "working", "relatedTaskIds": []})
    }

    #[test]
    fn the_pane_shows_the_outcome_questions_and_timeline_escaped() {
        let task = json!({"id": "t1", "tool": "deploy", "status": "completed",
            "statusMessage": "all <done>", "createdAt": 0, "updatedAt": 0,
            "result": {"content": [{"type": "text", "text": "ok & out"}]},
            "questions": [], "timeline": [
                {"at": 0, "status": "working", "statusMessage": null},
                {"at": 1000, "status": "completed", "statusMessage": "all <done>"}]});
        let html = pane(&task);
        assert!(html.contains("<code id=\"detail-id\">t1</code>"), "{html}");
        assert!(html.contains("all &lt;done&gt;"), "{html}");
        assert!(html.contains("<pre>ok &amp; out</pre>"), "{html}");
        assert!(
            html.contains("<li>1970-01-01 00:00:01 UTC completed: all &lt;done&gt;</li>"),
            "{html}"
        );
        let related = json!({"id": "t4", "tool": "x", "status": "working",
            "relatedTaskIds": ["abc", "d-e"]});
        let html = pane(&related);
        assert!(
            html.contains("<h3>Related tasks</h3>")
                && html.contains("<a href=\"/board/tasks/abc\"><code>abc</code></a>")
                && html.contains("/board/tasks/d-e"),
            "{html}"
        );
        assert!(!pane(&asking_none()).contains("Related tasks"));
        let asking = json!({"id": "t2", "tool": "x", "status": "input_required",
            "questions": [{"key": "k", "message": "Deploy <now>?"}]});
        assert!(pane(&asking).contains("<h3>Deploy &lt;now&gt;?</h3>"));
        let failed = json!({"id": "t3", "tool": "x", "status": "completed",
            "toolError": "disk full", "result": {"content": [{"type": "text", "text": "disk full"}]}});
        let html = pane(&failed);
        assert!(
            html.contains("Tool error: disk full") && !html.contains("<pre>"),
            "{html}"
        );
    }
}
