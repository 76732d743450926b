/**
 * The address rule (src/net/address.ts) as a specification, fast (no network: every resolver is injected; no files):
 * which addresses a supplied URL may reach (`isForbiddenAddress`), which URLs are refused before any connection
 * (`checkUrl`), and that every answer of a name is checked (`guardedLookup`, `assertPublicTarget`).
 *
 * Where the expectations come from (not from address.ts's logic):
 * - the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190 and the later registrations):
 *   a block whose "Globally Reachable" is False is refused, at its first and its last address, and the address
 *   just outside it is not (when that neighbour is itself globally reachable); entries marked True inside a
 *   False block (192.31.196.0/24 AS112, 192.52.193.0/24 AMT, 2001:1::1 and 2001:1::2 anycast, 2001:3::/32 AMT,
 *   2001:4:112::/48 AS112, 2001:30::/28 drone remote ID, 2620:4f:8000::/48) are public;
 * - the IPv6 Address Space registry (RFC 4291): only 2000::/3 is global unicast, so IPv6 is an allow-list;
 *   3fff::/20 (documentation, RFC 9637) and 5f00::/16 (SRv6 SIDs, RFC 9602) are newer False entries;
 * - RFC 6761: `localhost` and names under `.localhost` are loopback; the WHATWG URL Standard: the host forms a URL
 *   can hand over (decimal, hex, octal, short, percent-encoded and full-width IPv4, bracketed IPv6).
 * Choices the registries leave open, tested as address.ts's header (and the brief) states them:
 * - IPv4-mapped ::ffff:0:0/96 (registry: False) and NAT64 64:ff9b::/96 (registry: True) are judged by the IPv4
 *   address they carry: ::ffff:8.8.8.8 is public, 64:ff9b::7f00:1 is loopback;
 * - 6to4 2002::/16 and Teredo 2001::/32 (registry: N/A) are refused whole, whatever IPv4 address they embed;
 *   so is 192.88.99.0/24 (6to4 relay anycast: True in RFC 6890, deprecated with 6to4 by RFC 7526);
 * - IPv4-compatible ::a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d lie outside 2000::/3 and are refused outright,
 *   even when the IPv4 address they carry is public;
 * - multicast 224.0.0.0/4 (IPv4 multicast registry) is refused; a zone id (fe80::1%eth0) never makes a refused
 *   address acceptable.
 * - 2001::/23 is False as a whole, with the True entries above (and 2001:1::3, RFC 9665, and 2001:20::/28 ORCHIDv2)
 *   allowed; 192.0.0.0/24 is False but for 192.0.0.9 (PCP anycast) and 192.0.0.10 (TURN anycast).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertPublicTarget,
  checkUrl,
  FetchRefused,
  guardedLookup,
  isForbiddenAddress,
  type AddressPolicy,
  type Lookup,
  type RefusalCode,
  type Resolver,
} from '../../src/net/address.js';

/** Rows whose verdict differs from the expected one, so a failure names every wrong address at once. */
function wrong(addresses: readonly string[], forbidden: boolean): string[] {
  return addresses.filter((a) => isForbiddenAddress(a) !== forbidden);
}

/** [registry entry, first address, last address, addresses just outside it that are globally reachable] */
type Block = readonly [name: string, first: string, last: string, outside: readonly string[]];

