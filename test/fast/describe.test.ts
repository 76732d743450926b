/**
 * The one-line summary of an observation every surface shows: its outcome, its error, what the app itself would say
 * only when that adds something, where it redirects and how it asks for auth. The surfaces word it as before.
 */
import { describe as suite, it } from 'node:test';
import assert from 'node:assert/strict';
import { APP_SAYS, APP_WOULD_SAY, describe, type Describable, type Description } from '../../src/model/describe.js';
import { renderProbeTable } from '../../src/cli/probe.js';
import type { Observation } from '../../src/model/observation.js';
import { observation } from '../helpers.js';

const seen = (o: Partial<Describable>): Describable => ({
  verdict: 'review',
  reason: 'app-sse-format',
  error: null,
  appError: null,
  ...o,
});
const none: Description = { outcome: 'review/app-sse-format', error: null, appSays: null, location: null, auth: null };

suite('describe(observation)', () => {
  const rows: Array<[what: string, o: Describable, d: Description]> = [
    ['nothing went wrong', seen({ verdict: 'live', reason: 'ok' }), { ...none, outcome: 'live/ok' }],
    ['an error alone', seen({ error: 'HTTP 500' }), { ...none, error: 'HTTP 500' }],
    [
      'the app says something else',
      seen({ error: 'HTTP 500', appError: 'Unexpected JSON token' }),
      { ...none, error: 'HTTP 500', appSays: 'Unexpected JSON token' },
    ],
    [
      'the app says the same: said once',
      seen({ error: 'Connection refused', appError: 'Connection refused' }),
      { ...none, error: 'Connection refused' },
    ],
    [
      'the app says something, no error',
      seen({ appError: 'connected, but the app lists 0 tools' }),
      { ...none, appSays: 'connected, but the app lists 0 tools' },
    ],
    ['an empty app error says nothing', seen({ appError: '' }), none],
    [
      'a redirect',
      seen({ verdict: 'review', reason: 'redirected', location: 'https://elsewhere.example/mcp' }),
      { ...none, outcome: 'review/redirected', location: 'https://elsewhere.example/mcp' },
    ],
    [
      'auth asked for',
      seen({ verdict: 'drop', reason: 'auth-required', auth: 'oauth' }),
      { ...none, outcome: 'drop/auth-required', auth: 'oauth' },
    ],
    ["nothing observed yet (a server's status)", seen({ verdict: null, reason: null }), { ...none, outcome: null }],
  ];
  for (const [what, o, d] of rows) it(what, () => assert.deepEqual(describe(o), d));
  it("the words before the app's own error", () =>
    assert.deepEqual([APP_WOULD_SAY, APP_SAYS], ['the app would say', 'the app says']));
});

suite("probe's table reads it", () => {
  const url = 'https://a.example/mcp';
  const rows: Array<[what: string, o: Partial<Observation>, notes: string[]]> = [
    ['the app says the same: one line', { error: 'refused', appError: 'refused' }, [`  ${url}: refused`]],
    [
      'the app says more: two lines',
      { error: 'HTTP 500', appError: 'bad token' },
      [`  ${url}: HTTP 500`, `  ${url}: the app would say: bad token`],
    ],
    [
      'a redirect and auth',
      { location: 'https://b.example/', auth: 'oauth' },
      [`  ${url}: redirects to https://b.example/`, `  ${url}: auth: oauth`],
    ],
  ];
  for (const [what, o, notes] of rows) {
    it(what, () => {
      const text = renderProbeTable(
        [{ ...observation({ url, verdict: 'review', reason: 'handshake-error', ...o }), snapshot: null }],
        false,
      );
      assert.deepEqual(
        text.split('\n').filter((l) => l.startsWith('  ')),
        notes,
      );
    });
  }
});
