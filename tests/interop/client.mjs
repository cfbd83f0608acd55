// mcp-tasks interoperability client: the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned by run.sh) against an mcp-tasks server with the demo tools, over stdio or HTTP.
//
//   node client.mjs --url http://127.0.0.1:PORT/mcp
//   node client.mjs --stdio "target/debug/mcp-tasks serve --demo --database memory: --stdio"
//
// run.sh copies this file and common.mjs next to target/interop/node/node_modules so the SDK
// resolves.
// Prints "PASS name" / "FAIL name: detail" per check, "NOTE ..." for information, and a final
// "N passed, M failed"; exits 1 when any check failed.
//
// Every message is recorded on the way in and out (a transport wrapper), so that each Task the
// server sends can be validated afterwards against the SDK's own zod schemas. Reporting, the
// recorder and the transport come from common.mjs, shared with hitl.mjs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  LATEST_PROTOCOL_VERSION,
  ListTasksResultSchema,
  TaskSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { R, RecordingTransport, check, checkTaskSupport, closeWithin, fail, finish, group } from './common.mjs';
import { meta, note, noteSdkErrors, openTransport, parseArgs, passed, show, sleep } from './common.mjs';
import { startDeadline, textOf, until } from './common.mjs';

const DEADLINE_MS = 75_000; // whole client run

// Expects a JSON-RPC error with the given code from a request.
async function expectCode(name, code, fn) {
  try {
    const r = await fn();
    fail(name, { expected: code, got: 'success', result: r });
  } catch (e) {
    check(name, e?.code === code, { expected: code, got: e?.code, message: e?.message });
  }
}

// ------------------------------------------------------------------ session
const opts = parseArgs(process.argv.slice(2), 'client.mjs');
const transportName = opts.url ? 'http' : 'stdio';

const wire = new RecordingTransport(openTransport(opts));
const client = new Client({ name: 'mcp-tasks-interop-ts', version: '1.0.0' }, { capabilities: {} });

// SDK-routed notifications/tasks/status (parsed by the SDK with its own schema).
const statusSeen = []; // { at, params }
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
  statusSeen.push({ at: Date.now(), params: n.params });
});
const sdkErrors = [];
client.onerror = (e) => sdkErrors.push(String(e?.message ?? e));

const deadline = startDeadline(DEADLINE_MS);

const createdIds = new Set();

// Drains a callToolStream, returning what it yielded.
async function drain(stream, onCreated) {
  const out = { created: undefined, statuses: [], result: undefined, errors: [] };
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      out.created = m.task;
      createdIds.add(m.task.taskId);
      onCreated?.(m.task);
    } else if (m.type === 'taskStatus') out.statuses.push(m.task);
    else if (m.type === 'result') out.result = m.result;
    else if (m.type === 'error') out.errors.push(m.error);
  }
  return out;
}

// ------------------------------------------------------------------ checks
await group('connect', async () => {
  await client.connect(wire, R);
  const init = wire.results('initialize')[0];
  check(
    'initialize negotiates 2025-11-25',
    init?.protocolVersion === '2025-11-25' && LATEST_PROTOCOL_VERSION === '2025-11-25',
    init?.protocolVersion,
  );
  const t = client.getServerCapabilities()?.tasks;
  check(
    'initialize advertises tasks.list, tasks.cancel, tasks.requests.tools.call',
    !!t && typeof t.list === 'object' && typeof t.cancel === 'object' && typeof t.requests?.tools?.call === 'object',
    t,
  );
});
if (passed === 0) {
  note('could not connect; stopping');
  finish();
}

await group('tools/list', async () => {
  await checkTaskSupport(client, { slow_compute: 'optional', greet: 'forbidden', failing_job: 'required' });
  check('SDK caches slow_compute as task-capable and failing_job as task-required',
    client.isToolTask('slow_compute') && client.isToolTaskRequired('failing_job') && !client.isToolTask('greet'));
});

await group('greet', async () => {
  const r = await client.callTool({ name: 'greet', arguments: { name: 'Ada' } }, CallToolResultSchema, R);
  check('greet (no task) returns "Hello, Ada!"', textOf(r) === 'Hello, Ada!' && !r.isError, r);
});

