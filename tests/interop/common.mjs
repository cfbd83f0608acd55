// What the TypeScript interoperability clients (client.mjs, hitl.mjs) share: PASS/FAIL
// reporting, check groups and polling helpers, the command line, the transport (--url
// Streamable HTTP or --stdio command) and the wire recorder wrapped around it.
//
// run.sh copies it next to the clients in target/interop/node, so both import it as
// './common.mjs' and it resolves the SDK from the same node_modules.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';

export const TIMEOUT_MS = 10_000; // per request, so a hung request cannot eat the whole run
// Request options for every SDK call.
export const R = { timeout: TIMEOUT_MS };

// ------------------------------------------------------------------ reporting
export let passed = 0;
export let failed = 0;
export const show = (v) => {
  if (v instanceof Error) return `${v.constructor.name}(${v.code ?? ''}) ${v.message}`;
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 600 ? s.slice(0, 600) + '…' : s;
};
export function pass(name) {
  passed++;
  console.log(`PASS ${name}`);
}
export function fail(name, detail) {
  failed++;
  console.log(`FAIL ${name}${detail === undefined ? '' : ': ' + show(detail)}`);
}
export function check(name, ok, detail) {
  ok ? pass(name) : fail(name, detail);
  return ok;
}
export const note = (msg) => console.log(`NOTE ${msg}`);
export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
// Runs one group of checks; an exception fails the group instead of the whole run.
export async function group(name, fn) {
  try {
    await fn();
  } catch (e) {
    fail(`${name} (exception)`, e?.stack ? `${show(e)} @ ${e.stack.split('\n')[1]?.trim()}` : e);
  }
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export async function until(pred, ms, step = 50) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await sleep(step);
  }
  return pred();
}

// Fails and ends the run once the whole client has taken longer than ms; clear it at the end.
export function startDeadline(ms) {
  return setTimeout(() => {
    fail('client finished within the deadline', `${ms} ms passed`);
    finish();
  }, ms);
}

// The SDK's onerror messages, as a note (none: nothing).
export function noteSdkErrors(errors) {
  if (errors.length) note(`SDK onerror (${errors.length}): ${show(errors.slice(0, 3))}`);
}

// Closes a client, waiting at most ms for it.
export async function closeWithin(client, ms) {
  await Promise.race([client?.close().catch(() => {}), sleep(ms)]);
}

// ------------------------------------------------------------------ arguments and transport
export function parseArgs(argv, script) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--url') out.url = argv[++i];
    else if (argv[i] === '--stdio') out.stdio = argv[++i];
    else {
      console.error(`unknown argument ${argv[i]}`);
      process.exit(2);
    }
  }
  if (!out.url === !out.stdio) {
    console.error(`usage: ${script} (--url URL | --stdio "CMD ARGS")`);
    process.exit(2);
  }
  return out;
}

// The SDK transport the arguments name; httpOptions go to the Streamable HTTP one.
export function openTransport(opts, httpOptions) {
  if (opts.url) return new StreamableHTTPClientTransport(new URL(opts.url), httpOptions);
  const [command, ...args] = opts.stdio.split(/\s+/).filter(Boolean);
  return new StdioClientTransport({ command, args, stderr: 'inherit' });
}

// ------------------------------------------------------------------ wire recorder
// Wraps a Transport: the SDK's Protocol sets onmessage/onclose/onerror on us, we relay.
// Each received message goes through record() first, which a client may override.
export class RecordingTransport {
  constructor(inner) {
    this.inner = inner;
    this.methodById = new Map(); // our request id -> method
    this.received = []; // { at, msg, method } (method of the request for responses)
    if (typeof inner.setProtocolVersion === 'function') {
      this.setProtocolVersion = (v) => inner.setProtocolVersion(v);
    }
  }
  get sessionId() {
    return this.inner.sessionId;
  }
  async start() {
    this.inner.onmessage = (msg, extra) => {
      this.record(msg);
      this.onmessage?.(msg, extra);
    };
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }
  record(msg) {
    const method = msg.method ?? this.methodById.get(msg.id);
    this.received.push({ at: Date.now(), msg, method });
  }
  async send(msg, options) {
    if (msg.method && msg.id !== undefined) this.methodById.set(msg.id, msg.method);
    await this.inner.send(msg, options);
  }
  async close() {
    await this.inner.close();
  }
  // Results of successful responses to requests of this method.
  results(method) {
    return this.received.filter((r) => r.method === method && r.msg.id !== undefined && r.msg.result).map((r) => r.msg.result);
  }
  notifications(method) {
    return this.received.filter((r) => r.msg.method === method && r.msg.id === undefined);
  }
  // Server->client requests of this method, as received.
  requests(method) {
    return this.received.filter((r) => r.msg.method === method && r.msg.id !== undefined);
  }
}

// ------------------------------------------------------------------ helpers
// tools/list: each named tool declares the execution.taskSupport given for it.
export async function checkTaskSupport(client, want) {
  const { tools } = await client.listTools(undefined, R);
  for (const [name, mode] of Object.entries(want)) {
    const tool = tools.find((t) => t.name === name);
    check(`tools/list: ${name} execution.taskSupport is ${mode}`, tool?.execution?.taskSupport === mode,
      tool?.execution ?? 'tool missing');
  }
}
// The related-task _meta of a result or of request params.
export const meta = (x) => x?._meta?.[RELATED_TASK_META_KEY];
export const textOf = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
