/**
 * A worker trusts no job: every field of a job read from the queue is parsed with the job's schema
 * (`src/model/jobs.ts`) and bounded, then checked against what the worker was started to do (`--key-env`,
 * `--allow-http`) before any request. A table: a job as refresh writes it passes; each change a written job could make
 * is refused, naming the field (a variable by its name, never a value).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jobUrlOf, readJob, type WorkerPermits } from '../../src/queue/queue.js';
import { CANARIES_JOB_URL, probeJobSchema } from '../../src/model/jobs.js';
import { CANARIES_URL } from '../../src/store/store.js';
import { catalogProfile, KAI_9000, MCP_2025_11_25 } from '../../src/attest/profile.js';
import { jobKeys } from '../../src/refresh/across.js';

const OWN = catalogProfile(
  {
    profiles: {
      'our-app': { extends: 'kai-9000', userAgent: 'OurApp/2', headers: { 'x-client': 'ours' }, timeoutMs: 20_000 },
    },
  },
  'our-app',
);
const job = {
  run: { id: 'week-1', startedAt: '2026-12-01T00:00:00.000Z' },
  vantage: 'eu',
  kind: 'probe',
  url: 'https://mcp.example.com/mcp',
  name: 'x',
  requiresAuth: true,
  headers: { 'x-list': 'one-tap' },
  probeHeaders: { Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' } },
  profile: KAI_9000,
  matrix: false,
  allowHttp: false,
  perHost: 4,
  canaries: [],
};
const canaries = {
  ...job,
  kind: 'canaries',
  url: '#canaries',
  name: 'canaries',
  requiresAuth: false,
  headers: {},
  probeHeaders: undefined,
  canaries: ['https://example.com/'],
};
const strict: WorkerPermits = { keyEnv: new Set(['JINA_API_KEY']), allowHttp: false };
const fixtures: WorkerPermits = { keyEnv: new Set(['JINA_API_KEY']), allowHttp: true };
/** The problem `readJob` finds in a job, or null. */
const jobProblem = (data: unknown, vantage: string, permits: WorkerPermits) =>
  readJob(data, vantage, permits).problem ?? null;
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

