/**
 * The census's hosts (pure): one host whatever the registry's spelling (case, a trailing dot, IPv4-mapped IPv6, a
 * default port written out), the opt-out list read the same way, and the outage guard counting hosts, not remotes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalAddress, hostKey, optedOut, OutageGuard, OUTAGE_HOSTS, parseOptOut } from '../../src/census/hosts.js';
import { detectOutage } from '../../src/decide/decide.js';
import type { Reason } from '../../src/model/words.js';

describe('hostKey: one host, however it is spelled', () => {
  const rows: Array<[string, string]> = [
    ['https://Example.COM/mcp', 'example.com:443'],
    ['https://example.com./mcp', 'example.com:443'],
    ['https://example.com.:443/mcp', 'example.com:443'],
    ['http://example.com:443/mcp', 'example.com:443'],
    ['http://example.com/mcp', 'example.com:80'],
    ['https://example.com:8443/mcp', 'example.com:8443'],
    ['http://127.0.0.1:8080/', '127.0.0.1:8080'],
    ['http://127.0.0.1.:8080/', '127.0.0.1:8080'],
    ['http://[::ffff:7f00:1]:8080/', '127.0.0.1:8080'],
    ['http://[::ffff:127.0.0.1]:8080/', '127.0.0.1:8080'],
    ['http://[::FFFF:7F00:1]:8080/', '127.0.0.1:8080'],
    ['http://0x7f.1:8080/', '127.0.0.1:8080'],
    ['https://[2001:DB8:0:0::1]/', '[2001:db8::1]:443'],
    ['https://bücher.example/', 'xn--bcher-kva.example:443'],
  ];
  for (const [url, key] of rows) it(`${url} → ${key}`, () => assert.equal(hostKey(new URL(url)).key, key));

  it('canonicalAddress: IPv4 as a dotted quad, IPv6 compressed, a name is not an address', () => {
    assert.deepEqual(
      ['::ffff:1.2.3.4', '::ffff:102:304', '[::1]', '2001:DB8::0:1', '10.0.0.1', 'example.com', '::ffff:0:7f00:1'].map(
        canonicalAddress,
      ),
      ['1.2.3.4', '1.2.3.4', '::1', '2001:db8::1', '10.0.0.1', null, '::ffff:0:7f00:1'],
    );
  });
});

describe('--opt-out: by normalised host, never by spelling', () => {
  const list = parseOptOut(
    '# owners who asked\nOpted.Example.\n127.0.0.1:8080  # one port\n[::1]:9000\n2001:db8::7\n\n',
  );
  const rows: Array<[string, boolean]> = [
    ['https://opted.example/mcp', true],
    ['https://OPTED.example./mcp', true],
    ['https://opted.example:8443/mcp', true],
    ['http://127.0.0.1:8080/mcp', true],
    ['http://[::ffff:7f00:1]:8080/mcp', true],
    ['http://[::ffff:127.0.0.1]:8080/mcp', true],
    ['http://127.0.0.1.:8080/mcp', true],
    ['http://127.0.0.1:8081/mcp', false],
    ['http://[::1]:9000/', true],
    ['http://[0:0::1]:9000/', true],
    ['https://[2001:db8:0::7]/', true],
    ['https://other.example/mcp', false],
    ['https://sub.opted.example/mcp', false],
  ];
  for (const [url, want] of rows)
    it(`${url}: ${want ? 'opted out' : 'probed'}`, () => assert.equal(optedOut(list, hostKey(new URL(url))), want));

  for (const bad of ['a b', 'host:99999', 'host:', 'http://x/', '[nope]:1', 'a:b:c']) {
    it(`a line that is not a host is refused, naming it: ${JSON.stringify(bad)}`, () =>
      assert.throws(() => parseOptOut(`ok.example\n${bad}\n`), /^Error: line 2 is not a host/));
  }
});

describe('the outage guard counts hosts, not remotes', () => {
  const guard = (results: Array<[string, string]>) => {
    const g = new OutageGuard();
    for (const [url, reason] of results) g.add(url, reason);
    return g.outage();
  };
  const hosts = (n: number, reason: (i: number) => string) =>
    Array.from({ length: n }, (_, i): [string, string] => [`https://h${i}.example/mcp`, reason(i)]);

  it('one publisher with 2 refused remotes out of 4 (on one host) does not stop a census', () => {
    const one = ['a', 'b', 'c', 'd'].map((p, i): [string, string] => [
      `https://pub.example/${p}`,
      i < 2 ? 'refused' : 'ok',
    ]);
    assert.equal(guard([...one, ...hosts(25, () => 'ok')]), null);
    assert.equal(guard(one), null);
  });
  it(`fewer than ${OUTAGE_HOSTS} hosts probed: never an outage, all of them failing`, () =>
    assert.equal(guard(hosts(OUTAGE_HOSTS - 1, () => 'refused')), null));
  it(`${OUTAGE_HOSTS} hosts, half failing at the network level: an outage`, () =>
    assert.match(
      guard(hosts(OUTAGE_HOSTS, (i) => (i % 2 ? 'timeout' : 'ok')))!,
      /^10 of 20 hosts failed at the network level/,
    ));
  it(`${OUTAGE_HOSTS} hosts, one short of half failing: no outage`, () =>
    assert.equal(guard(hosts(OUTAGE_HOSTS, (i) => (i < 9 ? 'dns' : 'ok'))), null));
  it('a host with one answer among its failures is not failed', () => {
    const mixed = hosts(OUTAGE_HOSTS, () => 'refused');
    mixed.push(
      ...Array.from({ length: OUTAGE_HOSTS }, (_, i): [string, string] => [`https://h${i}.example/other`, 'http-404']),
    );
    assert.equal(guard(mixed), null);
  });
  it('spellings of one host count once', () => {
    const spelled = hosts(OUTAGE_HOSTS - 1, () => 'ok');
    spelled.push(['https://H0.example./x', 'refused']);
    assert.equal(guard(spelled), null, '19 hosts: too few, whatever the 20th spelling says');
  });
  it("failures that are answers (an HTTP status) are not the network's", () =>
    assert.equal(guard(hosts(30, () => 'http-404')), null));
  // The census's guard is the run's (detectOutage without canaries) counted by host, once 20 hosts were probed.
  const same: Array<[hosts: number, failing: number, reason: Reason]> = [
    [20, 10, 'dns'],
    [20, 9, 'refused'],
    [21, 11, 'timeout'],
    [21, 10, 'network'],
    [40, 20, 'tls'],
    [40, 19, 'dns'],
    [20, 20, 'refused'],
    [30, 15, 'http-404'],
  ];
  for (const [n, failing, reason] of same) {
    it(`${failing} of ${n} hosts ${reason}: the census stops exactly when a run of ${n} entries would`, () => {
      const census = guard(hosts(n, (i) => (i < failing ? reason : 'ok')));
      const run = detectOutage(
        hosts(n, (i) => (i < failing ? reason : 'ok')).map(([, r]) => ({ reason: r as Reason })),
        { configured: 0, reachable: 0 },
      );
      assert.equal(census !== null, run !== null);
    });
  }
});
