/**
 * The pure core as a specification, fast (no network): the classifier on recorded observation records
 * (test/fixtures/observations.json, one per fleet behaviour, recorded by test/fixtures/record-observations.ts), and the
 * decider and the outage guard on tables written from docs/one-tap-policy.md (shared/spec/ of the planning repository):
 * never drop on one flake, drop only after the confirm-drops streak of consecutive drop-class runs, drop nothing when
 * this machine's network is down.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { evidenceSchema, type Reason, type VerdictName } from '../../src/index.js';
import {
  isNetworkLevel,
  NETWORK_LEVEL,
  networkLooksDown,
  REASON_TEXT,
  asUnprocessable,
  classify,
  classifyAs,
  detailOf,
  isTransient,
  type EntryFacts,
} from '../../src/policy/policy.js';
import { REASONS } from '../../src/model/words.js';
import { decideRow, detectOutage } from '../../src/decide/decide.js';
import { FIXTURE } from '../fixtures/record-observations.js';
import { observation, planOf, readAsApp as read } from '../helpers.js';
import type { AppReading, ClientRun, Evidence, Exchange } from '../../src/model/evidence.js';
import { AppSseReader, decodeAppResponse, decodeAppTools } from '../../src/attest/app-reader.js';

interface Recorded {
  scenario: string;
  entry: { requiresAuth: boolean };
  expected: string;
  evidence: Evidence;
}
const recorded = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Recorded[];

describe('classify: recorded observations → the verdict the policy gives', () => {
  it('every recorded fleet behaviour (48 records)', () => {
    assert.ok(recorded.length >= 48);
    for (const r of recorded) {
      const v = classify(evidenceSchema.parse(r.evidence), r.entry);
      assert.equal(`${v.verdict}/${v.reason}`, r.expected, r.scenario);
      assert.equal(v.reasons[0], v.reason, `${r.scenario}: reason first in reasons`);
    }
  });
  it('every verdict class is covered by the records', () => {
    assert.deepEqual([...new Set(recorded.map((r) => r.expected.split('/')[0]))].sort(), [
      'drop',
      'failed',
      'live',
      'review',
    ]);
  });
  it('an observation that could not be processed is review/unprocessable, whatever its steps say', () => {
    const ok = recorded.find((r) => r.scenario === 'ok-json')!;
    const v = classify({ ...ok.evidence, unprocessable: { stage: 'nesting', error: 'deep' } }, ok.entry);
    assert.equal(`${v.verdict}/${v.reason}`, 'review/unprocessable');
  });
  it('one screening finding on a live list is enough for review/suspicious-tools', () => {
    const ok = recorded.find((r) => r.scenario === 'ok-json')!;
    const v = classify(ok.evidence, { ...ok.entry, flagged: true });
    assert.equal(`${v.verdict}/${v.reason}`, 'review/suspicious-tools');
    assert.ok(v.reasons.includes('ok'), 'what the row would otherwise be follows');
  });
});

type Verdict = VerdictName;
/** A probed row: this run's observation and the earlier rows, newest first. */
const row = (verdict: Verdict, reason: Reason, history: Array<[Verdict, Reason]> = []) => ({
  name: 'A',
  observation: observation({ url: 'https://a.example/mcp', verdict, reason }),
  history: history.map(([v, r]) => ({ verdict: v, reason: r, observedAt: '2026-11-01T00:00:00.000Z' })),
});

describe('decideRow: verdict + history → decision', () => {
  const table: Array<[string, ReturnType<typeof row>, number, boolean, string, number]> = [
    // name, row, confirmDrops, outage, decision, dropStreak
    ['live is kept', row('live', 'ok'), 1, false, 'keep', 0],
    ['review goes to a human', row('review', 'zero-tools'), 1, false, 'review', 0],
    ['a flake is kept and marked', row('failed', 'timeout'), 1, false, 'keep-failed', 0],
    ['a drop with confirm-drops 1 drops', row('drop', 'dns'), 1, false, 'drop', 1],
    ['one drop-class run of 2 does not drop', row('drop', 'dns'), 2, false, 'keep-failed', 1],
    ['two consecutive drop-class runs drop', row('drop', 'dns', [['drop', 'refused']]), 2, false, 'drop', 2],
    [
      'a live run between two drops breaks the streak',
      row('drop', 'dns', [
        ['live', 'ok'],
        ['drop', 'dns'],
      ]),
      2,
      false,
      'keep-failed',
      1,
    ],
    [
      'a flake between two drops breaks the streak',
      row('drop', 'dns', [
        ['failed', 'timeout'],
        ['drop', 'dns'],
      ]),
      2,
      false,
      'keep-failed',
      1,
    ],
    [
      'the streak counts only consecutive runs',
      row('drop', 'http-404', [
        ['drop', 'http-404'],
        ['live', 'ok'],
        ['drop', 'http-404'],
      ]),
      3,
      false,
      'keep-failed',
      2,
    ],
    ['the outage guard drops nothing', row('drop', 'dns', [['drop', 'dns']]), 1, true, 'keep-failed', 2],
  ];
  for (const [name, r, confirmDrops, outage, decision, streak] of table) {
    it(name, () => {
      const d = decideRow(r.observation, r.history, confirmDrops, outage);
      assert.equal(d.decision, decision);
      assert.equal(d.dropStreak, streak);
      if (r.observation.verdict === 'drop' && decision !== 'drop') assert.ok(d.note, 'a drop not carried out says why');
    });
  }
});

describe('network-level failures: before any HTTP answer', () => {
  const network: Reason[] = ['dns', 'refused', 'timeout', 'network', 'tls'];
  for (const reason of REASONS) {
    const want = network.includes(reason);
    it(`${reason}: ${want ? 'network-level' : 'not network-level'}`, () => {
      assert.equal(NETWORK_LEVEL.has(reason), want);
      assert.equal(isNetworkLevel(reason), want);
    });
  }
  it('a reason read from a file that is no reason is not network-level', () =>
    assert.equal(isNetworkLevel('DNS'), false));
});

