// The TypeScript SDK client (pinned in tests/identity/run.sh) against mcp-tasks behind
// OAuth: its own auth flow reads our Protected Resource Metadata from the 401, finds
// the provider, and sends the person to sign in; this script plays the person at the
// provider's login and consent pages (plain HTTP, no browser), hands the code back to
// the SDK, then runs a task to completion with the token it got.
//
// Usage: node sdk.mjs http://127.0.0.1:PORT/mcp
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const resource = new URL(process.argv[2]);
const REDIRECT = 'http://127.0.0.1:9/callback';

class Provider {
  constructor() {
    this.saved = {};
    this.authorizationUrl = undefined;
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: 'identity test host', redirect_uris: [REDIRECT], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  // Registered with the provider in advance (tests/identity/provider.mjs).
  clientInformation() { return { client_id: 'mcp-host' }; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
}

// A person at the provider: follows redirects by hand, keeping cookies, filling the
// login form (ana) and accepting the consent, until the redirect to REDIRECT.
async function signInAt(url) {
  const jar = new Map();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (res) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
  };
  let next = url.toString();
  let form;
  for (let step = 0; step < 20; step += 1) {
    const res = await fetch(next, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: cookieHeader(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form,
    });
    keep(res);
    form = undefined;
    const location = res.headers.get('location');
    if (location) {
      const to = new URL(location, next);
      if (to.toString().startsWith(REDIRECT)) {
        const code = to.searchParams.get('code');
        if (!code) throw new Error(`no code in ${to}: ${to.searchParams.get('error_description')}`);
        return code;
      }
      next = to.toString();
      continue;
    }
    const html = await res.text();
    const action = html.match(/action="([^"]+)"/)?.[1];
    if (!action) throw new Error(`stuck at ${next} (${res.status}): ${html.slice(0, 300)}`);
    const prompt = html.match(/name="prompt" value="([^"]+)"/)?.[1];
    next = new URL(action.replaceAll('&amp;', '&'), next).toString();
    form = prompt === 'login'
      ? new URLSearchParams({ prompt, login: 'ana', password: 'any password' }).toString()
      : new URLSearchParams({ prompt: prompt ?? 'consent' }).toString();
  }
  throw new Error('too many steps at the provider');
}

const provider = new Provider();
let client = new Client({ name: 'identity-test', version: '1.0.0' }, { capabilities: {} });
let unauthorized = false;
try {
  await client.connect(new StreamableHTTPClientTransport(resource, { authProvider: provider }));
} catch (e) {
  if (!(e instanceof UnauthorizedError)) throw e;
  unauthorized = true;
}
if (!unauthorized || !provider.authorizationUrl) throw new Error('expected the SDK to be sent to sign in');
const at = provider.authorizationUrl;
console.log(`ok - the SDK was sent to ${at.origin}${at.pathname} (resource=${at.searchParams.get('resource')}, scope=${at.searchParams.get('scope')})`);
if (at.searchParams.get('resource') !== resource.toString()) throw new Error('the SDK did not ask for our resource (RFC 8707)');
const code = await signInAt(at);
const transport = new StreamableHTTPClientTransport(resource, { authProvider: provider });
await transport.finishAuth(code);
console.log('ok - the SDK exchanged the code for an access token');
client = new Client({ name: 'identity-test', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(resource, { authProvider: provider }));
let status;
let result;
for await (const m of client.experimental.tasks.callToolStream(
  { name: 'slow_compute', arguments: { seconds: 0.2, label: 'oauth' } },
  CallToolResultSchema,
  { timeout: 10000, task: { ttl: 60000 } },
)) {
  if (m.type === 'taskStatus' || m.type === 'taskCreated') status = m.task?.status ?? status;
  if (m.type === 'result') result = m.result;
  if (m.type === 'error') throw m.error;
}
if (!result || result.isError) throw new Error(`the task did not complete: ${JSON.stringify(result)}`);
const tasks = await client.experimental.tasks.listTasks?.(undefined, { timeout: 10000 });
console.log(`ok - a task ran end to end with the OAuth token (last status ${status}; tasks listed for ana: ${tasks?.tasks?.length ?? 'n/a'})`);
await client.close();
