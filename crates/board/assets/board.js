// The mcp-tasks task board. Plain DOM code, no framework and no build step: every
// piece of task data goes into the page through textContent or attributes, never
// through innerHTML, so a task cannot inject markup.
"use strict";

const csrf = document.querySelector('meta[name="csrf-token"]').content;
const isOperator = document.querySelector('meta[name="operator"]').content === "true";
// The owner column: operators on a board with sign-in (without it every owner is an
// anonymous session, which tells a person nothing).
const showOwner = (document.querySelector('meta[name="show-owner"]') || {}).content === "true";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

// console.js (tabs and counts, bulk cancel, run again) registers here what it adds,
// and this file calls it; the answer form calls its checkAnswer.
const hooks = {
  listLoaded: [], // after the list (re)loads: () => void
  taskChanged: [], // a live change of a task: (summary) => void
  detailParts: [], // extra parts of the detail pane, after the cancel button: (task) => [Node]
};

const state = {
  filters: { status: "", tool: "", q: "" },
  rows: new Map(), // task id -> <tr>
  generation: 0, // counts list reloads (see upsertRow)
  nextCursor: null,
  open: null, // id of the task in the detail pane
  openShape: "", // status and question keys of the open task, to re-render only on change
};

// ---- small helpers -------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

// A time in a list cell: the date and the time on lines of their own, so the column
// stays narrow and the message keeps its room.
function whenCell(ms) {
  if (!ms) return "";
  const at = new Date(ms);
  return [el("span", { class: "date" }, at.toLocaleDateString()), el("span", { class: "clock" }, at.toLocaleTimeString())];
}

