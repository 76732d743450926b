/**
 * The status page and API stay bounded at 2,000 servers, whatever the servers send: every server lists 100 tool names
 * of 300 characters today; the first ten failed with a 5,000-character error on 29 of 30 days, and the app's own error
 * is as long (the others failed with a short one: a 750 MB history would test the disk). The bytes of `/` and
 * `/api/servers` (served by `statusRoutes` over a real store) stay under the bounds below; what is clipped says so
 * ("and N more", the count seen).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendRuns } from '../src/store/text-store.js';
import { historyDir } from '../src/store/lines.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { statusRoutes } from '../src/serve/status-routes.js';
import { catalogOf, recordedRow, recordedRun, server, workspace } from './helpers.js';

const SERVERS = 2_000;
const TOOLS = 100;
const DAYS = 30;
const DAY = 86_400_000;
const NOW = new Date('2026-11-30T12:00:00Z');
/** The bounds this test holds the answers to: 3 KB per overview row, 8 KB per API entry (plan row included). */
const OVERVIEW_MAX_BYTES = 6 * 1024 * 1024;
const API_MAX_BYTES = 16 * 1024 * 1024;

const long = (prefix: string, n: number) => (prefix + 'x'.repeat(n)).slice(0, n);
/** Names a server chose: long, and with markup to escape. */
const toolsOf = (i: number) => Array.from({ length: TOOLS }, (_, t) => long(`s${i}_tool_${t}_<b>"&'`, 300));

let site: RunningServer;
let ws: Awaited<ReturnType<typeof workspace>>;

before(async () => {
  ws = await workspace(
    catalogOf(Array.from({ length: SERVERS }, (_, i) => server(`Server ${i}`, `https://s${i}.example.com/mcp`))),
  );
  const runs = [];
  for (let d = DAYS - 1; d >= 0; d--) {
    const at = new Date(NOW.getTime() - d * DAY).toISOString();
    const live = d === 0;
    // The last run is the one shown: every row live with 100 long tools.
    runs.push(
      recordedRun(
        at,
        Array.from({ length: SERVERS }, (_, i) =>
          recordedRow(`Server ${i}`, {
            url: `https://s${i}.example.com/mcp`,
            verdict: live ? 'live' : 'failed',
            reason: live ? 'ok' : 'retryable-5xx',
            attempts: 2,
            httpStatus: live ? 200 : 503,
            durationMs: 10,
            tools: live ? toolsOf(i) : null,
            error: live ? null : long('E<b>', i < 10 ? 5_000 : 50),
            appError: live ? null : long('App says <i>', i < 10 ? 5_000 : 50),
            location: live ? null : long('https://elsewhere.example/', i < 10 ? 3_000 : 50),
          }),
        ),
      ),
    );
  }
  await appendRuns(historyDir(ws.catalogPath), runs);
  site = await startServer({
    catalogPath: ws.catalogPath,
    port: 0,
    routes: statusRoutes({ catalogPath: ws.catalogPath, now: () => NOW }),
  });
});
after(async () => {
  await site?.close();
});

describe('status at 2,000 servers with hostile sizes', () => {
  it(`GET / stays under ${OVERVIEW_MAX_BYTES} bytes and says what it clipped`, async (t) => {
    const body = await (await fetch(site.url + '/')).text();
    const bytes = Buffer.byteLength(body);
    t.diagnostic(`GET / = ${bytes} bytes (${(bytes / SERVERS).toFixed(0)} per server)`);
    assert.ok(bytes < OVERVIEW_MAX_BYTES, `${bytes} bytes`);
    assert.equal([...body.matchAll(/<article class="server"/g)].length, SERVERS, 'every server has its row');
    assert.match(body, /and 9\d more/);
    assert.ok(!body.includes('<b>'), 'tool names and errors are escaped');
  });

  it(`GET /api/servers stays under ${API_MAX_BYTES} bytes, with the count of tools seen`, async (t) => {
    const text = await (await fetch(site.url + '/api/servers')).text();
    const bytes = Buffer.byteLength(text);
    t.diagnostic(`GET /api/servers = ${bytes} bytes (${(bytes / SERVERS).toFixed(0)} per server)`);
    assert.ok(bytes < API_MAX_BYTES, `${bytes} bytes`);
    const body = JSON.parse(text) as { servers: Array<{ tools: string[]; toolCount: number; error: string | null }> };
    assert.equal(body.servers.length, SERVERS);
    assert.equal(body.servers[0]!.toolCount, TOOLS);
    assert.ok(body.servers[0]!.tools.length < TOOLS);
  });

  it('a server page is bounded too', async (t) => {
    const body = await (await fetch(site.url + '/servers/server-7')).text();
    t.diagnostic(`GET /servers/server-7 = ${Buffer.byteLength(body)} bytes`);
    assert.ok(Buffer.byteLength(body) < 400 * 1024);
  });
});