describe('networkLooksDown: at least half failing at the network level, of at least the fewest probed', () => {
  const table: Array<[failing: number, probed: number, fewest: number | undefined, down: boolean]> = [
    [0, 0, undefined, false], // nothing probed: no outage
    [1, 1, undefined, true],
    [0, 1, undefined, false],
    [1, 2, undefined, true], // exactly half
    [1, 3, undefined, false], // one short of half
    [2, 4, undefined, true],
    [19, 19, 20, false], // the census: fewer than 20 hosts never stop it
    [10, 20, 20, true],
    [9, 20, 20, false],
    [20, 20, 20, true],
    [15, 30, 20, true],
    [14, 30, 20, false],
  ];
  for (const [failing, probed, fewest, down] of table) {
    it(`${failing} of ${probed}${fewest === undefined ? '' : ` (at least ${fewest})`}: ${down ? 'down' : 'not down'}`, () =>
      assert.equal(networkLooksDown(failing, probed, fewest), down));
  }
});

describe('detectOutage: the local network, not the servers', () => {
  const rows = (reasons: Reason[]) => reasons.map((reason) => ({ reason }));
  const table: Array<[string, Reason[], { configured: number; reachable: number }, boolean]> = [
    [
      'no canaries, half the rows fail at the network level: outage',
      ['dns', 'timeout', 'ok', 'ok'],
      { configured: 0, reachable: 0 },
      true,
    ],
    ['no canaries, fewer than half: no outage', ['dns', 'ok', 'ok'], { configured: 0, reachable: 0 }, false],
    [
      "no canaries, HTTP failures are the servers', not the network",
      ['http-404', 'http-404', 'http-410'],
      { configured: 0, reachable: 0 },
      false,
    ],
    [
      'canaries decide: all unreachable is an outage, whatever the rows',
      ['ok', 'ok'],
      { configured: 2, reachable: 0 },
      true,
    ],
    [
      'canaries decide: one reachable is no outage, even if every row failed',
      ['dns', 'dns'],
      { configured: 2, reachable: 1 },
      false,
    ],
    ['an empty catalog is no outage', [], { configured: 0, reachable: 0 }, false],
  ];
  for (const [name, reasons, canaries, outage] of table) {
    it(name, () => assert.equal(detectOutage(rows(reasons), canaries) !== null, outage));
  }
  it('an outage plan decides nothing as drop', () => {
    const plan = planOf([row('drop', 'dns'), row('drop', 'refused'), row('live', 'ok')]);
    assert.ok(plan.aborted);
    assert.equal(plan.summary.drop, 0);
  });
});

/*
 * Behaviour the first mutation run found unpinned in the policy table (src/policy/policy.ts) and in the app's
 * reader (src/attest/app-reader.ts). Every expectation comes from a source of truth, not from the code:
 *   - the policy: docs/one-tap-policy.md, the rule's own `policy` sentence (docs/reference/verdicts.md, where
 *     the rules are tried in order and the first that holds gives the reason, `reason` first in `reasons`), and
 *     REASON_TEXT (what each reason means);
 *   - the reader: docs/app-client.md §4.2 (the app's Kotlin client: kotlinx `Json{ignoreUnknownKeys,
 *     isLenient}` into JsonRpcResponse(id: Int?, result: JsonElement? = null, error: JsonRpcError?),
 *     JsonRpcError(code: Int, message: String), McpToolDefinition(name: String, description: String?,
 *     inputSchema: JsonObject?); SSE: `lines()`, `startsWith("data: ")`, `removePrefix("data: ").trim()`, empty
 *     skipped, first that decodes wins).
 * Evidence is built the way test/fixtures/observations.json records it (src/model/evidence.ts), one exchange at a time.
 */

// ------------------------------------------------------------------------------------------------------------------
// Evidence builders (the shape of test/fixtures/observations.json)

type Step = Exchange['step'];
const RPC_OK = { id: 1, result: true, error: null } as const;

function app(o: Partial<AppReading> = {}): AppReading {
  return {
    read: 'json',
    winner: 'response',
    winnerId: 1,
    spacelessDataLines: 0,
    undecodedDataLines: 0,
    ended: true,
    stoppedEarly: false,
    validPrefix: false,
    ...o,
  };
}

/** An exchange that went well (200, a JSON-RPC result), with the app's reading unless `app: undefined` is given. */
function ex(step: Step, o: Partial<Exchange> = {}): Exchange {
  const base: Exchange = {
    step,
    status: 200,
    contentType: 'application/json',
    headers: {},
    body: 'json',
    bodySnippet: null,
    rpc: step === 'notifications/initialized' ? null : { ...RPC_OK, id: step === 'tools/list' ? 2 : 1 },
    problem: null,
    errorCode: null,
    error: null,
    durationMs: 0,
    app: step === 'notifications/initialized' ? app({ winner: null, winnerId: null }) : app(),
  };
  return { ...base, ...o };
}

/** A failed HTTP answer: status, no JSON-RPC, the given body. */
function http(step: Step, status: number, o: Partial<Exchange> = {}): Exchange {
  return ex(step, {
    status,
    contentType: 'text/plain',
    body: 'other',
    bodySnippet: '',
    rpc: null,
    app: app({ winner: null, winnerId: null, stoppedEarly: true }),
    ...o,
  });
}

/** A low-level failure (no HTTP answer). */
function net(step: Step, errorCode: string): Exchange {
  return ex(step, {
    status: null,
    contentType: null,
    body: null,
    rpc: null,
    errorCode,
    error: errorCode,
    app: undefined,
  });
}

/** A JSON-RPC error answer. */
function rpcErr(step: Step, code: number, message: string, status = 200): Exchange {
  return ex(step, { status, rpc: { id: step === 'tools/list' ? 2 : 1, result: false, error: { code, message } } });
}

