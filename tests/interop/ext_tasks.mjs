// Interoperability client: the official Tasks extension client package
// (@modelcontextprotocol/ext-tasks) on top of the v2 TypeScript client SDK
// (@modelcontextprotocol/client), driving the mcp-tasks demo server over Streamable HTTP on
// the 2026-07-28 wire with the Tasks extension (io.modelcontextprotocol/tasks).
//
//   node ext_tasks.mjs --url http://127.0.0.1:PORT/mcp
//
// The server must run `serve --demo` with a poll interval other than the package's default
// of 1 s (run.sh uses --poll-interval 300ms), so that honouring the server's pollIntervalMs
// is observable. An input request the application cannot answer fails its task at the
// deadline the call gives it (`summarize_with_model {deadline_seconds: 3}`): a task's
// question otherwise waits as long as the task lives.
//
// The package needs, for a 2026-07-28 server, a "raw dispatch" (the host's request path
// for task traffic the SDK's own codecs would reject) and the request framing. The raw path
// here sends through the SDK's StreamableHTTPClientTransport, which derives the routing
// headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) from each body, exactly as the SDK does
// for its own requests; this file only matches responses to their ids. Every HTTP exchange is
// recorded (through the transport's fetch option) so the checks can look at the wire.
//
// Prints PASS/FAIL lines and ends with "N passed, M failed"; exits non-zero on failures.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  DispatchError,
  JsonRpcResponseError,
} from '@modelcontextprotocol/ext-tasks/client';

const TIMEOUT_MS = 10_000; // per request
const PACKAGE_DEFAULT_POLL_MS = 1_000; // the package's poll interval when the server gives none
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

// ------------------------------------------------------------------ reporting
let passed = 0;
let failed = 0;
const show = (v) => {
  if (v instanceof Error) return `${v.constructor.name}(${v.code ?? ''}) ${v.message}${v.cause ? ` (cause: ${show(v.cause)})` : ''}`;
  const s = typeof v === 'string' ? v : JSON.stringify(v, (k, x) => (x instanceof Error ? show(x) : x));
  return s && s.length > 600 ? s.slice(0, 600) + '…' : s;
};
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`PASS ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}${detail === undefined ? '' : ': ' + show(detail)}`);
  }
  return ok;
}
const note = (msg) => console.log(`NOTE ${msg}`);
function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
async function group(name, fn) {
  try {
    await fn();
  } catch (e) {
    check(`${name} (exception)`, false, e?.stack ? `${show(e)} @ ${e.stack.split("\n")[1]?.trim()}${e.cause ? ` (cause: ${show(e.cause)})` : ""}` : e);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Resolves with the value, or rejects once ms passed (a hung await must not eat the run).
function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};
const textOf = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// ------------------------------------------------------------------ arguments
let url;
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--url') url = process.argv[++i];
  else {
    console.error(`unknown argument ${process.argv[i]}`);
    process.exit(2);
  }
}
if (!url) {
  console.error('usage: ext_tasks.mjs --url URL');
  process.exit(2);
}

// ------------------------------------------------------------------ the wire, recorded
// One entry per POST: when it was sent and answered, its headers (lower-case names), its
// JSON-RPC body, the HTTP status and the JSON-RPC response.
const exchanges = [];
// tamper(headers, body) runs on the next request it returns true for, then is removed:
// it stands for a misbehaving intermediary, to see how a header mismatch comes back.
let tamper;
async function recordingFetch(input, init = {}) {
  const headers = new Headers(init.headers);
  let body;
  try {
    body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
  } catch {
    body = undefined;
  }
  if (tamper && body && tamper(headers, body)) tamper = undefined;
  const entry = { sentAt: Date.now(), headers: Object.fromEntries(headers), body };
  exchanges.push(entry);
  const response = await fetch(input, { ...init, headers });
  entry.status = response.status;
  entry.answeredAt = Date.now();
  response
    .clone()
    .text()
    .then((text) => {
      const type = response.headers.get('content-type') ?? '';
      try {
        entry.response = type.includes('event-stream')
          ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).at(-1)?.slice(5) ?? 'null')
          : JSON.parse(text);
      } catch {
        entry.response = text;
      }
    })
    .catch(() => {});
  return response;
}
const requestsFor = (method, pred = () => true) =>
  exchanges.filter((e) => e.body?.method === method && e.body?.id !== undefined && pred(e.body));
