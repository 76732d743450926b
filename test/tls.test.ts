/**
 * HTTPS on 127.0.0.1 with a certificate made for the test: the prober over TLS, and a TLS failure kept, not dropped.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { probe } from '../src/index.js';

let server: Server;
let url = '';
let cert = '';

before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'onetap-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  cert = await readFile(join(dir, 'cert.pem'), 'utf8');
  server = createServer({ key: await readFile(join(dir, 'key.pem')), cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === 'initialize'
          ? { protocolVersion: '2024-11-05', capabilities: {}, serverInfo: { name: 'tls', version: '1' } }
          : { tools: [{ name: 'secure' }] };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

describe('TLS', () => {
  it('an untrusted certificate is failed/tls: kept and marked, never dropped, not retried', async () => {
    const r = await probe(url, { timeoutMs: 2_000 });
    assert.equal(`${r.verdict}/${r.reason}`, 'failed/tls');
    assert.equal(r.attempts, 1);
    assert.match(r.error!, /^TLS: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/);
  });
  it('a trusted certificate attests live over HTTPS', async () => {
    const dispatcher = new Agent({ connect: { ca: cert } });
    try {
      const r = await probe(url, { timeoutMs: 2_000, dispatcher });
      assert.equal(`${r.verdict}/${r.reason}`, 'live/ok', r.error ?? '');
      assert.deepEqual(r.tools, ['secure']);
    } finally {
      await dispatcher.close();
    }
  });
});