function run(steps: Exchange[], o: Partial<ClientRun> = {}): ClientRun {
  return {
    profile: 'kai-9000',
    works: false,
    connected: false,
    toolCount: null,
    error: null,
    steps,
    protocolVersion: null,
    serverInfo: null,
    sessionId: false,
    quirks: [],
    cutShort: false,
    durationMs: 0,
    excludedTools: [],
    ...o,
  };
}

/** The spec-correct diagnosis of a working server. */
const working = (profile = 'spec'): ClientRun =>
  run(
    [
      ex('initialize', { app: undefined }),
      ex('notifications/initialized', { status: 202, body: 'empty', app: undefined }),
      ex('tools/list', { app: undefined }),
    ],
    { profile, works: true, connected: true, toolCount: 3 },
  );

/** The app connected (initialize, the notification), then `last` at tools/list. */
const appThen = (last: Exchange, o: Partial<ClientRun> = {}): ClientRun =>
  run([ex('initialize'), ex('notifications/initialized', { status: 202, body: 'empty' }), last], {
    connected: true,
    ...o,
  });

function evidence(deciding: ClientRun, o: Partial<Evidence> = {}): Evidence {
  return {
    deciding,
    diagnosis: null,
    others: {},
    legacySse: null,
    auth: null,
    uaBlocked: null,
    unprocessable: null,
    matrix: null,
    ...o,
  };
}

const NO_AUTH: EntryFacts = { requiresAuth: false };
const AUTH_OPTIONAL: EntryFacts = { requiresAuth: true };

function verdict(e: Evidence, entry: EntryFacts = NO_AUTH): string {
  const v = classify(e, entry);
  assert.equal(v.reasons[0], v.reason, 'reason first in reasons');
  return `${v.verdict}/${v.reason}`;
}

/** The app stopped at initialize with `init`; nothing else was read. */
const atInit = (init: Exchange, o: Partial<Evidence> = {}) => evidence(run([init]), o);
/** The diagnosis works; the app (deciding) ran `steps`. */
const tripped = (deciding: ClientRun, o: Partial<Evidence> = {}) => evidence(deciding, { diagnosis: working(), ...o });

// ------------------------------------------------------------------------------------------------------------------

describe('policy: the initialize taxonomy ("Must drop" / "Must not drop on one flake")', () => {
  it('DNS failure and connection refused are drops; a TLS failure is kept and marked', () => {
    assert.equal(verdict(atInit(net('initialize', 'ENOTFOUND'))), 'drop/dns');
    assert.equal(verdict(atInit(net('initialize', 'ECONNREFUSED'))), 'drop/refused');
    assert.equal(verdict(atInit(net('initialize', 'CERT_HAS_EXPIRED'))), 'failed/tls');
    assert.equal(verdict(atInit(net('initialize', 'ECONNRESET'))), 'failed/network');
  });

  it('500 is the first 5xx: retryable, kept and marked; 499 is not a 5xx', () => {
    assert.equal(verdict(atInit(http('initialize', 500))), 'failed/retryable-5xx');
    assert.notEqual(classify(atInit(http('initialize', 499)), NO_AUTH).verdict, 'failed');
  });

  it('a 5xx body that says retryable: false, however it is spelled, is a drop', () => {
    for (const bodySnippet of [
      'retryable: false',
      '{"retryable":false}',
      '{"error":"origin","retryable" : false}',
      'retryable=false',
      'OWNER_ACTION_REQUIRED',
    ]) {
      const v = classify(atInit(http('initialize', 503, { bodySnippet })), NO_AUTH);
      assert.equal(`${v.verdict}/${v.reason}`, 'drop/non-retryable-5xx', bodySnippet);
    }
    assert.equal(
      verdict(atInit(http('initialize', 503, { bodySnippet: '{"retryable":true}' }))),
      'failed/retryable-5xx',
    );
  });

  it("402 on an auth-optional entry is a human's call; on a free entry a drop", () => {
    assert.equal(verdict(atInit(http('initialize', 402)), AUTH_OPTIONAL), 'review/payment-required');
    assert.equal(verdict(atInit(http('initialize', 402)), NO_AUTH), 'drop/payment-required');
  });

  it('3xx is a redirect from 300 to 399; 400 is not', () => {
    assert.equal(verdict(atInit(http('initialize', 300))), 'review/redirected');
    assert.equal(verdict(atInit(http('initialize', 399))), 'review/redirected');
    assert.equal(
      verdict(atInit(http('initialize', 400, { contentType: 'text/html', bodySnippet: '<html>Bad Request</html>' }))),
      'drop/not-mcp',
    );
  });

  it('a 404 on initialize is a drop even when the body carries a JSON-RPC result', () => {
    const v = classify(atInit(ex('initialize', { status: 404 })), NO_AUTH);
    assert.equal(v.verdict, 'drop');
  });

  it('404, 405 and 410 carrying a JSON-RPC error are a server speaking JSON-RPC, not a missing endpoint (spec: fallback)', () => {
    // Streamable HTTP backward compatibility (2026-07-28): on 400/404/405, fall back only if the body is *not* a
    // recognized JSON-RPC error; the rule: "alive and speaking JSON-RPC, but refusing the app's handshake".
    for (const status of [404, 405, 410]) {
      assert.equal(
        verdict(atInit(rpcErr('initialize', -32000, 'Bad Request: Session not found', status))),
        'review/handshake-error',
        String(status),
      );
    }
    // A 2026-07-28 server answers an unknown method (initialize) with 404 + -32601: alive under a newer revision.
    assert.equal(verdict(atInit(rpcErr('initialize', -32601, 'Method not found', 404))), 'review/era-incompatible');
    assert.equal(
      verdict(atInit(http('initialize', 405, { bodySnippet: 'Method Not Allowed' }))),
      'drop/not-streamable-http',
    );
  });

  it('an answer over the cap whose first bytes are not JSON-RPC is not-mcp, even after a good initialize', () => {
    const last = ex('tools/list', {
      problem: 'oversize',
      rpc: null,
      app: app({ winner: null, winnerId: null, validPrefix: false, stoppedEarly: true }),
    });
    assert.equal(verdict(evidence(appThen(last))), 'drop/not-mcp');
  });
});

