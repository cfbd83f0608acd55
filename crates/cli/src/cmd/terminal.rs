//! The terminal side of the client commands: a spinner (or progress bar) on stderr
//! while a task works, prompts on stderr for the server's questions, answers read from
//! stdin line by line, and the question asked after Ctrl-C.
//!
//! stdout carries only the result, so `--json` output stays clean. Colours and the
//! spinner appear only when stderr is a terminal.

use console::style;
use indicatif::{ProgressBar, ProgressStyle};
use mcp_tasks_client::input::{self, InputRequest};
use mcp_tasks_client::{RpcError, ServerLog};
use mcp_tasks_protocol::answer;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};

use super::prompt;

/// How often one form is asked before the question is cancelled, when what was typed
/// never fits the form as a whole.
const MAX_FORM_ROUNDS: usize = 3;

/// One line of input, or why there is none.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    Text(String),
    Eof,
    Interrupted,
}

/// What to do after Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterInterrupt {
    /// Cancel the task on the server.
    Cancel,
    /// Stop watching; the task goes on.
    Detach,
    /// Go on watching.
    Continue,
}

/// The spinner / progress bar, which can be paused while a prompt is shown.
#[derive(Debug)]
struct Spinner {
    enabled: bool,
    state: Mutex<SpinnerState>,
}

#[derive(Debug, Default)]
struct SpinnerState {
    bar: Option<ProgressBar>,
    message: String,
    /// Progress in thousandths, once a total is known.
    permille: Option<u64>,
    paused: bool,
}

impl Spinner {
    fn draw(state: &mut SpinnerState) {
        let bar = state.bar.get_or_insert_with(|| {
            let b = ProgressBar::new_spinner();
            b.enable_steady_tick(Duration::from_millis(100));
            b
        });
        let template = match state.permille {
            Some(_) => "{spinner:.cyan} [{bar:30.cyan/blue}] {percent:>3}% {msg}",
            None => "{spinner:.cyan} {msg}",
        };
        if let Ok(s) = ProgressStyle::with_template(template) {
            bar.set_style(s.progress_chars("=> "));
        }
        if let Some(p) = state.permille {
            bar.set_length(1000);
            bar.set_position(p);
        }
        bar.set_message(state.message.clone());
    }

    fn update(&self, message: Option<String>, permille: Option<u64>) {
        let mut s = self.state.lock();
        if let Some(m) = message {
            s.message = m;
        }
        if permille.is_some() {
            s.permille = permille;
        }
        if self.enabled && !s.paused {
            Self::draw(&mut s);
        }
    }

    fn pause(&self) {
        let mut s = self.state.lock();
        s.paused = true;
        if let Some(b) = s.bar.take() {
            b.finish_and_clear();
        }
    }

    fn resume(&self) {
        let mut s = self.state.lock();
        s.paused = false;
        if self.enabled && !s.message.is_empty() {
            Self::draw(&mut s);
        }
    }

    fn finish(&self) {
        let mut s = self.state.lock();
        s.paused = true;
        if let Some(b) = s.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// The terminal a client command talks to.
#[derive(Debug)]
pub struct Terminal {
    spinner: Spinner,
    /// Whether stdin is a terminal (a person can answer the Ctrl-C question).
    interactive: bool,
    /// Whether status changes are printed as lines (stderr is not a terminal and the
    /// output is for people).
    lines: bool,
    /// One prompt session at a time (a task may ask two questions at once).
    prompting: tokio::sync::Mutex<()>,
    interrupt: Notify,
    /// What the person chose after the latest Ctrl-C (with a count, so a waiting
    /// question sees each choice once): a question interrupted at its prompt waits for
    /// it, to ask again (watch on), answer nothing (detach: the question stays open for
    /// the board or another client), or let the cancel end it.
    decided: tokio::sync::watch::Sender<(u64, AfterInterrupt)>,
    /// Where else the task's questions can be answered (its page on the task board),
    /// said above each question.
    elsewhere: Mutex<Option<String>>,
}

/// How a prompt ended.
enum Prompted {
    /// The answer to send.
    Answer(Value),
    /// Ctrl-C at the prompt: what follows is the person's choice.
    Interrupted,
}

/// Lines of stdin, read by one thread for the whole process.
fn stdin_lines() -> &'static tokio::sync::Mutex<mpsc::UnboundedReceiver<String>> {
    static LINES: OnceLock<tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>> = OnceLock::new();
    LINES.get_or_init(|| {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            loop {
                line.clear();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        let text = line.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(text).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        tokio::sync::Mutex::new(rx)
    })
}

fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}");
    let _ = err.flush();
}