const forTask = (taskId) => (b) => b.params?.taskId === taskId;

// ------------------------------------------------------------------ the raw request path
// Sends a JSON-RPC request through the SDK transport with an id of its own (strings, so they
// never collide with the Client's numeric ids) and takes its response out of the stream
// before the Client sees it.
class RawChannel {
  constructor(transport) {
    this.transport = transport;
    this.pending = new Map();
    this.next = 1;
  }
  // Call after client.connect(): wraps the handler the Client installed.
  attach() {
    const clientOnMessage = this.transport.onmessage;
    this.transport.onmessage = (message, extra) => {
      const waiter = message?.id !== undefined ? this.pending.get(message.id) : undefined;
      if (waiter && (message.result !== undefined || message.error !== undefined)) {
        this.pending.delete(message.id);
        waiter(message);
        return;
      }
      clientOnMessage?.(message, extra);
    };
    const clientOnClose = this.transport.onclose;
    this.transport.onclose = () => {
      for (const waiter of this.pending.values()) waiter(new DispatchError('transport closed', false));
      this.pending.clear();
      clientOnClose?.();
    };
  }
  dispatch = async (request, options = {}) => {
    const id = `ext-tasks-raw-${this.next++}`;
    const limit = options.context?.requestTimeoutMs ?? TIMEOUT_MS;
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new DispatchError(`${request.method} got no response within ${limit} ms`, true));
      }, limit);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        m instanceof Error ? reject(m) : resolve(m);
      });
      options.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          this.pending.delete(id);
          reject(options.signal.reason ?? new Error('aborted'));
        },
        { once: true },
      );
    });
    try {
      await this.transport.send(
        { jsonrpc: '2.0', id, ...request },
        { headers: options.context?.headers, requestSignal: options.signal },
      );
    } catch (e) {
      this.pending.get(id)?.(new DispatchError(`sending ${request.method} failed: ${e?.message ?? e}`, false, { cause: e }));
    }
    const m = await answer;
    return m.error !== undefined ? { kind: 'error', error: m.error } : { kind: 'result', result: m.result };
  };
}

// ------------------------------------------------------------------ application input
// What the "user" answers. Each handler records what it was asked.
const asked = [];
const BOOKING = {
  organizer: 'Ada Lovelace',
  email: 'ada@example.com',
  day: '2026-12-03',
  attendees: 6,
  room: 'south',
  catering: ['coffee', 'cake'],
  remote: false,
};
let samplingFails = false; // set while the failing-sampling check runs
const onInputRequest = createApplicationInputHandler({
  elicitation: async (request, context) => {
    asked.push({ kind: 'elicitation', message: request.params.message, context });
    const message = String(request.params.message ?? '');
    if (message.startsWith('Details for the meeting')) return { action: 'accept', content: BOOKING };
    if (message.startsWith('Delete the file')) return { action: 'accept', content: { confirm: true } };
    if (message.includes('your name')) return { action: 'accept', content: { name: 'Grace' } };
    if (message.includes('colour')) return { action: 'accept', content: { colour: 'green' } };
    return { action: 'decline' };
  },
  sampling: async (request, context) => {
    asked.push({ kind: 'sampling', params: request.params, context });
    if (samplingFails) throw new Error('this application has no model to sample (on purpose)');
    return { model: 'interop-model-1', role: 'assistant', content: { type: 'text', text: 'A short summary.' } };
  },
  roots: async () => ({ roots: [] }),
});
const backgroundErrors = [];