describe('policy: 401/403 on initialize (auth, or an edge?)', () => {
  const challenge = (o: Partial<Exchange>) => http('initialize', 403, o);

  it('a 403 alone is not proof of auth-gating: kept and marked', () => {
    assert.equal(verdict(atInit(challenge({ bodySnippet: 'Forbidden' }))), 'failed/edge-blocked');
  });

  it('a 403 that asks for credentials (WWW-Authenticate) on a no-auth entry is a drop', () => {
    assert.equal(
      verdict(atInit(challenge({ headers: { 'www-authenticate': 'Bearer' }, bodySnippet: 'Forbidden' }))),
      'drop/auth-required',
    );
  });

  it('a 401 page is an auth answer, HTML or not', () => {
    assert.equal(
      verdict(atInit(http('initialize', 401, { contentType: 'text/html', bodySnippet: '<html>Unauthorized</html>' }))),
      'drop/auth-required',
    );
  });

  it('an auth-optional entry: a 403 from an edge challenge is not "the key is no longer optional"', () => {
    const edges: Array<[string, Partial<Exchange>]> = [
      [
        'cf-mitigated header',
        { headers: { 'cf-mitigated': 'challenge' }, contentType: 'application/json', bodySnippet: '{}' },
      ],
      ['an HTML page', { contentType: 'text/html', bodySnippet: '<html><body>Forbidden</body></html>' }],
      ['Cloudflare error code without a colon', { bodySnippet: 'Access denied | error code 1020' }],
      ['Cloudflare error code with a colon', { bodySnippet: 'Error code: 1010' }],
    ];
    for (const [name, o] of edges)
      assert.equal(verdict(atInit(challenge(o)), AUTH_OPTIONAL), 'failed/edge-blocked', name);
  });

  it('an auth-optional entry: a plain 401 or 403 means the key is no longer optional', () => {
    assert.equal(verdict(atInit(http('initialize', 401)), AUTH_OPTIONAL), 'review/auth-required');
    assert.equal(
      verdict(
        atInit(challenge({ bodySnippet: 'Forbidden', body: 'json', contentType: 'application/json' })),
        AUTH_OPTIONAL,
      ),
      'review/auth-required',
    );
  });

  it('an auth-optional entry refused with a JSON-RPC error (not 401/403) is a handshake error, not auth', () => {
    assert.equal(
      verdict(atInit(rpcErr('initialize', -32602, 'Invalid params', 400)), AUTH_OPTIONAL),
      'review/handshake-error',
    );
  });
});

describe('policy: protocol era', () => {
  it('a JSON-RPC error that names an unsupported version is another era, not a handshake error', () => {
    assert.equal(
      verdict(atInit(rpcErr('initialize', -32000, 'Unsupported MCP version: 2024-11-05', 400))),
      'review/era-incompatible',
    );
    assert.equal(
      verdict(atInit(rpcErr('initialize', -32000, 'Bad Request: Unsupported protocol version', 400))),
      'review/era-incompatible',
    );
    assert.equal(
      verdict(atInit(rpcErr('initialize', -32000, 'Bad Request: no session', 400))),
      'review/handshake-error',
    );
  });

  it('a server that does not know initialize (method not found, as 2026-07-28 answers it) is alive under another revision', () => {
    assert.equal(verdict(atInit(rpcErr('initialize', -32601, 'Method not found'))), 'review/era-incompatible');
    assert.equal(verdict(atInit(rpcErr('initialize', 32601, 'Method not found'))), 'review/handshake-error');
  });

  it('alive under a newer revision: another profile works', () => {
    const e = atInit(http('initialize', 400, { bodySnippet: 'Bad Request' }), {
      others: { 'mcp-2026-07-28': working('mcp-2026-07-28') },
    });
    assert.equal(verdict(e), 'review/era-incompatible');
    const none = atInit(http('initialize', 400, { bodySnippet: 'Bad Request' }), {
      others: { 'mcp-2026-07-28': run([http('server/discover', 400)], { profile: 'mcp-2026-07-28' }) },
    });
    assert.equal(verdict(none), 'drop/not-mcp');
  });

  it("the app's own initialize naming the version counts, whatever the diagnosis' initialize said", () => {
    const diagnosis = run([ex('initialize', { app: undefined }), rpcErr('tools/list', -32603, 'internal')], {
      profile: 'spec',
      connected: true,
    });
    const e = evidence(run([rpcErr('initialize', -32602, 'Unsupported protocol version 2024-11-05')]), { diagnosis });
    assert.equal(verdict(e), 'review/era-incompatible');
  });
});

