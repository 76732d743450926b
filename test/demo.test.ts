import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, runCli } from './helpers.js';

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
    assert.match(r.stdout, /^ {2}\.\/bin\/onetap serve --catalog /m, 'in a checkout, the hint is its bin/onetap');
    assert.match(r.stdout, /== 3\. onetap probe[^\n]*\n\nVERDICT[^\n]*\nlive\s+ok\s+200\s/, 'one server probed');
  });

  it("its closing hints run as printed: serve shows the status page of the demo's run", async () => {
    // Run where a user who installed the package runs it: outside onetap's checkout.
    const r = await runCli(['demo'], { cwd: await mkdtemp(join(tmpdir(), 'onetap-user-')) });
    const hint = /^ {2}(npx onetap|\S+) (serve --catalog \S+ --allow-http)/m.exec(r.stdout);
    assert.ok(hint, r.stdout);
    assert.equal(hint[1], 'npx onetap', 'run outside a checkout, the hint is npx onetap');
    const args = [...hint[2]!.split(' '), '--port', '0'];
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        child.stdout.on('data', (d) => {
          err += d;
          const m = /http:\/\/127\.0\.0\.1:\d+/.exec(err);
          if (m) resolve(m[0]);
        });
        child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
      });
      const page = await fetch(`${url}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /DeepWiki/);
    } finally {
      child.kill();
    }
  });
});
