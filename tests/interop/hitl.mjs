// mcp-tasks human-in-the-loop interoperability client: the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned by run.sh) answering a task's elicitation and sampling
// requests, against an mcp-tasks server with the demo tools, over stdio or HTTP.
//
//   node hitl.mjs --url http://127.0.0.1:PORT/mcp
//   node hitl.mjs --stdio "target/debug/mcp-tasks serve --demo --database memory: --stdio"
//
// run.sh copies this file and common.mjs next to target/interop/node/node_modules so the SDK
// resolves.
// Prints "PASS name" / "FAIL name: detail" per check, "NOTE ..." for information, and a final
// "N passed, M failed"; exits 1 when any check failed.
//
// Tools exercised (all taskSupport "optional", called as tasks through callToolStream):
//   confirm_delete {filename}   one elicitation {confirm: boolean}
//   multi_input {}              two elicitations outstanding at once (name, colour)
//   summarize_with_model {text} one sampling/createMessage
// Statuses are observed both by the SDK's polling (the stream's taskStatus messages) and by
// notifications/tasks/status; every server->client request is checked for related-task _meta.
// Reporting, the recorder and the transport come from common.mjs, shared with client.mjs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { R, RecordingTransport, check, checkTaskSupport, closeWithin, finish, group, meta } from './common.mjs';
import { note, noteSdkErrors, openTransport, parseArgs, show, startDeadline, textOf, until } from './common.mjs';

const WAIT_MS = 5_000; // how long a handler waits for a condition before answering anyway
const STEP_MS = 20; // between looks while waiting
const DEADLINE_MS = 28_000; // whole client run

const opts = parseArgs(process.argv.slice(2), 'hitl.mjs');
const transportName = opts.url ? 'http' : 'stdio';

const deadline = startDeadline(DEADLINE_MS);

// ------------------------------------------------------------------ wire recorder
// One global counter orders everything observed (notifications, polls, requests, answers).
let seq = 0;
const tick = () => ++seq;

// The recorder, stamping by that counter, that also takes the task statuses, in arrival order
// (the SDK hands notifications and responses to their consumers through differently long
// promise chains): from notifications/tasks/status and from the tasks/get responses behind the
// stream's taskStatus messages.
class ObservingTransport extends RecordingTransport {
  constructor(inner, obs) {
    super(inner);
    this.obs = obs;
  }
  record(msg) {
    const at = tick();
    this.received.push({ seq: at, msg });
    if (msg.method === 'notifications/tasks/status' && msg.id === undefined) {
      this.obs.push({ seq: at, taskId: msg.params?.taskId, status: msg.params?.status, src: 'notification' });
    } else if (msg.id !== undefined && msg.result && this.methodById.get(msg.id) === 'tasks/get') {
      this.obs.push({ seq: at, taskId: msg.result.taskId, status: msg.result.status, src: 'poll' });
    }
  }
}