describe('policy: tools/list taxonomy after a good initialize (the diagnosis read it)', () => {
  // The app stopped on a JSON-RPC error at tools/list (not a flake); the diagnosis' tools/list says what happened.
  const appFailed = appThen(rpcErr('tools/list', -32603, 'internal error'), {
    error: 'tools/list failed: internal error',
  });
  const diag = (tools: Exchange) =>
    run(
      [
        ex('initialize', { app: undefined }),
        ex('notifications/initialized', { status: 202, body: 'empty', rpc: null, app: undefined }),
        tools,
      ],
      { profile: 'spec', connected: true },
    );
  const cases: Array<[string, Exchange, string]> = [
    ['a timeout is retried and kept', { ...net('tools/list', 'TIMEOUT') }, 'failed/timeout'],
    ['a reset is a network moment', { ...net('tools/list', 'ECONNRESET') }, 'failed/network'],
    [
      'a 5xx that says owner_action_required is a drop',
      http('tools/list', 502, { bodySnippet: '{"owner_action_required":true}' }),
      'drop/non-retryable-5xx',
    ],
    [
      'a plain 5xx is retried and kept',
      http('tools/list', 503, { bodySnippet: 'Service Unavailable' }),
      'failed/retryable-5xx',
    ],
    ['429 is retried and kept', http('tools/list', 429), 'failed/rate-limited'],
    [
      'a body that says retryable: false without a 5xx is no drop',
      http('tools/list', 400, { bodySnippet: 'retryable: false' }),
      'review/tools-error',
    ],
    ['no result is a tools error', rpcErr('tools/list', -32603, 'internal error'), 'review/tools-error'],
  ];
  for (const [name, tools, want] of cases)
    it(name, () => assert.equal(verdict(evidence(appFailed, { diagnosis: diag(tools) })), want));

  it('a record without any tools/list exchange is a tools error (initialize worked)', () => {
    const e = evidence(
      run([ex('initialize'), ex('notifications/initialized', { status: 202, body: 'empty' })], {
        connected: true,
        error: 'connection closed',
      }),
    );
    assert.equal(verdict(e), 'review/tools-error');
  });

  it('DNS or refused at tools/list after initialize resolved and connected: a network moment, not a dead host', () => {
    for (const c of ['ENOTFOUND', 'ECONNREFUSED']) {
      assert.equal(classify(evidence(appThen(net('tools/list', c))), NO_AUTH).verdict, 'failed', c);
    }
  });
});

describe('policy: a flake of the app is retried, even when the diagnosis worked', () => {
  it('a network error, a 5xx or a 429 at tools/list is a flake, not a trip of the app', () => {
    assert.equal(verdict(tripped(appThen(net('tools/list', 'ECONNRESET')))), 'failed/network');
    assert.equal(verdict(tripped(appThen(http('tools/list', 503)))), 'failed/retryable-5xx');
    assert.equal(verdict(tripped(appThen(http('tools/list', 429)))), 'failed/rate-limited');
  });

  it('a 404 at tools/list is not a flake: the diagnosis works, so the app trips', () => {
    assert.equal(
      verdict(
        tripped(appThen(http('tools/list', 404, { contentType: 'text/html', bodySnippet: '<html>Not Found</html>' }))),
      ),
      'review/app-incompatible',
    );
  });

  it('isTransient: passing failures only', () => {
    assert.equal(isTransient(undefined), false);
    assert.equal(isTransient({ errorCode: 'ECONNRESET', status: null }), true);
    assert.equal(isTransient({ errorCode: 'TIMEOUT', status: null }), true);
    assert.equal(isTransient({ errorCode: 'ENOTFOUND', status: null }), false);
    assert.equal(isTransient({ errorCode: 'ECONNREFUSED', status: null }), false);
    assert.equal(isTransient({ errorCode: null, status: 500 }), true);
    assert.equal(isTransient({ errorCode: null, status: 429 }), true);
    assert.equal(isTransient({ errorCode: null, status: 404 }), false);
    assert.equal(isTransient({ errorCode: null, status: 200 }), false);
  });
});

