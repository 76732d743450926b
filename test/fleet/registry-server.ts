/**
 * The loopback registry fixture as a process of its own, for a test that runs it inside a network namespace:
 * `node dist/test/fleet/registry-server.js <remotes> <hosts> <address> <delayMs>` prints `{"url": …}` once it
 * listens, and on each line `stats` read from stdin, `{"initializes": n, "mostInFlightOverall": n}`.
 */
import { createInterface } from 'node:readline';
import { startRegistry } from './registry.js';

const [remotes, hosts, address, delayMs] = process.argv.slice(2);
const reg = await startRegistry(Number(remotes), Number(hosts), 0, { listenOn: address, delayMs: Number(delayMs) });
process.stdout.write(`${JSON.stringify({ url: reg.url })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === 'stats') process.stdout.write(`${JSON.stringify({ initializes: [...reg.initializes.values()].length, mostInFlightOverall: reg.mostInFlightOverall() })}\n`);
}
await reg.close();