function duration(ms) {
  if (ms === null || ms === undefined) return "no expiry";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function progressText(p) {
  if (!p) return "";
  const amount = p.total ? `${p.progress}/${p.total}` : `${p.progress}`;
  return p.message ? `${amount} ${p.message}` : amount;
}

async function api(path, options) {
  const init = Object.assign({ headers: {} }, options || {});
  init.headers["Accept"] = "application/json";
  if (init.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.headers["X-CSRF-Token"] = csrf;
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    // Signed out, or a sign-in due for renewal: the page load renews it at the
    // identity provider (silently) or goes to the login page, and comes back here.
    window.location.reload();
    throw new Error("not logged in");
  }
  let body = {};
  try {
    body = await response.json();
  } catch (_) {
    body = { error: `the server answered ${response.status}` };
  }
  if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
  return body;
}

// ---- the list ------------------------------------------------------------------

function matchesFilters(task) {
  const f = state.filters;
  // A task joins the list when it is the viewer's (or everyone's, for an operator):
  // an approver follows a task that asks them without it joining their list.
  if (task.listed === false) return false;
  // The state a person reads: a tool error is a failure (`state`), whatever the wire said.
  if (f.status && (task.state || task.status) !== f.status) return false;
  if (f.tool && task.tool !== f.tool) return false;
  if (f.q && !task.id.startsWith(f.q)) return false;
  return true;
}

// A tool that reported an error is "completed" in the engine (and on the extension
// wire), "failed" on 2025-11-25: the board, like the CLI, calls it a tool error and
// shows the tool's own words.
function statusBadge(task, attrs = {}) {
  if (task.toolError) {
    return el("span", { ...attrs, class: "status status-tool-error", title: task.toolError }, "tool error");
  }
  return el("span", { ...attrs, class: `status status-${task.status}` }, task.status.replace("_", " "));
}

function rowCells(task) {
  const status = statusBadge(task);
  const message = el("td", { class: "message" },
    task.statusMessage || "",
    task.progress ? el("span", { class: "progress" }, progressText(task.progress)) : null);
  const cells = [
    el("td", {}, status, task.questions ? el("span", { class: "badge" }, task.questions === 1 ? "1 question" : `${task.questions} questions`) : null),
    el("td", { class: "tool" }, task.tool),
    message,
    el("td", { class: "time created" }, whenCell(task.createdAt)),
    el("td", { class: "time updated" }, whenCell(task.updatedAt)),
  ];
  if (showOwner) cells.push(el("td", { class: "owner" }, task.owner || ""));
  return cells;
}

// A row keeps the `updatedAt` of what it shows, so an older copy of a task (a list
// page asked for before a live event arrived) never overwrites a newer one, and the
// list generation that last touched it, so a reload keeps rows that live events added
// while the reload was under way.
function adoptRow(row, id) {
  row.addEventListener("click", () => openTask(id, true));
  row.addEventListener("keydown", (e) => {
    if (e.key === "Enter") openTask(id, true);
  });
  state.rows.set(id, row);
}

function upsertRow(task, atTop) {
  const tbody = document.querySelector("#tasks tbody");
  let row = state.rows.get(task.id);
  if (row && Number(row.dataset.updated) > task.updatedAt) return;
  if (!matchesFilters(task)) {
    if (row) {
      row.remove();
      state.rows.delete(task.id);
    }
    return;
  }
  if (!row) {
    row = el("tr", { "data-id": task.id, tabindex: "0" });
    adoptRow(row, task.id);
    if (atTop) tbody.prepend(row);
    else tbody.append(row);
  }
  row.dataset.status = task.status;
  row.dataset.updated = String(task.updatedAt);
  row.dataset.generation = String(state.generation);
  row.classList.toggle("selected", state.open === task.id);
  row.replaceChildren(...rowCells(task));
}

async function loadList(append) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) if (v) params.set(k, v);
  if (append && state.nextCursor) params.set("cursor", state.nextCursor);
  const generation = append ? state.generation : ++state.generation;
  try {
    const page = await api(`/board/api/tasks?${params}`);
    const tbody = document.querySelector("#tasks tbody");
    if (!append) {
      if (generation !== state.generation) return; // a newer reload is under way
      // The rows the server rendered (or an earlier filter's) go only now, so a
      // refresh never shows an empty list in between; rows that live events touched
      // since this reload began stay, on top, with what they know.
      const listed = new Set(page.tasks.map((t) => t.id));
      const live = [];
      for (const [id, row] of state.rows) {
        if (!listed.has(id) && Number(row.dataset.generation) === generation) live.push(row);
        else if (!listed.has(id)) state.rows.delete(id);
      }
      tbody.replaceChildren(...live);
    }
    for (const task of page.tasks) {
      const row = state.rows.get(task.id);
      if (row && !append) tbody.append(row); // keeps its place in the listed order
      upsertRow(task, false);
    }
    state.nextCursor = page.nextCursor;
    document.getElementById("more").hidden = !page.nextCursor;
    if (!append) for (const hook of hooks.listLoaded) hook();
    if (!page.tasks.length && !append && !tbody.children.length) {
      tbody.append(
        el("tr", { class: "empty" }, el("td", { colspan: showOwner ? 6 : 5 }, "No tasks yet.")));
    }
  } catch (e) {
    showLive(`could not load tasks: ${e.message}`, true);
  }
}

function showLive(text, bad) {
  const live = document.getElementById("live");
  live.textContent = text;
  live.classList.toggle("bad", !!bad);
}

// ---- live updates ----------------------------------------------------------------

function connectLive() {
  const source = new EventSource("/board/api/events");
  source.addEventListener("open", () => showLive("live"));
  source.addEventListener("error", () => {
    showLive("reconnecting…", true);
    // Closed for good (the server refused the stream, as when the session ended or is
    // due for renewal): ask who is looking, which reloads the page on 401, else retry.
    if (source.readyState === EventSource.CLOSED) {
      api("/board/api/me")
        .then(() => setTimeout(connectLive, 3000))
        .catch(() => {});
    }
  });
  source.addEventListener("task", (event) => {
    const task = JSON.parse(event.data);
    const empty = document.querySelector("#tasks tr.empty");
    if (empty && matchesFilters(task)) empty.remove();
    upsertRow(task, true);
    if (state.open === task.id) refreshOpen(task);
    for (const hook of hooks.taskChanged) hook(task);
  });
  source.addEventListener("progress", (event) => {
    const { id, progress } = JSON.parse(event.data);
    const row = state.rows.get(id);
    if (row) {
      const cell = row.querySelector(".message");
      let span = cell.querySelector(".progress");
      if (!span) cell.append((span = el("span", { class: "progress" })));
      span.textContent = progressText(progress);
    }
    if (state.open === id) renderProgress(progress);
  });
  source.addEventListener("resync", () => {
    loadList(false);
    if (state.open) openTask(state.open, false);
  });
}