describe('policy: what the app trips on (the diagnosis works), first match by the table order', () => {
  it('the catch-all, when nothing specific: reasons name it', () => {
    const v = classify(
      tripped(appThen(rpcErr('tools/list', -32603, 'boom'), { error: 'tools/list failed: boom' })),
      NO_AUTH,
    );
    assert.equal(`${v.verdict}/${v.reason}`, 'review/app-incompatible');
    assert.deepEqual(v.reasons, ['app-incompatible']);
  });

  it("oversize still valid at the cap is a human's call, before any other trip", () => {
    const last = ex('tools/list', {
      problem: 'oversize',
      rpc: null,
      headers: { 'content-encoding': 'br' },
      app: app({ winner: null, winnerId: null, validPrefix: true, ended: false }),
    });
    assert.equal(verdict(tripped(appThen(last))), 'review/oversize');
  });

  it('oversize and not valid so far is not oversize', () => {
    const last = ex('tools/list', {
      problem: 'oversize',
      rpc: null,
      app: app({ winner: null, winnerId: null, validPrefix: false, stoppedEarly: true }),
    });
    assert.equal(verdict(tripped(appThen(last))), 'review/app-incompatible');
  });

  it('SSE format: one SSE answer the app could not read is enough, whatever the other steps', () => {
    const last = ex('tools/list', {
      contentType: 'text/event-stream',
      body: 'sse',
      rpc: null,
      app: app({ read: 'sse', winner: null, winnerId: null, spacelessDataLines: 1 }),
    });
    assert.equal(verdict(tripped(appThen(last))), 'review/app-sse-format');
    const split = ex('tools/list', {
      contentType: 'text/event-stream',
      body: 'sse',
      rpc: null,
      app: app({ read: 'sse', winner: null, winnerId: null, undecodedDataLines: 2 }),
    });
    assert.equal(verdict(tripped(appThen(split))), 'review/app-sse-format');
  });

  it('SSE format: skipped lines do not matter when a later data: line gave the app its answer', () => {
    const last = ex('tools/list', {
      contentType: 'text/event-stream',
      body: 'sse',
      app: app({ read: 'sse', winnerId: 2, spacelessDataLines: 1, undecodedDataLines: 1 }),
    });
    const e = tripped(
      appThen(last, {
        error:
          "Field 'name' is required for type with serial name 'com.inspiredandroid.kai.mcp.McpToolDefinition', but it was missing at path: $.tools[0]",
      }),
    );
    assert.equal(verdict(e), 'review/app-tool-list');
  });

  it('a stream left open (the app timed out on an answer that had started) is not an SSE format problem', () => {
    const init = ex('initialize', {
      contentType: 'text/event-stream',
      body: 'sse',
      errorCode: 'TIMEOUT',
      rpc: null,
      app: app({ read: 'sse', winner: null, winnerId: null, ended: false }),
    });
    assert.equal(verdict(tripped(run([init], { error: 'Request timeout has expired' }))), 'review/app-stream-open');
  });

  it('notification rejected: any 4xx (from 400) to notifications/initialized, then tools/list refused', () => {
    for (const status of [400, 406]) {
      const d = run(
        [
          ex('initialize'),
          http('notifications/initialized', status),
          rpcErr('tools/list', -32602, 'Invalid request parameters'),
        ],
        { connected: true, error: 'tools/list failed: Invalid request parameters' },
      );
      assert.equal(verdict(tripped(d)), 'review/app-notification-rejected', String(status));
    }
  });

  it('notification accepted, tools/list refused: not "notification rejected"', () => {
    const d = appThen(rpcErr('tools/list', -32602, 'Invalid request parameters'), {
      error: 'tools/list failed: Invalid request parameters',
    });
    assert.equal(verdict(tripped(d)), 'review/app-incompatible');
  });

  it('notification rejected but tools/list failed without a JSON-RPC error (not "refuses tools/list")', () => {
    const d = run(
      [
        ex('initialize'),
        http('notifications/initialized', 406),
        http('tools/list', 400, { bodySnippet: 'Bad Request' }),
      ],
      {
        connected: true,
        error: "Unexpected JSON token at offset 0: Expected start of the object '{', but had 'B' instead at path: $",
      },
    );
    assert.equal(verdict(tripped(d)), 'review/app-incompatible');
  });

  it('notification rejected and the run stopped there: tools/list was never refused', () => {
    const d = run([ex('initialize'), http('notifications/initialized', 406)], {
      connected: true,
      error: 'notifications/initialized failed: 406',
    });
    assert.equal(verdict(tripped(d)), 'review/app-incompatible');
  });

  it('batch: a JSON array answer, leading whitespace allowed; an array inside an object is not a batch', () => {
    const batch = http('tools/list', 200, {
      contentType: 'application/json',
      body: 'json',
      bodySnippet: '\n  [{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}]',
    });
    assert.equal(verdict(tripped(appThen(batch))), 'review/app-batch-response');
    const inner = http('tools/list', 200, {
      contentType: 'application/json',
      body: 'json',
      bodySnippet: '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x","data":[1]}}',
    });
    assert.equal(verdict(tripped(appThen(inner))), 'review/app-incompatible');
  });

  it("batch: an array labelled text/event-stream goes the app's SSE path, not its JSON decoding", () => {
    const sse = http('tools/list', 200, {
      contentType: 'text/event-stream',
      body: 'sse',
      bodySnippet: '[{"jsonrpc":"2.0","id":2,"result":{}}]',
      app: app({ read: 'sse', winner: null, winnerId: null }),
    });
    assert.equal(verdict(tripped(appThen(sse))), 'review/app-incompatible');
  });

  it('encoding: br, deflate or zstd trip the app; gzip does not', () => {
    for (const enc of ['br', 'deflate', 'zstd']) {
      const last = http('tools/list', 200, {
        headers: { 'content-encoding': enc },
        app: app({ winner: null, winnerId: null, stoppedEarly: true }),
      });
      const v = classify(tripped(appThen(last)), NO_AUTH);
      assert.equal(`${v.verdict}/${v.reason}`, 'review/app-encoding', enc);
    }
    const gz = http('tools/list', 200, {
      headers: { 'content-encoding': 'gzip' },
      app: app({ winner: null, winnerId: null, stoppedEarly: true }),
    });
    assert.equal(verdict(tripped(appThen(gz))), 'review/app-incompatible');
  });

  it('wrong message: the app took another id as the answer (ids are not matched)', () => {
    const d = appThen(rpcErr('tools/list', -32603, 'x'), {
      quirks: ['id-not-matching'],
      error: 'tools/list failed: x',
    });
    assert.equal(verdict(tripped(d)), 'review/app-wrong-message');
  });

  it('tool list: only a failure at tools/list that names the tool decoding', () => {
    const last = ex('tools/list');
    assert.equal(
      verdict(tripped(appThen(last, { error: 'Expected JsonObject at path: $.tools[1].inputSchema' }))),
      'review/app-tool-list',
    );
    assert.equal(verdict(tripped(appThen(last, { error: 'tools/list failed: boom' }))), 'review/app-incompatible');
    const early = run([rpcErr('initialize', -32000, 'McpToolDefinition $.tools not accepted here')], {
      error: 'initialize failed: McpToolDefinition $.tools not accepted here',
    });
    assert.equal(verdict(tripped(early)), 'review/app-incompatible');
  });
});

describe('policy: a deciding profile other than the app (its exchanges carry no app reading)', () => {
  const other = (steps: Exchange[], o: Partial<ClientRun> = {}) =>
    run(
      steps.map((s) => ({ ...s, app: undefined })),
      { profile: 'mcp-2025-06-18', ...o },
    );

  it('a trip is judged without the app reading, and an oversize answer without one is not "still valid"', () => {
    const last = { ...ex('tools/list', { problem: 'oversize', rpc: null }), app: undefined };
    assert.equal(verdict(tripped(other([ex('initialize'), last], { connected: true }))), 'review/app-incompatible');
  });

  it("no exchange at all in the deciding run: judged from the diagnosis' reads", () => {
    const diagnosis = run(
      [http('initialize', 404, { contentType: 'text/html', bodySnippet: '<html>404</html>', app: undefined })],
      { profile: 'spec' },
    );
    assert.equal(verdict(evidence(other([]), { diagnosis })), 'drop/http-404');
    assert.equal(verdict(evidence(other([]), { diagnosis: working() })), 'review/app-incompatible');
  });
});

describe('policy: live, screening and reasons', () => {
  it('a flagged list that is not otherwise live: suspicious-tools alone', () => {
    const d = run([ex('initialize'), ex('tools/list')], { connected: true, toolCount: 0 });
    const v = classify(evidence(d), { requiresAuth: false, flagged: true });
    assert.equal(`${v.verdict}/${v.reason}`, 'review/suspicious-tools');
    assert.deepEqual(v.reasons, ['suspicious-tools']);
  });

  it('an unprocessable record: the reason is the only one', () => {
    const v = classify(
      evidence(run([ex('initialize')], { works: true, connected: true, toolCount: 1 }), {
        unprocessable: { stage: 'hash', error: 'x' },
      }),
      NO_AUTH,
    );
    assert.deepEqual([v.verdict, v.reasons], ['review', ['unprocessable']]);
  });
});