describe('a job read from the queue is checked before a worker acts on it', () => {
  const cases: Array<[string, Record<string, unknown>, WorkerPermits, RegExp | null]> = [
    ['a job as refresh writes it', {}, strict, null],
    ['the same through the queue (JSON: undefined fields gone)', json(job), strict, null],
    ["a list's own profile, derived from a built-in one", { profile: json(OWN) }, strict, null],
    ['another built-in profile', { profile: MCP_2025_11_25 }, strict, null],
    ['no probe keys at all', { probeHeaders: undefined }, strict, null],
    [
      "a census's job",
      { census: { identity: 'onetap-census/0.5 (+https://census.example/about)', gapMs: 1_000 } },
      strict,
      null,
    ],
    // Keys: only the variables the worker was started to read.
    [
      "a key from the store's own variable",
      { probeHeaders: { Authorization: { env: 'ONETAP_STORE_URL' } } },
      strict,
      /^probeHeaders\.Authorization reads ONETAP_STORE_URL, which this worker was not started to read/,
    ],
    [
      'a key from an unrelated secret',
      { probeHeaders: { 'X-Key': { env: 'AWS_SECRET_ACCESS_KEY', prefix: '' } } },
      strict,
      /reads AWS_SECRET_ACCESS_KEY/,
    ],
    [
      'a worker started with no --key-env reads none',
      {},
      { keyEnv: new Set(), allowHttp: false },
      /reads JINA_API_KEY, which this worker was not/,
    ],
    ['probeHeaders as a string', { probeHeaders: 'JINA_API_KEY' }, strict, /^probeHeaders: expected/],
    [
      "a probe header's source as a string",
      { probeHeaders: { Authorization: 'JINA_API_KEY' } },
      strict,
      /^probeHeaders\.Authorization: expected \{env, prefix\}/,
    ],
    [
      'a probe header with a field no source has',
      { probeHeaders: { Authorization: { env: 'JINA_API_KEY', value: 'x' } } },
      strict,
      /^probeHeaders\.Authorization: expected/,
    ],
    [
      'not a variable name',
      { probeHeaders: { Authorization: { env: 'A B' } } },
      strict,
      /^probeHeaders\.Authorization\.env: not the name/,
    ],
    [
      'a header name that is not one',
      { probeHeaders: { 'Bad Name': { env: 'JINA_API_KEY' } } },
      strict,
      /^probeHeaders: a name that is not/,
    ],
    [
      'a prefix with a line break',
      { probeHeaders: { Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer\r\nX-Injected: 1\r\n' } } },
      strict,
      /^probeHeaders\.Authorization\.prefix/,
    ],
    [
      'nine probe headers',
      { probeHeaders: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`x-${i}`, { env: 'JINA_API_KEY' }])) },
      strict,
      /^probeHeaders: at most 8/,
    ],
    ['the variables the catalog refused, named', { refusedKeys: ['GITHUB_TOKEN', 'DB_PASSWORD'] }, strict, null],
    ['refused names that are not names', { refusedKeys: ['A B'] }, strict, /^refusedKeys: at most 8 variable names/],
    [
      'nine refused names',
      { refusedKeys: Array.from({ length: 9 }, (_, i) => `V${i}`) },
      strict,
      /^refusedKeys: at most 8/,
    ],
    // Addresses: the address rule, and http / loopback only with the worker's own --allow-http.
    [
      'http on loopback, the run asking, the worker started with --allow-http',
      { url: 'http://127.0.0.1:8080/mcp', allowHttp: true },
      fixtures,
      null,
    ],
    [
      'http on loopback the run asks for, a worker without --allow-http',
      { url: 'http://127.0.0.1:8080/mcp', allowHttp: true },
      strict,
      /^url: a private, loopback or reserved address \(loopback only for a worker started with --allow-http\)/,
    ],
    [
      'https on loopback the run asks for, a worker without --allow-http',
      { url: 'https://localhost:5432/', allowHttp: true },
      strict,
      /^url: a private, loopback or reserved address/,
    ],
    [
      'http on loopback the run does not ask for',
      { url: 'http://127.0.0.1:8080/mcp' },
      fixtures,
      /^url: a private, loopback/,
    ],
    ['http to a public name', { url: 'http://mcp.example.com/mcp', allowHttp: true }, fixtures, /^url: https only/],
    ['http elsewhere, whatever the permissions', { url: 'http://10.0.0.5/mcp', allowHttp: true }, fixtures, /^url:/],
    ['https to a private address', { url: 'https://10.0.0.5:8443/' }, fixtures, /^url: a private/],
    ['https to an IPv6 unique-local address', { url: 'https://[fd00::1]/' }, fixtures, /^url: a private/],
    ['another scheme', { url: 'file:///etc/passwd' }, strict, /^url:/],
    ['credentials in the URL', { url: 'https://me:pw@mcp.example.com/' }, strict, /^url: not a URL a worker asks/],
    [
      'a URL over 2,048 characters',
      { url: `https://mcp.example.com/${'a'.repeat(2_048)}` },
      strict,
      /^url: expected a URL up to 2048/,
    ],
    ['a probe job with canaries', { canaries: ['https://example.com/'] }, strict, /^canaries: a probe job has none/],
    // Canaries: the same address rule as any request (https on a private address fails for its address).
    ['a canaries job', canaries, strict, null],
    [
      'a canary on a private address',
      { ...canaries, canaries: ['https://10.0.0.5:8443/'] },
      strict,
      /^canaries\[0\]: a private, loopback or reserved address/,
    ],
    [
      'a canary on loopback',
      { ...canaries, canaries: ['https://localhost:5432/'] },
      strict,
      /^canaries\[0\]: a private/,
    ],
    ['a canary on 127.0.0.1', { ...canaries, canaries: ['https://127.0.0.1/'] }, strict, /^canaries\[0\]: a private/],
    [
      'a canary on an IPv6 unique-local address',
      { ...canaries, canaries: ['https://example.com/', 'https://[fd00::1]/'] },
      strict,
      /^canaries\[1\]: a private/,
    ],
    [
      "a loopback canary under the worker's and the run's permission",
      { ...canaries, allowHttp: true, canaries: ['http://127.0.0.1:9/'] },
      fixtures,
      null,
    ],
    [
      '21 canaries',
      { ...canaries, canaries: Array.from({ length: 21 }, () => 'https://example.com') },
      strict,
      /^canaries: 1 to 20/,
    ],
    [
      'a canaries job with another URL',
      { ...canaries, url: 'https://example.com/' },
      strict,
      /^url: a canaries job's is #canaries/,
    ],
    // Every other field, bounded.
    ["another vantage's job", { vantage: 'us' }, strict, /not this worker's/],
    ['an unknown kind', { kind: 'shell' }, strict, /^kind/],
    ['a field no job has', { command: 'rm -rf /' }, strict, /^a field no job has \("command"\)/],
    ['no run', { run: null }, strict, /^run:/],
    [
      'a run id with a newline',
      { run: { id: 'week-1\nforged', startedAt: '2026-12-01T00:00:00.000Z' } },
      strict,
      /^run:/,
    ],
    ['a run start that is not an ISO time', { run: { id: 'w', startedAt: 'yesterday' } }, strict, /^run:/],
    ['allowHttp as text', { allowHttp: 'yes' }, strict, /^allowHttp/],
    ['requiresAuth as text', { requiresAuth: 'true' }, strict, /^requiresAuth/],
    ['a name of a megabyte', { name: 'n'.repeat(1_000_000) }, strict, /^larger than a job is/],
    ['nesting past 8 levels', { name: [[[[[[[[[['deep']]]]]]]]]] }, strict, /^larger than a job is/],
    ['a per-host limit of 0', { perHost: 0 }, strict, /^perHost/],
    ['an absurd time limit', { timeoutMs: 1e9 }, strict, /^timeoutMs/],
    ['a header that is not text', { headers: { a: 1 } }, strict, /^headers\.a: expected text/],
    ['a header with a line break', { headers: { 'x-a': 'b\r\nHost: evil' } }, strict, /^headers\.x-a: expected text/],
    ['a Host header', { headers: { Host: 'internal.example' } }, strict, /^headers: Host frames the request/],
    [
      '33 headers',
      { headers: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x-${i}`, 'v'])) },
      strict,
      /^headers: at most 32/,
    ],
    [
      'headers over 16 KiB in all',
      { headers: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x-${i}`, 'v'.repeat(4_000)])) },
      strict,
      /^headers: more than 16384/,
    ],
    ['no profile', { profile: 'kai-9000' }, strict, /^profile: expected/],
    [
      'a built-in profile with another User-Agent',
      { profile: { ...KAI_9000, userAgent: 'curl/8' } },
      strict,
      /^profile: kai-9000 differs from the built-in profile/,
    ],
    [
      'a built-in profile reading 1,000 pages of tools',
      { profile: { ...KAI_9000, toolPages: 1_000 } },
      strict,
      /^profile: kai-9000 differs/,
    ],
    [
      'a built-in profile waiting an hour to connect',
      { profile: { ...KAI_9000, connectTimeoutMs: 3_600_000 } },
      strict,
      /^profile: kai-9000 differs/,
    ],
    [
      'a built-in profile with headers of its own',
      { profile: { ...KAI_9000, headers: { cookie: 'x' } } },
      strict,
      /^profile: kai-9000 differs/,
    ],
    [
      'a profile derived from nothing built in',
      { profile: { ...OWN, extends: 'evil' } },
      strict,
      /^profile: neither a built-in profile nor derived/,
    ],
    [
      'a derived profile with other capabilities',
      { profile: { ...json(OWN), capabilities: { sampling: {} } } },
      strict,
      /^profile: our-app differs from the profile derived from kai-9000/,
    ],
    [
      'a derived profile with a line break in its User-Agent',
      { profile: { ...json(OWN), userAgent: 'a\r\nX-Injected: 1' } },
      strict,
      /^profile\.userAgent/,
    ],
    [
      'a derived profile with a Content-Length header',
      { profile: { ...json(OWN), headers: { 'Content-Length': '0' } } },
      strict,
      /^profile\.headers: Content-Length frames/,
    ],
    [
      'a derived profile waiting a day per request',
      { profile: { ...json(OWN), requestTimeoutMs: 86_400_000 } },
      strict,
      /^profile\.requestTimeoutMs/,
    ],
    ['a census identity with a line break', { census: { identity: 'a\nb', gapMs: 0 } }, strict, /^census/],
    ['a census with a field of its own', { census: { identity: 'a', gapMs: 0, extra: 1 } }, strict, /^census/],
  ];
  for (const [name, change, permits, problem] of cases) {
    it(name, () => {
      const p = jobProblem({ ...job, ...change }, 'eu', permits);
      if (problem) assert.match(p ?? '', problem);
      else assert.equal(p, null);
    });
  }
  it('a job that passes is the job, as its schema parses it', () => {
    assert.deepEqual(readJob(json(job), 'eu', strict).job, json(job));
    assert.equal(probeJobSchema.safeParse(json(job)).success, true);
    assert.equal(CANARIES_JOB_URL, CANARIES_URL);
  });
  it('not an object at all', () => assert.equal(jobProblem('{"url":"x"}', 'eu', strict), 'not an object'));
  it("a problem never carries a variable's value, whatever the environment holds", () => {
    process.env.ONETAP_TEST_SECRET_VALUE = 'hunter2-hunter2';
    try {
      const p = jobProblem(
        { ...job, probeHeaders: { Authorization: { env: 'ONETAP_TEST_SECRET_VALUE' } } },
        'eu',
        strict,
      )!;
      assert.match(p, /ONETAP_TEST_SECRET_VALUE/);
      assert.doesNotMatch(p, /hunter2/);
    } finally {
      delete process.env.ONETAP_TEST_SECRET_VALUE;
    }
  });
  it("the job's URL as a log line names it: clipped, or said to be missing", () => {
    assert.equal(jobUrlOf(job), 'https://mcp.example.com/mcp');
    assert.equal(jobUrlOf({ url: 1 }), '(no URL)');
    assert.equal(jobUrlOf({ url: 'u'.repeat(400) }).length, 301);
  });
});

