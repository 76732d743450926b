/**
 * Redaction (src/attest/record.ts) as tables: every form a probe key may come back in is redacted (whole, any
 * case, base64 and base64url at any alignment, a prefix, a middle slice, a property name at any depth), what is
 * left does not depend on the key (so the tools digest stays put when the key is rotated), and ordinary text, hex
 * digests and base64 of other data are never touched.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { redactRun, redactText, secretsOf } from '../../src/attest/record.js';
import { emptyRun } from '../../src/attest/live.js';
import { storedSnapshot, toolListSnapshot, toolSetDigests } from '../../src/model/snapshot-hash.js';
import type { ToolDefinition } from '../../src/model/snapshot.js';

const KEY = 'k3y-Zq9vX2mP7rT4wY8uB1nC6dF0';
const OTHER = 'k3y-Hd2sL8qW5eR1tY7uI3oP9aS4';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

/** [what the server does, its text given the key] */
const ECHOES: Array<[string, (k: string) => string]> = [
  ['whole', (k) => `you sent ${k}.`],
  ['upper case', (k) => `YOU SENT ${k.toUpperCase()}`],
  ['lower case', (k) => `you sent ${k.toLowerCase()}`],
  ['base64', (k) => `token ${b64(k)} ok`],
  ['base64 of user:key (offset 5)', (k) => `Basic ${b64(`user:${k}`)}`],
  ['base64 of ab:key (offset 3)', (k) => `Basic ${b64(`ab:${k}`)}`],
  ['base64 of a:key (offset 2)', (k) => `Basic ${b64(`a:${k}`)}`],
  ['base64url, no padding', (k) => `jwt.${b64url(`{"k":"${k}"}`)}.sig`],
  ['a prefix of 12', (k) => `key ${k.slice(0, 12)}… is invalid`],
  ['a middle slice of 10', (k) => `part ${k.slice(9, 19)} end`],
  ['a suffix of 9', (k) => `key ending ${k.slice(-9)}`],
  ['glued to words', (k) => `prefix_${k}_suffix`],
  ['twice, once upper', (k) => `${k} and ${k.toUpperCase()}`],
  ['cut at the end', (k) => `the key is ${k.slice(0, 5)}`],
];

describe('redactText: every form of a key', () => {
  const secrets = secretsOf({}, [KEY]);
  const forms = (k: string) => [
    k,
    k.toUpperCase(),
    k.toLowerCase(),
    b64(k),
    b64url(k),
    k.slice(0, 8),
    k.slice(10, 18),
    k.slice(-8),
  ];
  for (const [what, echo] of ECHOES) {
    it(`${what}: nothing of the key is left, and the rest is the same whatever the key`, () => {
      const out = redactText(echo(KEY), secrets);
      assert.match(out, /\[redacted\]/);
      for (const f of forms(KEY)) assert.ok(!out.includes(f), `${JSON.stringify(f)} left in ${JSON.stringify(out)}`);
      assert.equal(
        out,
        redactText(echo(OTHER), secretsOf({}, [OTHER])),
        'the redacted text does not depend on the key',
      );
    });
  }

  it('a key under 12 characters is redacted whole only; under 8, not at all', () => {
    const short = secretsOf({}, ['Ab3dE6gH9j']);
    assert.equal(redactText('x Ab3dE6gH9j y', short), 'x [redacted] y');
    assert.equal(redactText('x AB3DE6GH9J y', short), 'x AB3DE6GH9J y');
    assert.equal(redactText('x Ab3dE6g y', secretsOf({}, ['Ab3dE6g'])), 'x Ab3dE6g y');
  });

  it("a header's value: whole, and the credential after its scheme; a text ending in the scheme is no cut secret", () => {
    const s = secretsOf({ Authorization: 'Bearer plainHeaderValue42' });
    assert.equal(redactText('got plainHeaderValue42!', s), 'got [redacted]!');
    assert.equal(redactText('a Polar Bear', s), 'a Polar Bear');
    assert.equal(redactText('cut at plainHea', s), 'cut at [redacted]');
  });
});