const V4_BLOCKS: readonly Block[] = [
  ['0.0.0.0/8 this network', '0.0.0.0', '0.255.255.255', ['1.0.0.0']],
  ['10.0.0.0/8 private-use', '10.0.0.0', '10.255.255.255', ['9.255.255.255', '11.0.0.0']],
  ['100.64.0.0/10 shared address space', '100.64.0.0', '100.127.255.255', ['100.63.255.255', '100.128.0.0']],
  ['127.0.0.0/8 loopback', '127.0.0.0', '127.255.255.255', ['126.255.255.255', '128.0.0.0']],
  ['169.254.0.0/16 link local', '169.254.0.0', '169.254.255.255', ['169.253.255.255', '169.255.0.0']],
  ['172.16.0.0/12 private-use', '172.16.0.0', '172.31.255.255', ['172.15.255.255', '172.32.0.0']],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.0', '192.0.0.255', ['191.255.255.255', '192.0.1.0']],
  ['192.0.2.0/24 TEST-NET-1', '192.0.2.0', '192.0.2.255', ['192.0.1.255', '192.0.3.0']],
  ['192.88.99.0/24 6to4 relay anycast (deprecated)', '192.88.99.0', '192.88.99.255', ['192.88.98.255', '192.88.100.0']],
  ['192.168.0.0/16 private-use', '192.168.0.0', '192.168.255.255', ['192.167.255.255', '192.169.0.0']],
  ['198.18.0.0/15 benchmarking', '198.18.0.0', '198.19.255.255', ['198.17.255.255', '198.20.0.0']],
  ['198.51.100.0/24 TEST-NET-2', '198.51.100.0', '198.51.100.255', ['198.51.99.255', '198.51.101.0']],
  ['203.0.113.0/24 TEST-NET-3', '203.0.113.0', '203.0.113.255', ['203.0.112.255', '203.0.114.0']],
  ['224.0.0.0/4 multicast', '224.0.0.0', '239.255.255.255', ['223.255.255.255']],
  ['240.0.0.0/4 reserved', '240.0.0.0', '255.255.255.254', []],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255', '255.255.255.255', []],
];

/** Refused blocks inside 2000::/3 (the rest of the refusals are everything outside 2000::/3). */
const V6_UNICAST_BLOCKS: readonly Block[] = [
  [
    '2001::/32 Teredo (N/A: refused whole)',
    '2001::',
    '2001:0:ffff:ffff:ffff:ffff:ffff:ffff',
    ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:1::1'],
  ],
  ['2001:2::/48 benchmarking', '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff', ['2001:1::2', '2001:3::']],
  [
    '2001:10::/28 ORCHID (deprecated)',
    '2001:10::',
    '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff',
    ['2001:20::', '2001:30::'],
  ],
  [
    '2001::/23 IETF protocol assignments',
    '2001::',
    '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff',
    ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::'],
  ],
  [
    '2001:db8::/32 documentation',
    '2001:db8::',
    '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff',
    ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::'],
  ],
  [
    '2002::/16 6to4 (N/A: refused whole)',
    '2002::',
    '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    ['2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2003::'],
  ],
  [
    '3fff::/20 documentation',
    '3fff::',
    '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff',
    ['3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff:1000::'],
  ],
];

