/**
 * A TCP proxy to PostgreSQL for the chaos suite (`test/vantages-chaos.test.ts`), controlled by the test: workers
 * reach the database through it, and the test cuts, refuses and pauses what passes.
 *
 * - `cut()`: every connection through it destroyed at once (both sides), as a network failure does;
 * - `refuse()` / `accept()`: stop listening (a new connection is refused: ECONNREFUSED) and listen again on the
 *   same port;
 * - `outage(ms)`: `cut()` and `refuse()` for `ms`, then `accept()`;
 * - `pause()` / `resume()`: stop forwarding in both directions (the connections stay open, bytes are held in the
 *   proxy, new connections are accepted and held too) and then deliver everything held, in order, as a database
 *   that stops answering for a while does.
 *
 * Unlike `proxy()` in `test/postgres.ts` (which cuts on a byte pattern and never refuses), this one acts on time and
 * on the whole link.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { POSTGRES } from '../postgres.js';

export interface PgProxy {
  port: number;
  /** `url` (a URL of the test database, `127.0.0.1:5432`) rewritten to go through the proxy. */
  through: (url: string) => string;
  /** Destroys every open connection. */
  cut: () => void;
  /** Stops listening: new connections are refused until `accept()`. */
  refuse: () => Promise<void>;
  /** Listens again on the same port. */
  accept: () => Promise<void>;
  /** Cuts every connection and refuses new ones for `ms`, then accepts again. */
  outage: (ms: number) => Promise<void>;
  /** Stops forwarding (bytes held in both directions) until `resume()`. */
  pause: () => void;
  resume: () => void;
  /** Connections accepted so far, and destroyed by `cut()` so far. */
  accepted: () => number;
  cuts: () => number;
  close: () => Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket;
  toUpstream: Buffer[];
  toClient: Buffer[];
}

export async function pgProxy(target = new URL(POSTGRES)): Promise<PgProxy> {
  const upstreamHost = target.hostname || '127.0.0.1';
  const upstreamPort = Number(target.port || 5432);
  const links = new Set<Link>();
  const servers = new Set<Server>();
  let paused = false;
  let accepted = 0;
  let cuts = 0;
  let listening: Server | null = null;

  const onConnection = (client: Socket) => {
    accepted++;
    const upstream = connect(upstreamPort, upstreamHost);
    const link: Link = { client, upstream, toUpstream: [], toClient: [] };
    links.add(link);
    const end = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d: Buffer) => {
      if (paused) link.toUpstream.push(d);
      else upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (paused) link.toClient.push(d);
      else client.write(d);
    });
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  };

  const listen = async (port: number): Promise<number> => {
    for (let attempt = 0; ; attempt++) {
      const srv = createServer(onConnection);
      try {
        await new Promise<void>((resolve, reject) => {
          srv.once('error', reject);
          srv.listen(port, '127.0.0.1', () => resolve());
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE' && attempt < 50) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        throw err;
      }
      servers.add(srv);
      listening = srv;
      return (srv.address() as { port: number }).port;
    }
  };

  const port = await listen(0);
  const cut = () => {
    for (const l of [...links]) {
      cuts++;
      l.client.destroy();
      l.upstream.destroy();
      links.delete(l);
    }
  };
  const refuse = async () => {
    const srv = listening;
    listening = null;
    if (!srv) return;
    // close() stops listening now; its callback waits for the connections it accepted, which cut() ends.
    await new Promise<void>((resolve) => {
      srv.close(() => resolve());
      cut();
    });
    servers.delete(srv);
  };
  const accept = async () => {
    if (!listening) await listen(port);
  };

  return {
    port,
    through: (url) => url.replace(`${upstreamHost}:${upstreamPort}`, `127.0.0.1:${port}`),
    cut,
    refuse,
    accept,
    outage: async (ms) => {
      cut();
      await refuse();
      await new Promise((r) => setTimeout(r, ms));
      await accept();
    },
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      for (const l of links) {
        for (const d of l.toUpstream.splice(0)) l.upstream.write(d);
        for (const d of l.toClient.splice(0)) l.client.write(d);
      }
    },
    accepted: () => accepted,
    cuts: () => cuts,
    close: async () => {
      paused = false;
      cut();
      await Promise.all([...servers].map((s) => new Promise<void>((r) => s.close(() => r()))));
      servers.clear();
      listening = null;
    },
  };
}
