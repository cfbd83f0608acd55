// What tasks ask of people: approvals (approve, change the arguments, reject with a
// reason), who a question is for and until when, the decisions given, and the inbox
// ("Waiting for me"). Loaded after board.js, whose helpers (el, api, when, openTask)
// it uses. Task data goes into the page through textContent only.
"use strict";

// ---- an approval in the detail pane ------------------------------------------------

function renderApproval(question, send, problem) {
  const parts = [];
  parts.push(el("p", { class: "meta approval-who" },
    `Approvers: ${(question.approvers || []).join(", ")}`,
    question.required > 1 ? ` · ${question.required} must approve` : "",
    (question.approvedBy || []).length ? ` · approved so far by ${question.approvedBy.join(", ")}` : "",
    question.escalated ? " · escalated" : ""));
  if (question.changed && question.changed.by) {
    const dropped = (question.changed.votesDropped || []).length
      ? ` The approvals of ${question.changed.votesDropped.join(", ")} were for the old arguments and no longer count.` : "";
    parts.push(el("p", { class: "meta approval-changed" },
      `New approval: ${question.changed.by} changed the arguments (from ${JSON.stringify(question.changed.from)}).${dropped}`));
  }
  parts.push(el("p", {}, "Tool ", el("code", { class: "approval-tool" }, question.tool), " with these arguments:"));
  let edited = null;
  if (question.allowEdit) {
    edited = el("textarea", {
      name: "arguments", rows: 6, class: "approval-arguments",
      "aria-label": "Arguments (you may change them before approving)",
    });
    edited.value = JSON.stringify(question.arguments || {}, null, 2);
    parts.push(el("label", {}, "Arguments (you may change them before approving)", edited));
  } else {
    parts.push(jsonBlock(question.arguments || {}));
  }
  const reason = el("textarea", {
    name: "reason", rows: 2, class: "approval-reason",
    "aria-label": "Reason (required to reject; the agent reads it)",
  });
  parts.push(el("label", {}, "Reason (required to reject; the agent reads it)", reason));
  parts.push(problem);
  const approve = () => {
    const body = { action: "approve" };
    if (edited) {
      let value;
      try {
        value = JSON.parse(edited.value);
      } catch (e) {
        problem.textContent = `The arguments are not valid JSON: ${e.message}`;
        problem.hidden = false;
        return;
      }
      if (JSON.stringify(value) !== JSON.stringify(question.arguments || {})) body.arguments = value;
    }
    send(body);
  };
  const reject = () => {
    if (!reason.value.trim()) {
      problem.textContent = "Write a reason to reject: it goes back to the agent.";
      problem.hidden = false;
      reason.focus();
      return;
    }
    send({ action: "reject", reason: reason.value.trim() });
  };
  parts.push(el("div", { class: "buttons" },
    el("button", { type: "button", class: "primary approve", onclick: approve }, "Approve"),
    el("button", { type: "button", class: "danger reject", onclick: reject }, "Reject")));
  return el("div", { class: "answer approval" }, ...parts);
}

// Who a question is for and until when (above its form).
function questionMeta(question) {
  const bits = [];
  // An approval names its approvers itself.
  if (question.assignedTo && question.kind !== "approval") bits.push(`For ${question.assignedTo.join(", ")}`);
  if (question.deadline) {
    bits.push(question.overdue
      ? `overdue since ${when(question.deadline)}`
      : `answer by ${when(question.deadline)}`);
  }
  if (!bits.length) return null;
  return el("p", { class: `meta question-for${question.overdue ? " overdue" : ""}` }, bits.join(" · "));
}

// The decisions people gave on this task: who, what, through which channel, when.
function renderDecisions(task) {
  if (!(task.decisions || []).length) return [];
  return [el("h3", {}, "Decisions"), el("ol", { class: "decisions" },
    task.decisions.map((d) => el("li", {},
      el("b", {}, d.by), ` ${d.said} via ${d.via}, ${when(d.at)}`)))];
}

// ---- the inbox: "Waiting for me" -----------------------------------------------------

async function loadInbox() {
  let inbox;
  try {
    inbox = await api("/board/api/inbox");
  } catch (e) {
    return;
  }
  let box = document.getElementById("inbox");
  if (!box) {
    box = el("section", { id: "inbox", "aria-label": "Waiting for me" });
    const pane = document.getElementById("list-pane");
    pane.insertBefore(box, pane.firstChild);
  }
  const items = inbox.items || [];
  const overdue = items.filter((i) => i.overdue).length;
  box.hidden = items.length === 0;
  box.replaceChildren(
    el("h2", {}, "Waiting for me ", el("span", { class: "count", id: "inbox-count" }, String(items.length)),
      overdue ? el("span", { class: "overdue-count" }, ` · ${overdue} overdue`) : ""),
    el("ul", { class: "inbox" }, items.map((item) => el("li", {
      class: item.overdue ? "overdue" : "", "data-task": item.taskId, "data-key": item.key,
    },
    el("a", {
      href: `/board/tasks/${encodeURIComponent(item.taskId)}`,
      onclick: (e) => { e.preventDefault(); openTask(item.taskId, true); },
    }, item.kind === "approval" ? "Approve? " : "Question: ", el("span", { class: "tool" }, item.tool)),
    ` — ${item.message}`,
    item.deadline ? el("span", { class: "due" }, item.overdue ? ` · overdue since ${when(item.deadline)}` : ` · by ${when(item.deadline)}`) : "",
    item.owner ? el("span", { class: "meta" }, ` · ${item.owner}`) : ""))),
    inbox.truncated ? el("p", { class: "meta" }, "Only the newest waiting tasks were looked through.") : "");
}

// The inbox follows the live list: reloaded (at most every half second) when a task
// changes.
let inboxTimer = null;
function inboxChanged() {
  if (inboxTimer) return;
  inboxTimer = setTimeout(() => {
    inboxTimer = null;
    loadInbox();
  }, 500);
}
loadInbox();

// Keep the inbox current as tasks change (board.js calls its hooks on live events).
hooks.taskChanged.push(() => inboxChanged());
