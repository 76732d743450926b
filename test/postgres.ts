/**
 * PostgreSQL for tests: the machine's server (127.0.0.1:5432, trust auth, database `test`, or
 * `ONETAP_TEST_POSTGRES`), each test in a schema of its own, dropped afterwards. Without a server the tests skip
 * with one line naming what is missing; `.ci/run` fails when anything was skipped where the services run.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';

export const POSTGRES = process.env.ONETAP_TEST_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432/test';

let reachable: Promise<string | null> | null = null;

/** Null when the server answers, else why the tests skip (one line). */
export function postgresMissing(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 3_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (err) {
      return `PostgreSQL not reachable at ${POSTGRES.replace(/:[^:@/]*@/, ':***@')} (${(err as Error).message}): set ONETAP_TEST_POSTGRES or start it`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return reachable;
}

let made = 0;

/**
 * A fresh schema's store URL (`?schema=`), and how to drop it (its queue's schema too, which `store migrate` makes).
 * `base` may point elsewhere (a proxy, the socket).
 */
export async function freshSchema(
  label: string,
  base = POSTGRES,
): Promise<{ url: string; schema: string; drop: () => Promise<void> }> {
  const schema = `t_${label
    .replace(/[^a-z0-9_]/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${process.pid}_${++made}`;
  const drop = () => sql(`DROP SCHEMA IF EXISTS "${schema}", "${schema}_queue" CASCADE`).then(() => {});
  await drop();
  const sep = base.includes('?') ? '&' : '?';
  return { url: `${base}${sep}schema=${schema}`, schema, drop };
}

/** Runs one statement on the test database (not through onetap). */
export async function sql<R = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: POSTGRES });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** A TCP proxy to PostgreSQL that cuts every connection once a client sends `cutOn` (armed), and refuses none. */
export async function proxy(): Promise<{
  port: number;
  arm: (text: string | null) => void;
  cuts: () => number;
  close: () => Promise<void>;
}> {
  let cutOn: string | null = null;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const srv: Server = createServer((client) => {
    const upstream = connect(5432, '127.0.0.1');
    sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (cutOn !== null && chunk.includes(cutOn)) {
        cuts++;
        cut();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', cut).on('error', cut);
    upstream.on('close', cut).on('error', cut);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as { port: number }).port,
    arm: (text) => {
      cutOn = text;
    },
    cuts: () => cuts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => srv.close(r));
    },
  };
}