// ---- the detail pane -----------------------------------------------------------

function shapeOf(task) {
  return `${task.status}|${(task.questions || []).map((q) => q.key).join(",")}`;
}

async function refreshOpen(summary) {
  // A change of status or of the questions re-renders the pane; a form being filled
  // in is not wiped by a mere progress or message update.
  try {
    const task = await api(`/board/api/tasks/${encodeURIComponent(summary.id)}`);
    if (shapeOf(task) !== state.openShape) renderDetail(task);
    else {
      const message = document.querySelector("#detail-pane .status-message");
      if (message) message.textContent = task.statusMessage || "";
    }
  } catch (e) {
    renderGone(summary.id, e.message);
  }
}

async function openTask(id, push) {
  state.open = id;
  for (const [rid, row] of state.rows) row.classList.toggle("selected", rid === id);
  if (push) history.pushState({ id }, "", `/board/tasks/${encodeURIComponent(id)}`);
  try {
    renderDetail(await api(`/board/api/tasks/${encodeURIComponent(id)}`));
  } catch (e) {
    renderGone(id, e.message);
  }
  // On a narrow screen the pane is below the list: bring it into view.
  if (window.matchMedia("(max-width: 900px)").matches) {
    document.getElementById("detail-pane").scrollIntoView({ block: "start" });
  }
}

function closeTask(push) {
  state.open = null;
  document.getElementById("detail-pane").hidden = true;
  document.querySelector("main").classList.remove("with-detail");
  for (const row of state.rows.values()) row.classList.remove("selected");
  if (push) history.pushState({}, "", "/board");
}

function renderGone(id, message) {
  const pane = document.getElementById("detail-pane");
  pane.hidden = false;
  document.querySelector("main").classList.add("with-detail");
  pane.replaceChildren(
    el("button", { class: "close", onclick: () => closeTask(true), "aria-label": "Close" }, "×"),
    el("h2", {}, "Task ", el("code", {}, id)),
    el("p", { class: "error" }, message));
}

function renderProgress(progress) {
  const box = document.getElementById("detail-progress");
  if (!box) return;
  box.replaceChildren();
  if (!progress) return;
  if (progress.total) {
    box.append(el("progress", { max: progress.total, value: progress.progress }));
  }
  box.append(el("span", {}, progressText(progress)));
}

// Whether a result holds nothing but the tool error's text (shown in its box already).
function onlyTheError(result) {
  const content = result.content || [];
  return result.structuredContent === undefined && content.length <= 1 &&
    content.every((c) => c.type === "text");
}