impl Terminal {
    /// A terminal; `quiet` turns off the spinner and status lines (`--json`).
    pub fn new(quiet: bool) -> Self {
        let fancy = std::io::stderr().is_terminal();
        Terminal {
            spinner: Spinner {
                enabled: fancy,
                state: Mutex::new(SpinnerState::default()),
            },
            interactive: std::io::stdin().is_terminal(),
            lines: !fancy && !quiet,
            prompting: tokio::sync::Mutex::new(()),
            interrupt: Notify::new(),
            decided: tokio::sync::watch::channel((0, AfterInterrupt::Continue)).0,
            elsewhere: Mutex::new(None),
        }
    }

    /// Says above each question that it can also be answered at `place` (e.g. "on the
    /// task board: URL").
    pub fn answer_also(&self, place: String) {
        *self.elsewhere.lock() = Some(place);
    }

    /// Whether a person can answer questions at this terminal.
    pub fn is_interactive(&self) -> bool {
        self.interactive
    }

    /// Shows a status line: in the spinner on a terminal, as a line otherwise.
    pub fn status(&self, text: String) {
        if self.spinner.enabled {
            self.spinner.update(Some(text), None);
        } else if self.lines {
            eprintln!("{text}");
        }
    }

    /// Shows progress (a fraction of the total) with its message.
    pub fn progress(&self, done: f64, total: f64, message: Option<String>) {
        if total > 0.0 && self.spinner.enabled {
            let permille = ((done / total).clamp(0.0, 1.0) * 1000.0).round() as u64;
            self.spinner.update(message, Some(permille));
        } else if let Some(m) = message {
            self.status(m);
        } else if total > 0.0 {
            // Without a spinner the figures are the whole message.
            self.status(format!("progress {done}/{total}"));
        }
    }

    /// Shows a log message of the server as a line above the spinner (or a plain line);
    /// not with `--json`, like status lines.
    pub fn log(&self, log: &ServerLog) {
        if !self.spinner.enabled && !self.lines {
            return;
        }
        let origin = log
            .logger
            .as_deref()
            .map(|l| format!("{l}: "))
            .unwrap_or_default();
        let line = format!(
            "{} {origin}{}",
            style(format!("[{}]", log.level)).dim(),
            log.text()
        );
        let s = self.spinner.state.lock();
        match &s.bar {
            Some(bar) if !s.paused => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }

    /// Prints a line on stderr above the spinner, whatever the output mode (stdout
    /// stays clean for `--json`).
    pub fn note(&self, line: &str) {
        let s = self.spinner.state.lock();
        match &s.bar {
            Some(bar) if !s.paused => bar.println(line),
            _ => eprintln!("{line}"),
        }
    }

    /// Removes the spinner before the result is printed. A question still waiting at
    /// the prompt was answered elsewhere (on the task board, by another client): the
    /// prompt's line is ended and that said, so the result does not run into it.
    pub fn finish(&self) {
        if self.prompting.try_lock().is_err() {
            eprintln!();
            eprintln!("(the question was answered elsewhere, e.g. on the task board)");
        }
        self.spinner.finish();
    }

    /// Cuts a prompt in progress short (Ctrl-C): the choice that follows decides what
    /// becomes of its question (see [`Terminal::elicit`]).
    pub fn interrupt(&self) {
        self.interrupt.notify_waiters();
    }

    async fn read_line(&self) -> Line {
        let mut lines = stdin_lines().lock().await;
        tokio::select! {
            l = lines.recv() => l.map_or(Line::Eof, Line::Text),
            _ = self.interrupt.notified() => Line::Interrupted,
        }
    }

    /// Asks what to do after Ctrl-C.
    pub async fn after_interrupt(&self) -> AfterInterrupt {
        let _turn = self.prompting.lock().await;
        self.spinner.pause();
        let answer = loop {
            say(&format!(
                "\n{} Interrupted. [c]ancel the task, [d]etach (it keeps running), or [w]atch on? ",
                style("?").yellow().bold().for_stderr()
            ));
            match self.read_line().await {
                Line::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
                    "c" | "cancel" => break AfterInterrupt::Cancel,
                    "d" | "detach" => break AfterInterrupt::Detach,
                    "w" | "watch" | "" => break AfterInterrupt::Continue,
                    _ => continue,
                },
                Line::Eof | Line::Interrupted => break AfterInterrupt::Detach,
            }
        };
        self.spinner.resume();
        self.decided.send_modify(|(n, choice)| {
            *n += 1;
            *choice = answer;
        });
        answer
    }

