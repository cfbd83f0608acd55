// mcp-tasks gateway interoperability client: the official TypeScript SDK drives
// `mcp-tasks wrap -- <the official everything server>` (both pinned by run.sh), over stdio
// or HTTP. The everything server has no tasks of its own for these tools; through the
// gateway they run as durable tasks with progress, questions and cancellation relayed.
//
//   node gateway.mjs --stdio "mcp-tasks wrap --database memory: -- node .../index.js stdio"
//   node gateway.mjs --url http://127.0.0.1:PORT/mcp      (mcp-tasks wrap --listen ...)
//   GATEWAY_UPSTREAM=py node gateway.mjs --stdio "mcp-tasks serve --stdio --config gw.toml"
//     (upstream_server.py, written with the Python SDK, under the prefix py_: progress,
//      an elicitation, and an upstream that dies mid-task and is restarted)
//
// With --url, the same tools are also called on the 2026-07-28 Tasks-extension wire with
// plain fetch (stateless requests: resultType "task", then tasks/get until done).
// Prints "PASS name" / "FAIL name: detail", and "N passed, M failed"; exits 1 on a failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { R, RecordingTransport, check, closeWithin, finish, group, meta, note } from './common.mjs';
import { openTransport, parseArgs, show, startDeadline, textOf, until } from './common.mjs';

const DEADLINE_MS = 80_000;
const UPSTREAM = process.env.GATEWAY_UPSTREAM ?? 'everything';
const opts = parseArgs(process.argv.slice(2), 'gateway.mjs');
const deadline = startDeadline(DEADLINE_MS);

const asked = []; // server->client requests: { method, params }
const wire = new RecordingTransport(openTransport(opts));
const client = new Client({ name: 'mcp-tasks-interop-gateway', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push({ method: req.method, params: req.params });
  const props = Object.keys(req.params.requestedSchema?.properties ?? {});
  if (props.includes('colour')) return { action: 'accept', content: { colour: 'teal' } };
  if (props.includes('interpretation')) return { action: 'accept', content: { interpretation: 'technical' } };
  return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  asked.push({ method: req.method, params: req.params });
  return {
    role: 'assistant',
    content: { type: 'text', text: 'gateway-relayed model answer' },
    model: 'interop-fake-model',
    stopReason: 'endTurn',
  };
});
await client.connect(wire, R);

// Calls a tool as a task through the SDK's stream helper.
async function runTask(name, args, onCreated) {
  const out = { created: undefined, polled: [], result: undefined, errors: [] };
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema,
    { timeout: 60_000, task: { ttl: 120_000 } });
  for await (const m of stream) {
    if (m.type === 'taskCreated') {
      out.created = m.task;
      onCreated?.(m.task);
    } else if (m.type === 'taskStatus') out.polled.push(m.task);
    else if (m.type === 'result') out.result = m.result;
    else if (m.type === 'error') out.errors.push(m.error);
  }
  return out;
}
const statusMessages = (taskId) => [
  ...wire.notifications('notifications/tasks/status').map((n) => n.msg.params),
  ...wire.results('tasks/get'),
].filter((t) => t.taskId === taskId).map((t) => t.statusMessage).filter(Boolean);

if (UPSTREAM === 'py') {
  await client.setLoggingLevel('info', R);
  await group('python upstream: progress as status', async () => {
    const out = await runTask('py_slow_steps', { steps: 3 });
    check('the task completed with the upstream result', textOf(out.result).includes('done after 3 steps'),
      out.result ?? out.errors);
    const messages = statusMessages(out.created?.taskId);
    check('upstream progress shows as the status message', messages.some((m) => m.includes('step')), messages);
    const logs = wire.notifications('notifications/message').map((n) => JSON.stringify(n.msg.params));
    check("the upstream's log lines during the call reach us as log messages",
      logs.some((l) => l.includes('upstream log line')), logs);
  });
  await group('python upstream: elicitation mid-task', async () => {
    const out = await runTask('py_ask_colour', {});
    check('the question was answered through the task', textOf(out.result).includes('colour=teal'),
      out.result ?? out.errors);
  });
  await group('python upstream: its tool list changes', async () => {
    const before = wire.notifications('notifications/tools/list_changed').length;
    await client.callTool({ name: 'py_grow', arguments: {} }, undefined, R);
    const told = await until(() => wire.notifications('notifications/tools/list_changed').length > before, 15_000);
    check('our client is told the tool list changed', told);
    const { tools } = await client.listTools(undefined, R);
    check('the new upstream tool is listed', tools.some((t) => t.name === 'py_grown'), tools.map((t) => t.name));
    const r = await client.callTool({ name: 'py_grown', arguments: {} }, undefined, R);
    check('the new upstream tool can be called', textOf(r).includes('grown at run time'), r);
  });
  await group('python upstream killed mid-task', async () => {
    const out = await runTask('py_crash', { after_ms: 300 });
    const id = out.created?.taskId;
    const got = id ? await client.experimental.tasks.getTask(id, R) : undefined;
    check('the task failed', got?.status === 'failed', got ?? out);
    check('its message names the upstream and its exit status',
      /upstream 'py' exited with status 3/.test(got?.statusMessage ?? ''), got?.statusMessage);
    const r = await client.callTool({ name: 'py_add', arguments: { a: 20, b: 22 } }, undefined, R);
    check('the next call works after the upstream is restarted', textOf(r).includes('sum=42'), r);
  });
  await closeWithin(client, 2000);
  clearTimeout(deadline);
  finish();
}

