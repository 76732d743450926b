/**
 * One test per rule of docs/one-tap-policy.md (shared/spec/ of the planning repository) (and the verdict
 * table), each against a scripted server on 127.0.0.1. Read them next to the policy text.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { probe, type ProbeOptions } from '../src/index.js';
import { startFleet, type Fleet } from './fleet/fleet.js';

let fleet: Fleet;
before(async () => {
  fleet = await startFleet();
});
after(async () => {
  await fleet.close();
});

const fast: ProbeOptions = { timeoutMs: 1_000, retryDelayMs: 10 };
const check = async (scenario: string, verdict: string, reason: string, opts: ProbeOptions = {}) => {
  const r = await probe(fleet.url(scenario), { ...fast, ...opts });
  assert.equal(`${r.verdict}/${r.reason}`, `${verdict}/${reason}`, `${scenario}: ${r.error}`);
  return r;
};

describe('Attested live: initialize (2024-11-05, Kai 9000) → notifications/initialized → tools/list', () => {
  it('live/ok with a JSON body', async () => {
    const r = await check('ok-json', 'live', 'ok');
    assert.deepEqual(r.tools, ['search', 'fetch']);
    assert.equal(r.protocolVersion, '2024-11-05');
    assert.equal(r.serverName, 'fleet');
    assert.equal(r.attempts, 1);
    assert.equal(r.error, null);
  });
  it('live/ok with an SSE data: line', async () => {
    const r = await check('ok-sse', 'live', 'ok');
    assert.equal(r.evidence!.deciding.steps[0]!.app?.read, 'sse');
  });
  it('sends exactly what the app sends (docs/app-client.md §4.2), forwards Mcp-Session-Id, never DELETEs', async () => {
    const seen: unknown[] = [];
    const f = await startFleet({
      spy: (c) => {
        const h = c.req.headers;
        seen.push({
          body: c.msg,
          accept: h.accept,
          type: h['content-type'],
          session: h['mcp-session-id'],
          ua: h['user-agent'],
          encoding: h['accept-encoding'],
          charset: h['accept-charset'],
          version: h['mcp-protocol-version'],
          key: h['x-api-key'],
        });
        if (c.msg?.method === 'initialize') {
          c.res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'abc' });
          c.res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              result: { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 's', version: '1' } },
            }),
          );
          return;
        }
        if (c.msg?.id === undefined) {
          c.res.writeHead(202);
          c.res.end();
          return;
        }
        c.res.writeHead(200, { 'content-type': 'application/json' });
        c.res.end(JSON.stringify({ jsonrpc: '2.0', id: c.msg.id, result: { tools: [{ name: 'a' }] } }));
      },
    });
    try {
      const r = await probe(f.url('spy'), { ...fast, headers: { 'X-Api-Key': 'k' } });
      assert.equal(r.verdict, 'live');
      assert.equal(r.sessionId, true);
      // From McpClient.kt: Accept only on requests (Ktor adds */* to the notification), Ktor's agent and
      // Accept-Charset, OkHttp's gzip, the user header appended, no MCP-Protocol-Version.
      const app = {
        ua: 'Ktor client',
        encoding: 'gzip',
        charset: 'UTF-8',
        type: 'application/json',
        version: undefined,
        key: 'k',
      };
      assert.deepEqual(seen, [
        {
          ...app,
          body: {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2024-11-05',
              capabilities: {},
              clientInfo: { name: 'Kai 9000', version: '1.0' },
            },
          },
          accept: 'application/json, text/event-stream',
          session: undefined,
        },
        { ...app, body: { jsonrpc: '2.0', method: 'notifications/initialized' }, accept: '*/*', session: 'abc' },
        {
          ...app,
          body: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          accept: 'application/json, text/event-stream',
          session: 'abc',
        },
      ]);
      assert.equal(f.hits('spy').DELETE, 0, 'the app never ends a session with DELETE');
    } finally {
      await f.close();
    }
  });
  it('review/zero-tools: zero tools is unusual, review not drop', async () =>
    void (await check('zero-tools', 'review', 'zero-tools')));
});