describe('policy: detailOf and asUnprocessable', () => {
  it('detailOf names the stage only for an unprocessable record that says it', () => {
    assert.equal(
      detailOf({ reason: 'unprocessable', evidence: { unprocessable: { stage: 'hash', error: 'e' } } }),
      `${REASON_TEXT.unprocessable} (stage: hash)`,
    );
    assert.equal(detailOf({ reason: 'unprocessable', evidence: null }), REASON_TEXT.unprocessable);
    assert.equal(detailOf({ reason: 'unprocessable', evidence: { unprocessable: null } }), REASON_TEXT.unprocessable);
    assert.equal(
      detailOf({ reason: 'ok', evidence: { unprocessable: { stage: 'hash', error: 'e' } } }),
      REASON_TEXT.ok,
    );
    assert.equal(detailOf({ reason: 'dns', evidence: null }), REASON_TEXT.dns);
  });

  it('asUnprocessable: review/unprocessable, no findings, the evidence says where, judged again the same', () => {
    const ev = evidence(run([ex('initialize'), ex('tools/list')], { works: true, connected: true, toolCount: 1 }));
    const o = asUnprocessable(
      observation({ url: 'https://a.example/mcp', evidence: ev, findings: [], findingsSeen: 0 }),
      'screen',
      new Error('boom'),
    );
    assert.equal(`${o.verdict}/${o.reason}`, 'review/unprocessable');
    assert.deepEqual(o.findings, []);
    assert.deepEqual(o.evidence?.unprocessable, { stage: 'screen', error: 'boom' });
    assert.equal(o.evidence?.deciding, ev.deciding);
    assert.equal(classify(o.evidence!, NO_AUTH).reason, 'unprocessable');
    const bare = asUnprocessable(observation({ url: 'https://a.example/mcp', evidence: null }), 'read', null);
    assert.equal(bare.evidence, null);
    assert.equal(bare.reason, 'unprocessable');
  });
});

describe('policy: classifyAs (the evidence judged as if another profile had decided)', () => {
  const appDown = run([http('initialize', 406, { bodySnippet: 'Not Acceptable' })]);

  it('another profile that works is live under it; a profile without a run gives null', () => {
    const e = evidence(appDown, { diagnosis: working(), others: { 'mcp-2026-07-28': working('mcp-2026-07-28') } });
    assert.equal(classifyAs(e, 'mcp-2026-07-28', NO_AUTH)?.verdict, 'live');
    assert.equal(classifyAs(e, 'nobody', NO_AUTH), null);
    const own = classifyAs(e, 'kai-9000', NO_AUTH);
    assert.deepEqual(own, classify(e, NO_AUTH));
    assert.equal(own?.verdict, 'review');
  });

  it("the matrix' runs count: its other profiles and its diagnosis", () => {
    const e = evidence(appDown, {
      matrix: { diagnosis: working(), others: { 'mcp-2026-07-28': working('mcp-2026-07-28') } },
    });
    assert.equal(classifyAs(e, 'mcp-2026-07-28', NO_AUTH)?.verdict, 'live');
    // The matrix' diagnosis works: the app's failure is a trip of the app's, not another era.
    assert.equal(classifyAs(e, 'kai-9000', NO_AUTH)?.reason, 'app-incompatible');
  });

  it("the app's User-Agent block belongs to the app's own run", () => {
    const e = evidence(appDown, {
      diagnosis: working(),
      uaBlocked: true,
      others: { 'browser-ua': run([http('initialize', 406)], { profile: 'browser-ua' }) },
    });
    assert.equal(classifyAs(e, 'kai-9000', NO_AUTH)?.reason, 'app-ua-blocked');
    assert.notEqual(classifyAs(e, 'browser-ua', NO_AUTH)?.reason, 'app-ua-blocked');
  });
});

// ------------------------------------------------------------------------------------------------------------------
// The app's reader (docs/app-client.md §4.2)

function decoded(text: string) {
  const d = decodeAppResponse(text);
  assert.ok(d.ok, `${text}: ${d.ok ? '' : d.error}`);
  return d.value;
}
function rejected(d: { ok: boolean; error?: string }, msg: string): void {
  assert.equal(d.ok, false, msg);
  assert.ok(typeof d.error === 'string' && d.error.length > 0, `${msg}: error text`);
}