// A connected client with its own observations.
//   capabilities: what initialize declares
//   blockGet:     (HTTP) answer the SDK's GET with 405, so there is no session stream and
//                 input requests can only travel on a tasks/result stream
async function connect(label, capabilities, { blockGet = false } = {}) {
  const st = {
    label,
    obs: [], // { seq, taskId, status, src: 'notification' | 'poll' | 'created' }
    asked: [], // { seq, method, params, extraTaskId, answeredSeq, waited }
    resultStreamText: [], // (HTTP) raw text of tasks/result response bodies
    sdkErrors: [],
  };
  let fetchFn;
  if (opts.url && blockGet) {
    fetchFn = async (url, init) => {
      if ((init?.method ?? 'GET') === 'GET') return new Response(null, { status: 405 });
      const res = await fetch(url, init);
      const isResult = typeof init?.body === 'string' && init.body.includes('"tasks/result"');
      if (!isResult || !res.body) return res;
      const [a, b] = res.body.tee();
      (async () => {
        const reader = b.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          st.resultStreamText.push(value);
        }
      })().catch(() => {});
      return new Response(a, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
  }
  st.wire = new ObservingTransport(openTransport(opts, fetchFn ? { fetch: fetchFn } : undefined), st.obs);
  st.client = new Client({ name: `mcp-tasks-interop-hitl-${label}`, version: '1.0.0' }, { capabilities });
  st.statusParsed = 0; // notifications/tasks/status that also passed the SDK's own schema
  st.client.setNotificationHandler(TaskStatusNotificationSchema, () => {
    st.statusParsed++;
  });
  st.client.onerror = (e) => st.sdkErrors.push(String(e?.message ?? e));
  if (capabilities.elicitation) {
    st.client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      const entry = { seq: tick(), method: req.method, params: req.params, extraTaskId: extra.taskId };
      st.asked.push(entry);
      const tid = meta(req.params)?.taskId;
      const props = Object.keys(req.params.requestedSchema?.properties ?? {});
      let result;
      if (props.includes('confirm')) {
        if (/decline/i.test(req.params.message ?? '')) {
          result = { action: 'decline' };
        } else if (!tid) {
          // A synchronous call asks on its own stream: no task to wait for.
          result = { action: 'accept', content: { confirm: true } };
        } else {
          // Answer only once the SDK's polling has seen input_required, so that tasks/get is
          // shown to report it while the question is open (the stream then waits in tasks/result).
          entry.waited = await until(
            () => st.obs.some((o) => o.src === 'poll' && o.taskId === tid && o.status === 'input_required'),
            WAIT_MS, STEP_MS);
          result = { action: 'accept', content: { confirm: true } };
        }
      } else if (props.includes('name') || props.includes('colour')) {
        // Answer neither question until both have arrived: proves they are outstanding together.
        entry.waited = await until(
          () => st.asked.filter((a) => a.method === 'elicitation/create' && meta(a.params)?.taskId === tid).length >= 2,
          WAIT_MS, STEP_MS);
        result = { action: 'accept', content: props.includes('name') ? { name: 'Ada' } : { colour: 'blue' } };
      } else {
        result = { action: 'cancel' };
      }
      entry.answeredSeq = tick();
      return result;
    });
  }
  if (capabilities.sampling) {
    st.client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
      const entry = { seq: tick(), method: req.method, params: req.params, extraTaskId: extra.taskId };
      st.asked.push(entry);
      entry.answeredSeq = tick();
      return {
        role: 'assistant',
        content: { type: 'text', text: 'Tasks can ask their client questions.' },
        model: 'interop-fake-model',
        stopReason: 'endTurn',
      };
    });
  }
  await st.client.connect(st.wire, R);
  return st;
}

// Calls a tool as a task through the SDK's stream helper; records what it yielded.
async function runTask(st, name, args) {
  const out = { created: undefined, polled: [], result: undefined, errors: [] };
  const stream = st.client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema,
    { ...R, task: { ttl: 60000 } });
  for await (const m of stream) {
    if (m.type === 'taskCreated') out.created = m.task;
    else if (m.type === 'taskStatus') out.polled.push(m.task.status);
    else if (m.type === 'result') out.result = m.result;
    else if (m.type === 'error') out.errors.push(m.error);
  }
  out.id = out.created?.taskId;
  return out;
}

// The statuses of a task in the order received: CreateTaskResult's status first (the task's
// initial state, even where a notification overtook the response), then notifications and
// polls, consecutive duplicates removed. Over HTTP notifications (GET stream) and polls (POST
// responses) travel on different streams, so a poll may trail a newer notification: checks
// look for the sequence as a subsequence and read the final status with tasks/get.
function statusesOf(st, out) {
  const seen = st.obs.filter((o) => o.taskId === out.id).sort((a, b) => a.seq - b.seq).map((o) => o.status);
  const all = out.created ? [out.created.status, ...seen] : seen;
  return all.filter((s, i) => i === 0 || s !== all[i - 1]);
}
function hasSubsequence(list, want) {
  let i = 0;
  for (const s of list) if (s === want[i]) i++;
  return i === want.length;
}
const HITL_SEQUENCE = ['working', 'input_required', 'working', 'completed'];

