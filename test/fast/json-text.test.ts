/**
 * JSON values and text as untrusted input: what counts as an object, nesting read from the bytes before anything parses
 * it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isObject, textNestsDeeperThan } from '../../src/util/json.js';
import { parsedBodyOf } from '../../src/mcp/server.js';

const deeper = (text: string, limit: number) => textNestsDeeperThan(Buffer.from(text), limit);

describe('a JSON object (isObject)', () => {
  const rows: Array<[string, unknown, boolean]> = [
    ['{}', {}, true],
    ['{"a":1}', { a: 1 }, true],
    ['JSON.parse of an object', JSON.parse('{"x":[1]}'), true],
    ['an object without a prototype', Object.create(null), true],
    ['null', null, false],
    ['[]', [], false],
    ['[{}]', [{}], false],
    ['"{}"', '{}', false],
    ['0', 0, false],
    ['true', true, false],
    ['undefined', undefined, false],
    ['a function', () => ({}), false],
  ];
  for (const [what, value, expected] of rows) {
    it(`${what}: ${expected}`, () => assert.equal(isObject(value), expected));
  }
});

describe('nesting of JSON text', () => {
  const rows: Array<[string, number, boolean]> = [
    ['{}', 1, false],
    ['{"a":[1]}', 1, true],
    ['{"a":[1]}', 2, false],
    ['"[[[[[["', 1, false],
    ['["\\"[[[["]', 1, false],
    ['["\\\\", [[]]]', 2, true],
    ['[[]][[]]', 2, false],
    ['[[[', 2, true],
  ];
  for (const [text, limit, expected] of rows) {
    it(`${text} deeper than ${limit}: ${expected}`, () => assert.equal(deeper(text, limit), expected));
  }
});

describe('a request body of onetap mcp --http', () => {
  it('is parsed, or refused with the words a client reads', () => {
    assert.deepEqual(parsedBodyOf(Buffer.from('{"id":1}')), { value: { id: 1 } });
    assert.deepEqual(parsedBodyOf(Buffer.from('{"id":')), { refusal: 'Parse error: Invalid JSON' });
    assert.deepEqual(parsedBodyOf(Buffer.from('['.repeat(300))), {
      refusal: 'Parse error: nested deeper than 256 levels',
    });
    assert.deepEqual(parsedBodyOf(Buffer.from(`${'['.repeat(256)}${']'.repeat(256)}`)), {
      value: JSON.parse(`${'['.repeat(256)}${']'.repeat(256)}`),
    });
  });
});