describe("a row's keys as its jobs carry them (the catalog's key rule, before anything is enqueued)", () => {
  const row = (probeHeaders?: Record<string, { env: string; prefix?: string }>) => ({
    url: 'https://mcp.example.com/mcp',
    name: 'x',
    requiresAuth: true,
    headers: {},
    ...(probeHeaders ? { probeHeaders } : {}),
  });
  const rows: Array<[string, ReturnType<typeof row>, string[] | undefined, ReturnType<typeof jobKeys>]> = [
    ['no keys', row(), undefined, {}],
    [
      'a permitted key',
      row({ Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' } }),
      undefined,
      { probeHeaders: { Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' } } },
    ],
    [
      "the CI's own token: left out, named",
      row({ Authorization: { env: 'GITHUB_TOKEN' }, 'X-Key': { env: 'JINA_API_KEY' } }),
      undefined,
      { probeHeaders: { 'X-Key': { env: 'JINA_API_KEY' } }, refusedKeys: ['GITHUB_TOKEN'] },
    ],
    [
      'a name policy.keyEnv does not list',
      row({ 'X-Key': { env: 'OTHER_KEY' } }),
      ['JINA_API_KEY'],
      { refusedKeys: ['OTHER_KEY'] },
    ],
    [
      'a *_TOKEN name policy.keyEnv lists by full name',
      row({ 'X-Key': { env: 'ACME_TOKEN' } }),
      ['ACME_TOKEN'],
      { probeHeaders: { 'X-Key': { env: 'ACME_TOKEN' } } },
    ],
  ];
  for (const [what, target, keyEnv, expected] of rows)
    it(what, () => assert.deepEqual(jobKeys(target, keyEnv), expected));
});
