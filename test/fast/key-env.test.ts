/**
 * The key rule (src/catalog/key-env.ts) as a table: which environment variables a catalog may name as a probe
 * key, with and without `policy.keyEnv`; and keysFrom, which never reads a refused one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { keyEnvEntryProblem, keyEnvRefusal } from '../../src/catalog/key-env.js';
import { keysFrom, parseProbeHeader } from '../../src/attest/keys.js';

/** [name, policy.keyEnv, allowed] */
const TABLE: Array<[string, string[] | undefined, boolean]> = [
  // The shipped catalog and the example workflow.
  ['JINA_API_KEY', undefined, true],
  ['JINA_API_KEY', ['JINA_API_KEY'], true],
  ['JINA_API_KEY', ['JINA_*'], true],
  // The store's and the CI's own: refused always, listed or not, in any case.
  ['ONETAP_STORE_URL', undefined, false],
  ['ONETAP_STORE_URL', ['ONETAP_STORE_URL'], false],
  ['ONETAP_WORKER_KEY_ENV', ['ONETAP_*'], false],
  ['GITHUB_TOKEN', undefined, false],
  ['GITHUB_TOKEN', ['GITHUB_TOKEN'], false],
  ['github_token', ['github_token'], false],
  ['Github_Token', undefined, false],
  ['ACTIONS_RUNTIME_TOKEN', ['ACTIONS_RUNTIME_TOKEN'], false],
  ['ACTIONS_ID_TOKEN_REQUEST_URL', undefined, false],
  ['RUNNER_TEMP', ['RUNNER_TEMP'], false],
  ['PGPASSWORD', ['PGPASSWORD'], false],
  ['PGHOST', undefined, false],
  // Credentials of something else: only listed by their full name.
  ['MY_API_TOKEN', undefined, false],
  ['MY_API_TOKEN', ['MY_*'], false],
  ['MY_API_TOKEN', ['MY_API_TOKEN'], true],
  ['DB_PASSWORD', undefined, false],
  ['DB_PASSWORD', ['DB_PASSWORD'], true],
  ['SERVICE_URL', undefined, false],
  ['SERVICE_URL', ['SERVICE_URL'], true],
  ['service_url', undefined, false],
  ['service_url', ['SERVICE_URL'], false],
  ['TOKEN', undefined, true],
  ['URL_KEY', undefined, true],
  // With keyEnv: only what it lists.
  ['OTHER_KEY', undefined, true],
  ['OTHER_KEY', ['JINA_API_KEY'], false],
  ['OTHER_KEY', [], false],
  ['OTHER_KEY', ['OTHER_*'], true],
  ['OTHERKEY', ['OTHER_*'], false],
  ['other_key', ['OTHER_KEY'], false],
  ['AWS_SECRET_ACCESS_KEY', ['JINA_API_KEY'], false],
  // No variable's name at all.
  ['', undefined, false],
  ['A-B', undefined, false],
  ['1KEY', ['1KEY'], false],
];

describe('the key rule: which variables a catalog may name', () => {
  for (const [name, keyEnv, allowed] of TABLE) {
    it(`${JSON.stringify(name)} with keyEnv ${JSON.stringify(keyEnv)}: ${allowed ? 'allowed' : 'refused'}`, () => {
      const refusal = keyEnvRefusal(name, keyEnv);
      assert.equal(refusal === null, allowed, refusal ?? 'allowed');
      if (refusal && /^[A-Za-z_]\w*$/.test(name)) assert.ok(refusal.includes(name), 'the refusal names the variable');
    });
  }

  it('keyEnv entries that can never allow anything are named', () => {
    assert.deepEqual(
      ['GITHUB_TOKEN', 'ONETAP_*', 'PG_*', 'runner_temp', 'JINA_API_KEY', 'MY_*', 'GIT_*'].map(
        (e) => keyEnvEntryProblem(e) !== null,
      ),
      [true, true, true, true, false, false, false],
    );
  });
});

describe('keysFrom: a refused variable is never read', () => {
  it('refused names are listed, not read (a getter that throws proves it), and never sent', () => {
    const env = new Proxy(
      { JINA_API_KEY: 'jina_0123456789abcdef', MY_API_TOKEN: 'tok_0123456789' } as Record<string, string>,
      {
        get(target, name) {
          if (name === 'ONETAP_STORE_URL' || name === 'GITHUB_TOKEN' || name === 'MY_API_TOKEN')
            throw new Error(`read ${String(name)}`);
          return target[name as string];
        },
      },
    );
    const r = keysFrom(
      {
        Authorization: { env: 'JINA_API_KEY', prefix: 'Bearer ' },
        'X-Store': { env: 'ONETAP_STORE_URL' },
        'X-Gh': { env: 'GITHUB_TOKEN' },
        'X-Other': { env: 'MY_API_TOKEN' },
        'X-Unset': { env: 'UNSET_KEY' },
      },
      env,
    );
    assert.deepEqual(r, {
      keys: { Authorization: { value: 'jina_0123456789abcdef', prefix: 'Bearer ' } },
      missingKeys: ['UNSET_KEY'],
      refusedKeys: ['ONETAP_STORE_URL', 'GITHUB_TOKEN', 'MY_API_TOKEN'],
    });
    assert.deepEqual(
      keysFrom({ 'X-Other': { env: 'MY_API_TOKEN' } }, { MY_API_TOKEN: 'tok_0123456789' }, ['MY_API_TOKEN']).keys,
      { 'X-Other': { value: 'tok_0123456789' } },
    );
  });

  it("a variable named like an object's own property is no variable", () => {
    assert.deepEqual(keysFrom({ A: { env: 'constructor' }, B: { env: 'toString' } }, {}), {
      keys: {},
      missingKeys: ['constructor', 'toString'],
      refusedKeys: [],
    });
  });

  it("probe --probe-header refuses the store's and the CI's own variables before anything runs", () => {
    assert.match(
      String(parseProbeHeader('Authorization: Bearer ${GITHUB_TOKEN}')),
      /GITHUB_TOKEN is one of the store's or the CI's own variables/,
    );
    assert.match(String(parseProbeHeader('X-Store: ${ONETAP_STORE_URL}')), /ONETAP_STORE_URL/);
    assert.deepEqual(parseProbeHeader('Authorization: Bearer ${MY_API_TOKEN}'), {
      name: 'Authorization',
      source: { env: 'MY_API_TOKEN', prefix: 'Bearer ' },
    });
  });
});
