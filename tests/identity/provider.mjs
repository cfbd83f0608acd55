// A real OpenID provider for the identity tests: the `oidc-provider` package (pinned in
// tests/identity/run.sh), configured here. It listens on a free 127.0.0.1 port and
// prints {"issuer": ...}; it then reads one JSON line on stdin naming the board's root
// and the MCP resource (known only once mcp-tasks is up), builds the provider and
// prints {"ready": true}.
//
// Accounts: `ana` is in the group `release-managers`, which only this provider knows
// (mcp-tasks' [groups] does not list it); `bob` is in none.
// Clients: `board` (the task board, confidential), `mcp-host` (an MCP host: public,
// PKCE), `minter` (client credentials: JWTs for another audience, opaque tokens for
// ours), `introspector` (mcp-tasks' introspection credentials).
// Test hooks under /__test/: `tamper` (flip the next ID tokens' payload), `sign` (a JWT
// signed with the provider's own key or with a key it does not publish), `groups`
// (change an account's groups: the next tokens carry the new ones).
import http from 'node:http';
import crypto from 'node:crypto';
import readline from 'node:readline';
import Provider from 'oidc-provider';

const GROUPS = { ana: ['release-managers'], bob: [] };
export const SECRETS = {
  board: 'board-client-secret-0123456789',
  minter: 'minter-client-secret-0123456789',
  introspector: 'introspector-secret-0123456789',
};

const b64url = (buf) => Buffer.from(buf).toString('base64url');

function keyPair(kid) {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { privateKey, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } };
}

function signJwt(privateKey, kid, claims) {
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
  const payload = b64url(JSON.stringify(claims));
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
  return `${header}.${payload}.${b64url(signature)}`;
}

const own = keyPair('provider-key-1');
const stranger = keyPair('stranger-key');
let tamper = false;
let handler = (req, res) => {
  res.writeHead(503);
  res.end('not configured yet');
};

const server = http.createServer((req, res) => {
  if (req.url.startsWith('/__test/')) return testHook(req, res);
  return handler(req, res);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  console.log(JSON.stringify({ issuer }));
  const rl = readline.createInterface({ input: process.stdin });
  rl.once('line', (line) => {
    const setup = JSON.parse(line);
    handler = build(issuer, setup).callback();
    console.log(JSON.stringify({ ready: true }));
  });
  // The test ends the provider by closing its stdin.
  rl.on('close', () => process.exit(0));
});

function testHook(req, res) {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    const url = new URL(req.url, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/__test/tamper') {
      tamper = url.searchParams.get('on') === '1';
      res.end(JSON.stringify({ tamper }));
    } else if (url.pathname === '/__test/groups') {
      const { account, groups } = JSON.parse(body);
      GROUPS[account] = groups;
      res.end(JSON.stringify({ account, groups }));
    } else if (url.pathname === '/__test/sign') {
      const { key, claims } = JSON.parse(body);
      const token = key === 'provider'
        ? signJwt(own.privateKey, own.jwk.kid, claims)
        : signJwt(stranger.privateKey, stranger.jwk.kid, claims);
      res.end(JSON.stringify({ token }));
    } else {
      res.statusCode = 404;
      res.end('{}');
    }
  });
}

function build(issuer, { boardRoots, resources, hostRedirect }) {
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'board',
        client_secret: SECRETS.board,
        redirect_uris: boardRoots.map((root) => `${root}/board/oidc/callback`),
        post_logout_redirect_uris: boardRoots.map((root) => `${root}/board/login`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'mcp-host',
        token_endpoint_auth_method: 'none',
        redirect_uris: [hostRedirect],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      {
        client_id: 'minter',
        client_secret: SECRETS.minter,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: 'introspector',
        client_secret: SECRETS.introspector,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
    ],
    jwks: { keys: [own.jwk] },
    cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
    async findAccount(ctx, id) {
      if (!(id in GROUPS)) return undefined;
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: `${id}@example.test`, preferred_username: id, groups: GROUPS[id] };
        },
      };
    },
    claims: {
      openid: ['sub'],
      email: ['email'],
      profile: ['preferred_username'],
      groups: ['groups'],
    },
    scopes: ['openid', 'email', 'profile', 'groups', 'mcp:tools'],
    extraTokenClaims(ctx, token) {
      if (token.accountId) return { groups: GROUPS[token.accountId] ?? [] };
      return undefined;
    },
    features: {
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, indicator, client) {
          if (!resources.includes(indicator) && indicator !== 'urn:test:another-server') {
            throw new Error(`unknown resource ${indicator}`);
          }
          const opaque = resources.includes(indicator) && client.clientId === 'minter';
          return {
            scope: 'mcp:tools',
            audience: indicator,
            accessTokenTTL: 600,
            accessTokenFormat: opaque ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    pkce: { required: () => true },
  });
  provider.proxy = false;
  // The tampered-ID-token case: the payload changes after the provider signed it.
  provider.use(async (ctx, next) => {
    await next();
    if (tamper && ctx.path === '/token' && ctx.body && ctx.body.id_token) {
      const [h, p, s] = ctx.body.id_token.split('.');
      const claims = JSON.parse(Buffer.from(p, 'base64url'));
      claims.sub = 'mallory';
      ctx.body = { ...ctx.body, id_token: `${h}.${b64url(JSON.stringify(claims))}.${s}` };
    }
  });
  return provider;
}
