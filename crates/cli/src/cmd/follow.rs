//! Following a task at the terminal (`call` and `watch`): updates into the spinner,
//! questions answered by prompts, Ctrl-C asking whether to cancel or detach, and the
//! outcome printed with its exit status.

use console::style;
use futures::StreamExt;
use mcp_tasks_client::{
    Client, ClientBuilder, ClientError, Target, TaskHandle, TaskOutcome, TaskStatus, TaskUpdate,
    Wire,
};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use tokio::signal::unix::{signal, Signal, SignalKind};

use super::args::{ConnectArgs, FollowArgs, WireArg};
use super::exit::{fail, EXIT_CANCELLED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK};
use super::output::{self, out};
use super::terminal::{roots, AfterInterrupt, Terminal};
use crate::journal::Journal;

/// Runs a subcommand that follows a task (`call`, `watch`): connects to `target` with
/// a terminal whose prompts answer the server's questions, lets `body` follow the task
/// with the client and that terminal, then detaches or closes as
/// [`Followed::finish`] does. Returns the exit status.
pub async fn connect_and_follow<F, Fut>(
    target: &Target,
    connect: &ConnectArgs,
    follow: &FollowArgs,
    body: F,
) -> u8
where
    F: FnOnce(Client, Arc<Terminal>) -> Fut,
    Fut: Future<Output = Followed>,
{
    let term = Arc::new(Terminal::new(connect.json));
    let logs = Arc::clone(&term);
    let builder = with_prompts(connect.builder(), &term).on_log(move |log| logs.log(&log));
    let client = match builder.connect(target).await {
        Ok(c) => c,
        Err(e) => return super::exit::fail_to_connect(target, &e),
    };
    if let Some(level) = follow.log_level {
        if let Err(e) = client.set_log_level(level).await {
            term.status(format!("could not set the log level to {level}: {e}"));
        }
    }
    let followed = body(client.clone(), Arc::clone(&term)).await;
    followed.finish(client, connect.session.is_some()).await
}

/// Registers the terminal's prompts as the client's input handlers.
fn with_prompts(builder: ClientBuilder, term: &Arc<Terminal>) -> ClientBuilder {
    let (e, s) = (Arc::clone(term), Arc::clone(term));
    builder
        .on_elicitation(move |r| {
            let t = Arc::clone(&e);
            async move { t.elicit(r).await }
        })
        .on_sampling(move |r| {
            let t = Arc::clone(&s);
            async move { t.sample(r).await }
        })
        .on_roots(|_| async { Ok(roots()) })
}

/// How following ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Followed {
    /// The exit status.
    pub code: u8,
    /// The person detached: leave the session open (`Client::detach`).
    pub detached: bool,
}

impl Followed {
    /// Ended without detaching.
    pub fn done(code: u8) -> Self {
        Followed {
            code,
            detached: false,
        }
    }

    /// Detaches or closes the client as this outcome asks; returns the exit status.
    pub async fn finish(self, client: Client, rejoined: bool) -> u8 {
        if self.detached || rejoined {
            client.detach().await;
        } else {
            client.close().await;
        }
        self.code
    }
}

/// How a followed task is shown and remembered.
#[derive(Debug, Clone)]
pub struct Watching {
    /// `--json` output.
    pub json: bool,
    /// The command that picks the task up again (`{id}` marks the task id); `None`
    /// for a stdio server, which stops with this command.
    pub resume: Option<String>,
    /// The journal to record the task's final state in.
    pub journal: Option<Journal>,
    /// The server's public address (`--public-url`), for the task board link printed
    /// when the task waits for a person; without it the board next to the MCP URL,
    /// when the server has one.
    pub board: Option<String>,
    /// The server followed.
    pub target: Target,
}

