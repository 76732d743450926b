import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from './helpers.js';

describe('npm start (onetap demo)', () => {
  it('plays the shipped catalog offline: plan, then --write; drops the dead and the 526, keeps the flaky and the auth-optional', async () => {
    const r = await runCli(['demo']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /keep\s+live\/ok\s+2\s+\S+\s+DeepWiki/, 'the flaky server recovered on the retry');
    assert.match(r.stdout, /keep\s+live\/auth-optional\s+1\s+\S+\s+Jina AI/);
    assert.match(r.stdout, /drop\s+drop\/refused\s+1\s+\S+\s+Find-A-Domain/);
    assert.match(r.stdout, /drop\s+drop\/origin-tls\s+1\s+\S+\s+Malwarebytes/);
    assert.match(r.stdout, /Nothing written \(run with --write/);
    assert.match(r.stdout, /Wrote:\n.*popular-servers\.json/);
  });
});