// Checks the status history of a finished task and that tasks/get now says completed.
async function checkSequence(st, tool, out) {
  await settle(st, out);
  const statuses = statusesOf(st, out);
  const got = out.id ? await st.client.experimental.tasks.getTask(out.id, R) : undefined;
  check(`${tool}: statuses go working -> input_required -> working -> completed`,
    hasSubsequence(statuses, HITL_SEQUENCE) && got?.status === 'completed',
    { statuses, polled: out.polled, final: got?.status });
}

// Waits (briefly) for the completed notification, which may trail the tasks/result response.
async function settle(st, out) {
  await until(() => st.obs.some((o) => o.taskId === out.id && o.src === 'notification' &&
    ['completed', 'failed', 'cancelled'].includes(o.status)), 2000, STEP_MS);
}

// Every request of this task: carries related-task _meta naming it (and the SDK saw it too).
function checkRelated(name, asks, id) {
  const bad = asks.filter((a) => meta(a.params)?.taskId !== id || a.extraTaskId !== id);
  check(name, !!id && asks.length > 0 && bad.length === 0,
    { taskId: id, requests: asks.length, bad: bad.map((a) => ({ _meta: a.params?._meta, sdkTaskId: a.extraTaskId })) });
}

// ------------------------------------------------------------------ checks
let main;
await group('connect', async () => {
  main = await connect('main', { elicitation: {}, sampling: {} });
  const init = main.client.getServerVersion();
  check('initialize with elicitation + sampling capabilities', !!init, init);
});
if (!main) {
  note('could not connect; stopping');
  finish();
}

await group('tools/list', async () => {
  await checkTaskSupport(main.client,
    { confirm_delete: 'optional', multi_input: 'optional', summarize_with_model: 'optional' });
});

await group('confirm_delete accept', async () => {
  const filename = 'report-2024.txt';
  const out = await runTask(main, 'confirm_delete', { filename });
  const asks = main.asked.filter((a) => a.method === 'elicitation/create' && (a.params.message ?? '').includes(filename));
  await checkSequence(main, 'confirm_delete', out);
  check('confirm_delete: tasks/get reports input_required while the question is open',
    out.polled.includes('input_required') && asks[0]?.waited === true, { polled: out.polled });
  check('confirm_delete: exactly one elicitation/create, asking {confirm: boolean}',
    asks.length === 1 && asks[0].params.requestedSchema?.properties?.confirm?.type === 'boolean', asks.map((a) => a.params));
  checkRelated('confirm_delete: elicitation/create carries related-task _meta with the taskId', asks, out.id);
  check('confirm_delete: accepted -> "Deleted <filename> (demo: nothing was really deleted)"',
    textOf(out.result) === `Deleted ${filename} (demo: nothing was really deleted)` && !out.result.isError &&
      out.errors.length === 0,
    { result: out.result, errors: out.errors.map(show) });
  check('confirm_delete: tasks/result carries related-task _meta', meta(out.result)?.taskId === out.id, out.result?._meta);
});

await group('confirm_delete decline', async () => {
  const filename = 'Decline-Me.TXT'; // mixed case: the filename must be reported as given
  const out = await runTask(main, 'confirm_delete', { filename });
  const asks = main.asked.filter((a) => a.method === 'elicitation/create' && (a.params.message ?? '').includes(filename));
  checkRelated('confirm_delete decline: elicitation/create carries related-task _meta', asks, out.id);
  await checkSequence(main, 'confirm_delete decline', out);
  const text = textOf(out.result);
  check('confirm_delete decline: action "decline" -> text starts with "kept"', /^kept\b/i.test(text) && !out.result?.isError,
    { result: out.result, errors: out.errors.map(show) });
  check(`confirm_delete decline: text starts with "kept ${filename}" (filename as given)`, text.startsWith(`kept ${filename}`),
    text);
  check('confirm_delete decline: structuredContent says not deleted',
    out.result?.structuredContent?.deleted === false && out.result.structuredContent.filename === filename,
    out.result?.structuredContent);
});

