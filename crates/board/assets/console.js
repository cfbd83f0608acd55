// The task board as a console: tabs with a count per state, cancelling every
// unfinished task a filter shows (operators), running a failed or cancelled task again,
// and the answer form's checks in plain words. Loaded after board.js, whose helpers
// (el, api, state, hooks, openTask, loadList, readFilters, optionsOf) it uses; like
// board.js it puts task data into the page only through textContent and attributes.
"use strict";

const consoleState = {
  counts: null, // the last counts read: {all, working, …, cap}
  generation: 0, // counts reads, so that an older answer never replaces a newer one
  timer: null, // a scheduled re-count after live changes
};

function countText(n, cap) {
  return n > cap ? `${cap}+` : String(n);
}

function capitalized(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

// The list's filter as a query string: tool and search always, the status only when
// asked (the counts are per status, so they leave it out).
function filterParams(withStatus) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(state.filters)) {
    if (v && (withStatus || k !== "status")) params.set(k, v);
  }
  return params;
}

// ---- tabs and counts -------------------------------------------------------------

async function refreshCounts() {
  const generation = ++consoleState.generation;
  try {
    const counts = await api(`/board/api/counts?${filterParams(false)}`);
    if (generation !== consoleState.generation) return;
    consoleState.counts = counts;
  } catch (_) {
    // The tabs keep their last counts; the list says when the server cannot answer.
  }
  renderTabs();
}

// Live changes move tasks between states: count again, at most every two seconds.
function scheduleCounts() {
  if (consoleState.timer) return;
  consoleState.timer = setTimeout(() => {
    consoleState.timer = null;
    refreshCounts();
  }, 2000);
}

function renderTabs() {
  const counts = consoleState.counts;
  for (const tab of document.querySelectorAll("#tabs a.tab")) {
    const status = tab.dataset.status;
    const params = filterParams(false);
    if (status) params.set("status", status);
    tab.href = params.toString() ? `/board?${params}` : "/board";
    if (status === state.filters.status) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
    if (!counts) continue;
    let count = tab.querySelector(".count");
    if (!count) tab.append(" ", (count = el("span", { class: "count" })));
    const n = counts[status || "all"] || 0;
    count.textContent = countText(n, counts.cap) + (status === "failed" && counts.failedAtLeast && n <= counts.cap ? "+" : "");
    count.classList.toggle("zero", n === 0);
  }
  renderBulk();
}