await group('tools/list', async () => {
  const { tools } = await client.listTools(undefined, R);
  const long = tools.find((t) => t.name === 'trigger-long-running-operation');
  check('the upstream tools are listed with task support optional',
    long?.execution?.taskSupport === 'optional', long ?? tools.map((t) => t.name));
  check('upstream annotations are kept', long?.annotations?.readOnlyHint === true, long?.annotations);
  const structured = tools.find((t) => t.name === 'get-structured-content');
  // This client declares no tasks capability, so it is offered the task tools and is
  // shown no outputSchema: a long plain call's handle could not match one (docs/hosts.md,
  // "Tools with an outputSchema"). Clients that declare tasks see the upstream's schema.
  check('an upstream tool with an output schema is listed, its schema withheld from a client offered the task tools',
    !!structured && structured.outputSchema === undefined
      && tools.some((t) => t.name === 'task_wait'), structured);
});

await group('resources and prompts are passed through', async () => {
  const caps = client.getServerCapabilities();
  check('the upstream capabilities (resources, prompts) are declared', !!caps?.resources && !!caps?.prompts, caps);
  const { resourceTemplates } = await client.listResourceTemplates(undefined, R);
  check('resource templates are listed', resourceTemplates.some((t) => t.uriTemplate?.startsWith('demo://resource/dynamic/text')),
    resourceTemplates);
  const read = await client.readResource({ uri: 'demo://resource/dynamic/text/1' }, R);
  check('a resource is read from the upstream', read.contents?.[0]?.uri === 'demo://resource/dynamic/text/1', read);
  const { prompts } = await client.listPrompts(undefined, R);
  check('prompts are listed', prompts.some((p) => p.name === 'simple-prompt'), prompts.map((p) => p.name));
  const got = await client.getPrompt({ name: 'simple-prompt' }, R);
  check('a prompt is got from the upstream', (got.messages ?? []).length > 0, got);
});

await group('plain call', async () => {
  const r = await client.callTool({ name: 'echo', arguments: { message: 'hi' } }, undefined, R);
  check('a call without a task is forwarded as a plain call', textOf(r).includes('hi'), r);
  const before = asked.length;
  const e = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }, undefined, R);
  const q = asked.slice(before).find((a) => a.method === 'elicitation/create');
  check("a plain call's upstream question is relayed on the call's own stream",
    !!q && meta(q.params) === undefined && textOf(e).includes('Ada Lovelace'), { q, e });
});

await group('long-running operation as a task', async () => {
  const out = await runTask('trigger-long-running-operation', { duration: 2, steps: 4 });
  check('the task was created', !!out.created?.taskId, out);
  check('the task completed with the upstream result',
    textOf(out.result).includes('Long running operation completed'), out.result ?? out.errors);
  const messages = statusMessages(out.created?.taskId);
  check('upstream progress shows as the task status message', messages.some((m) => /\d\/4/.test(m)), messages);
});

await group('elicitation mid-task', async () => {
  const before = asked.length;
  const out = await runTask('trigger-elicitation-request', {});
  const q = asked.slice(before).find((a) => a.method === 'elicitation/create');
  check('the upstream question reached the client as a related-task request',
    !!q && meta(q.params)?.taskId === out.created?.taskId, q ?? asked);
  check('the answer went back upstream and the task completed with it',
    textOf(out.result).includes('Ada Lovelace'), out.result ?? out.errors);
  const statuses = wire.notifications('notifications/tasks/status').map((n) => n.msg.params)
    .filter((t) => t.taskId === out.created?.taskId).map((t) => t.status);
  check('the task went input_required while the question was open', statuses.includes('input_required'), statuses);
});

