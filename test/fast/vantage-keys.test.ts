/**
 * The vantages' signing keys, as a table: which variable the decider reads a vantage's key from, what it refuses
 * before anything is enqueued (a missing or short key, two vantages reading one variable; never a value in the
 * message), and what a signature covers (the stored line exactly: any change, another key or another kind of record
 * does not verify).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { vantageKeys } from '../../src/refresh/across.js';
import { sameSignature, signCanaries, signObservation, vantageKeyEnvOf } from '../../src/store/signatures.js';

const KEY = '0123456789abcdef0123456789abcdef';

describe("the decider's keys, from its own environment", () => {
  it("a vantage's variable: upper case, - as _", () => {
    assert.deepEqual(['eu', 'eu-west', 'ap_2'].map(vantageKeyEnvOf), [
      'ONETAP_VANTAGE_KEY_EU',
      'ONETAP_VANTAGE_KEY_EU_WEST',
      'ONETAP_VANTAGE_KEY_AP_2',
    ]);
  });
  const cases: Array<[string, string[], Record<string, string>, RegExp | null]> = [
    ['each key set', ['eu', 'us'], { ONETAP_VANTAGE_KEY_EU: KEY, ONETAP_VANTAGE_KEY_US: `${KEY}x` }, null],
    ['one missing', ['eu', 'us'], { ONETAP_VANTAGE_KEY_EU: KEY }, /ONETAP_VANTAGE_KEY_US is not set/],
    ['one empty', ['eu'], { ONETAP_VANTAGE_KEY_EU: '' }, /ONETAP_VANTAGE_KEY_EU is not set/],
    [
      'one too short',
      ['eu'],
      { ONETAP_VANTAGE_KEY_EU: 'short-secret-value' },
      /ONETAP_VANTAGE_KEY_EU: a vantage key is 32 to 1024/,
    ],
    ['one with a space', ['eu'], { ONETAP_VANTAGE_KEY_EU: `${KEY} x` }, /ONETAP_VANTAGE_KEY_EU: a vantage key/],
    [
      'two vantages reading one variable',
      ['eu-west', 'eu_west'],
      { ONETAP_VANTAGE_KEY_EU_WEST: KEY },
      /vantages eu-west and eu_west would both read ONETAP_VANTAGE_KEY_EU_WEST/,
    ],
  ];
  for (const [name, vantages, env, problem] of cases) {
    it(name, () => {
      if (!problem) {
        assert.deepEqual([...vantageKeys(vantages, env).keys()], vantages);
        return;
      }
      assert.throws(
        () => vantageKeys(vantages, env),
        (err: Error) => problem.test(err.message) && !err.message.includes('short-secret-value'),
      );
    });
  }
});

describe('what a signature covers', () => {
  const line = '{"run":"r","url":"https://a.example/","vantage":"eu","verdict":"live"}';
  const signature = signObservation(KEY, line);
  const cases: Array<[string, unknown, string, boolean]> = [
    ['the line as signed', signature, line, true],
    ['a changed line', signature, line.replace('live', 'drop'), false],
    ["another key's signature", signObservation(`${KEY}x`, line), line, false],
    [
      "a canaries report's signature over the same text",
      signCanaries(KEY, 'r', 'eu', { configured: 1, reachable: 1 }),
      line,
      false,
    ],
    ['no signature', null, line, false],
    ['not hex', 'z'.repeat(64), line, false],
    ['too short', signature.slice(0, 62), line, false],
  ];
  for (const [name, given, text, verifies] of cases)
    it(name, () => assert.equal(sameSignature(given, signObservation(KEY, text)), verifies));
  it('a canaries report: its counts are signed', () => {
    const c = signCanaries(KEY, 'r', 'eu', { configured: 2, reachable: 0 });
    assert.equal(sameSignature(c, signCanaries(KEY, 'r', 'eu', { configured: 2, reachable: 0 })), true);
    assert.equal(sameSignature(c, signCanaries(KEY, 'r', 'eu', { configured: 2, reachable: 2 })), false);
  });
});
