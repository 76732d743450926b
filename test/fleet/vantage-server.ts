/**
 * The fleet as one vantage sees it: `node dist/test/fleet/vantage-server.js <port>=<ok|hang> …`, run inside a network
 * namespace, so the same URL (`http://127.0.0.1:<port>/ok-json`) answers in one vantage, hangs in another, and is
 * refused where nothing listens. Prints "ready" once every port listens.
 */
import { answer, startFleet } from './fleet.js';

const MODES: Record<string, Parameters<typeof startFleet>[0]> = {
  ok: {},
  hang: {
    'ok-json': () => {
      /* never answers */
    },
  },
  // tools/list answered after 4 s, saying so when it arrives (a test kills the worker waiting for it)
  slow: {
    'ok-json': (c) =>
      c.msg?.method === 'tools/list'
        ? void (process.stdout.write('slow tools/list\n'), setTimeout(() => answer(c), 4_000))
        : answer(c),
  },
};

for (const arg of process.argv.slice(2)) {
  const [port, mode] = arg.split('=');
  await startFleet(MODES[mode!], Number(port));
}
process.stdout.write('ready\n');