describe('Auth-optional hosts (requiresAuth: true)', () => {
  it('live/auth-optional: initialize without a key is enough; tools/list auth error is not a drop', async () =>
    void (await check('auth-optional', 'live', 'auth-optional', { requiresAuth: true })));
  it('live/auth-optional: tools/list empty is not a drop', async () =>
    void (await check('zero-tools', 'live', 'auth-optional', { requiresAuth: true })));
  it('live/ok when the optional key is given and tools are listed', async () => {
    const r = await check('auth-optional-with-key', 'live', 'ok', {
      requiresAuth: true,
      headers: { authorization: 'Bearer free-key' },
    });
    assert.equal(r.tools!.length, 2);
  });
  it('review/auth-required: 401 on initialize means the key is no longer optional', async () =>
    void (await check('init-401', 'review', 'auth-required', { requiresAuth: true })));
  it('failed/edge-blocked: an edge challenge page is a bot wall, not the key turning mandatory', async () => {
    const r = await check('edge-challenge', 'failed', 'edge-blocked', { requiresAuth: true });
    assert.equal(r.attempts, 1);
  });
});

describe('Must drop', () => {
  it('drop/dns: the host does not exist (NXDOMAIN)', async () => {
    // Name resolution is the one thing not done on loopback: a resolver that answers NXDOMAIN for *.invalid.
    const dispatcher = new Agent({
      connect: {
        lookup: (host: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a?: string, f?: number) => void) =>
          host.endsWith('.invalid')
            ? cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }))
            : cb(null, '127.0.0.1', 4),
      } as never,
    });
    try {
      const r = await probe('http://gone.invalid/mcp', { ...fast, dispatcher });
      assert.equal(`${r.verdict}/${r.reason}`, 'drop/dns');
      assert.equal(r.attempts, 1, 'drop-class answers are never retried');
    } finally {
      await dispatcher.close();
    }
  });
  it('failed/network: a temporary resolver failure (EAI_AGAIN) is not a drop', async () => {
    const dispatcher = new Agent({
      connect: {
        lookup: (host: string, _o: unknown, cb: (e: NodeJS.ErrnoException) => void) =>
          cb(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' })),
      } as never,
    });
    try {
      const r = await probe('http://flaky-dns.example/mcp', { ...fast, dispatcher });
      assert.equal(`${r.verdict}/${r.reason}/${r.attempts}`, 'failed/network/2');
    } finally {
      await dispatcher.close();
    }
  });
  it('drop/refused: connection refused', async () => {
    const r = await probe('http://127.0.0.1:9/mcp', fast);
    assert.equal(`${r.verdict}/${r.reason}/${r.attempts}`, 'drop/refused/1');
  });
  it('drop/http-404', async () => void (await check('http-404', 'drop', 'http-404')));
  it('drop/http-410', async () => void (await check('http-410', 'drop', 'http-410')));
  it('drop/not-mcp: an HTML page', async () => void (await check('html-200', 'drop', 'not-mcp')));
  it('drop/not-mcp: JSON that is not JSON-RPC', async () => void (await check('json-not-rpc', 'drop', 'not-mcp')));
  it('drop/not-mcp: garbage SSE', async () => void (await check('garbage-sse', 'drop', 'not-mcp')));
  it('drop/not-mcp: a response for another id', async () => void (await check('wrong-id', 'drop', 'not-mcp')));
  // Changed with the app-exact verdict: the app never reads protocolVersion, so its absence is a quirk, not a drop.
  it('live/ok: an initialize result without protocolVersion (quirk)', async () => {
    const r = await check('no-protocol-version', 'live', 'ok');
    assert.ok(r.quirks.includes('no-protocol-version'));
  });
  it('drop/not-mcp: a body over the size cap is cut off, not buffered', async () => {
    const r = await check('oversize', 'drop', 'not-mcp', { maxBodyBytes: 256 * 1024 });
    assert.equal(r.evidence!.deciding.steps[0]!.problem, 'oversize');
  });
  it('drop/auth-required: 401 with WWW-Authenticate on initialize for a no-auth entry', async () =>
    void (await check('init-401', 'drop', 'auth-required')));
  it('drop/auth-required: 403 with a JSON error body on initialize for a no-auth entry', async () =>
    void (await check('init-403-json', 'drop', 'auth-required')));
  it('drop/not-streamable-http: legacy HTTP+SSE (POST 405, GET yields an endpoint event)', async () => {
    const r = await check('legacy-sse', 'drop', 'not-streamable-http');
    assert.equal(r.evidence!.legacySse, true);
  });
  it('drop/not-streamable-http: legacy HTTP+SSE that answers POST with 404', async () =>
    void (await check('legacy-sse-404', 'drop', 'not-streamable-http')));
  it('drop/not-streamable-http: a bare 405 to the POST (no body, no endpoint event anywhere)', async () => {
    const r = await check('post-405', 'drop', 'not-streamable-http');
    assert.equal(r.attempts, 1, 'drop-class: not retried');
    assert.equal(r.httpStatus, 405);
  });
  it('drop/not-streamable-http: a POST answered with an endpoint event', async () =>
    void (await check('endpoint-on-post', 'drop', 'not-streamable-http')));
  it('drop/origin-tls: edge 526', async () => void (await check('edge-526', 'drop', 'origin-tls')));
  it('drop/origin-dns: edge 530', async () => void (await check('edge-530', 'drop', 'origin-dns')));
  it('drop/non-retryable-5xx: retryable: false / owner_action_required, not retried', async () => {
    const r = await check('non-retryable-5xx', 'drop', 'non-retryable-5xx');
    assert.equal(r.attempts, 1);
  });
});

