/**
 * The loopback registry fixture as a process of its own, for a test that runs it inside a network namespace:
 * `node dist/test/fleet/registry-server.js <remotes> <hosts> <address> <delayMs> [options]` prints `{"url": …}` once it
 * listens, and on each line `stats` read from stdin, `{"initializes": n, "mostInFlight": n, "mostInFlightOverall": n}`.
 * `options`, JSON: `tls` (`{keyFile, certFile}`: the hosts serve HTTPS) and `spellings` (per host, by its index modulo
 * their number, the ways its remotes spell it, taken in turn: `{port}` is the host's port; remote i is the host's
 * `floor(i / hosts)`th).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startRegistry } from './registry.js';

interface Options {
  tls?: { keyFile: string; certFile: string };
  spellings?: string[][];
}

const [remotes, hosts, address, delayMs, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}') as Options;
const hostCount = Number(hosts);
const tls = options.tls
  ? { key: readFileSync(options.tls.keyFile, 'utf8'), cert: readFileSync(options.tls.certFile, 'utf8') }
  : undefined;
const spellings = options.spellings;
const urlOf = spellings
  ? (i: number, host: string, path: string) => {
      const ways = spellings[(i % hostCount) % spellings.length]!;
      return `${tls ? 'https' : 'http'}://${ways[Math.floor(i / hostCount) % ways.length]!.replace('{port}', host.split(':').at(-1)!)}${path}`;
    }
  : undefined;
const reg = await startRegistry(Number(remotes), hostCount, 0, {
  listenOn: address,
  delayMs: Number(delayMs),
  tls,
  urlOf,
});
process.stdout.write(`${JSON.stringify({ url: reg.url })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === 'stats')
    process.stdout.write(
      `${JSON.stringify({
        initializes: [...reg.initializes.values()].length,
        mostInFlight: reg.mostInFlight(),
        mostInFlightOverall: reg.mostInFlightOverall(),
      })}\n`,
    );
}
await reg.close();