// ------------------------------------------------------------------ run
const deadline = setTimeout(() => {
  check('client finished within the deadline', false, '80 s passed');
  finish();
}, 80_000);

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
const clientInfo = { name: 'mcp-tasks-interop-ext-tasks', version: '1.0.0' };
const clientCapabilities = { elicitation: { form: {} }, sampling: {} };
const client = new Client(clientInfo, {
  capabilities: clientCapabilities,
  versionNegotiation: { mode: 'auto' },
});
let session;

await group('connect', async () => {
  await within(client.connect(transport), TIMEOUT_MS, 'connect');
  const discover = requestsFor('server/discover')[0];
  check('connect: the SDK probed with server/discover', discover !== undefined, exchanges.map((e) => e.body?.method));
  check('connect: negotiated the modern era, 2026-07-28', client.getProtocolEra() === 'modern' && client.getNegotiatedProtocolVersion() === '2026-07-28',
    { era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() });
  const ext = client.getServerCapabilities()?.extensions?.[TASKS_EXTENSION];
  check('server/discover: capabilities.extensions declares io.modelcontextprotocol/tasks as {}',
    ext !== undefined && JSON.stringify(ext) === '{}', client.getServerCapabilities());
});

const channel = new RawChannel(transport);
await group('session', async () => {
  channel.attach();
  session = createTaskSessionFromClient(client, {
    endpointId: await createTaskSessionEndpointId('mcp-tasks-interop', { url }),
    rawDispatch: channel.dispatch,
    v2RequestFraming: {
      protocolVersion: client.getNegotiatedProtocolVersion() ?? '2026-07-28',
      clientInfo,
      clientCapabilities,
    },
    onInputRequest,
    onError: (e) => backgroundErrors.push(e),
  });
  check('session: the package sees the 2026-07-28 Tasks capability (execution, cancellation, input responses)',
    session.capabilities.execution && session.capabilities.cancellation && session.capabilities.inputResponses,
    session.capabilities);
});
if (!session) finish();

// A settled execution's outcome, bounded in time.
const settle = (execution, ms = 20_000) => within(execution.settle(), ms, 'settle').then((s) => s.outcome);

