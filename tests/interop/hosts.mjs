// mcp-tasks interoperability client for hosts that do not speak tasks: the official
// TypeScript SDK client (pinned by run.sh), declaring neither tasks nor elicitation, with a
// request timeout (4 s) shorter than the tools it calls, against a server run with
// `--sync-budget 2s --progress-interval 1s`. A plain call that outlasts the budget must come
// back as a handle before the client gives up, and the task tools (task_wait, task_status,
// task_answer, task_cancel, task_list) must lead to the real result.
//
//   node hosts.mjs --stdio "mcp-tasks serve --demo --stdio --sync-budget 2s --progress-interval 1s ..."
//   node hosts.mjs --url http://127.0.0.1:PORT/mcp      (mcp-tasks serve --listen ...)
//   HOSTS_UPSTREAM=everything node hosts.mjs --stdio "mcp-tasks wrap --sync-budget 2s ... -- node .../index.js stdio"
//     (the official everything server behind the gateway: its long-running operation)
//
// With --url, HOSTS_TOKEN and HOSTS_OTHER_TOKEN (bearer tokens of two principals of a server
// run with --auth-tokens), the demo checks also connect as the other principal, who must not
// see the first one's task. (Without authentication a task id is the capability: any session
// holding it may read the task, and only listing is per session.) Prints "PASS name" / "FAIL name: detail",
// and "N passed, M failed"; exits 1 on a failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { check, closeWithin, finish, group, meta, note, openTransport, parseArgs, show } from './common.mjs';
import { startDeadline, textOf } from './common.mjs';

// The client's request timeout: longer than the server's sync budget (2 s), shorter than
// the tools (8 s), as a host's would be.
const T = { timeout: 4000 };
const DEADLINE_MS = 60_000;
const MAX_WAITS = 10; // task_wait calls before giving up on a result
const TASK_TOOLS = ['task_wait', 'task_status', 'task_answer', 'task_cancel', 'task_list'];
const UPSTREAM = process.env.HOSTS_UPSTREAM ?? 'demo';
const opts = parseArgs(process.argv.slice(2), 'hosts.mjs');
const deadline = startDeadline(DEADLINE_MS);

// A client as a host without tasks builds it: no tasks, no elicitation, no sampling;
// over HTTP with the bearer token given, if any.
async function connect(token) {
  const client = new Client({ name: 'mcp-tasks-interop-hosts', version: '1.0.0' }, { capabilities: {} });
  const auth = token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined;
  await client.connect(openTransport(opts, auth), T);
  return client;
}
const TOKEN = process.env.HOSTS_TOKEN;
const OTHER_TOKEN = process.env.HOSTS_OTHER_TOKEN;
const client = await connect(TOKEN);

const call = (name, args, extra) => client.callTool({ name, arguments: args }, undefined, { ...T, ...extra });
const tool = (name, args) => call(name, args);

// A plain call that outlasts the budget: the handle, and how long it took.
async function handleOf(name, args) {
  const started = Date.now();
  const r = await call(name, args);
  return { r, id: meta(r)?.taskId, ms: Date.now() - started };
}

// task_wait until the task's own result comes back (done(result) says so), at most MAX_WAITS calls.
async function waitFor(taskId, done) {
  const seen = [];
  for (let i = 0; i < MAX_WAITS; i++) {
    const r = await tool('task_wait', { taskId, seconds: 3 });
    if (done(r)) return { result: r, seen };
    seen.push(r.structuredContent?.status ?? textOf(r).slice(0, 80));
  }
  return { result: undefined, seen };
}

async function status(taskId) {
  return tool('task_status', { taskId });
}

// The handle's shape: text that says what to do, the id in _meta, and, since a client offered
// the task tools is shown no outputSchema, no error: the status as structuredContent (an
// outputSchema listed would make it isError with no structuredContent).
function checkHandle(label, h, hasOutputSchema, wantStatus) {
  const text = textOf(h.r);
  check(`${label}: the handle came back before the client's 4 s timeout, and the SDK accepted it`, h.ms < 4000, h.ms);
  check(`${label}: the handle names its task in _meta (related-task)`, typeof h.id === 'string' && h.id.length > 0, h.r);
  check(`${label}: the handle's text names the task and the task tools`,
    !!h.id && text.includes(h.id) && ['task_wait', 'task_status', 'task_cancel'].every((t) => text.includes(t)), text);
  if (hasOutputSchema) {
    check(`${label}: a tool with an outputSchema answers isError with no structuredContent`,
      h.r.isError === true && h.r.structuredContent === undefined, h.r);
  } else {
    check(`${label}: with no outputSchema listed, the handle is no error, the status as structuredContent`,
      h.r.isError !== true && h.r.structuredContent?.taskId === h.id && h.r.structuredContent?.status === wantStatus, h.r);
  }
}

// Whether task_status says "no task" as an error.
const isNoTask = (r) => r?.isError === true && textOf(r).startsWith('no task');

let tools = [];
await group('tools/list', async () => {
  ({ tools } = await client.listTools(undefined, T));
  const names = tools.map((t) => t.name);
  check('tools/list offers the five task tools to a client without tasks',
    TASK_TOOLS.every((t) => names.includes(t)), names);
});

