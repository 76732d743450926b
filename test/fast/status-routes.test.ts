/** The status documents' one route table: what `serve` matches, what `site` names, table-driven. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { matchRoute, servedPath, sitePath, STATUS_ROUTES, type StatusRouteName } from '../../src/status/routes.js';

describe('status routes', () => {
  const requests: Array<[string, ReturnType<typeof matchRoute>]> = [
    ['/', { name: 'overview' }],
    ['/index.html', { name: 'overview' }],
    ['/api/servers', { name: 'servers' }],
    ['/api/refreshes/latest', { name: 'latestRefresh' }],
    // The list's badge is not the badge of a server named "list".
    ['/badge/list.svg', { name: 'listBadge' }],
    ['/badge/exa.svg', { name: 'serverBadge', id: 'exa' }],
    ['/badge/a%20b.svg', { name: 'serverBadge', id: 'a%20b' }],
    ['/servers/exa', { name: 'serverPage', id: 'exa' }],
    ['/api/servers/exa/history', { name: 'history', id: 'exa' }],
    ['/servers/exa/', null],
    ['/servers/', null],
    ['/servers', null],
    ['/api/servers/exa', null],
    ['/badge/a/b.svg', null],
    ['/badgeXlist.svg', null],
    ['/index.htm', null],
    ['/.well-known/ai-catalog.json', null],
  ];
  for (const [path, expected] of requests)
    it(`GET ${path} is ${expected ? expected.name : 'no status route'}`, () => {
      assert.deepEqual(matchRoute(path), expected);
    });

  it('every served path matches back to its route, the id percent-encoded', () => {
    for (const name of Object.keys(STATUS_ROUTES) as StatusRouteName[]) {
      const route = matchRoute(servedPath(name, 'a b/c'));
      assert.equal(route?.name, name, name);
      if (STATUS_ROUTES[name].served.includes('{id}')) assert.equal(route?.id, 'a%20b%2Fc');
    }
  });

  it("the site's files", () => {
    assert.equal(sitePath('overview'), 'index.html');
    assert.equal(sitePath('servers'), 'api/servers.json');
    assert.equal(sitePath('serverPage', { id: 'exa' }), 'servers/exa.html');
    assert.equal(sitePath('history', { id: 'exa', days: 30 }), 'api/servers/exa/history-30.json');
    assert.equal(sitePath('serverBadge', { id: 'exa' }), 'badge/exa.svg');
  });
});