// -------------------------------------------------------- a task: creation, polling, result
await group('slow_compute', async () => {
  const execution = await session.callTool('slow_compute', { seconds: 1.5, label: 'ext' }, { task: { preference: 'require' } });
  check('slow_compute: tools/call created a task (execution.kind is task)', execution.kind === 'task', execution.kind);
  const call = requestsFor('tools/call', (b) => b.params?.name === 'slow_compute').at(-1);
  const created = call?.response?.result;
  check('slow_compute: the package declared the extension in _meta clientCapabilities of tools/call',
    call?.body?.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS_EXTENSION] !== undefined, call?.body);
  check('slow_compute: CreateTaskResult on the wire: resultType task, taskId, status working, pollIntervalMs',
    created?.resultType === 'task' && typeof created.taskId === 'string' && created.status === 'working' &&
      Number.isInteger(created.pollIntervalMs), created);
  const taskId = execution.handle?.taskId;
  check('slow_compute: the handle carries the server task id', taskId !== undefined && taskId === created?.taskId, { taskId, created });
  const outcome = await settle(execution);
  check('slow_compute: completed, result content and structuredContent as the tool returned them',
    outcome.status === 'completed' && /finished after 1.5 s/.test(textOf(outcome.result)) &&
      outcome.result?.structuredContent?.label === 'ext', outcome);

  // Polling: every tasks/get of this task, timed.
  const hint = created?.pollIntervalMs;
  const gets = requestsFor('tasks/get', forTask(taskId));
  const gaps = [call.answeredAt, ...gets.map((g) => g.sentAt)].slice(0, -1).map((t, i) => gets[i].sentAt - t);
  if (hint === PACKAGE_DEFAULT_POLL_MS) note('the server suggests the package default poll interval: run it with another --poll-interval to tell them apart');
  check(`polling: the package polled tasks/get (${gets.length} times) until the task was terminal`,
    gets.length >= 2 && gets.at(-1)?.response?.result?.status === 'completed', gets.map((g) => g.response?.result?.status));
  check(`polling: no poll sooner than the server's pollIntervalMs (${hint} ms); gaps ${show(gaps)}`,
    gaps.length > 0 && gaps.every((g) => g >= hint - 5), gaps);
  check(`polling: the server's pollIntervalMs, not the package default (${PACKAGE_DEFAULT_POLL_MS} ms), sets the pace (median gap ${median(gaps)} ms)`,
    hint !== PACKAGE_DEFAULT_POLL_MS && median(gaps) < (hint + PACKAGE_DEFAULT_POLL_MS) / 2, { hint, gaps });

  // The completed task on the wire (the last tasks/get): DetailedTask with the result inlined.
  const last = gets.at(-1)?.response?.result;
  check('tasks/get (completed): resultType complete, status completed, result inlined with content',
    last?.resultType === 'complete' && last.status === 'completed' && Array.isArray(last.result?.content) &&
      last.result.isError !== true, last);

  // Routing headers the extension requires on task requests (Streamable HTTP binding).
  const taskRequests = exchanges.filter((e) => ['tasks/get', 'tasks/update', 'tasks/cancel'].includes(e.body?.method) && e.body?.params?.taskId === taskId);
  const bad = taskRequests.filter((e) => e.headers['mcp-name'] !== taskId || e.headers['mcp-method'] !== e.body.method ||
    e.headers['mcp-protocol-version'] !== e.body.params?._meta?.[PROTOCOL_VERSION_META]);
  check('headers: every tasks/* request carries Mcp-Method = method, Mcp-Name = params.taskId, MCP-Protocol-Version = _meta version',
    taskRequests.length > 0 && bad.length === 0, bad.map((e) => e.headers));
  check('headers: tools/call carries Mcp-Method tools/call and Mcp-Name = the tool name',
    call?.headers['mcp-method'] === 'tools/call' && call?.headers['mcp-name'] === 'slow_compute', call?.headers);
  check('headers: the server accepted every request of the task (HTTP 200, no JSON-RPC error)',
    [call, ...taskRequests].every((e) => e.status === 200 && e.response?.error === undefined),
    [call, ...taskRequests].filter((e) => e.status !== 200 || e.response?.error).map((e) => [e.status, e.response]));

  // The same task looked up again through a task controller.
  const view = await session.task(taskId).snapshot();
  check('task controller: snapshot of the finished task is completed with the server pollIntervalMs',
    view.status === 'completed' && view.suggestedPollIntervalMs === hint, view);
});

// -------------------------------------------------------- a tool that never becomes a task
await group('greet', async () => {
  const execution = await session.callTool('greet', { name: 'Ada' });
  const outcome = await settle(execution);
  const call = requestsFor('tools/call', (b) => b.params?.name === 'greet').at(-1);
  check('greet (taskSupport forbidden): an immediate result, resultType complete on the wire',
    execution.kind === 'immediate' && outcome.status === 'completed' && textOf(outcome.result) === 'Hello, Ada!' &&
      call?.response?.result?.resultType === 'complete', { kind: execution.kind, outcome, wire: call?.response });
});