if (UPSTREAM === 'everything') {
  const LONG = 'trigger-long-running-operation';
  await group('the upstream long-running operation without a task', async () => {
    const listed = tools.find((t) => t.name === LONG);
    check(`${LONG} is listed, task support optional`, listed?.execution?.taskSupport === 'optional', listed);
    const h = await handleOf(LONG, { duration: 6, steps: 6 });
    checkHandle(LONG, h, !!listed?.outputSchema, 'working');
    const { tasks } = (await tool('task_list', {})).structuredContent ?? {};
    check('task_list finds the task', (tasks ?? []).some((t) => t.taskId === h.id && t.tool === LONG), tasks);
    const { result, seen } = await waitFor(h.id, (r) => textOf(r).includes('Long running operation completed'));
    check('task_wait returns the upstream result', !!result && result.isError !== true, seen);
  });
  await group('progress through the gateway', async () => {
    const progress = [];
    await call(LONG, { duration: 3, steps: 6 }, { onprogress: (p) => progress.push(p) });
    check('a plain call with a progressToken receives progress (at least 2)', progress.length >= 2, progress);
  });
} else {
  // The long call first: it runs on while the other groups run.
  let long;
  await group('a long plain call', async () => {
    const listed = tools.find((t) => t.name === 'slow_compute');
    // slow_compute has an outputSchema; a client offered the task tools is not shown it, so
    // that the handle of a long call is an ordinary result the SDK accepts.
    check('slow_compute is listed without its outputSchema to a client offered the task tools',
      !!listed && listed.outputSchema === undefined, listed);
    long = await handleOf('slow_compute', { seconds: 8, label: 'long' });
    checkHandle('slow_compute 8 s', long, false, 'working');
    check('slow_compute 8 s: the handle is not an error (isError false)', long.r.isError === false, long.r);
    const s = await status(long.id);
    check('task_status: working, tool slow_compute',
      s.structuredContent?.status === 'working' && s.structuredContent?.tool === 'slow_compute', s);
  });

  await group('progress of a plain call', async () => {
    const progress = [];
    await call('slow_compute', { seconds: 3, label: 'progress' }, { onprogress: (p) => progress.push(p) });
    check('a plain call with a progressToken receives progress (at least 2)', progress.length >= 2, progress);
  });

  await group('task_list and task_cancel', async () => {
    const { tasks } = (await tool('task_list', {})).structuredContent ?? {};
    check('task_list finds the long task', (tasks ?? []).some((t) => t.taskId === long?.id && t.tool === 'slow_compute'),
      tasks);
    const victim = await handleOf('slow_compute', { seconds: 60, label: 'victim' });
    const c = await tool('task_cancel', { taskId: victim.id });
    check('task_cancel answers without error', c.isError !== true, c);
    let s;
    for (let i = 0; i < 20; i++) {
      s = await status(victim.id);
      if (s.structuredContent?.status === 'cancelled') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    check('task_status then says cancelled', s?.structuredContent?.status === 'cancelled', s);
  });

  await group("an unknown task, and another principal's", async () => {
    check('task_status of a made-up id: isError, "no task…"', isNoTask(await status('no-such-task-0000')));
    if (opts.url && OTHER_TOKEN && long?.id) {
      const other = await connect(OTHER_TOKEN);
      try {
        await other.listTools(undefined, T);
        for (const name of ['task_status', 'task_wait', 'task_cancel']) {
          const r = await other.callTool({ name, arguments: { taskId: long.id } }, undefined, T);
          check(`another principal's ${name} of our id: isError, "no task…" (like an unknown id)`, isNoTask(r), r);
        }
        const theirs = (await other.callTool({ name: 'task_list', arguments: {} }, undefined, T)).structuredContent;
        check("another principal's task_list does not show our task",
          !(theirs?.tasks ?? []).some((t) => t.taskId === long.id), theirs);
      } finally {
        await closeWithin(other, 2000);
      }
    }
  });

  await group('a question the client cannot show', async () => {
    const h = await handleOf('confirm_delete', { filename: 'x' });
    const listed = tools.find((t) => t.name === 'confirm_delete');
    checkHandle('confirm_delete', h, !!listed?.outputSchema, 'input_required');
    let s;
    for (let i = 0; i < 20; i++) {
      s = await status(h.id);
      if (s.structuredContent?.status === 'input_required' && s.structuredContent?.questions?.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const q = s?.structuredContent?.questions?.[0];
    check('task_status: input_required with the question (key, elicitation, a boolean confirm)',
      s?.structuredContent?.status === 'input_required' && typeof q?.key === 'string'
        && q?.requestedSchema?.properties?.confirm?.type === 'boolean', s);
    const a = await tool('task_answer', { taskId: h.id, answers: { [q?.key]: { action: 'accept', content: { confirm: true } } } });
    check('task_answer accepts the answer', a.isError !== true, a);
    const { result, seen } = await waitFor(h.id, (r) => r.structuredContent?.deleted !== undefined);
    check('task_wait returns the result {filename: "x", deleted: true}',
      result?.structuredContent?.filename === 'x' && result?.structuredContent?.deleted === true, result ?? seen);
  });

  await group('task_wait returns the long call\'s result', async () => {
    const { result, seen } = await waitFor(long?.id, (r) => r.structuredContent?.label !== undefined);
    check('task_wait returns the real result, structuredContent {label, seconds}',
      result?.structuredContent?.label === 'long' && result?.structuredContent?.seconds === 8, result ?? seen);
  });
}

note(`transport: ${opts.url ? 'Streamable HTTP' : 'stdio'}, upstream ${UPSTREAM}, ${show(tools.length)} tools`);
await closeWithin(client, 2000);
clearTimeout(deadline);
finish();
