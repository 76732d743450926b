/**
 * Bodies read as chunks through undici's handler API (src/attest/dispatch.ts), against a real server on
 * 127.0.0.1: order, backpressure the server can feel, a stopped read that ends its connection, failures.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { dispatchRequest } from '../src/attest/dispatch.js';

async function serve(handler: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

const post = (url: string, dispatcher: Agent) =>
  dispatchRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
    headersTimeout: 5_000,
    bodyTimeout: 5_000,
    dispatcher,
  });

describe('dispatchRequest: a body read as chunks', () => {
  it('delivers every byte in order, including chunks that arrived before the reader', async () => {
    const parts = Array.from({ length: 50 }, (_, i) => `${i}:${'x'.repeat(i * 100)};`);
    const { url, server } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-two': ['a', 'b'] as unknown as string });
      for (const p of parts) res.write(p);
      res.end();
    });
    const dispatcher = new Agent();
    try {
      const { head, body } = await post(url, dispatcher);
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-type'], 'application/json');
      await new Promise((r) => setTimeout(r, 50)); // the whole body has arrived before anyone reads it
      const got: Buffer[] = [];
      const stopped = await body.read((chunk) => {
        got.push(chunk);
        return false;
      });
      assert.equal(stopped, false);
      assert.equal(Buffer.concat(got).toString(), parts.join(''));
    } finally {
      await dispatcher.close();
      server.close();
    }
  });

  it('a reader that waits pauses the response: the server feels backpressure, then the read goes on', async () => {
    let written = 0;
    let blocked = false;
    const { url, server } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            blocked = true;
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const dispatcher = new Agent();
    try {
      const { body } = await post(url, dispatcher);
      let read = 0;
      let waitedOnce = false;
      let writtenDuringWait = 0;
      const stopped = await body.read((chunk) => {
        read += chunk.length;
        if (waitedOnce) return read >= 8 * 1024 * 1024;
        waitedOnce = true;
        return new Promise((resolve) =>
          setTimeout(() => {
            writtenDuringWait = written;
            resolve(false);
          }, 300),
        );
      });
      assert.equal(stopped, true);
      assert.ok(blocked, "the server's writes were refused while the reader waited");
      assert.ok(
        writtenDuringWait < 32 * 1024 * 1024,
        `the server got ${writtenDuringWait} bytes out while the reader waited: only what the sockets hold`,
      );
      assert.ok(read >= 8 * 1024 * 1024, 'after the wait the read went on');
    } finally {
      await dispatcher.close();
      server.close();
    }
  });

  it('a stopped read ends a body that goes on (the server sees its connection close)', async () => {
    let closed: () => void;
    const serverSawClose = new Promise<void>((r) => {
      closed = r;
    });
    const { url, server } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
      res.on('close', () => closed());
      // never ends by itself
    });
    const dispatcher = new Agent();
    try {
      const { body } = await post(url, dispatcher);
      // Order, not elapsed time: the server sees the close before the body's 5 s time limit would have ended it.
      const limit = new Promise<string>((r) => setTimeout(() => r('the time limit'), 5_000).unref());
      assert.equal(await body.read(() => true), true);
      assert.equal(await Promise.race([serverSawClose.then(() => 'the stopped read'), limit]), 'the stopped read');
    } finally {
      await dispatcher.close();
      server.close();
    }
  });

  it('a body that breaks rejects the read; destroy(err) rejects it with that error', async () => {
    const { url, server } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const dispatcher = new Agent();
    try {
      const broken = await post(url, dispatcher);
      await assert.rejects(broken.body.read(() => false));
      const cut = await post(url, dispatcher);
      const reading = cut.body.read(() => false);
      cut.body.destroy(Object.assign(new Error('request timed out'), { code: 'TIMEOUT' }));
      await assert.rejects(reading, (err: Error & { code?: string }) => err.code === 'TIMEOUT');
    } finally {
      await dispatcher.close();
      server.close();
    }
  });
});