    /// After Ctrl-C cut a prompt short: waits for the person's choice. `Some(answer)`
    /// to send (the task is being cancelled: the question is cancelled with it), `None`
    /// to ask again (watch on). On detach it never returns: the question is left open
    /// (the board or another client may answer it) and the command leaves.
    async fn after_prompt_interrupted(
        &self,
        choices: &mut tokio::sync::watch::Receiver<(u64, AfterInterrupt)>,
    ) -> Option<Value> {
        if choices.changed().await.is_err() {
            return std::future::pending().await;
        }
        let (_, choice) = *choices.borrow_and_update();
        match choice {
            AfterInterrupt::Continue => None,
            AfterInterrupt::Cancel => Some(input::cancel()),
            AfterInterrupt::Detach => std::future::pending().await,
        }
    }

    /// Answers an elicitation: the message, then one prompt per field of the form,
    /// each answer checked before the form is sent.
    ///
    /// Ctrl-C at a prompt answers nothing yet: the Ctrl-C question decides. Watching
    /// on asks the question again; detaching leaves it open on the server (the board
    /// or another client can answer it later); cancelling cancels it with the task.
    pub async fn elicit(&self, request: InputRequest) -> Result<Value, RpcError> {
        let mut choices = self.decided.subscribe();
        choices.mark_unchanged();
        loop {
            let turn = self.prompting.lock().await;
            self.spinner.pause();
            let prompted = self.elicit_form(&request).await;
            self.spinner.resume();
            drop(turn);
            let answer = match prompted {
                Prompted::Answer(answer) => answer,
                Prompted::Interrupted => {
                    say("\n");
                    match self.after_prompt_interrupted(&mut choices).await {
                        Some(answer) => answer,
                        None => continue,
                    }
                }
            };
            self.spinner
                .update(Some("answer sent; the task goes on".into()), None);
            return Ok(answer);
        }
    }

    async fn elicit_form(&self, request: &InputRequest) -> Prompted {
        let q = style("?").green().bold().for_stderr();
        let message = request.message().unwrap_or("The server asks:");
        let bold = style(message).bold().for_stderr();
        if request.params.get("mode").and_then(Value::as_str) == Some("url") {
            say(&format!("{q} {bold}\n"));
            let url = request
                .params
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or("");
            say(&format!(
                "  Open {url}\n  Press Enter when done (or type !cancel): "
            ));
            return match self.read_line().await {
                Line::Text(t) if t.trim() == "!cancel" => Prompted::Answer(input::cancel()),
                Line::Text(t) if t.trim() == "!decline" => Prompted::Answer(input::decline()),
                Line::Text(_) => Prompted::Answer(json!({ "action": "accept" })),
                Line::Eof => Prompted::Answer(input::cancel()),
                Line::Interrupted => Prompted::Interrupted,
            };
        }
        let elsewhere = self.elsewhere.lock().clone();
        if let Some(place) = elsewhere {
            say(&format!(
                "{}\n",
                style(format!("(answer here, or {place})"))
                    .dim()
                    .for_stderr()
            ));
        }
        let schema = request.requested_schema().cloned().unwrap_or(json!({}));
        let fields = match prompt::fields(&schema) {
            Ok(f) => f,
            Err(e) => {
                say(&format!(
                    "{q} {bold}\n  cannot ask this here ({e}); declining\n"
                ));
                return Prompted::Answer(input::decline());
            }
        };
        // One question reads as one line; a longer form gets a line per field.
        let single = fields.len() == 1;
        if single {
            say(&format!("{q} {bold} "));
        } else {
            say(&format!("{q} {bold}\n"));
            say(&format!(
                "{}\n",
                style("  (Enter takes the default; !decline or !cancel refuses)")
                    .dim()
                    .for_stderr()
            ));
        }
        // The form as a whole passes the server's own check (the one every answer
        // path uses) before it is sent: the prompts check each value as it is typed,
        // and a form that still does not fit is asked again, saying why.
        for _ in 0..MAX_FORM_ROUNDS {
            let content = match self.fill_form(&fields, request, single).await {
                Ok(content) => content,
                Err(refusal) => return refusal,
            };
            match answer::validate_answer(&schema, &content) {
                Ok(()) => return Prompted::Answer(input::accept(Value::Object(content))),
                Err(e) => say(&format!(
                    "  {} {e}; once more:\n",
                    style("!").red().for_stderr()
                )),
            }
        }
        say("  (the form was never filled in as asked: question cancelled)\n");
        Prompted::Answer(input::cancel())
    }