await group('slow_compute sync', async () => {
  const t0 = Date.now();
  const r = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0.2, label: 'ts-sync' } }, CallToolResultSchema, R);
  check('slow_compute without task returns a CallToolResult directly',
    r.content.length > 0 && !r.isError && r.task === undefined && Date.now() - t0 >= 150, r);
});

// Main task flow through the SDK's own stream helper, with a progress handler.
let mainId;
let mainResult;
const progress = [];
await group('task flow', async () => {
  let createdAt;
  const out = await drain(
    client.experimental.tasks.callToolStream(
      { name: 'slow_compute', arguments: { seconds: 1.2, label: 'ts-task' } },
      CallToolResultSchema,
      { ...R, task: { ttl: 60000 }, onprogress: (p) => progress.push({ at: Date.now(), p }) },
    ),
    (task) => { createdAt = Date.now(); },
  );
  const c = out.created;
  mainId = c?.taskId;
  check('slow_compute task: CreateTaskResult with a working task',
    typeof mainId === 'string' && mainId.length >= 16 && c.status === 'working', c);
  check('slow_compute task: requested ttl 60000 is reported', c?.ttl === 60000, c?.ttl);
  check('slow_compute task: polling reaches completed',
    out.statuses.at(-1)?.status === 'completed' && out.errors.length === 0,
    { statuses: out.statuses.map((s) => s.status), errors: out.errors.map(show) });
  mainResult = out.result;
  check('slow_compute task: tasks/result returns the tool content',
    out.result?.content?.length > 0 && !out.result.isError && textOf(out.result).length > 0, out.result);
  check('slow_compute task: tasks/result carries related-task _meta', meta(out.result)?.taskId === mainId, out.result?._meta);
  const got = await client.experimental.tasks.getTask(mainId, R);
  check('tasks/get after completion: completed, same id and createdAt',
    got.status === 'completed' && got.taskId === mainId && got.createdAt === c.createdAt, got);
  const again1 = await client.experimental.tasks.getTaskResult(mainId, CallToolResultSchema, R);
  const again2 = await client.experimental.tasks.getTaskResult(mainId, CallToolResultSchema, R);
  check('tasks/result read twice returns the same content',
    JSON.stringify(again1.content) === JSON.stringify(out.result?.content) &&
      JSON.stringify(again2.content) === JSON.stringify(again1.content) &&
      meta(again2)?.taskId === mainId,
    { first: again1, second: again2 });
  const afterCreate = progress.filter((x) => createdAt && x.at >= createdAt - 5);
  check('progress: onprogress receives notifications/progress for the task',
    progress.length > 0 && progress.every((x) => typeof x.p.progress === 'number'),
    { count: progress.length, afterCreate: afterCreate.length, raw: wire.notifications('notifications/progress').length });
  // notifications/tasks/status for the completed task, via the SDK handler
  const seen = await until(() => statusSeen.some((s) => s.params.taskId === mainId && s.params.status === 'completed'), 5000);
  check(`notifications/tasks/status "completed" received over ${transportName}`, seen,
    { statusNotifications: statusSeen.map((s) => `${s.params.taskId.slice(0, 8)}:${s.params.status}`) });
});

await group('auto-augmented task', async () => {
  // No explicit task option: the SDK adds task:{} itself because tools/list said "optional".
  const out = await drain(client.experimental.tasks.callToolStream(
    { name: 'slow_compute', arguments: { seconds: 0.1, label: 'ts-auto' } }, CallToolResultSchema, R));
  check('SDK auto-augments an optional tool (task: {}) and gets a task with an integer default ttl',
    !!out.created && Number.isInteger(out.created.ttl) && out.result?.content?.length > 0 && out.errors.length === 0,
    { created: out.created, errors: out.errors.map(show) });
});

await group('failing_job task', async () => {
  const out = await drain(client.experimental.tasks.callToolStream({ name: 'failing_job', arguments: {} }, CallToolResultSchema, R));
  const id = out.created?.taskId;
  const last = out.statuses.at(-1);
  check('failing_job task: status becomes failed', !!id && last?.status === 'failed', { statuses: out.statuses.map((s) => s.status) });
  check('failing_job task: SDK stream reports the failure', out.errors.length === 1 && /failed/.test(out.errors[0].message),
    out.errors.map(show));
  check('failing_job task: failed task carries a statusMessage', typeof last?.statusMessage === 'string' && last.statusMessage.length > 0, last);
  if (!id) return;
  const r = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema, R);
  check('failing_job task: tasks/result returns the result with isError true', r.isError === true && meta(r)?.taskId === id, r);
});