/** Registry entries and reserved space outside 2000::/3, at their first and last addresses. */
const V6_OUTSIDE_GLOBAL_UNICAST: readonly (readonly [string, readonly string[]])[] = [
  ['::/128 unspecified', ['::']],
  ['::1/128 loopback', ['::1']],
  [
    '64:ff9b:1::/48 local-use IPv4/IPv6 translation',
    ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::808:808'],
  ],
  ['100::/64 discard-only', ['100::', '100::ffff:ffff:ffff:ffff']],
  ['100:0:0:1::/64 dummy prefix', ['100:0:0:1::', '100::1:ffff:ffff:ffff:ffff']],
  ['5f00::/16 SRv6 SIDs', ['5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fc00::/7 unique-local', ['fc00::', 'fd00::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fe80::/10 link-local unicast', ['fe80::', 'fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['fec0::/10 site-local (deprecated)', ['fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['ff00::/8 multicast', ['ff00::', 'ff02::1', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['just below 2000::/3', ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['just above 2000::/3', ['4000::']],
];

const PUBLIC_V4 = [
  '8.8.8.8',
  '1.1.1.1',
  '9.9.9.9',
  '93.184.215.14',
  '223.255.255.255',
  // inside the registry but "Globally Reachable: True"
  '192.31.196.1',
  '192.52.193.1',
  '192.175.48.1',
  '192.0.0.9',
  '192.0.0.10',
];
const PUBLIC_V6 = [
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2620:fe::fe',
  '2a00:1450:4001:81c::200e',
  '2000::',
  '2000::1',
  '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  // just outside 2001::/23 (2001:200::/23 is an ordinary allocation)
  '2001:200::1',
  // inside 2001::/23 but "Globally Reachable: True"
  '2001:1::1',
  '2001:1::2',
  '2001:1::3',
  '2001:20::',
  '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:3::',
  '2001:3:ffff:ffff:ffff:ffff:ffff:ffff',
  '2001:4:112::',
  '2001:4:112:ffff:ffff:ffff:ffff:ffff',
  '2001:30::',
  '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff',
  '2620:4f:8000::',
  '2620:4f:8000:ffff:ffff:ffff:ffff:ffff',
];

describe('isForbiddenAddress: the IPv4 special-purpose registry', () => {
  for (const [name, first, last, outside] of V4_BLOCKS) {
    it(`${name}: first and last refused, just outside allowed`, () => {
      assert.deepEqual(wrong([first, last], true), [], `${name}: should be refused`);
      assert.deepEqual(wrong(outside, false), [], `${name}: just outside should be allowed`);
    });
  }
  it('ordinary addresses inside the blocks are refused (cloud metadata, router, CGNAT, DS-Lite, NAT64 discovery)', () => {
    assert.deepEqual(
      wrong(
        [
          '169.254.169.254',
          '127.0.0.1',
          '10.1.2.3',
          '172.20.0.1',
          '192.168.1.1',
          '100.100.100.200',
          '192.0.0.1',
          '192.0.0.8',
          '192.0.0.170',
          '192.0.0.171',
          '224.0.0.251',
          '0.0.0.1',
        ],
        true,
      ),
      [],
    );
  });
  it('public IPv4 addresses are allowed', () => {
    assert.deepEqual(wrong(PUBLIC_V4, false), []);
  });
});

describe('isForbiddenAddress: IPv6 is global unicast 2000::/3 minus the reserved blocks', () => {
  for (const [name, first, last, outside] of V6_UNICAST_BLOCKS) {
    it(`${name}: first and last refused, just outside allowed`, () => {
      assert.deepEqual(wrong([first, last], true), [], `${name}: should be refused`);
      assert.deepEqual(wrong(outside, false), [], `${name}: just outside should be allowed`);
    });
  }
  it('the rest of 2001::/23 is refused (the registry marks only listed entries globally reachable)', () => {
    assert.deepEqual(
      wrong(['2001:1::', '2001:1::4', '2001:2:1::', '2001:4::1', '2001:4:113::', '2001:f:ffff::', '2001:100::1'], true),
      [],
    );
  });
  it('6to4 and Teredo are refused whatever IPv4 address they embed', () => {
    assert.deepEqual(
      wrong(['2002:7f00:1::', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:0:808:808::1'], true),
      [],
    );
  });
  for (const [name, addresses] of V6_OUTSIDE_GLOBAL_UNICAST) {
    it(`${name}: refused`, () => assert.deepEqual(wrong(addresses, true), []));
  }
  it('public IPv6 addresses (and registry entries that are globally reachable) are allowed', () => {
    assert.deepEqual(wrong(PUBLIC_V6, false), []);
  });
});

describe('isForbiddenAddress: IPv6 forms that carry an IPv4 address are judged by that address', () => {
  it('IPv4-mapped ::ffff:0:0/96, dotted and hex, carrying a refused address: refused', () => {
    assert.deepEqual(
      wrong(
        [
          '::ffff:127.0.0.1',
          '::ffff:7f00:1',
          '::ffff:10.0.0.1',
          '::ffff:a00:1',
          '::ffff:169.254.169.254',
          '::ffff:a9fe:a9fe',
          '::ffff:192.168.0.1',
          '::ffff:100.64.0.0',
          '::ffff:100.127.255.255',
          '::ffff:0.0.0.0',
          '::ffff:0:0',
          '::ffff:255.255.255.255',
          '::ffff:ffff:ffff',
          '::ffff:224.0.0.1',
        ],
        true,
      ),
      [],
    );
  });
  it('IPv4-mapped carrying a public address: allowed', () => {
    assert.deepEqual(
      wrong(
        [
          '::ffff:8.8.8.8',
          '::ffff:808:808',
          '::ffff:1.1.1.1',
          '::ffff:100.63.255.255',
          '::ffff:100.128.0.0',
          '::ffff:11.0.0.0',
        ],
        false,
      ),
      [],
    );
  });
  it('NAT64 64:ff9b::/96 carrying a refused address: refused', () => {
    assert.deepEqual(
      wrong(
        [
          '64:ff9b::7f00:1',
          '64:ff9b::127.0.0.1',
          '64:ff9b::a00:1',
          '64:ff9b::10.0.0.1',
          '64:ff9b::a9fe:a9fe',
          '64:ff9b::c0a8:101',
          '64:ff9b::',
          '64:ff9b::ffff:ffff',
          '64:ff9b::6440:0',
          '64:ff9b::647f:ffff',
        ],
        true,
      ),
      [],
    );
  });
  it('NAT64 carrying a public address: allowed', () => {
    assert.deepEqual(
      wrong(
        ['64:ff9b::808:808', '64:ff9b::8.8.8.8', '64:ff9b::101:101', '64:ff9b::643f:ffff', '64:ff9b::6480:0'],
        false,
      ),
      [],
    );
  });
  it('just outside ::ffff:0:0/96 and 64:ff9b::/96 is outside 2000::/3: refused even with a public IPv4 tail', () => {
    assert.deepEqual(
      wrong(
        [
          '::fffe:808:808',
          '::1:ffff:808:808',
          '1::ffff:808:808',
          '0:0:0:1:0:ffff:808:808',
          '64:ff9b:1::808:808',
          '64:ff9b:0:1::808:808',
          '64:ff9b::1:0:808:808',
          '64:ff9b::1:808:808',
          '64:ff9a::808:808',
          '65:ff9b::808:808',
        ],
        true,
      ),
      [],
    );
  });
  it('IPv4-compatible ::a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d are refused outright', () => {
    assert.deepEqual(
      wrong(['::127.0.0.1', '::7f00:1', '::8.8.8.8', '::808:808', '::ffff:0:127.0.0.1', '::ffff:0:808:808'], true),
      [],
    );
  });
});

describe('isForbiddenAddress: every textual form a URL parser or a resolver can hand over', () => {
  it('compressed, expanded, zero-padded, uppercase and mixed-case forms of refused addresses', () => {
    assert.deepEqual(
      wrong(
        [
          '0:0:0:0:0:0:0:1',
          '0000:0000:0000:0000:0000:0000:0000:0001',
          '0:0:0:0:0:0:0:0',
          '::FFFF:7F00:1',
          '::FFFF:127.0.0.1',
          '0:0:0:0:0:ffff:7f00:1',
          '0000:0000:0000:0000:0000:FFFF:7F00:0001',
          '0:0:0:0:0:ffff:127.0.0.1',
          '64:FF9B::7F00:1',
          '0064:ff9b:0000:0000:0000:0000:7f00:0001',
          '64:ff9b:0:0:0:0:127.0.0.1',
          'FE80::1',
          'FD00::1',
          'Fc00::',
          'FF02::1',
          '2001:DB8::1',
          '2001:0db8:0000:0000:0000:0000:0000:0001',
          '2002:7F00:1::',
        ],
        true,
      ),
      [],
    );
  });
  it('expanded and uppercase forms of public addresses stay public', () => {
    assert.deepEqual(
      wrong(
        [
          '2606:4700:4700:0:0:0:0:1111',
          '2606:4700:4700:0000:0000:0000:0000:1111',
          '2606:4700:4700::1111'.toUpperCase(),
          '::FFFF:8.8.8.8',
          '64:FF9B::808:808',
        ],
        false,
      ),
      [],
    );
  });
  it('a zone id never makes a refused address acceptable', () => {
    assert.deepEqual(
      wrong(
        [
          'fe80::1%eth0',
          'fe80::1%1',
          '::1%lo',
          'fd00::1%eth0',
          'ff02::1%eth0',
          '2001:db8::1%eth0',
          '2002:7f00:1::%eth0',
          '::ffff:127.0.0.1%eth0',
          '::ffff:7f00:1%eth0',
          '::ffff:10.0.0.1%eth0',
          '64:ff9b::7f00:1%eth0',
          '64:ff9b::10.0.0.1%eth0',
        ],
        true,
      ),
      [],
    );
  });
  it('a name is not an address (names are judged by what they resolve to)', () => {
    assert.deepEqual(wrong(['example.com', 'public.example'], false), []);
  });
});

/** Asserts that `f` throws a FetchRefused with `code`. */
function refuses(f: () => unknown, code: RefusalCode, label: string): void {
  assert.throws(
    f,
    (e: unknown) => {
      assert.ok(e instanceof FetchRefused, `${label}: a FetchRefused, not ${String(e)}`);
      assert.equal(e.code, code, `${label}: ${e.message}`);
      return true;
    },
    label,
  );
}

describe('checkUrl: refused before any connection', () => {
  it('an IP literal in a refused range, in every form the URL parser accepts: private-address', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://127.0.0.1:8443/mcp',
      'https://10.0.0.1./',
      'https://169.254.169.254/latest/meta-data/',
      'https://2130706433/',
      'https://0x7f000001/',
      'https://0x7f.1/',
      'https://0177.0.0.1/',
      'https://127.1/',
      'https://%31%32%37.0.0.1/',
      'https://\uff11\uff12\uff17.0.0.1/',
      'https://0/',
      'https://100.64.0.1/',
      'https://198.18.0.1/',
      'https://224.0.0.1/',
      'https://255.255.255.255/',
      'https://[::1]/',
      'https://[::]/',
      'https://[0:0:0:0:0:0:0:1]:8443/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:7f00:1]/',
      'https://[::FFFF:A9FE:A9FE]/',
      'https://[64:ff9b::127.0.0.1]/',
      'https://[64:ff9b::a00:1]/',
      'https://[FE80::1]/',
      'https://[fd12:3456::1]/',
      'https://[ff02::1]/',
      'https://[2001:db8::1]/',
      'https://[2002:7f00:1::]/',
      'https://[::127.0.0.1]/',
    ])
      refuses(() => checkUrl(url), 'private-address', url);
  });
  it('localhost and names under .localhost: private-address', () => {
    for (const url of [
      'https://localhost/',
      'https://LOCALHOST:8443/mcp',
      'https://localhost./',
      'https://api.localhost/',
      'https://a.b.LocalHost./',
    ]) {
      refuses(() => checkUrl(url), 'private-address', url);
    }
  });
  it('names that only contain "localhost" are names like any other', () => {
    for (const url of [
      'https://localhost.example.com/',
      'https://notlocalhost/',
      'https://mylocalhost.dev/',
      'https://localhostx/',
    ]) {
      assert.equal(checkUrl(url).href, new URL(url).href, url);
    }
  });
  it('public literals and names pass, and come back parsed', () => {
    for (const url of [
      'https://8.8.8.8/',
      'https://1.1.1.1:443/x',
      'https://[2606:4700:4700::1111]/',
      'https://[::ffff:8.8.8.8]/',
      'https://[64:ff9b::808:808]/',
      'https://example.com/mcp?x=1',
      'https://100.128.0.0/',
      'https://172.32.0.1/',
    ]) {
      const u = checkUrl(url);
      assert.ok(u instanceof URL, url);
      assert.equal(u.href, new URL(url).href, url);
    }
  });
  it('a scheme other than https: scheme', () => {
    for (const url of [
      'http://example.com/',
      'ftp://example.com/',
      'file:///etc/passwd',
      'ws://example.com/',
      'wss://example.com/',
      'gopher://example.com/',
      'javascript:alert(1)',
      'data:text/plain,hi',
    ]) {
      refuses(() => checkUrl(url), 'scheme', url);
    }
  });
  it('allowHttp permits http:// and nothing else: the address rule still holds', () => {
    assert.equal(checkUrl('http://example.com/mcp', { allowHttp: true }).href, 'http://example.com/mcp');
    assert.equal(checkUrl('http://8.8.8.8/', { allowHttp: true }).hostname, '8.8.8.8');
    for (const url of [
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://localhost/',
      'https://10.0.0.1/',
      'http://[::ffff:10.0.0.1]/',
    ]) {
      refuses(() => checkUrl(url, { allowHttp: true }), 'private-address', url);
    }
    refuses(() => checkUrl('ftp://example.com/', { allowHttp: true }), 'scheme', 'ftp with allowHttp');
  });
  it('allowPrivate permits private addresses, localhost and http://, but no other scheme', () => {
    for (const url of [
      'http://127.0.0.1:8080/mcp',
      'https://10.0.0.1/',
      'http://[::1]:3000/',
      'http://localhost:3000/',
      'https://api.localhost/',
      'http://example.com/',
    ]) {
      assert.equal(checkUrl(url, { allowPrivate: true }).href, new URL(url).href, url);
    }
    refuses(() => checkUrl('ftp://127.0.0.1/', { allowPrivate: true }), 'scheme', 'ftp with allowPrivate');
    refuses(() => checkUrl('file:///etc/passwd', { allowPrivate: true }), 'scheme', 'file with allowPrivate');
  });
  it('a trusted address is exempt (http allowed); its neighbours are not', () => {
    const policy: AddressPolicy = { trustedAddresses: ['127.0.0.1', '::1'] };
    assert.equal(checkUrl('http://127.0.0.1:8080/mcp', policy).port, '8080');
    assert.equal(checkUrl('https://[::1]:8443/', policy).port, '8443');
    refuses(() => checkUrl('http://127.0.0.2/', policy), 'private-address', '127.0.0.2 is not trusted');
    refuses(
      () => checkUrl('https://[::ffff:127.0.0.2]/', policy),
      'private-address',
      '::ffff:127.0.0.2 is not trusted',
    );
    refuses(() => checkUrl('http://example.com/', policy), 'scheme', 'http to an untrusted name');
  });
  it('credentials in the URL: bad-url', () => {
    for (const url of [
      'https://user:secret@example.com/',
      'https://user@example.com/',
      'https://:secret@example.com/',
    ]) {
      refuses(() => checkUrl(url), 'bad-url', url);
    }
  });
  it('not a URL: bad-url', () => {
    for (const url of [
      '',
      'not a url',
      'example.com',
      '//example.com/x',
      'https://',
      'https://[::1/',
      'https://exa mple.com/',
      'https://300.0.0.1/',
      'https://[fe80::1%25eth0]/',
      'https://[::ffff:127.0.0.1.1]/',
    ]) {
      refuses(() => checkUrl(url), 'bad-url', JSON.stringify(url));
    }
  });
});

type Answer = { address: string; family: number };
const answer = (address: string): Answer => ({ address, family: address.includes(':') ? 6 : 4 });

/** A resolver from a table (no DNS); an unknown name fails like getaddrinfo. It records what it was asked. */
function fakeResolver(table: Record<string, readonly string[]>): { resolver: Resolver; asked: string[] } {
  const asked: string[] = [];
  const resolver: Resolver = async (hostname) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map(answer);
  };
  return { resolver, asked };
}

type LookupResult = { err: Error | null; address?: unknown; family?: number };
function runLookup(
  lookup: Lookup,
  hostname: string,
  options: { all?: boolean; family?: number | string } = {},
): Promise<LookupResult> {
  return new Promise((resolve) =>
    lookup(hostname, options, (err, address, family) => resolve({ err, address, family })),
  );
}
function assertRefused(r: LookupResult, label: string): void {
  assert.ok(
    r.err instanceof FetchRefused,
    `${label}: refused with a FetchRefused, got ${String(r.err)} / ${JSON.stringify(r.address)}`,
  );
  assert.equal(r.err.code, 'private-address', label);
  assert.equal(r.address, undefined, `${label}: no address handed to the connection`);
}

const DNS: Record<string, readonly string[]> = {
  'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'v4.example': ['8.8.8.8'],
  'mixed.example': ['8.8.8.8', '10.0.0.1'],
  'mixed-v6.example': ['2606:4700:4700::1111', '::1'],
  'private-first.example': ['127.0.0.1', '8.8.8.8'],
  'private.example': ['10.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'mapped.example': ['1.1.1.1', '::ffff:127.0.0.1'],
  'nat64.example': ['64:ff9b::808:808', '64:ff9b::a9fe:a9fe'],
  'nat64-public.example': ['64:ff9b::808:808'],
  'ula.example': ['fd00::1'],
  'mirror.example': ['10.0.0.5'],
  'mirror-and-more.example': ['10.0.0.5', '10.0.0.6'],
};

describe('guardedLookup: every answer is checked, on the connection itself', () => {
  it('a name answering only public addresses passes (all answers, or the first)', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    const lookup = guardedLookup([], resolver);
    const all = await runLookup(lookup, 'public.example', { all: true });
    assert.equal(all.err, null);
    assert.deepEqual(all.address, DNS['public.example']!.map(answer));
    const one = await runLookup(lookup, 'v4.example', {});
    assert.equal(one.err, null);
    assert.equal(one.address, '8.8.8.8');
    assert.equal(one.family, 4);
    assert.deepEqual(asked, ['public.example', 'v4.example']);
  });
  it('a name answering a public and a refused address is refused, whichever comes first', async () => {
    const lookup = guardedLookup([], fakeResolver(DNS).resolver);
    for (const name of [
      'mixed.example',
      'mixed-v6.example',
      'private-first.example',
      'mapped.example',
      'nat64.example',
    ]) {
      assertRefused(await runLookup(lookup, name, { all: true }), `${name} (all)`);
      assertRefused(await runLookup(lookup, name, {}), `${name} (first)`);
    }
  });
  it('a name answering only refused addresses is refused', async () => {
    const lookup = guardedLookup([], fakeResolver(DNS).resolver);
    for (const name of ['private.example', 'metadata.example', 'ula.example'])
      assertRefused(await runLookup(lookup, name, {}), name);
  });
  it('a NAT64 answer carrying a public address passes', async () => {
    const r = await runLookup(guardedLookup([], fakeResolver(DNS).resolver), 'nat64-public.example', {});
    assert.equal(r.err, null);
    assert.equal(r.address, '64:ff9b::808:808');
    assert.equal(r.family, 6);
  });
  it('a trusted address passes; an untrusted one beside it is still refused', async () => {
    const lookup = guardedLookup(['10.0.0.5'], fakeResolver(DNS).resolver);
    const r = await runLookup(lookup, 'mirror.example', {});
    assert.equal(r.err, null);
    assert.equal(r.address, '10.0.0.5');
    assertRefused(await runLookup(lookup, 'mirror-and-more.example', { all: true }), 'mirror-and-more.example');
    assertRefused(await runLookup(lookup, 'private.example', {}), 'private.example is not trusted');
  });
  it('allowPrivate passes private answers (the resolver still serves)', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    const lookup = guardedLookup([], resolver, { allowPrivate: true });
    const r = await runLookup(lookup, 'private.example', {});
    assert.equal(r.err, null);
    assert.equal(r.address, '10.0.0.1');
    const all = await runLookup(lookup, 'mixed.example', { all: true });
    assert.equal(all.err, null);
    assert.deepEqual(all.address, DNS['mixed.example']!.map(answer));
    assert.deepEqual(asked, ['private.example', 'mixed.example']);
  });
  it('without allowPrivate the default refuses (opts.allowPrivate false is not an exemption)', async () => {
    assertRefused(
      await runLookup(guardedLookup([], fakeResolver(DNS).resolver, { allowPrivate: false }), 'private.example', {}),
      'allowPrivate: false',
    );
  });
  it('a resolver failure reaches the connection as an error, not as an address', async () => {
    const r = await runLookup(guardedLookup([], fakeResolver(DNS).resolver), 'nowhere.example', {});
    assert.ok(r.err instanceof Error);
    assert.equal((r.err as NodeJS.ErrnoException).code, 'ENOTFOUND');
    assert.equal(r.address, undefined);
  });
  it('a requested family (4, 6, "IPv4", "IPv6") hands over only the answers of that family', async () => {
    const lookup = guardedLookup([], fakeResolver(DNS).resolver);
    const [v4, v6] = DNS['public.example']!.map(answer);
    for (const [family, expected] of [
      [4, v4],
      ['IPv4', v4],
      [6, v6],
      ['IPv6', v6],
    ] as const) {
      const r = await runLookup(lookup, 'public.example', { all: true, family });
      assert.equal(r.err, null, `family ${family}`);
      assert.deepEqual(r.address, [expected], `family ${family}`);
    }
  });
  it('no answer of the requested family: ENOTFOUND, not an empty answer', async () => {
    const r = await runLookup(guardedLookup([], fakeResolver(DNS).resolver), 'v4.example', { all: true, family: 6 });
    assert.ok(r.err instanceof Error);
    assert.equal((r.err as NodeJS.ErrnoException).code, 'ENOTFOUND');
    assert.equal(r.address, undefined);
  });
});

/** Asserts that `p` rejects with a FetchRefused with `code`. */
async function rejects(p: Promise<unknown>, code: RefusalCode, label: string): Promise<void> {
  await assert.rejects(
    p,
    (e: unknown) => {
      assert.ok(e instanceof FetchRefused, `${label}: a FetchRefused, not ${String(e)}`);
      assert.equal(e.code, code, `${label}: ${e.message}`);
      return true;
    },
    label,
  );
}

describe('assertPublicTarget: the URL rules, then every address the name resolves to', () => {
  it('a name answering only public addresses passes', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    await assertPublicTarget('https://public.example/mcp', { resolver });
    await assertPublicTarget('https://nat64-public.example/', { resolver });
    assert.deepEqual(asked, ['public.example', 'nat64-public.example']);
  });
  it('a name answering a public and a refused address is refused, whichever comes first', async () => {
    const { resolver } = fakeResolver(DNS);
    for (const name of [
      'mixed.example',
      'mixed-v6.example',
      'private-first.example',
      'mapped.example',
      'nat64.example',
      'private.example',
      'metadata.example',
      'ula.example',
    ]) {
      await rejects(assertPublicTarget(`https://${name}/`, { resolver }), 'private-address', name);
    }
  });
  it('a refused literal or localhost is refused before any lookup', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    for (const url of [
      'https://10.0.0.1/',
      'https://[::ffff:7f00:1]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://localhost/',
      'https://api.localhost/',
    ]) {
      await rejects(assertPublicTarget(url, { resolver }), 'private-address', url);
    }
    assert.deepEqual(asked, []);
  });
  it('a refused scheme or a bad URL is refused before any lookup', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    await rejects(assertPublicTarget('http://public.example/', { resolver }), 'scheme', 'http');
    await rejects(assertPublicTarget('ftp://public.example/', { resolver }), 'scheme', 'ftp');
    await rejects(assertPublicTarget('not a url', { resolver }), 'bad-url', 'not a url');
    assert.deepEqual(asked, []);
  });
  it('allowHttp: http to a public name passes, http to a name answering a private address is refused', async () => {
    const { resolver } = fakeResolver(DNS);
    await assertPublicTarget('http://public.example/', { resolver, allowHttp: true });
    await rejects(
      assertPublicTarget('http://mixed.example/', { resolver, allowHttp: true }),
      'private-address',
      'mixed.example over http',
    );
  });
  it('allowPrivate passes private answers and literals', async () => {
    const { resolver } = fakeResolver(DNS);
    await assertPublicTarget('https://mixed.example/', { resolver, allowPrivate: true });
    await assertPublicTarget('http://private.example/', { resolver, allowPrivate: true });
    await assertPublicTarget('http://127.0.0.1:8080/', { resolver, allowPrivate: true });
  });
  it('a trusted address passes; an untrusted one beside it is still refused', async () => {
    const { resolver } = fakeResolver(DNS);
    await assertPublicTarget('https://mirror.example/', { resolver, trustedAddresses: ['10.0.0.5'] });
    await rejects(
      assertPublicTarget('https://mirror-and-more.example/', { resolver, trustedAddresses: ['10.0.0.5'] }),
      'private-address',
      'mirror-and-more',
    );
  });
  it('a name that does not resolve passes (the connection fails on its own)', async () => {
    const { resolver, asked } = fakeResolver(DNS);
    await assertPublicTarget('https://nowhere.example/', { resolver });
    assert.deepEqual(asked, ['nowhere.example']);
  });
});