/// The next Ctrl-C, or never when it cannot be caught.
async fn next_interrupt(interrupts: &mut Option<Signal>) -> Option<()> {
    match interrupts.as_mut() {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}

/// Follows `handle` to its end and prints the outcome. Ctrl-C asks whether to cancel,
/// detach or go on watching; a second Ctrl-C while that question is open leaves at
/// once (exit status 130), the task going on.
pub async fn follow(
    client: &Client,
    mut handle: TaskHandle,
    term: &Terminal,
    w: &Watching,
) -> Followed {
    let id = handle.task_id().cloned();
    let mut updates = handle.updates();
    let result = handle.result();
    tokio::pin!(result);
    let mut interrupts = match signal(SignalKind::interrupt()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::debug!(error = %e, "cannot catch Ctrl-C");
            None
        }
    };
    let extension = client.wire() == Wire::V2026_07_28;
    let leave = |id: &mcp_tasks_client::TaskId, code: u8| {
        term.finish();
        detached(
            id,
            w.resume.as_deref(),
            w.json,
            client.session_id(),
            client.wire(),
        );
        Followed {
            code,
            detached: true,
        }
    };
    // Where people answer this task besides this terminal: its page on the board.
    let page = match &id {
        Some(id) => super::board::board_root(&w.target, w.board.as_deref())
            .await
            .map(|root| format!("{root}/tasks/{id}")),
        None => None,
    };
    if let Some(page) = &page {
        term.answer_also(format!("on the task board: {page}"));
    }
    let mut told_approvers = false;
    loop {
        tokio::select! {
            Some(u) = updates.next() => {
                if let TaskUpdate::Status(t) = &u {
                    if !told_approvers && waits_for_approval(t) {
                        told_approvers = true;
                        term.note(&match &page {
                            Some(page) => format!("the call waits for approval; approvers decide on the task board: {page}"),
                            None => "the call waits for approval by people this terminal does not reach".to_string(),
                        });
                    }
                }
                show(term, u, extension)
            }
            r = &mut result => {
                term.finish();
                if let (Some(j), Ok(o)) = (&w.journal, &r) {
                    j.update(o.task.as_ref());
                }
                return Followed::done(outcome(r, w.json));
            }
            Some(()) = next_interrupt(&mut interrupts) => {
                term.interrupt();
                let Some(id) = &id else { continue };
                if !term.is_interactive() {
                    return leave(id, EXIT_INTERRUPTED);
                }
                let choice = tokio::select! {
                    c = term.after_interrupt() => c,
                    Some(()) = next_interrupt(&mut interrupts) => {
                        eprintln!();
                        return leave(id, EXIT_INTERRUPTED);
                    }
                };
                match choice {
                    AfterInterrupt::Continue => {}
                    AfterInterrupt::Detach => return leave(id, EXIT_OK),
                    AfterInterrupt::Cancel => {
                        term.status(format!("cancelling {id}…"));
                        if let Err(e) = client.cancel(id).await {
                            term.finish();
                            return Followed::done(fail("cancelling the task", &e));
                        }
                    }
                }
            }
        }
    }
}

/// The percentage a status message states ("x: 33% done" → 33), if any.
fn percent_in(text: &str) -> Option<f64> {
    let end = text.find('%')?;
    let digits = text[..end]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || *c == '.')
        .last()
        .map(|(i, _)| &text[i..end])?;
    digits
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
}

fn show(term: &Terminal, update: TaskUpdate, extension: bool) {
    match update {
        // How the task ended is said once, by `outcome`, with the result.
        TaskUpdate::Status(t) if t.status.is_terminal() => {}
        TaskUpdate::Status(t) => {
            let text = match &t.status_message {
                Some(m) => format!("{}: {m}", t.shown_status()),
                None => t.shown_status().to_string(),
            };
            // The extension wire has no progress notifications: a percentage in the
            // status message drives the progress bar instead.
            match t.status_message.as_deref().and_then(percent_in) {
                Some(p) if extension && !t.status.is_terminal() => {
                    term.progress(p, 100.0, Some(text));
                }
                _ => term.status(text),
            }
        }
        TaskUpdate::Progress(p) => match p.total {
            Some(total) => term.progress(p.progress, total, p.message),
            None => {
                if let Some(m) = p.message {
                    term.status(m);
                }
            }
        },
        // The prompt itself shows the question.
        TaskUpdate::InputRequested(_) => {}
        _ => {}
    }
}

/// Prints that the command stopped watching and how to pick the task up again
/// (rejoining `session` when there is one); with no `resume` command (a stdio server)
/// says that the task stops with the server. The JSON form also names the task wire
/// the connection spoke (`"wire": "2026-07-28"` for the Tasks extension), so a script
/// (or a test) sees what `--wire auto` chose.
pub fn detached(
    id: &mcp_tasks_client::TaskId,
    resume: Option<&str>,
    json: bool,
    session: Option<String>,
    wire: Wire,
) {
    if json {
        out(json!({
            "taskId": id,
            "detached": true,
            "sessionId": session,
            "wire": wire.protocol_version(),
        }));
    } else {
        out(id);
    }
    let note = style("detached:").yellow().for_stderr();
    match resume {
        Some(resume) => {
            let mut resume = resume.to_string();
            if let Some(s) = &session {
                resume = resume.replacen("{id}", &format!("--session {s} {{id}}"), 1);
            }
            eprintln!(
                "{note} the task goes on; follow it with: {}",
                resume.replace("{id}", id.as_str())
            );
        }
        None => eprintln!("{note} this command's stdio server stops now, and the task with it"),
    }
}

