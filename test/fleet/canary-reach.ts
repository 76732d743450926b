/**
 * Canaries against addresses that answer: `node dist/test/fleet/canary-reach.js <url>…`, run inside a network
 * namespace where 10.0.0.5, fd00::1 and 127.0.0.1 are this machine's own (and names in its hosts file point at them).
 * A TCP listener on port 8443 of each address counts the connections it gets. Each URL is checked for reachability as
 * a canary without permission, then once more with `allowPrivate` (the control: the listeners do see a connection).
 * Prints one JSON line: what each check said and how many connections arrived after each round.
 */
import { createServer } from 'node:net';
import { isReachable } from '../../src/attest/reachable.js';

let connections = 0;
for (const host of ['10.0.0.5', 'fd00::1', '127.0.0.1']) {
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(8443, host, resolve));
  server.unref();
}
const urls = process.argv.slice(2);
const refused = await Promise.all(urls.map((u) => isReachable(u, 3_000)));
const before = connections;
const allowed = await Promise.all(urls.map((u) => isReachable(u, 3_000, { allowPrivate: true })));
process.stdout.write(`${JSON.stringify({ refused, before, allowed, after: connections })}\n`);