await group('multi_input', async () => {
  const out = await runTask(main, 'multi_input', {});
  const asks = main.asked.filter((a) => a.method === 'elicitation/create' && meta(a.params)?.taskId === out.id);
  const props = asks.map((a) => Object.keys(a.params.requestedSchema?.properties ?? {}).join(',')).sort();
  await checkSequence(main, 'multi_input', out);
  check('multi_input: two elicitations, one for name and one for colour',
    asks.length === 2 && props[0] === 'colour' && props[1] === 'name', props);
  const colour = asks.find((a) => a.params.requestedSchema?.properties?.colour)?.params.requestedSchema.properties.colour;
  check('multi_input: colour is an enum of red/green/blue', JSON.stringify(colour?.enum) === '["red","green","blue"]', colour);
  // Both arrived before either was answered: each handler waited for the other request.
  const together = asks.length === 2 && asks.every((a) => a.waited === true) &&
    asks[1].seq < asks[0].answeredSeq && asks[0].seq < asks[1].answeredSeq;
  check('multi_input: both elicitations were outstanding at the same time', together,
    asks.map((a) => ({ arrived: a.seq, answered: a.answeredSeq, waitedForOther: a.waited })));
  checkRelated('multi_input: both elicitation/create requests carry related-task _meta', asks, out.id);
  check('multi_input: result is "Ada likes blue"', textOf(out.result) === 'Ada likes blue' && !out.result?.isError,
    { result: out.result, errors: out.errors.map(show) });
});

await group('summarize_with_model', async () => {
  const input = 'The quick brown fox jumps over the lazy dog while the server waits for a model.';
  const out = await runTask(main, 'summarize_with_model', { text: input });
  const asks = main.asked.filter((a) => a.method === 'sampling/createMessage' && meta(a.params)?.taskId === out.id);
  const all = main.asked.filter((a) => a.method === 'sampling/createMessage');
  await checkSequence(main, 'summarize_with_model', out);
  check('summarize_with_model: exactly one sampling/createMessage', all.length === 1, all.map((a) => a.params));
  checkRelated('summarize_with_model: sampling/createMessage carries related-task _meta', all, out.id);
  const msg = asks[0]?.params;
  const prompt = msg?.messages?.[0]?.content?.text ?? '';
  check('summarize_with_model: the request carries the text in a user message with maxTokens',
    msg?.messages?.[0]?.role === 'user' && prompt.includes(input) && Number.isInteger(msg.maxTokens), msg);
  if (prompt.includes('\\n')) note(`summarize_with_model prompt contains a literal backslash-n: ${JSON.stringify(prompt.slice(0, 60))}`);
  check('summarize_with_model: result is "Summary: <model reply>"',
    textOf(out.result) === 'Summary: Tasks can ask their client questions.' && !out.result?.isError,
    { result: out.result, errors: out.errors.map(show) });
});

await group('wire', async () => {
  const reqs = [...main.wire.requests('elicitation/create'), ...main.wire.requests('sampling/createMessage')];
  check(`all ${reqs.length} server->client requests on the wire carry related-task _meta`,
    reqs.length === 5 && reqs.every((r) => typeof meta(r.msg.params)?.taskId === 'string'),
    reqs.map((r) => ({ id: r.msg.id, method: r.msg.method, _meta: r.msg.params?._meta })));
  const raw = main.wire.received.filter((r) => r.msg.method === 'notifications/tasks/status').length;
  check(`all ${raw} notifications/tasks/status (incl. input_required) pass the SDK's TaskStatusNotificationSchema`,
    raw > 0 && main.statusParsed === raw, { raw, parsed: main.statusParsed });
  check('server->client request ids are unique', new Set(reqs.map((r) => JSON.stringify(r.msg.id))).size === reqs.length,
    reqs.map((r) => r.msg.id));
});