describe('redactText: never ordinary text', () => {
  const keys = [
    KEY,
    'jina_0f3a9c2e7b1d4a6f8e0c2b4d6f8a0c1e',
    '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b',
    'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123',
  ];
  const secrets = secretsOf({ 'X-Client': 'kai-9000-android' }, keys);
  const digests = Array.from({ length: 2_000 }, (_, i) => createHash('sha256').update(`tool ${i}`).digest('hex'));
  const texts = [
    'Search the web and return the top results as Markdown, with titles, URLs and short snippets.',
    'Reads a page at https://example.org/docs/v2/index.html?lang=en#section-3 and converts it to text.',
    '{"type":"object","properties":{"query":{"type":"string","maxLength":2048},"maxResults":{"type":"integer"}}}',
    'Version 2024-11-05, build 1.2.3-rc4, utf8, sha256, base64url, x86_64, ISO 8601, RFC 9110, OAuth 2.1, MCP',
    'The API key looks like sk-proj-… or jina_…; never paste it here. Tokens: 12345678, abcdefgh, ABCDEFGH.',
    'uuid 123e4567-e89b-12d3-a456-426614174000 and commit 2f1c0a7 and 0123456789abcdef0123456789abcdef',
    b64('an ordinary document, base64-encoded, with nothing secret in it at all'),
    ...digests,
  ];
  it(`${texts.length} ordinary texts and hex digests come back unchanged`, () => {
    const changed = texts.filter((t) => redactText(t, secrets) !== t);
    assert.deepEqual(changed, []);
    assert.equal(secrets.count, 0);
  });
});

const definitions = (k: string, reversed = false): ToolDefinition[] => {
  const props: Array<[string, unknown]> = [
    [k, { type: 'string', description: 'the key as a name' }],
    [k.toUpperCase(), { type: 'number' }],
    ['plain', { type: 'boolean', description: `default ${b64(k)}` }],
    ['[redacted]', { type: 'null' }],
  ];
  let deep: Record<string, unknown> = { [`x-${k}`]: { const: k.slice(0, 12) } };
  for (let i = 0; i < 40; i++) deep = { [`level${i}`]: deep };
  return [
    {
      name: 'echo',
      description: `for ${k.toLowerCase()}`,
      inputSchema: { type: 'object', properties: Object.fromEntries(reversed ? props.reverse() : props), deep },
    },
  ];
};

/** The run a keyed session makes of a server that echoes the key in its tools. */
function redacted(k: string, reversed = false) {
  const run = { ...emptyRun('kai-9000'), tools: ['echo'], toolDefinitions: definitions(k, reversed) };
  return redactRun(run, secretsOf({}, [k]));
}

describe("redactRun: property names at any depth; the list's digests do not move", () => {
  it('names become [redacted], [redacted 2], …: none is lost, the key is nowhere, and the count says so', () => {
    const run = redacted(KEY);
    const text = JSON.stringify(run.toolDefinitions);
    for (const f of [KEY, KEY.toUpperCase(), KEY.toLowerCase(), b64(KEY), KEY.slice(0, 12)])
      assert.ok(!text.includes(f), f);
    const props = (run.toolDefinitions![0]!.inputSchema as { properties: Record<string, unknown> }).properties;
    assert.deepEqual(Object.keys(props).sort(), ['[redacted 2]', '[redacted 3]', '[redacted]', 'plain']);
    assert.deepEqual(props['[redacted]'], { type: 'null' }, 'the server\'s own "[redacted]" keeps its name');
    // `x-` is grown into the redaction with the key's slices: what is left cannot depend on the key.
    assert.match(text, /"level0":\{"\[redacted\]":\{"const":"\[redacted\]"\}\}/, 'forty levels down');
    assert.equal(run.redacted, 6, 'a description, three names, a default, a constant');
  });

  it('another key, or the same properties in another order: the same tools digest, snapshot hash and fingerprints', () => {
    const digestOf = (r: ReturnType<typeof redacted>) => {
      const listed = toolListSnapshot(r.serverInfo, r.toolDefinitions!);
      const s = storedSnapshot(listed);
      return { hash: s.hash, toolsDigest: s.toolsDigest, ...toolSetDigests(listed.tools) };
    };
    const base = digestOf(redacted(KEY));
    assert.deepEqual(digestOf(redacted(OTHER)), base, 'the key rotated');
    assert.deepEqual(digestOf(redacted(KEY, true)), base, 'the properties in reverse order');
  });
});