function jsonBlock(value) {
  return el("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

function renderContent(item) {
  switch (item.type) {
    case "text":
      return el("pre", { class: "text" }, item.text);
    case "image":
      return el("img", { src: `data:${item.mimeType};base64,${item.data}`, alt: "image from the result" });
    case "audio":
      return el("audio", { controls: true, src: `data:${item.mimeType};base64,${item.data}` });
    case "resource_link":
      return el("p", {}, "Resource: ", el("code", {}, item.uri));
    case "resource":
      return el("div", {}, el("p", {}, "Resource: ", el("code", {}, item.resource && item.resource.uri)),
        item.resource && item.resource.text ? el("pre", { class: "text" }, item.resource.text) : null);
    default:
      return jsonBlock(item);
  }
}

function renderResult(result) {
  const section = el("section", { class: result.isError ? "result is-error" : "result" },
    el("h3", {}, result.isError ? "Result (the tool reported an error)" : "Result"));
  for (const item of result.content || []) section.append(renderContent(item));
  if (result.structuredContent !== undefined) {
    section.append(el("h4", {}, "Structured content"), jsonBlock(result.structuredContent));
  }
  if (!result.content && result.structuredContent === undefined) section.append(jsonBlock(result));
  return section;
}

function renderDetail(task) {
  state.openShape = shapeOf(task);
  const pane = document.getElementById("detail-pane");
  pane.hidden = false;
  document.querySelector("main").classList.add("with-detail");
  // Questions of this task still open keep their box as it is: what a person typed in
  // one form survives the answer to another (which re-renders the pane).
  const kept = new Map();
  if (pane.dataset.task === task.id) {
    for (const box of pane.querySelectorAll("section.question[data-key]")) {
      if (!box.querySelector(".answered")) kept.set(box.dataset.key, box);
    }
  }
  pane.dataset.task = task.id;
  const parts = [
    el("button", { class: "close", onclick: () => closeTask(true), "aria-label": "Close" }, "×"),
    el("h2", {}, el("span", { class: "tool" }, task.tool), " ",
      statusBadge(task, { id: "detail-status" })),
    el("p", { class: "meta" }, "Task ", el("code", { id: "detail-id" }, task.id),
      showOwner && task.owner ? ` · owner ${task.owner}` : "",
      ` · created ${when(task.createdAt)} · updated ${when(task.updatedAt)}`,
      ` · ${TERMINAL.has(task.status) ? "kept for" : "expires in"} ${duration(task.ttlLeftMs)}`),
  ];
  // A tool error is said once: in its box (what the tool answered, which the agent
  // read), not again as the status message, the result and the timeline's last entry.
  if (task.statusMessage && !task.toolError) parts.push(el("p", { class: "status-message" }, task.statusMessage));
  if (task.toolError) {
    parts.push(el("section", { class: "tool-error-box", role: "status" },
      el("h3", {}, "Failed: the tool reported an error"),
      el("p", { class: "meta" }, "What the tool answered (the agent read this):"),
      el("pre", { class: "tool-error" }, task.toolError)));
  }
  parts.push(el("div", { id: "detail-progress", class: "progress-box" }));
  for (const question of task.questions || []) parts.push(kept.get(question.key) || renderQuestion(task, question));
  // An approver who is not the task's owner may answer its approval, not cancel it.
  if (!TERMINAL.has(task.status) && task.mayAct !== false) {
    parts.push(el("p", {}, el("button", {
      class: "danger", id: "cancel-task",
      onclick: () => cancelTask(task),
    }, "Cancel task")));
  }
  for (const hook of hooks.detailParts) parts.push(...hook(task));
  if (task.result && !(task.toolError && onlyTheError(task.result))) parts.push(renderResult(task.result));
  if (task.error) {
    parts.push(el("section", { class: "error-box" }, el("h3", {}, "Error"),
      el("p", {}, task.error.message), task.error.code !== undefined ? el("p", { class: "meta" }, `code ${task.error.code}`) : null));
  }
  // An open approval shows the arguments it asks about: not twice.
  const approvalShowsThem = (task.questions || []).some((q) => q.kind === "approval" && q.mayAnswer !== false);
  if (!approvalShowsThem) parts.push(el("h3", {}, "Arguments"), jsonBlock(task.arguments));
  if ((task.relatedTaskIds || []).length) {
    parts.push(el("h3", {}, "Related tasks"), el("ul", { class: "related" },
      task.relatedTaskIds.map((id) => el("li", {}, el("a", {
        href: `/board/tasks/${encodeURIComponent(id)}`,
        onclick: (e) => { e.preventDefault(); openTask(id, true); },
      }, el("code", {}, id))))));
  }
  parts.push(...renderDecisions(task)); // people.js
  parts.push(el("h3", {}, "Timeline"), el("ol", { class: "timeline" },
    (task.timeline || []).map((entry) => el("li", {},
      el("span", { class: `status status-${entry.label === "tool error" ? "tool-error" : entry.status}` },
        entry.label || entry.status.replace("_", " ")),
      ` ${when(entry.at)}`, entry.statusMessage ? ` — ${entry.statusMessage}` : ""))));
  pane.replaceChildren(...parts);
  renderProgress(task.progress);
}

async function cancelTask(task) {
  if (!window.confirm(`Cancel this ${task.tool} task? Its work is stopped and it cannot be resumed.`)) return;
  try {
    await api(`/board/api/tasks/${encodeURIComponent(task.id)}/cancel`, { method: "POST", body: "{}" });
    openTask(task.id, false);
  } catch (e) {
    window.alert(`Could not cancel: ${e.message}`);
  }
}

// ---- questions -------------------------------------------------------------------

function renderQuestion(task, question) {
  const box = el("section", { class: `question question-${question.kind}`, "data-key": question.key },
    el("h3", {}, question.kind === "approval" ? "Approval" : "Question"),
    el("p", { class: "question-message" }, question.message));
  const meta = questionMeta(question); // people.js
  if (meta) box.append(meta);
  const problem = el("p", { class: "error", role: "alert", hidden: true });
  const send = async (body) => {
    problem.hidden = true;
    try {
      await api(`/board/api/tasks/${encodeURIComponent(task.id)}/answer`, {
        method: "POST",
        body: JSON.stringify(Object.assign({ key: question.key }, body)),
      });
      box.replaceChildren(el("p", { class: "answered" }, "Answer sent."));
      state.openShape = "";
      inboxChanged(); // people.js
    } catch (e) {
      problem.textContent = e.message;
      problem.hidden = false;
    }
  };
  if (question.mayAnswer === false) box.append(el("p", { class: "meta why-not" }, question.whyNot || "This question is for someone else."));
  else if (question.kind === "approval") box.append(renderApproval(question, send, problem)); // people.js
  else if (question.kind === "form") box.append(renderForm(question.requestedSchema || {}, send, problem));
  else if (question.kind === "url") box.append(renderUrl(question, send, problem));
  else if (question.kind === "sampling") box.append(renderSampling(question, send, problem));
  else box.append(el("p", { class: "meta" }, "This question is for the client that started the task; it cannot be answered here."));
  return box;
}

function buttons(send, form) {
  return el("div", { class: "buttons" },
    el("button", { type: "submit", class: "primary" }, "Submit"),
    el("button", { type: "button", title: "Say no: the tool is told the question was declined",
      onclick: () => send({ action: "decline" }) }, "Decline"),
    // Not "Cancel": that word is the task's own button (it stops the work). This one
    // answers the question as dismissed (MCP's "cancel" action) and the task goes on.
    el("button", { type: "button", class: "dismiss",
      title: "Leave the question unanswered: the tool is told it was dismissed; the task is not cancelled",
      onclick: () => send({ action: "cancel" }) }, "Dismiss question"));
}

function renderUrl(question, send, problem) {
  const form = el("form", { class: "answer" },
    el("p", {}, "Open this link to continue: ",
      el("a", { href: question.url, target: "_blank", rel: "noopener noreferrer" }, question.url)),
    problem, buttons(send));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send({ action: "accept" });
  });
  return form;
}