// Without a task the same tools ask on the call's own stream, as for clients without tasks.
await group('synchronous calls', async () => {
  const filename = 'sync-ts.txt';
  let before = main.asked.length;
  const res = await main.client.callTool({ name: 'confirm_delete', arguments: { filename } });
  const asks = main.asked.slice(before).filter((a) => a.method === 'elicitation/create');
  check('sync confirm_delete: one elicitation/create, answered in the call, without related-task _meta',
    asks.length === 1 && meta(asks[0].params)?.taskId === undefined && asks[0].extraTaskId === undefined,
    asks.map((a) => a.params));
  check('sync confirm_delete: accepted -> "Deleted <filename> (demo: nothing was really deleted)"',
    textOf(res) === `Deleted ${filename} (demo: nothing was really deleted)` && !res.isError, res);
  const input = 'A synchronous call that asks the client model.';
  before = main.asked.length;
  const summary = await main.client.callTool({ name: 'summarize_with_model', arguments: { text: input } });
  const samples = main.asked.slice(before).filter((a) => a.method === 'sampling/createMessage');
  check('sync summarize_with_model: one sampling/createMessage carrying the text',
    samples.length === 1 && JSON.stringify(samples[0].params.messages).includes(input), samples.map((a) => a.params));
  check('sync summarize_with_model: result is "Summary: <model reply>"',
    textOf(summary) === 'Summary: Tasks can ask their client questions.' && !summary.isError, summary);
});

// Without a GET stream (HTTP only) the question can only travel on the tasks/result stream.
if (opts.url) {
  await group('tasks/result stream', async () => {
    let st;
    try {
      st = await connect('noget', { elicitation: {} }, { blockGet: true });
      const filename = 'via-result-stream.txt';
      const out = await runTask(st, 'confirm_delete', { filename });
      const streamed = st.resultStreamText.join('');
      check('no GET stream: the elicitation arrives on the tasks/result SSE stream and the task completes',
        streamed.includes('"elicitation/create"') &&
          textOf(out.result) === `Deleted ${filename} (demo: nothing was really deleted)`,
        { result: out.result, errors: out.errors.map(show), resultStream: streamed.slice(0, 300) });
      checkRelated('no GET stream: elicitation/create carries related-task _meta',
        st.asked.filter((a) => a.method === 'elicitation/create'), out.id);
    } finally {
      await closeWithin(st?.client, 2000);
    }
  });
}

// A client that declared neither elicitation nor sampling.
await group('missing capability', async () => {
  let st;
  try {
    st = await connect('nocap', {});
    for (const [tool, args, cap] of [
      ['confirm_delete', { filename: 'x.txt' }, 'elicitation'],
      ['summarize_with_model', { text: 'hello' }, 'sampling'],
    ]) {
      const out = await runTask(st, tool, args);
      const last = out.polled.at(-1);
      let payload;
      try {
        payload = await st.client.experimental.tasks.getTaskResult(out.id, CallToolResultSchema, R);
      } catch (e) {
        payload = { error: show(e) };
      }
      const got = await st.client.experimental.tasks.getTask(out.id, R);
      const said = textOf(payload);
      const re = new RegExp(cap, 'i');
      check(`no ${cap} capability: ${tool} task fails with a tool error mentioning ${cap}`,
        last === 'failed' && got.status === 'failed' && payload.isError === true && re.test(said),
        { polled: out.polled, statusMessage: got.statusMessage, payload });
    }
    const sent = [...st.wire.requests('elicitation/create'), ...st.wire.requests('sampling/createMessage')];
    check('no capability: the server sent no elicitation/sampling request', sent.length === 0, sent.map((r) => r.msg));
  } finally {
    await closeWithin(st?.client, 2000);
  }
});

clearTimeout(deadline);
noteSdkErrors(main.sdkErrors);
note(`${transportName}: ${main.wire.received.length} messages received, ${main.asked.length} input requests answered, ` +
  `${main.obs.filter((o) => o.src === 'notification').length} status notifications`);
await closeWithin(main.client, 3000);
finish();