    /// Asks every field of a form once; `Err` holds a refusal (decline, cancel) to send.
    async fn fill_form(
        &self,
        fields: &[prompt::Field],
        request: &InputRequest,
        single: bool,
    ) -> Result<Map<String, Value>, Prompted> {
        let mut content = Map::new();
        for field in fields {
            if let Some(d) = field.description.as_ref().filter(|_| !single) {
                if Some(d.as_str()) != request.message() {
                    say(&format!("  {}\n", style(d).dim().for_stderr()));
                }
            }
            if let prompt::Kind::Choice(options) | prompt::Kind::MultiChoice { options, .. } =
                &field.kind
            {
                if single {
                    say("\n");
                }
                for (i, (_, label)) in options.iter().enumerate() {
                    say(&format!("    {}) {label}\n", i + 1));
                }
            }
            let mut first = true;
            loop {
                let listed = matches!(
                    field.kind,
                    prompt::Kind::Choice(_) | prompt::Kind::MultiChoice { .. }
                );
                let indent = if single && first && !listed { "" } else { "  " };
                first = false;
                say(&format!("{indent}{}", field.prompt()));
                let text = match self.read_line().await {
                    Line::Text(t) => t,
                    Line::Eof => {
                        say("\n  (no more input: question cancelled)\n");
                        return Err(Prompted::Answer(input::cancel()));
                    }
                    Line::Interrupted => return Err(Prompted::Interrupted),
                };
                match text.trim() {
                    "!decline" => return Err(Prompted::Answer(input::decline())),
                    "!cancel" => return Err(Prompted::Answer(input::cancel())),
                    _ => {}
                }
                match field.accept(&text) {
                    Ok(Some(v)) => {
                        content.insert(field.name.clone(), v);
                        break;
                    }
                    Ok(None) => break,
                    Err(e) => say(&format!("  {} {e}\n", style("!").red().for_stderr())),
                }
            }
        }
        Ok(content)
    }

    /// Answers a sampling request by asking the person to write the model's reply.
    pub async fn sample(&self, request: InputRequest) -> Result<Value, RpcError> {
        let _turn = self.prompting.lock().await;
        self.spinner.pause();
        let q = style("?").green().bold().for_stderr();
        say(&format!(
            "{q} {}\n",
            style("The server asks your model to answer:")
                .bold()
                .for_stderr()
        ));
        if let Some(system) = request.params.get("systemPrompt").and_then(Value::as_str) {
            say(&format!("  {}\n", style(system).dim().for_stderr()));
        }
        for m in request
            .params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let text = m["content"]["text"]
                .as_str()
                .unwrap_or("(non-text content)");
            say(&format!(
                "  {}: {text}\n",
                m["role"].as_str().unwrap_or("user")
            ));
        }
        say("  Reply (as the model): ");
        let reply = match self.read_line().await {
            Line::Text(t) => Some(t),
            Line::Eof | Line::Interrupted => None,
        };
        self.spinner
            .update(Some("reply sent; the task goes on".into()), None);
        self.spinner.resume();
        match reply {
            Some(text) => Ok(json!({
                "role": "assistant",
                "content": { "type": "text", "text": text },
                "model": "human-at-the-terminal",
                "stopReason": "endTurn"
            })),
            None => Err(RpcError::new(
                mcp_tasks_protocol::error_code::REQUEST_CANCELLED,
                "the person at the terminal gave no reply",
            )),
        }
    }
}

/// The current directory as the client's only root.
pub fn roots() -> Value {
    let dir = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "/".into());
    json!({ "roots": [{ "uri": format!("file://{dir}"), "name": "current directory" }] })
}
