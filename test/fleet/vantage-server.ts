/**
 * The fleet as one vantage sees it: `node dist/test/fleet/vantage-server.js <port>=<ok|hang> …`, run inside a network
 * namespace, so the same URL (`http://127.0.0.1:<port>/ok-json`) answers in one vantage, hangs in another, and is
 * refused where nothing listens. Prints "ready" once every port listens.
 */
import { startFleet } from './fleet.js';

for (const arg of process.argv.slice(2)) {
  const [port, mode] = arg.split('=');
  await startFleet(mode === 'hang' ? { 'ok-json': () => { /* never answers */ } } : {}, Number(port));
}
process.stdout.write('ready\n');
