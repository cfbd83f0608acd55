//! The scenarios, each an `async fn` run by one generated test per peer and wire (see
//! [`peer_suite!`](crate::peer_suite!)). Each panics on failure, naming the peer and
//! what it saw. What a front-end cannot observe (the library sees statuses and the
//! questions its handler got; the CLI shows lines at the terminal) comes back as
//! `None` and is checked where it is seen.
#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use super::{json, Answer, Endpoint, FrontEnd, Peer, Run, Steps, Wire};

/// The negotiated wire is the one expected, tasks are offered, and the server's name,
/// its tools and a tool's declared task support are what the peer says.
pub async fn lists_its_tools<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let seen = fe.negotiate(at, wire).await;
    let name = peer.name;
    if let Some(w) = &seen.wire {
        assert_eq!(w, peer.expected(wire), "{name}: the wire");
    }
    if let Some(tasks) = seen.tasks {
        assert!(tasks, "{name}: no tasks offered");
    }
    if let (Some(got), Some(want)) = (&seen.server, peer.server) {
        assert_eq!(got, want, "{name}: the server's name");
    }
    let names: Vec<&str> = seen.tools.iter().map(|(n, _)| n.as_str()).collect();
    if let Some(want) = peer.tools {
        assert_eq!(names, want, "{name}: its tools");
    }
    if let Some(tool) = peer.required {
        let support = seen.tools.iter().find(|(n, _)| n == tool);
        let support = support.unwrap_or_else(|| panic!("{name}: no tool {tool} in {names:?}"));
        assert_eq!(support.1.as_deref(), Some("required"), "{name}: {tool}");
    }
}

/// On a wire where the peer offers no tasks, the front-end says so rather than
/// pretending a task ran.
pub async fn no_tasks_on_this_wire<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let seen = fe.negotiate(at, wire).await;
    if let Some(w) = &seen.wire {
        assert_eq!(w, peer.expected(wire), "{}: the wire", peer.name);
    }
    if let Some(tasks) = seen.tasks {
        assert!(!tasks, "{}: tasks offered", peer.name);
    }
    let refused = fe
        .start_refused(at, wire, peer.steps.tool, &json(peer.steps.args))
        .await;
    assert!(
        refused.exit.is_none_or(|c| c != 0),
        "{}: {refused:?}",
        peer.name
    );
    assert!(
        refused.text.contains("does not run tool calls as tasks"),
        "{}: {refused:?}",
        peer.name
    );
}

/// Each of `expected` is among the status messages `seen`.
fn check_messages(name: &str, expected: &[super::Text], seen: &[String]) {
    for m in expected {
        assert!(
            seen.iter().any(|got| m.matches(got)),
            "{name}: no status message {m:?} in {seen:?}"
        );
    }
}

/// Checks a finished run of `steps`.
fn check_steps(peer: &Peer, wire: Wire, steps: &Steps, run: &Run) {
    let name = peer.name;
    if let Some(w) = &run.wire {
        assert_eq!(w, peer.expected(wire), "{name}: the wire");
    }
    assert_eq!(run.status, "completed", "{name}: {run:?}");
    assert!(
        steps.result.matches(&run.text),
        "{name}: result {:?}",
        run.text
    );
    if let (Some(field), Some(s)) = (steps.structured, &run.structured) {
        assert!(
            s[field].as_str().is_some_and(|t| steps.result.matches(t)),
            "{name}: structuredContent {s}"
        );
    }
    // None: the CLI printed JSON, which holds no status lines.
    if let Some(messages) = run.messages.as_deref() {
        check_messages(name, steps.messages, messages);
        if let Some(prefix) = steps.ordered {
            let seen: Vec<&String> = messages.iter().filter(|m| m.starts_with(prefix)).collect();
            assert!(
                seen.len() >= 2,
                "{name}: status messages seen: {messages:?}"
            );
            assert!(seen.windows(2).all(|w| w[0] < w[1]), "{name}: {messages:?}");
        }
    }
    if let Some(statuses) = &run.statuses {
        assert_eq!(
            statuses.first().map(String::as_str),
            Some("working"),
            "{name}: {statuses:?}"
        );
        assert_eq!(
            statuses.last().map(String::as_str),
            Some("completed"),
            "{name}: {statuses:?}"
        );
    }
    if let Some(got) = &run.got_after {
        assert_eq!(got, "completed", "{name}: tasks/get after the end");
    }
}

