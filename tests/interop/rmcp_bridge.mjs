// The rmcp bridge with the official TypeScript SDK client (@modelcontextprotocol/sdk, pinned
// by run.sh) on 2025-11-25: examples/rmcp-count-to, an rmcp server with a resource and a
// prompt of its own, its durable count_to added by mcp-tasks-rmcp (DurableTasks::wrap).
//
//   node rmcp_bridge.mjs --url http://127.0.0.1:PORT/mcp
//
// Checks: the server announces its own serverInfo; its resource and prompt answer through
// rmcp; tools/list has count_to and echo (and the task tools, for a client without tasks);
// count_to's half-way question arrives as elicitation/create and the answer wakes it
// (accepted: it counts on; declined: it stops), never an error -32600.
// Prints "PASS name" / "FAIL name: detail" per check and "N passed, M failed"; exits 1
// when any check failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { R, check, closeWithin, finish, group, openTransport, parseArgs, startDeadline, textOf } from './common.mjs';

const opts = parseArgs(process.argv.slice(2), 'rmcp_bridge.mjs');
startDeadline(28_000);

const asked = [];
let goOn = true;
const client = new Client(
  { name: 'mcp-tasks-interop-rmcp-bridge', version: '0.0.0' },
  { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params);
  return { action: 'accept', content: { go_on: goOn } };
});
const transport = openTransport(opts);
await client.connect(transport);

await group('session', async () => {
  check('negotiated 2025-11-25', transport.protocolVersion === '2025-11-25', transport.protocolVersion);
  const info = client.getServerVersion();
  check('serverInfo is the server\'s own', info?.name === 'rmcp-count-to', info);
});

await group('resources and prompts', async () => {
  const resources = await client.listResources({}, R);
  check('resources/list', resources.resources.some((r) => r.uri === 'count://about'), resources);
  const read = await client.readResource({ uri: 'count://about' }, R);
  check('resources/read', read.contents?.[0]?.text === 'count_to counts, durably.', read);
  const prompts = await client.listPrompts({}, R);
  check('prompts/list', prompts.prompts.some((p) => p.name === 'count_to_ten'), prompts);
  const prompt = await client.getPrompt({ name: 'count_to_ten' }, R);
  check('prompts/get', prompt.messages?.[0]?.content?.text === 'Count to 10 with count_to.', prompt);
});

await group('tools', async () => {
  const names = (await client.listTools({}, R)).tools.map((t) => t.name);
  check('tools/list has count_to and echo', names.includes('count_to') && names.includes('echo'), names);
  check('tools/list offers the task tools to a client without tasks', names.includes('task_wait'), names);
  const echo = await client.callTool({ name: 'echo', arguments: { text: 'hi' } }, CallToolResultSchema, R);
  check('echo', textOf(echo) === 'hi', echo);
});

await group('a question on 2025-11-25', async () => {
  const args = { n: 4, delay_ms: 20 };
  const done = await client.callTool({ name: 'count_to', arguments: args }, CallToolResultSchema, R);
  check('count_to asked through elicitation/create', asked.length === 1, asked);
  check('the question is the tool\'s', asked[0]?.message === 'Counted to 2. Go on?', asked[0]);
  check('the form asks go_on', asked[0]?.requestedSchema?.properties?.go_on?.type === 'boolean', asked[0]);
  check('the answer woke the tool', textOf(done) === 'counted to 4' && !done.isError, done);
  goOn = false;
  const stopped = await client.callTool({ name: 'count_to', arguments: args }, CallToolResultSchema, R);
  check('a "no" stops it', textOf(stopped) === 'stopped at 2, as asked', stopped);
});

await closeWithin(client, 3_000);
finish();