// -------------------------------------------------------- inputRequests answered with tasks/update
await group('book_meeting', async () => {
  const execution = await session.callTool('book_meeting', { subject: 'interop' });
  check('book_meeting: task created', execution.kind === 'task', execution.kind);
  const taskId = execution.handle?.taskId;
  const outcome = await settle(execution);
  const question = requestsFor('tasks/get', forTask(taskId)).find((g) => g.response?.result?.status === 'input_required')?.response?.result;
  const keys = Object.keys(question?.inputRequests ?? {});
  check('book_meeting: tasks/get showed input_required with an elicitation/create in inputRequests',
    keys.length === 1 && question.inputRequests[keys[0]].method === 'elicitation/create', question);
  const a = asked.find((x) => x.kind === 'elicitation' && String(x.message).startsWith('Details for the meeting'));
  check('book_meeting: the application handler got the form, as a task-update delivery of this task',
    a?.context?.delivery === 'task-update' && a.context.taskId === taskId && a.context.inputId === keys[0], a?.context);
  const updates = requestsFor('tasks/update', forTask(taskId));
  check('book_meeting: the answer went back in one tasks/update, keyed by the input request key, acknowledged with resultType complete',
    updates.length === 1 && updates[0].body.params.inputResponses?.[keys[0]]?.action === 'accept' &&
      updates[0].response?.result?.resultType === 'complete', updates.map((u) => [u.body.params, u.response]));
  check('book_meeting: tasks/update carried Mcp-Name = taskId', updates[0]?.headers['mcp-name'] === taskId, updates[0]?.headers);
  const answer = outcome.result?.structuredContent?.answer;
  check('book_meeting: completed with the answer in the result (every field, the multiple choice too)',
    outcome.status === 'completed' && outcome.result?.structuredContent?.action === 'accept' &&
      JSON.stringify(answer) === JSON.stringify({ ...answer, ...BOOKING }), outcome);
});

await group('multi_input', async () => {
  const execution = await session.callTool('multi_input', {});
  const taskId = execution.handle?.taskId;
  const outcome = await settle(execution);
  check('multi_input: two questions outstanding together, both answered, the result combines them',
    outcome.status === 'completed' && outcome.result?.structuredContent?.name === 'Grace' &&
      outcome.result?.structuredContent?.colour === 'green', outcome);
  const answered = requestsFor('tasks/update', forTask(taskId)).flatMap((u) => Object.keys(u.body.params.inputResponses ?? {}));
  check('multi_input: each input request key answered exactly once', answered.length === 2 && new Set(answered).size === 2, answered);
});

await group('sampling', async () => {
  const execution = await session.callTool('summarize_with_model', { text: 'MCP tasks let long tool calls run durably.' });
  const taskId = execution.handle?.taskId;
  const outcome = await settle(execution);
  const q = asked.find((x) => x.kind === 'sampling' && x.context?.taskId === taskId);
  check('sampling: the sampling/createMessage input request reached the handler with its messages',
    Array.isArray(q?.params?.messages) && q.params.messages.length === 1, q?.params);
  check('sampling: answered with tasks/update, completed with the model reply in the result',
    outcome.status === 'completed' && outcome.result?.structuredContent?.summary === 'A short summary.' &&
      outcome.result?.structuredContent?.model === 'interop-model-1', outcome);
});

// -------------------------------------------------------- cancel
await group('cancel', async () => {
  const execution = await session.callTool('slow_compute', { seconds: 30, label: 'to-cancel' });
  const taskId = execution.handle?.taskId;
  await sleep(400);
  await within(execution.cancel(), TIMEOUT_MS, 'cancel');
  const cancel = requestsFor('tasks/cancel', forTask(taskId)).at(-1);
  check('cancel: tasks/cancel sent with Mcp-Name = taskId, acknowledged with resultType complete',
    cancel?.headers['mcp-name'] === taskId && cancel.response?.result?.resultType === 'complete', cancel && [cancel.headers, cancel.response]);
  const outcome = await settle(execution);
  check('cancel: the execution ends cancelled', outcome.status === 'cancelled', outcome);
  const view = await session.task(taskId).snapshot();
  check('cancel: tasks/get reports the task cancelled', view.status === 'cancelled', view);
});