/// A task followed by the call that started it reports its steps in status messages,
/// ends `completed` with its result, and reads `completed` afterwards.
pub async fn a_task_reports_its_steps<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let steps = &peer.steps;
    let run = fe
        .call(at, wire, steps.tool, &json(steps.args), Answer::None)
        .await;
    assert!(run.id.is_some(), "{}: the call became no task", peer.name);
    check_steps(peer, wire, steps, &run);
}

/// A task started detached is followed to its end by a new connection that finds it by
/// id (rejoining its session when the peer keeps tasks per session).
pub async fn a_detached_task_is_followed_by_id<F: FrontEnd>(
    fe: &F,
    peer: &Peer,
    at: &Endpoint,
    wire: Wire,
) {
    let steps = &peer.detached;
    let (started, kept) = fe.start(at, wire, steps.tool, &json(steps.args)).await;
    let name = peer.name;
    assert!(!started.id.is_empty(), "{name}: no task id");
    assert_eq!(started.wire, peer.expected(wire), "{name}: the wire");
    assert_eq!(
        started.session.is_some(),
        peer.keeps_sessions(&started.wire),
        "{name}: session {:?}",
        started.session
    );
    let run = fe.resume(at, wire, &started, kept).await;
    check_steps(peer, wire, steps, &run);
    if peer.fenced {
        // Outside the session the task is unknown, with the server's code kept.
        let stranger = fe.get_unknown(at, wire, &started.id).await;
        assert_eq!(
            stranger.code,
            Some(peer.unknown),
            "{name}: the task from outside its session: {stranger:?}"
        );
    }
}

/// A running task is seen `working`, cancelled, and ends `cancelled`.
pub async fn cancel_ends_a_task<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let long = &peer.long;
    let name = peer.name;
    let (started, mut kept) = fe.start(at, wire, long.tool, &json(long.args)).await;
    assert_eq!(started.wire, peer.expected(wire), "{name}: the wire");
    if let Some(prefix) = long.ticks {
        fe.wait_for_message(at, wire, &started, &mut kept, prefix)
            .await;
    }
    let running = fe.get(at, wire, &started, &kept).await;
    assert_eq!(running.status, "working", "{name}: {running:?}");
    if let Some(id) = &running.id {
        assert_eq!(id, &started.id, "{name}");
    }
    let ack = fe.cancel(at, wire, &started, &kept).await;
    assert!(
        long.acknowledged.contains(&ack.status.as_str()),
        "{name}: cancel acknowledged with {ack:?}"
    );
    let run = fe.result(at, wire, &started, kept).await;
    assert_eq!(run.status, "cancelled", "{name}: {run:?}");
    if let Some(got) = &run.got_after {
        assert_eq!(got, "cancelled", "{name}: tasks/get after the end");
    }
}

/// On a server that does not offer `tasks/cancel`, the front-end says so instead of
/// trying.
pub async fn cancel_is_refused_where_not_offered<F: FrontEnd>(
    fe: &F,
    peer: &Peer,
    at: &Endpoint,
    wire: Wire,
) {
    let long = &peer.long;
    let name = peer.name;
    let (started, kept) = fe.start(at, wire, long.tool, &json(long.args)).await;
    let refused = fe.cancel_refused(at, wire, &started, &kept).await;
    assert!(refused.exit.is_none_or(|c| c != 0), "{name}: {refused:?}");
    assert!(refused.text.contains("tasks/cancel"), "{name}: {refused:?}");
}