function renderSampling(question, send, problem) {
  const conversation = el("div", { class: "conversation" });
  if (question.systemPrompt) conversation.append(el("p", { class: "system" }, el("b", {}, "system: "), question.systemPrompt));
  for (const message of question.messages || []) {
    const content = message.content || {};
    conversation.append(el("p", { class: `turn ${message.role}` }, el("b", {}, `${message.role}: `),
      content.type === "text" ? content.text : JSON.stringify(content)));
  }
  const reply = el("textarea", { name: "reply", rows: 5, required: true, "aria-label": "Your reply (as the assistant)" });
  const form = el("form", { class: "answer" }, conversation,
    el("label", {}, "Your reply (as the assistant)", reply), problem,
    el("div", { class: "buttons" },
      el("button", { type: "submit", class: "primary" }, "Send reply"),
      el("button", { type: "button", onclick: () => send({ action: "reject" }) }, "Reject")));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send({ action: "reply", text: reply.value });
  });
  return form;
}

// Options of an enum field: [{value, title}], from enum (+ enumNames), oneOf/anyOf
// with const and title, or for arrays the same under items.
function optionsOf(schema) {
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((value, i) => ({
      value, title: (schema.enumNames && schema.enumNames[i]) || String(value),
    }));
  }
  const choices = schema.oneOf || schema.anyOf;
  if (Array.isArray(choices) && choices.every((c) => c && c.const !== undefined)) {
    return choices.map((c) => ({ value: c.const, title: c.title || String(c.const) }));
  }
  return null;
}