const tabs = document.getElementById("tabs");
if (tabs) {
  tabs.addEventListener("click", (e) => {
    const tab = e.target.closest("a.tab");
    // A click with a modifier opens the link as the browser does.
    if (!tab || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    document.getElementById("filter-status").value = tab.dataset.status;
    readFilters();
    renderTabs();
    loadList(false);
  });
}

// ---- bulk cancel (operators) -------------------------------------------------------

// How many unfinished (working or waiting) tasks the filter shows: what a bulk cancel
// cancels.
function activeShown() {
  const counts = consoleState.counts;
  if (!counts) return 0;
  const status = state.filters.status;
  if (!status) return counts.working + counts.input_required;
  if (status === "working" || status === "input_required") return counts[status];
  return 0;
}

function renderBulk() {
  const button = document.getElementById("bulk-cancel");
  if (!button) return;
  const n = activeShown();
  button.hidden = n === 0;
  const shown = countText(n, consoleState.counts ? consoleState.counts.cap : 0);
  button.textContent = `Cancel the ${shown} unfinished task${n === 1 ? "" : "s"}`;
  button.title = "Cancels the working and waiting tasks this filter matches; finished ones stay as they are";
}

function filterWords() {
  const f = state.filters;
  return [
    f.status ? `status ${f.status.replace("_", " ")}` : "working or waiting",
    f.tool ? `tool ${f.tool}` : null,
    f.q ? `id starting with ${f.q}` : null,
  ].filter(Boolean).join(", ");
}

async function bulkCancel() {
  const n = activeShown();
  const shown = countText(n, consoleState.counts.cap);
  if (!window.confirm(`Cancel ${shown} task${n === 1 ? "" : "s"} (${filterWords()})? Their work is stopped and cannot be resumed.`)) return;
  const out = document.getElementById("bulk-result");
  const f = state.filters;
  try {
    const done = await api("/board/api/bulk-cancel", {
      method: "POST",
      body: JSON.stringify({ status: f.status, tool: f.tool, q: f.q }),
    });
    out.textContent = `${capitalized(done.message)}.`;
  } catch (e) {
    out.textContent = `Could not cancel: ${e.message}`;
  }
  out.hidden = false;
  loadList(false);
}

const bulkButton = document.getElementById("bulk-cancel");
if (bulkButton) bulkButton.addEventListener("click", bulkCancel);

// ---- run again -------------------------------------------------------------------

function taskLink(id) {
  return el("a", {
    href: `/board/tasks/${encodeURIComponent(id)}`,
    onclick: (e) => {
      e.preventDefault();
      openTask(id, true);
    },
  }, el("code", {}, id));
}

async function runAgain(task, problem) {
  if (!window.confirm(`Run ${task.tool} again with the same arguments? A new task is started for its owner.`)) return;
  problem.hidden = true;
  try {
    const made = await api(`/board/api/tasks/${encodeURIComponent(task.id)}/rerun`, { method: "POST", body: "{}" });
    openTask(made.id, true);
  } catch (e) {
    problem.textContent = e.message;
    problem.hidden = false;
  }
}

hooks.detailParts.push((task) => {
  const parts = [];
  if (task.canRunAgain) {
    const problem = el("p", { class: "error", role: "alert", hidden: true });
    parts.push(el("div", { class: "run-again" },
      el("button", { type: "button", id: "run-again", onclick: () => runAgain(task, problem) }, "Run again"),
      el("span", { class: "meta" }, " a new task with the same tool and arguments"),
      problem));
  }
  const reruns = task.reruns || [];
  if (reruns.length) {
    parts.push(el("p", { class: "reruns" }, "Run again as ",
      reruns.flatMap((id, i) => [i ? ", " : null, taskLink(id)])));
  }
  return parts;
});

// ---- answer checks in plain words ------------------------------------------------

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// What is wrong with one field of an answer form, as a sentence naming the field by
// its label (the schema's title, else its key), or null. The server checks the same
// again (and words its refusal the same way).
function answerProblem(name, schema, required, field) {
  const label = capitalized(schema.title || name);
  const control = field.node.querySelector("input:not([type=checkbox]), select");
  const value = field.read();
  if (schema.type === "array") {
    const n = value.length;
    if (schema.minItems !== undefined && n < schema.minItems) return `${label} needs at least ${plural(schema.minItems, "choice")}.`;
    if (schema.maxItems !== undefined && n > schema.maxItems) return `${label} allows at most ${plural(schema.maxItems, "choice")}.`;
    return null;
  }
  if (control && control.validity.badInput) {
    return `${label} must be ${schema.type === "integer" ? "a whole number" : "a number"}.`;
  }
  if (value === undefined) return required ? `${label} is required.` : null;
  if (typeof value === "number") {
    if (schema.type === "integer" && !Number.isInteger(value)) return `${label} must be a whole number.`;
    if (schema.minimum !== undefined && value < schema.minimum) return `${label} must be at least ${schema.minimum}.`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${label} must be at most ${schema.maximum}.`;
    return null;
  }
  if (typeof value !== "string" || optionsOf(schema)) return null;
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength) {
    return schema.minLength === 1 ? `${label} must not be empty.` : `${label} must be at least ${schema.minLength} characters long.`;
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) return `${label} must be at most ${schema.maxLength} characters long.`;
  if (control && control.validity.typeMismatch) {
    return schema.format === "email"
      ? `${label} must be an email address, like name@example.com.`
      : `${label} must be a web address, like https://example.com.`;
  }
  if (control && control.validity.patternMismatch) return `${label} is not in the expected form.`;
  return null;
}

// Checks an answer form's fields (`fields`: [name, {node, read}] in the form's
// order), marks the wrong ones, and says every problem in `problem`; true when none.
function checkAnswer(schema, required, fields, problem) {
  const problems = [];
  for (const [name, f] of fields) {
    const said = answerProblem(name, (schema.properties || {})[name] || {}, required.has(name), f);
    const control = f.node.querySelector("input, select");
    if (control) control.setAttribute("aria-invalid", said ? "true" : "false");
    if (said) problems.push(said);
  }
  if (!problems.length) return true;
  problem.textContent = problems.join(" ");
  problem.hidden = false;
  const bad = fields.map(([, f]) => f.node.querySelector("[aria-invalid=true]")).find(Boolean);
  if (bad) bad.focus();
  return false;
}

// ---- start -----------------------------------------------------------------------

hooks.listLoaded.push(refreshCounts);
hooks.taskChanged.push(scheduleCounts);
renderTabs();