/// A question asked mid-task (an elicitation) reaches the front-end once, on behalf of
/// the task, and the answer reaches the tool.
pub async fn a_question_is_answered<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let q = peer.question.expect("the peer has a question tool");
    let name = peer.name;
    let run = fe
        .call(at, wire, q.tool, &json(q.args), Answer::Accept(q))
        .await;
    if let Some(w) = &run.wire {
        assert_eq!(w, peer.expected(wire), "{name}: the wire");
    }
    assert_eq!(run.status, "completed", "{name}: {run:?}");
    assert!(
        q.answered.matches(&run.text),
        "{name}: result {:?}",
        run.text
    );
    if let Some(messages) = &run.messages {
        check_messages(name, q.messages, messages);
    }
    if let Some(statuses) = &run.statuses {
        assert!(
            statuses.iter().any(|s| s == "input_required"),
            "{name}: {statuses:?}"
        );
    }
    if let Some(asked) = &run.asked {
        assert_eq!(
            asked.len(),
            1,
            "{name}: one question, one handler call: {asked:?}"
        );
        assert!(
            asked[0]
                .message
                .as_deref()
                .is_some_and(|m| q.asks.matches(m)),
            "{name}: {asked:?}"
        );
        assert_eq!(asked[0].method, "elicitation/create", "{name}");
        assert!(
            asked[0].task_id.is_some(),
            "{name}: not asked on behalf of the task"
        );
        assert_eq!(asked[0].task_id, run.id, "{name}: asked for another task");
    }
}

/// A declined question reaches the tool as such.
pub async fn a_declined_question_reaches_the_tool<F: FrontEnd>(
    fe: &F,
    peer: &Peer,
    at: &Endpoint,
    wire: Wire,
) {
    let q = peer.question.expect("the peer has a question tool");
    let run = fe
        .call(at, wire, q.tool, &json(q.args), Answer::Decline(q))
        .await;
    assert_eq!(run.status, "completed", "{}: {run:?}", peer.name);
    assert!(
        q.declined.matches(&run.text),
        "{}: result {:?}",
        peer.name,
        run.text
    );
}

/// `tasks/get` of an id the server never gave is refused with its error code.
pub async fn an_unknown_task_is_refused<F: FrontEnd>(
    fe: &F,
    peer: &Peer,
    at: &Endpoint,
    wire: Wire,
) {
    let refused = fe.get_unknown(at, wire, "no-such-task").await;
    assert_eq!(
        refused.code,
        Some(peer.unknown),
        "{}: {refused:?}",
        peer.name
    );
    if let Some(exit) = refused.exit {
        assert_ne!(exit, 0, "{}: {refused:?}", peer.name);
    }
}

/// A plain call whose tool asks for a sampling gets the front-end's reply.
pub async fn sampling_is_answered<F: FrontEnd>(fe: &F, peer: &Peer, at: &Endpoint, wire: Wire) {
    let s = peer
        .sampling
        .as_ref()
        .expect("the peer has a sampling tool");
    let reply = "a sampled reply";
    let got = fe.sample(at, wire, s, reply).await;
    match s.wraps {
        Some(before) => assert_eq!(got.text, format!("{before}{reply}"), "{}", peer.name),
        None => assert!(got.text.contains(reply), "{}: {}", peer.name, got.text),
    }
    if let Some(prompt) = &got.prompt {
        assert!(prompt.contains(s.prompt), "{}: {prompt}", peer.name);
    }
    if let Some(n) = got.asked {
        assert_eq!(n, 1, "{}: one sampling, one handler call", peer.name);
    }
}

/// A plain call's progress notifications reach the caller, in order.
pub async fn progress_reaches_the_caller<F: FrontEnd>(
    fe: &F,
    peer: &Peer,
    at: &Endpoint,
    wire: Wire,
) {
    let p = peer
        .progress
        .as_ref()
        .expect("the peer has a progress tool");
    let got = fe.progress(at, wire, p).await;
    assert!(p.result.matches(&got.text), "{}: {}", peer.name, got.text);
    assert_eq!(got.steps, p.steps, "{}", peer.name);
}