/// Prints how a task ended; returns the exit status.
pub fn outcome(r: Result<TaskOutcome, ClientError>, json: bool) -> u8 {
    let o = match r {
        Ok(o) => o,
        Err(e) => return fail("following the task", &e),
    };
    let status = o.status();
    if json {
        let v = match (&o.result, &o.error) {
            (Some(r), _) => r.clone(),
            (None, Some(e)) => {
                json!({ "taskId": o.task.as_ref().map(|t| &t.id), "status": status.as_str(), "error": e.to_value() })
            }
            (None, None) => {
                json!({ "taskId": o.task.as_ref().map(|t| &t.id), "status": status.as_str() })
            }
        };
        out(v);
    } else {
        say_outcome(&o, status);
    }
    if o.succeeded() {
        EXIT_OK
    } else if status == TaskStatus::Cancelled {
        EXIT_CANCELLED
    } else {
        EXIT_FAILED
    }
}

/// Prints how a task ended, for a person, each thing once: a result on stdout; a
/// failure on stderr as one `✘ failed:` line with the tool's own words (a tool error)
/// or the server's error; a cancellation as `⊘ cancelled` with its status message.
fn say_outcome(o: &TaskOutcome, status: TaskStatus) {
    let message = o.task.as_ref().and_then(|t| t.status_message.clone());
    let failed = style("✘ failed:").red().bold().for_stderr();
    match (&o.error, status) {
        (Some(e), _) => eprintln!("{failed} {} (error {})", e.message, e.code),
        (None, TaskStatus::Cancelled) => eprintln!(
            "{}{}",
            style("⊘ cancelled").yellow().bold().for_stderr(),
            message.map(|m| format!(": {m}")).unwrap_or_default()
        ),
        (None, _) if o.succeeded() => {
            if let Some(r) = &o.result {
                out(output::result_text(r, o.text()));
            }
        }
        // A tool error (failed on 2025-11-25, completed on the extension): the tool's
        // own words, whole.
        (None, _) => {
            let said = match &o.result {
                Some(r) => output::result_text(r, o.text()),
                None => message.unwrap_or_else(|| "the task failed".into()),
            };
            eprintln!("{failed} {}", said.trim_end());
        }
    }
}

/// Whether the task waits for its approvers (people other than the caller, so no
/// question reaches this terminal): our server's approval gate says so in the status
/// message.
fn waits_for_approval(t: &mcp_tasks_client::TaskView) -> bool {
    !t.status.is_terminal()
        && t.status_message
            .as_deref()
            .is_some_and(|m| m.starts_with("waiting for approval"))
}

/// The result of a plain (non-task) call, printed like a task's.
pub fn immediate(r: Result<Value, ClientError>, json: bool) -> u8 {
    outcome(
        r.map(|v| TaskOutcome {
            task: None,
            result: Some(v),
            error: None,
        })
        .or_else(|e| match e {
            ClientError::Rpc(e) => Ok(TaskOutcome {
                task: None,
                result: None,
                error: Some(e),
            }),
            other => Err(other),
        }),
        json,
    )
}

/// The `watch` command line that follows a task of this HTTP server (`{id}` marks
/// where the task id goes), keeping `--json` and `--wire` when they were given; `None`
/// for a stdio server, whose tasks stop with it.
pub fn resume_command(target: &Target, c: &ConnectArgs) -> Option<String> {
    let Target::Http(url) = target else {
        return None;
    };
    let json = if c.json { " --json" } else { "" };
    let wire = match c.wire {
        WireArg::Auto => "",
        WireArg::V2025 => " --wire 2025-11-25",
        WireArg::V2026 => " --wire 2026-07-28",
    };
    Some(format!("mcp-tasks watch{json}{wire} {url} {{id}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_percentage_in_a_status_message_is_progress() {
        assert_eq!(percent_in("x: 33% done"), Some(33.0));
        assert_eq!(percent_in("12.5%"), Some(12.5));
        assert_eq!(percent_in("100% done"), Some(100.0));
        assert_eq!(percent_in("no figure"), None);
        assert_eq!(percent_in("% of nothing"), None);
        assert_eq!(percent_in("250%"), None);
    }
}