describe('app reader: JSON decoding (kotlinx, isLenient, JsonRpcResponse)', () => {
  it('an absent result is null (result: JsonElement? = null)', () => {
    assert.strictEqual(decoded('{"jsonrpc":"2.0","id":1}').result, null);
    assert.strictEqual(decoded('{}').result, null);
    assert.strictEqual(decoded('{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}').result, null);
  });

  it('a carriage return is JSON whitespace before the object', () => {
    assert.equal(decoded('\r\n\r{"id":1,"result":{}}').id, 1);
    assert.equal(decoded('\r{"id":2,"result":{}}').id, 2);
  });

  it('a quoted integer is an Int to kotlinx', () => {
    assert.equal(decoded('{"id":"7","result":{}}').id, 7);
    assert.equal(decoded('{"id":"42","result":{}}').id, 42);
    assert.equal(decoded('{"id":"-3","result":{}}').id, -3);
    assert.deepEqual(decoded('{"id":1,"error":{"code":"-32601","message":"Method not found"}}').error, {
      code: -32601,
      message: 'Method not found',
    });
  });

  it('a quoted string that is not a decimal integer is not an Int', () => {
    for (const id of ['"0x10"', '"1.5"', '"7a"', '"a7"', '""'])
      rejected(decodeAppResponse(`{"id":${id},"result":{}}`), id);
  });

  it('lenient: any JSON primitive is a String (jsonrpc, message), a structure is not', () => {
    assert.equal(decoded('{"jsonrpc":2.0,"id":1,"result":{}}').id, 1);
    assert.equal(decoded('{"jsonrpc":true,"id":1,"result":{}}').id, 1);
    assert.deepEqual(decoded('{"id":1,"error":{"code":5,"message":404}}').error, { code: 5, message: '404' });
    assert.deepEqual(decoded('{"id":1,"error":{"code":5,"message":false}}').error, { code: 5, message: 'false' });
    rejected(decodeAppResponse('{"jsonrpc":{"v":2},"id":1,"result":{}}'), 'jsonrpc object');
    rejected(decodeAppResponse('{"jsonrpc":["2.0"],"id":1,"result":{}}'), 'jsonrpc array');
    rejected(decodeAppResponse('{"id":1,"error":{"code":5,"message":{"text":"m"}}}'), 'message object');
    rejected(decodeAppResponse('{"id":1,"error":{"code":5,"message":null}}'), 'message null');
    rejected(decodeAppResponse('{"id":1,"error":[{"code":5,"message":"m"}]}'), 'error array');
  });
});

describe('app reader: tools (McpToolDefinition(name: String, description: String?, inputSchema: JsonObject?))', () => {
  it('lenient names and descriptions: primitives are strings', () => {
    const d = decodeAppTools({
      tools: [
        { name: 5, description: true },
        { name: false, description: 1.5 },
      ],
    });
    assert.ok(d.ok);
    assert.deepEqual(d.value, [
      { name: '5', description: 'true', inputSchema: null },
      { name: 'false', description: '1.5', inputSchema: null },
    ]);
  });

  it('a structure for name or description fails the whole list; a null name is no name', () => {
    rejected(decodeAppTools({ tools: [{ name: { en: 'a' } }] }), 'object name');
    rejected(decodeAppTools({ tools: [{ name: ['a'] }] }), 'array name');
    rejected(decodeAppTools({ tools: [{ name: null }] }), 'null name');
    rejected(decodeAppTools({ tools: [{ name: 'a', description: { en: 'x' } }] }), 'object description');
    rejected(decodeAppTools({ tools: [{ name: 'a' }, { name: 'b', description: ['x'] }] }), 'array description');
  });

  it('the error of a bad tool names the tool list, which the policy reads as app-tool-list', () => {
    for (const result of [
      { tools: [{ description: 'x' }] },
      { tools: [{ name: 'a', inputSchema: 'object' }] },
      { tools: [{ name: {} }] },
    ]) {
      const d = decodeAppTools(result);
      assert.equal(d.ok, false);
      assert.match(d.ok ? '' : d.error, /McpToolDefinition|\$\.tools/);
    }
  });
});

const R1 = '{"jsonrpc":"2.0","id":1,"result":{}}';

describe('app reader: SSE lines (body.lines(), startsWith("data: "), removePrefix + trim, empty skipped)', () => {
  it('empty data: lines are skipped, not failed decodes', async () => {
    const r = await read(['data: \n', 'data:    \n', 'data: \t\r\n', `data: ${R1}\n`]);
    assert.equal(r.winner?.id, 1);
    assert.equal(r.undecodedDataLines, 0);
    const none = await read(['event: message\ndata: \n\ndata:  \n\n']);
    assert.equal(none.winner, null);
    assert.equal(none.undecodedDataLines, 0);
  });

  it('a bare data: carries nothing: it is not a data line that lacks its space', async () => {
    const r = await read(['data:\n', 'data:\r\n', 'data:  \n', ': ping\n\n']);
    assert.equal(r.winner, null);
    assert.equal(r.spacelessDataLines, 0);
    assert.equal(r.undecodedDataLines, 0);
    const spaceless = await read([`data:${R1}\n`]);
    assert.equal(spaceless.spacelessDataLines, 1);
  });
});

describe('app reader: what the SSE reader holds while a line is not yet ended', () => {
  it('a line that is not a data: line is not held', async () => {
    const r = new AppSseReader();
    assert.equal(r.feed(': a comment not yet ended'), null);
    assert.equal(r.buffered, 0);
    assert.equal(r.pendingData(100), null);
    r.feed(' still\nevent: mess');
    assert.equal(r.buffered, 0);
    r.feed('age\n: and another');
    assert.equal(r.buffered, 0);
    r.feed('\nda');
    r.feed('ta: {"id":');
    assert.equal(r.buffered, Buffer.byteLength('data: {"id":'));
    assert.equal(r.pendingData(100), '{"id":');
    assert.equal(r.pendingData(3), '{"i');
  });

  it('a line of exactly five bytes that is not data: is not held; "data: " alone has empty pending data', () => {
    const r = new AppSseReader();
    r.feed('event');
    assert.equal(r.buffered, 0);
    const d = new AppSseReader();
    d.feed('data: ');
    assert.equal(d.pendingData(100), '');
  });

  it('a data: line without its space has no pending data (the app ignores it)', () => {
    const r = new AppSseReader();
    r.feed('data:{"id":1');
    assert.equal(r.pendingData(100), null);
    const short = new AppSseReader();
    short.feed('data:');
    assert.equal(short.pendingData(100), null);
  });

  it('once the app has its answer, nothing is pending', () => {
    const r = new AppSseReader();
    r.feed(`data: ${R1}\ndata: {"id":2`);
    assert.equal(r.winner?.id, 1);
    assert.equal(r.pendingData(100), null);
  });

  it('a pending data: line is read whole at the end of the body', async () => {
    const r = new AppSseReader();
    r.feed('event: message\nda');
    r.feed(`ta: ${R1}`);
    assert.equal(r.pendingData(1000), R1);
    r.end();
    assert.equal(r.winner?.id, 1);
    assert.equal(r.buffered, 0);
  });
});