await group('tool-level negotiation', async () => {
  // Raw request: client.callTool would refuse a task-required tool before sending it.
  await expectCode('failing_job without task -> -32601', ErrorCode.MethodNotFound, () =>
    client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema, R));
  await expectCode('greet with task -> -32601', ErrorCode.MethodNotFound, () =>
    client.request({ method: 'tools/call', params: { name: 'greet', arguments: { name: 'Ada' } } }, CreateTaskResultSchema,
      { ...R, task: { ttl: 60000 } }));
  await expectCode('unknown tool -> -32602', ErrorCode.InvalidParams, () =>
    client.request({ method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } }, CallToolResultSchema, R));
  await expectCode('slow_compute without required "seconds" -> -32602', ErrorCode.InvalidParams, () =>
    client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { label: 'x' } } }, CallToolResultSchema, R));
  await expectCode('slow_compute as task without required "seconds" -> -32602', ErrorCode.InvalidParams, () =>
    client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: {} } }, CreateTaskResultSchema,
      { ...R, task: {} }));
});

await group('cancel', async () => {
  const stream = client.experimental.tasks.callToolStream(
    { name: 'slow_compute', arguments: { seconds: 30, label: 'ts-long' } }, CallToolResultSchema, { ...R, task: { ttl: 60000 } });
  const first = await stream.next();
  const id = first.value?.type === 'taskCreated' ? first.value.task.taskId : undefined;
  if (!check('long slow_compute task created', !!id, first.value)) return;
  createdIds.add(id);
  await stream.return(); // stop the SDK's polling loop; the task keeps running server-side
  const t0 = Date.now();
  const c = await client.experimental.tasks.cancelTask(id, R);
  check('tasks/cancel returns the task already cancelled', c.status === 'cancelled' && c.taskId === id && Date.now() - t0 < 3000, c);
  const g = await client.experimental.tasks.getTask(id, R);
  check('tasks/get after cancel shows cancelled', g.status === 'cancelled', g);
  await expectCode('tasks/cancel of a cancelled task -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.cancelTask(id, R));
  const t1 = Date.now();
  try {
    const r = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema, { timeout: 5000 });
    fail('tasks/result of a cancelled task returns a JSON-RPC error promptly', { got: 'success', result: r });
  } catch (e) {
    check('tasks/result of a cancelled task returns a JSON-RPC error promptly',
      typeof e?.code === 'number' && e.code !== ErrorCode.RequestTimeout && e.code !== ErrorCode.ConnectionClosed,
      { code: e?.code, message: e?.message, ms: Date.now() - t1 });
  }
  await expectCode('tasks/get of an unknown id -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.getTask('no-such-task-00000000', R));
  await expectCode('tasks/cancel of an unknown id -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.cancelTask('no-such-task-00000000', R));
  await expectCode('tasks/result of an unknown id -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.getTaskResult('no-such-task-00000000', CallToolResultSchema, R));
  await expectCode('tasks/cancel of a completed task -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.cancelTask(mainId ?? 'missing', R));
});

await group('cancelled stays cancelled', async () => {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.8, label: 'ts-short-cancel' } } },
    CreateTaskResultSchema, { ...R, task: { ttl: 60000 } });
  const id = created.task.taskId;
  createdIds.add(id);
  await client.experimental.tasks.cancelTask(id, R);
  await sleep(1500); // past the time the work would have finished
  const g = await client.experimental.tasks.getTask(id, R);
  const later = statusSeen.filter((s) => s.params.taskId === id && s.params.status !== 'cancelled' && s.params.status !== 'working');
  check('a cancelled task stays cancelled after its work would have ended', g.status === 'cancelled' && later.length === 0,
    { get: g.status, otherTerminalNotifications: later.map((s) => s.params.status) });
});