function renderField(name, schema, required) {
  const id = `field-${name}`;
  const label = el("label", { for: id }, schema.title || name, required ? el("span", { class: "req" }, " *") : null);
  const hint = schema.description ? el("small", { class: "hint" }, schema.description) : null;
  const type = schema.type;
  if (type === "array") {
    const options = optionsOf(schema.items || {}) || [];
    const defaults = new Set(Array.isArray(schema.default) ? schema.default : []);
    const group = el("fieldset", { class: "multi", id, "data-name": name, "data-kind": "multi" },
      el("legend", {}, schema.title || name, required ? el("span", { class: "req" }, " *") : null),
      hint,
      options.map((o, i) => el("label", { class: "choice" },
        el("input", { type: "checkbox", name, value: JSON.stringify(o.value), id: `${id}-${i}`, checked: defaults.has(o.value) }),
        ` ${o.title}`)));
    return { node: group, read: () => [...group.querySelectorAll("input:checked")].map((c) => JSON.parse(c.value)) };
  }
  const options = optionsOf(schema);
  if (options) {
    const select = el("select", { id, name, required },
      required && schema.default === undefined ? el("option", { value: "" }, "— choose —") : el("option", { value: "" }, "—"),
      options.map((o) => el("option", { value: JSON.stringify(o.value), selected: schema.default === o.value }, o.title)));
    return { node: el("div", { class: "field" }, label, hint, select),
      read: () => (select.value === "" ? undefined : JSON.parse(select.value)) };
  }
  if (type === "boolean") {
    const box = el("input", { type: "checkbox", id, name, checked: schema.default === true });
    return { node: el("div", { class: "field checkbox" }, el("label", { for: id }, box, ` ${schema.title || name}`), hint),
      read: () => box.checked };
  }
  if (type === "number" || type === "integer") {
    const input = el("input", {
      type: "number", id, name, required,
      min: schema.minimum, max: schema.maximum,
      step: type === "integer" ? "1" : "any",
      value: schema.default,
    });
    return { node: el("div", { class: "field" }, label, hint, input),
      read: () => (input.value === "" ? undefined : Number(input.value)) };
  }
  const formats = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };
  const inputType = formats[schema.format] || "text";
  let value = schema.default;
  if (inputType === "datetime-local" && typeof value === "string") value = value.slice(0, 16);
  const input = el("input", {
    type: inputType, id, name, required,
    minlength: schema.minLength, maxlength: schema.maxLength, pattern: schema.pattern,
    value,
  });
  return { node: el("div", { class: "field" }, label, hint, input),
    read: () => {
      if (input.value === "") return undefined;
      // A datetime-local value has no zone and no seconds: send RFC 3339 in UTC.
      if (inputType === "datetime-local") return new Date(input.value).toISOString();
      return input.value;
    } };
}

function renderForm(schema, send, problem) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, s]) => [name, renderField(name, s, required.has(name))]);
  // Checked by checkAnswer (console.js), not by the browser's bubbles, so that every
  // problem names the field's label in plain words.
  const form = el("form", { class: "answer", novalidate: true },
    fields.map(([, f]) => f.node), problem, buttons(send));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!checkAnswer(schema, required, fields, problem)) return;
    const content = {};
    for (const [name, f] of fields) {
      const value = f.read();
      if (value !== undefined) content[name] = value;
    }
    send({ action: "accept", content });
  });
  return form;
}

// ---- start -----------------------------------------------------------------------

// The server rendered the first page of the list (filtered as the URL's query asks, the
// filter form filled in to match); the script takes the filters from the form and
// refreshes that list in place, then keeps it live.
function readFilters() {
  state.filters = {
    status: document.getElementById("filter-status").value,
    tool: document.getElementById("filter-tool").value.trim(),
    q: document.getElementById("filter-q").value.trim(),
  };
}
readFilters();
for (const row of document.querySelectorAll("#tasks tbody tr[data-id]")) {
  row.dataset.generation = "0";
  adoptRow(row, row.dataset.id);
}
document.getElementById("filters").addEventListener("submit", (e) => {
  e.preventDefault();
  readFilters();
  loadList(false);
});
document.getElementById("filter-status").addEventListener("change", () =>
  document.getElementById("filters").requestSubmit());
document.getElementById("more").addEventListener("click", () => loadList(true));
window.addEventListener("popstate", () => {
  const match = window.location.pathname.match(/^\/board\/tasks\/(.+)$/);
  if (match) openTask(decodeURIComponent(match[1]), false);
  else closeTask(false);
});

loadList(false).then(() => {
  const match = window.location.pathname.match(/^\/board\/tasks\/(.+)$/);
  if (match) openTask(decodeURIComponent(match[1]), false);
});
connectLive();
