/**
 * The Action's probe keys (issue 32): the refresh step gets the job's environment only by the names the catalog's
 * probeHeaders use (and the key rule permits), so no other secret of the workflow, no CI token and no store URL can
 * reach a catalog row's server. The refresh step runs as the composite step runs it (action/run.sh), against a
 * loopback server that records every header it is sent, with a real PostgreSQL store (input store-url, which the
 * action exports as ONETAP_STORE_URL).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initResult, json, startFleet, type Ctx, type Fleet } from './fleet/fleet.js';
import { BIN, catalogOf, server } from './helpers.js';
import { git, runAction } from './action-run.js';
import { freshSchema, postgresMissing } from './postgres.js';

const received: string[] = [];
function recording(c: Ctx): void {
  for (const [name, value] of Object.entries(c.req.headers)) received.push(`${name}: ${String(value)}`);
  if (!c.msg || c.msg.id === undefined) {
    c.res.writeHead(202);
    c.res.end();
    return;
  }
  json(c.res, 200, {
    jsonrpc: '2.0',
    id: c.msg.id,
    result:
      c.msg.method === 'initialize'
        ? initResult('recording')
        : { tools: [{ name: 'lookup', inputSchema: { type: 'object' } }] },
  });
}

/** What a refresh process may see besides the catalog's keys (action/run.sh's base environment). */
const BASE = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'LANG',
  'LC_ALL',
  'TZ',
  'NO_COLOR',
  'TERM',
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'ONETAP_TEST_FAULT',
  'ONETAP_STORE_URL',
]);

let fleet: Fleet;
let tmp: string;
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'onetap-action-keys-'));
  fleet = await startFleet({ recording });
});
after(async () => {
  await fleet.close();
});

describe("the action hands probe keys to the refresh by the catalog's names only", () => {
  it('no other variable of the job reaches the refresh; the store URL a row names is never sent', {
    timeout: 60_000,
  }, async (t) => {
    const missing = await postgresMissing();
    if (missing) return t.skip(missing);
    const store = await freshSchema('action_keys');
    const storeUrl = store.url.replace('://postgres@', '://postgres:act10n-Store-Pa55@');
    try {
      // The list's repository: one auth-optional row naming an allowed key and the store's variable.
      const catalog = catalogOf(
        [
          server('Rec', fleet.url('recording'), {
            requiresAuth: true,
            probeHeaders: {
              'X-Key': { env: 'ALLOWED_KEY', prefix: 'Key ' },
              Authorization: { env: 'ONETAP_STORE_URL', prefix: 'Bearer ' },
            },
          }),
        ],
        { policy: { authOptionalHosts: ['127.0.0.1'], sharedGatewayHosts: [] } },
      );
      const remote = join(tmp, 'remote.git');
      git(tmp, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
      const clone = join(tmp, 'clone');
      git(tmp, 'clone', '--quiet', remote, clone);
      await mkdir(join(clone, 'catalog'));
      await writeFile(join(clone, 'catalog', 'servers.json'), JSON.stringify(catalog, null, 2) + '\n');
      git(clone, 'add', '.');
      git(clone, 'commit', '--quiet', '-m', 'the list');
      git(clone, 'push', '--quiet', 'origin', 'main');

      // onetap as the action path holds it, behind a wrapper that records each command's environment (names only).
      const actionPath = join(tmp, 'action-path');
      const log = join(tmp, 'env.jsonl');
      await mkdir(join(actionPath, 'bin'), { recursive: true });
      await writeFile(
        join(actionPath, 'bin', 'onetap'),
        [
          `require('node:fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify({ command: process.argv[2], env: Object.keys(process.env) }) + '\\n');`,
          `const r = require('node:child_process').spawnSync(process.execPath, [${JSON.stringify(BIN)}, ...process.argv.slice(2)], { stdio: 'inherit' });`,
          'process.exit(r.status ?? 1);',
        ].join('\n'),
      );

      const job = {
        ALLOWED_KEY: 'allowed-K3y-0123456789abc',
        OTHER_SECRET: 'other-S3cret-0123456789',
        GITHUB_TOKEN: 'ghs_J0bToken0123456789',
        ACTIONS_RUNTIME_TOKEN: 'rt-0123456789abcdef',
      };
      received.length = 0;
      const r = await runAction(
        tmp,
        'run.sh',
        clone,
        { write: 'false', 'allow-http': 'true', 'store-url': storeUrl },
        { ...job, GITHUB_ACTION_PATH: actionPath },
      );
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      assert.equal(r.outputs.total, '1');

      const refresh = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { command: string; env: string[] })
        .find((c) => c.command === 'refresh')!;
      assert.deepEqual(
        refresh.env.filter((name) => !BASE.has(name)),
        ['ALLOWED_KEY'],
        "the refresh sees the catalog's key and the base environment only",
      );
      assert.ok(refresh.env.includes('ONETAP_STORE_URL'), 'and the store it records to');
      assert.ok(received.includes(`x-key: Key ${job.ALLOWED_KEY}`), 'the allowed key was sent');
      for (const secret of [
        storeUrl,
        'act10n-Store-Pa55',
        job.OTHER_SECRET,
        job.GITHUB_TOKEN,
        job.ACTIONS_RUNTIME_TOKEN,
      ]) {
        assert.ok(!received.some((h) => h.includes(secret)), `${secret} reached the server`);
      }
      assert.match(r.stdout, new RegExp(`^::add-mask::${job.ALLOWED_KEY}$`, 'm'), 'the key is masked in the log');
    } finally {
      await store.drop();
    }
  });
});