await group('tasks/list', async () => {
  const all = [];
  let cursor;
  let pages = 0;
  do {
    const page = await client.experimental.tasks.listTasks(cursor, R);
    all.push(...page.tasks);
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 50);
  const ids = new Set(all.map((t) => t.taskId));
  const missing = [...createdIds].filter((id) => !ids.has(id));
  check(`tasks/list (${pages} page(s)) includes every task created in this session`, missing.length === 0 && !cursor,
    { missing, listed: ids.size });
  check('task ids are unique', createdIds.size >= 5 && ids.size === all.length, { created: createdIds.size, listed: all.length, unique: ids.size });
  await expectCode('tasks/list with a bogus cursor -> -32602', ErrorCode.InvalidParams, () =>
    client.experimental.tasks.listTasks('bogus-cursor', R));
});

// ------------------------------------------------------------------ schema validation of everything recorded
await group('schemas', async () => {
  const kinds = [
    ['CreateTaskResult', CreateTaskResultSchema, wire.results('tools/call').filter((r) => r.task !== undefined)],
    ['GetTaskResult', GetTaskResultSchema, wire.results('tasks/get')],
    ['ListTasksResult', ListTasksResultSchema, wire.results('tasks/list')],
    ['CancelTaskResult', CancelTaskResultSchema, wire.results('tasks/cancel')],
    ['GetTaskPayloadResult', GetTaskPayloadResultSchema, wire.results('tasks/result')],
    ['CallToolResult (tasks/result payload)', CallToolResultSchema, wire.results('tasks/result')],
    ['TaskStatusNotification', TaskStatusNotificationSchema, wire.notifications('notifications/tasks/status').map((r) => r.msg)],
  ];
  for (const [kind, schema, items] of kinds) {
    const bad = items.map((x) => [x, schema.safeParse(x)]).filter(([, r]) => !r.success);
    check(`schema: ${items.length} ${kind} message(s) validate against the SDK's zod schema`,
      items.length > 0 && bad.length === 0,
      items.length === 0 ? 'none received' : bad.length ? { message: bad[0][0], issues: bad[0][1].error.issues } : undefined);
  }
  // Every Task object: the SDK's TaskSchema plus the wire rules zod does not enforce.
  const tasks = [
    ...wire.results('tools/call').filter((r) => r.task).map((r) => r.task),
    ...wire.results('tasks/get'),
    ...wire.results('tasks/cancel'),
    ...wire.results('tasks/list').flatMap((r) => r.tasks ?? []),
    ...wire.notifications('notifications/tasks/status').map((r) => r.msg.params),
  ];
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const problems = [];
  for (const t of tasks) {
    if (!TaskSchema.safeParse(t).success) problems.push(['TaskSchema', t]);
    if (!('ttl' in t) || !(t.ttl === null || Number.isInteger(t.ttl))) problems.push(['ttl integer|null', t]);
    if ('pollInterval' in t && !Number.isInteger(t.pollInterval)) problems.push(['pollInterval integer', t]);
    if (!rfc3339.test(t.createdAt) || !rfc3339.test(t.lastUpdatedAt)) problems.push(['RFC 3339 timestamps', t]);
    else if (Date.parse(t.lastUpdatedAt) < Date.parse(t.createdAt)) problems.push(['lastUpdatedAt >= createdAt', t]);
    if ('statusMessage' in t && typeof t.statusMessage !== 'string') problems.push(['statusMessage string', t]);
  }
  check(`${tasks.length} Task objects: integer ttl/pollInterval, RFC 3339 timestamps, no nulls in optional fields`,
    tasks.length > 0 && problems.length === 0, problems[0]);
  const withMeta = [
    ...wire.results('tasks/get'), ...wire.results('tasks/list'), ...wire.results('tasks/cancel'),
    ...wire.notifications('notifications/tasks/status').map((r) => r.msg.params),
  ].filter((x) => meta(x) !== undefined);
  check('tasks/get, tasks/list, tasks/cancel and status notifications carry no related-task _meta', withMeta.length === 0, withMeta[0]);
});

clearTimeout(deadline);
noteSdkErrors(sdkErrors);
note(`${transportName}: ${wire.received.length} messages received, ${statusSeen.length} status notifications, ${progress.length} progress callbacks`);
await closeWithin(client, 3000);
finish();