describe('Must not drop on one flake: retry once, then keep and mark failed', () => {
  it('failed/timeout after one retry', async () => {
    const r = await check('hang', 'failed', 'timeout', { timeoutMs: 200 });
    assert.equal(r.attempts, 2);
  });
  it('live after a timeout that recovers on the retry', async () => {
    const r = await check('hang-once', 'live', 'ok', { timeoutMs: 300 });
    assert.equal(r.attempts, 2);
    assert.equal(r.attempts, 2);
  });
  it('failed/retryable-5xx after one retry', async () => {
    const r = await check('always-503', 'failed', 'retryable-5xx');
    assert.equal(r.attempts, 2);
    assert.equal(
      fleet.hits('always-503').POST,
      2,
      'one app initialize per attempt; a passing failure needs no diagnosis',
    );
  });
  it('live after a 503 that recovers on the retry', async () => {
    const r = await check('flaky-503-once', 'live', 'ok');
    assert.equal(r.attempts, 2);
  });
  it('failed/network: the connection is reset', async () => {
    const r = await check('reset', 'failed', 'network');
    assert.equal(r.attempts, 2);
  });
  it('failed/rate-limited: 429 retried after a short Retry-After', async () => {
    const r = await check('rate-limited', 'failed', 'rate-limited');
    assert.equal(r.attempts, 2);
  });
  it('failed/rate-limited: a long Retry-After is respected (no early retry)', async () => {
    const r = await check('rate-limited-long', 'failed', 'rate-limited');
    assert.equal(r.attempts, 1);
  });
  it('failed/edge-blocked: a 403 challenge page is not proof of auth', async () => {
    const r = await check('edge-challenge', 'failed', 'edge-blocked');
    assert.equal(r.attempts, 1);
  });
  it('review/app-ua-blocked: an edge that 403s the app\'s "Ktor client" but lets a browser through', async () => {
    const r = await check('browser-ua-only', 'review', 'app-ua-blocked');
    assert.equal(r.diagnosis?.works, true);
    await check('browser-ua-only', 'live', 'ok', { userAgent: 'Mozilla/5.0' });
  });
});

describe('Outside the policy text: alive but needs a human', () => {
  it('review/redirected: the app does not follow a redirected POST', async () => {
    const r = await check('redirect', 'review', 'redirected');
    assert.equal(r.location, '/ok-json');
  });
  // Changed with the app-exact verdict: a JSON-RPC error naming the protocol version is an alive server of
  // another revision (era-incompatible); other JSON-RPC errors to initialize stay handshake-error.
  it('review/era-incompatible: a JSON-RPC error refusing protocol 2024-11-05, inside a 400', async () =>
    void (await check('unsupported-version', 'review', 'era-incompatible')));
  it('review/handshake-error: another JSON-RPC error to initialize', async () =>
    void (await check('init-error', 'review', 'handshake-error')));
  it('review/tools-error: initialize ok, tools/list answered with an error', async () =>
    void (await check('tools-error', 'review', 'tools-error')));
});