// -------------------------------------------------------- errors
await group('tool error', async () => {
  const execution = await session.callTool('failing_job', {});
  check('failing_job (taskSupport required): task created', execution.kind === 'task', execution.kind);
  const outcome = await settle(execution);
  const last = requestsFor('tasks/get', forTask(execution.handle?.taskId)).at(-1)?.response?.result;
  check('failing_job: a tool error is a completed task whose result has isError true (not failed)',
    outcome.status === 'completed' && outcome.result?.isError === true && /failed on purpose/.test(textOf(outcome.result)) &&
      last?.status === 'completed' && last.result?.isError === true, { outcome, last });
});

await group('failed task', async () => {
  samplingFails = true;
  try {
    const execution = await session.callTool('summarize_with_model', { text: 'nobody will answer this', deadline_seconds: 3 });
    const taskId = execution.handle?.taskId;
    const outcome = await settle(execution, 30_000);
    const last = requestsFor('tasks/get', forTask(taskId)).at(-1)?.response?.result;
    check('failed task: an input request left unanswered until its deadline fails the task with its JSON-RPC error',
      outcome.status === 'failed' && outcome.error?.code === -32001 && last?.status === 'failed' &&
        last.error?.code === -32001 && typeof last.error.message === 'string' && last.result === undefined, { outcome: show(outcome.error), last });
  } finally {
    samplingFails = false;
  }
});

await group('unknown task', async () => {
  let err;
  try {
    await session.task('no-such-task').snapshot();
  } catch (e) {
    err = e;
  }
  check('unknown task id: tasks/get answers JSON-RPC error -32602 (Invalid params)',
    err instanceof JsonRpcResponseError && err.code === -32602, err);
  for (const [method, op] of [
    ['tasks/cancel', (c) => c.cancel()],
    ['tasks/update', (c) => c.update({ k: { action: 'cancel' } })],
  ]) {
    let e2;
    try {
      await op(session.task('no-such-task'));
    } catch (e) {
      e2 = e;
    }
    check(`unknown task id: ${method} answers JSON-RPC error -32602`, e2 instanceof JsonRpcResponseError && e2.code === -32602, e2);
  }
});

// -------------------------------------------------------- routing headers that disagree with the body
await group('header mismatch', async () => {
  const execution = await session.callTool('slow_compute', { seconds: 0.2 });
  const taskId = execution.handle?.taskId;
  await settle(execution);
  const cases = [
    ['an Mcp-Name naming another task', (h) => h.set('mcp-name', 'some-other-task')],
    ['no Mcp-Name', (h) => h.delete('mcp-name')],
    ['an Mcp-Method naming another method', (h) => h.set('mcp-method', 'tasks/cancel')],
  ];
  for (const [what, change] of cases) {
    tamper = (headers, body) => {
      if (body.method !== 'tasks/get' || body.params?.taskId !== taskId) return false;
      change(headers);
      return true;
    };
    let err;
    try {
      await session.task(taskId).snapshot();
    } catch (e) {
      err = e;
    }
    tamper = undefined;
    const sent = requestsFor('tasks/get', forTask(taskId)).at(-1);
    check(`header mismatch: tasks/get with ${what} is refused with HTTP 400 and -32020, which the package reports as a JSON-RPC error`,
      sent?.status === 400 && sent.response?.error?.code === -32020 && err instanceof JsonRpcResponseError && err.code === -32020,
      { status: sent?.status, response: sent?.response, err: show(err) });
  }
  const view = await session.task(taskId).snapshot();
  check('header mismatch: with the headers right again the task is served', view.status === 'completed', view);
});

check('no background errors reported by the package (other than the deliberately failing sampling handler)',
  backgroundErrors.every((e) => /no model to sample/.test(e.message)), backgroundErrors.map(show));

clearTimeout(deadline);
await within(session.close(), 5_000, 'session.close').catch(() => {});
await within(client.close(), 5_000, 'client.close').catch(() => {});
finish();
