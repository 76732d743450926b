/**
 * `onetap census` against a loopback registry (test/fleet/registry.ts): 2,000 remotes over 200 hosts with cursor
 * paging and a realistic mix. Every remote is recorded once, also when the census is killed (SIGKILL) at a seeded
 * point and resumed, with at most --concurrency remotes probed twice; no host ever sees two requests at once; the
 * SSE-only, templated and older-version remotes are never contacted; the records validate against the registry's
 * schema and carry the golden token counts; an unreadable registry is exit 1, a bad flag exit 2.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runCli } from './helpers.js';
import { kindOf, startRegistry, TOKENS, type RegistryFixture } from './fleet/registry.js';
import { validateRegistryServer } from '../src/discover/card.js';
import { evidenceDigest } from '../src/census/records.js';

const REMOTES = 2_000;
const HOSTS = 200;
const CONCURRENCY = 16;

describe('onetap census', () => {
  let reg: RegistryFixture;
  let dir = '';
  before(async () => {
    reg = await startRegistry(REMOTES, HOSTS);
    dir = await mkdtemp(join(tmpdir(), 'onetap-census-'));
  });
  after(() => reg.close());

  const args = (out: string, ...extra: string[]) => ['census', '--registry', reg.url, '--publisher', 'io.example', '--out', out, '--allow-private', '--allow-http', '--timeout', '3000', '--concurrency', String(CONCURRENCY), ...extra];

  it('killed at a seeded point and resumed: every remote recorded once, politely, and published as records that validate', { timeout: 180_000 }, async () => {
    const out = join(dir, 'census.json');
    const state = `${out}.state`;
    // Killed once 700 remotes are done (a seeded point: the same every run).
    const child = spawn(process.execPath, [BIN, ...args(out)], { stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const lines = existsSync(join(state, 'done.jsonl')) ? readFileSync(join(state, 'done.jsonl'), 'utf8').split('\n').length - 1 : 0;
      if (lines >= 700) break;
    }
    child.kill('SIGKILL');
    await exited;
    const startedBefore = new Map(reg.initializes);
    assert.ok(!existsSync(out), 'nothing published by the killed run');

    const resumed = await runCli(args(out, '--resume'), { killAfterMs: 170_000 });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /census: 2000 servers, 2000 remotes: \d+ probed \(\d+ in this run\)/);

    // Politeness: one request at a time per host; never a remote the census must not contact.
    assert.equal(reg.mostInFlight(), 1, 'never two requests in flight on one host');
    assert.equal(reg.forbidden(), 0, 'SSE-only, templated and older-version remotes are never contacted');
    const probedAgain = [...startedBefore].filter(([i, n]) => (reg.initializes.get(i) ?? 0) > n);
    assert.ok(probedAgain.length <= CONCURRENCY, `at most --concurrency remotes probed again after the kill: ${probedAgain.length}`);

    // Recorded once each: done.jsonl holds every probed URL once (a line cut by the kill aside).
    const done = (await readFile(join(state, 'done.jsonl'), 'utf8')).split('\n').flatMap((l) => { try { return [JSON.parse(l).url as string]; } catch { return []; } });
    const probeable = Array.from({ length: REMOTES }, (_, i) => i).filter((i) => kindOf(i) !== 'sse' && kindOf(i) !== 'templated').map(reg.remoteUrl);
    assert.deepEqual([...new Set(done)].sort(), [...probeable].sort());
    assert.ok(done.length - new Set(done).size <= CONCURRENCY, 'a URL is recorded again only if it was in flight at the kill');

    // The records: one list document, no cursor, each server valid against the registry's schema.
    const doc = JSON.parse(await readFile(out, 'utf8')) as { servers: Array<{ server: { name: string; version: string }; _meta: Record<string, any> }>; metadata: Record<string, unknown> };
    assert.deepEqual(Object.keys(doc.metadata), ['count']);
    assert.equal(doc.servers.length, REMOTES);
    assert.equal(doc.metadata.count, REMOTES);
    for (const item of doc.servers) {
      assert.ok(validateRegistryServer(item.server).valid, item.server.name);
      assert.equal(item.server.version, '1.1.0', 'the latest version only');
      assert.equal(item._meta['io.modelcontextprotocol.registry/official'].isLatest, true);
    }
    const record = (i: number) => doc.servers[i]!._meta['io.example/verification'];
    const v = record(0);
    assert.deepEqual(Object.keys(v), ['verifier', 'verifiedAt', 'expiresAt', 'method', 'remotes']);
    assert.equal(Date.parse(v.expiresAt) - Date.parse(v.verifiedAt), 14 * 86_400_000);
    assert.equal(v.method.signed, false);
    for (let i = 0; i < 40; i++) {
      const r = record(i).remotes[0];
      const kind = kindOf(i);
      if (TOKENS[kind] !== undefined) assert.equal(r.tokens, TOKENS[kind], `${i} (${kind}): golden tokens`);
      if (kind === 'sse' || kind === 'templated') assert.deepEqual([r.verdict, r.evidence, r.checks.reachable], ['not probed', null, 'not run']);
      if (kind === 'small') assert.deepEqual(r.checks, { reachable: 'passed', mcp: 'passed', tools: 'passed', auth: 'passed', 'one-tap': 'passed' });
      if (kind === 'auth') assert.deepEqual([r.checks.reachable, r.checks.auth, r.checks['one-tap']], ['passed', 'failed', 'failed']);
      if (kind === 'missing') assert.deepEqual([r.verdict, r.checks.mcp], ['drop', 'failed']);
      if (kind === 'keyed') assert.equal(r.verdict, 'live', 'a remote declaring a required header is probed as auth-optional: the keyless handshake decides');
      if (r.evidence) {
        const json = await readFile(join(dir, 'evidence', `${r.evidence}.json`), 'utf8');
        assert.equal(evidenceDigest(json), r.evidence, 'the evidence file is what its digest names');
      }
    }
    // The same tool set under other hosts, renamed copies included.
    const renamed = record([...Array(40).keys()].find((i) => kindOf(i) === 'renamed')!).remotes[0];
    assert.ok(renamed.sameToolsAs.some((s: { digest: string }) => s.digest === 'name-blind'), JSON.stringify(renamed.sameToolsAs).slice(0, 300));
    assert.ok(record(0).remotes[0].sameToolsAs.some((s: { digest: string }) => s.digest === 'tools'));
  });

  it('an unreadable registry is exit 1 and nothing is written; a bad flag is exit 2 before any work', async () => {
    const out = join(dir, 'none.json');
    const r = await runCli(['census', '--registry', 'http://127.0.0.1:9/', '--publisher', 'io.example', '--out', out, '--allow-private', '--allow-http']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^onetap: the registry could not be read/m);
    assert.ok(!existsSync(out));
    const bad = await runCli(['census', '--registry', reg.url, '--publisher', 'not a domain', '--out', out]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^onetap: --publisher: must be a reverse-domain name/m);
    const noState = await runCli(['census', '--registry', reg.url, '--publisher', 'io.example', '--out', join(dir, 'other.json'), '--resume']);
    assert.equal(noState.code, 2);
    assert.match(noState.stderr, /^onetap: --resume: no census in /m);
  });
});