await group('sampling mid-task', async () => {
  const before = asked.length;
  const out = await runTask('trigger-sampling-request', { prompt: 'Say hello', maxTokens: 20 });
  const q = asked.slice(before).find((a) => a.method === 'sampling/createMessage');
  check('the upstream sampling request reached the client', !!q && meta(q.params)?.taskId === out.created?.taskId, q ?? asked);
  check('the model answer went back upstream', textOf(out.result).includes('gateway-relayed model answer'),
    out.result ?? out.errors);
});

await group("the upstream's own task tool (2025-11-25 taskSupport required)", async () => {
  const before = asked.length;
  const out = await runTask('simulate-research-query', { topic: 'tasks', ambiguous: true });
  check('the upstream task was followed to its report', /tasks/i.test(textOf(out.result)) && !out.errors.length,
    out.result ?? out.errors);
  const q = asked.slice(before).find((a) => a.method === 'elicitation/create');
  check("the upstream task's question reached the client through our task", !!q && meta(q.params)?.taskId === out.created?.taskId,
    q ?? asked.slice(before));
  const messages = statusMessages(out.created?.taskId);
  check("the upstream task's status messages show on ours", messages.length > 0, messages);
});

await group('cancel', async () => {
  let id;
  const running = runTask('trigger-long-running-operation', { duration: 30, steps: 30 }, (t) => { id = t.taskId; });
  await until(() => id !== undefined && statusMessages(id).length > 0, 15_000);
  const cancelled = await client.experimental.tasks.cancelTask(id, R);
  check('tasks/cancel answers cancelled', cancelled?.status === 'cancelled', cancelled);
  await running.catch(() => {});
  const got = await client.experimental.tasks.getTask(id, R);
  check('the task stays cancelled', got?.status === 'cancelled', got);
  // The upstream was told: the next call on the freed connection runs at once.
  const r = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }, undefined, R);
  check('the next call works after the cancel', textOf(r).includes('5'), r);
});

if (opts.url) {
  await group('2026-07-28 wire (Tasks extension) through the gateway', async () => {
    const call = async (method, params) => {
      const res = await fetch(opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28', 'mcp-method': method,
          ...((params.name ?? params.taskId) ? { 'mcp-name': params.name ?? params.taskId } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: Math.floor(Math.random() * 1e9), method, params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {
              extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {}, sampling: {},
            },
            'io.modelcontextprotocol/clientInfo': { name: 'gateway-ext', version: '1' },
          },
        } }),
      });
      return res.json();
    };
    const created = await call('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 2 } });
    const taskId = created?.result?.taskId ?? created?.result?.task?.taskId;
    check('tools/call answers resultType task', created?.result?.resultType === 'task' && !!taskId, created);
    let last;
    for (let i = 0; i < 100 && taskId; i++) {
      last = await call('tasks/get', { taskId });
      if (['completed', 'failed', 'cancelled'].includes(last?.result?.status)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    check('tasks/get reaches completed with the upstream result inline',
      last?.result?.status === 'completed' && JSON.stringify(last?.result?.result ?? '').includes('Long running operation completed'),
      last);

    // An upstream question and a sampling request, answered with tasks/update.
    for (const [tool, args, answer, expect] of [
      ['trigger-elicitation-request', {}, { action: 'accept', content: { name: 'Grace Hopper' } }, 'Grace Hopper'],
      ['trigger-sampling-request', { prompt: 'hi' }, {
        role: 'assistant', content: { type: 'text', text: 'ext-wire model answer' }, model: 'm', stopReason: 'endTurn',
      }, 'ext-wire model answer'],
    ]) {
      const made = await call('tools/call', { name: tool, arguments: args });
      const id = made?.result?.taskId;
      let answered = false;
      let final;
      for (let i = 0; i < 150 && id; i++) {
        final = await call('tasks/get', { taskId: id });
        const requests = final?.result?.inputRequests;
        if (final?.result?.status === 'input_required' && requests && !answered) {
          const inputResponses = Object.fromEntries(Object.keys(requests).map((k) => [k, answer]));
          await call('tasks/update', { taskId: id, inputResponses });
          answered = true;
        }
        if (['completed', 'failed', 'cancelled'].includes(final?.result?.status)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      check(`${tool}: the upstream request arrives as inputRequests and tasks/update answers it`,
        answered && final?.result?.status === 'completed' && JSON.stringify(final?.result?.result ?? '').includes(expect), final);
    }
  });
}

note(`server->client requests seen: ${show(asked.map((a) => a.method))}`);
await closeWithin(client, 2000);
clearTimeout(deadline);
finish();
