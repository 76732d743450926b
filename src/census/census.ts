/**
 * `onetap census`: every remote of the official MCP Registry attested as a good guest, resumably, and published as
 * verification records (`./records.ts`). It never reads or writes a curated catalog.
 *
 * A good guest by address, not by spelling: one probe in flight per host (its normalised name and port, `./hosts.ts`)
 * and at least `gapMs` between the end of one probe of a host and the start of the next; a 429 holds its host back
 * for its Retry-After (at most an hour); one address asked on one port at a time, by at most four probes at once
 * (`../net/schedule.ts`; each host name resolved once, through the probes' own guarded lookup); the hosts of the
 * opt-out list are never contacted; an identifying User-Agent. A probe of a live server is three
 * requests (initialize, notifications/initialized, tools/list) and never opens the GET stream; the diagnosis
 * (the spec-correct reading, a few requests more) runs only when the deciding client failed; `--matrix` adds one
 * handshake per other client profile.
 *
 * Resumable: everything lives under the state directory: `registry.jsonl` (the registry as read: the latest version
 * of each server, one per line) and `done.jsonl` (one line per finished URL, appended as it finishes). `resume`
 * reads both and probes only what is not done: a URL is recorded once, and at most `concurrency` URLs in flight at a
 * kill are probed again. The registry is read from that file item by item whenever it is needed, never held whole.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { probe, probeDispatcher } from '../attest/probe.js';
import type { ClientProfile } from '../attest/profile.js';
import { BodyBudget } from '../attest/budget.js';
import { retryAfterMs } from '../attest/retry-after.js';
import { checkUrl, guardedLookup, systemResolver, type Resolver } from '../net/fetcher.js';
import { addressesBy, RESOLVE_MS, resolverWithin } from '../net/host-key.js';
import { eachInTurn } from '../net/schedule.js';
import { observationSchema, type Observation } from '../model/observation.js';
import { check } from '../model/validate.js';
import { boundedObservationLine } from '../store/lines.js';
import { writeAllAtomic, writeFileAtomic } from '../util/atomic.js';
import { runsOf } from '../util/runs.js';
import { ONETAP_VERSION } from '../util/version.js';
import { sameToolsIndex, type ToolSetPrint } from '../policy/same-tools.js';
import { majority } from '../policy/vantages.js';
import { LatestOnly, limited, readRegistry, remotesOf, stateItem, type CensusItem } from './registry.js';
import { hostKey, isLoopback, optedOut, OutageGuard, type HostKey, type OptOut } from './hosts.js';
import { censusEntry, listText, observed, printsOf, type CensusContext, type Observed } from './records.js';

export interface CensusOptions {
  registry: string;
  /** Reverse-domain name of who publishes the records (`io.example`). */
  publisher: string;
  out: string;
  stateDir: string;
  resume: boolean;
  profile: ClientProfile;
  matrix: boolean;
  /** Hosts never contacted (`parseOptOut`). */
  optOut: OptOut;
  expiresAfterDays: number;
  timeoutMs?: number;
  concurrency: number;
  allowPrivate: boolean;
  allowHttp: boolean;
  /** Between the end of one probe of a host and the start of the next, ms (default 1,000). */
  gapMs?: number;
  userAgent: string;
  /** Through the workers of these vantages (their jobs on the store's queue) instead of in this process. */
  vantages?: { names: string[]; storeUrl: string; deadlineMs?: number };
  now?: () => Date;
  onProbed?: (url: string, o: Observation, done: number, total: number) => void;
}

export interface CensusResult {
  /** Exit code: 0 the census completed, 3 the outage guard (nothing written but the state). */
  code: 0 | 3;
  servers: number;
  remotes: number;
  probed: number;
  /** Probed in this run (a resumed run leaves out what was done). */
  probedNow: number;
  skipped: number;
  /** Servers none of whose remotes was probed: over the limits, or invalid against the registry's schema. */
  serversSkipped: number;
  outage: string | null;
}

/** The registry could not be read whole (exit 1): nothing was probed. */
export class RegistryUnreadable extends Error {}

interface Target {
  url: string;
  requiresAuth: boolean;
  host: HostKey;
}

/** Each line of a state file as JSON, as it reads (a line that does not read, cut by a kill, is passed over). */
async function* eachLine(path: string): AsyncGenerator<unknown> {
  const input = createReadStream(path, 'utf8');
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      try {
        yield JSON.parse(line);
      } catch {
        /* a torn last line */
      }
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  } finally {
    input.destroy();
  }
}

/** Each observation of the state's log once (a line cut by a kill does not read: its URL is probed again). */
async function eachDone(path: string, take: (o: Observation) => Promise<void> | void): Promise<void> {
  const seen = new Set<string>();
  for await (const value of eachLine(path)) {
    const c = check(observationSchema, value);
    if (!c.ok || seen.has(c.value.url)) continue;
    seen.add(c.value.url);
    await take(c.value);
  }
}

/** The registry as read, kept in the state: a header line, then one item (the latest version of a server) per line. */
interface SnapshotHeader {
  source: string;
  readAt: string;
  servers: number;
}

async function readAtOf(path: string): Promise<string> {
  for await (const header of eachLine(path)) {
    const readAt = (header as Partial<SnapshotHeader> | null)?.readAt;
    if (typeof readAt === 'string' && !Number.isNaN(Date.parse(readAt))) return readAt;
    break;
  }
  throw new Error(
    `${path}: not the registry as a census read it (no header line with readAt); run without --resume to start over`,
  );
}

/** The snapshot's items, one at a time: never all of them held at once. */
async function* eachItem(path: string): AsyncGenerator<CensusItem> {
  let header = true;
  for await (const value of eachLine(path)) {
    const item = header ? null : stateItem(value);
    if (item) yield item;
    header = false;
  }
}

export async function runCensus(opts: CensusOptions): Promise<CensusResult> {
  const now = opts.now ?? (() => new Date());
  const gap = opts.gapMs ?? 1_000;
  const snapshotPath = join(opts.stateDir, 'registry.jsonl');
  const donePath = join(opts.stateDir, 'done.jsonl');
  await mkdir(opts.stateDir, { recursive: true });
  let readAt = now().toISOString();
  if (opts.resume) readAt = await readAtOf(snapshotPath);
  else await readSnapshot(opts, snapshotPath, readAt, donePath);

  // Targets: each streamable-http URL once; auth-optional when any server lists it with a required header.
  const targets = new Map<string, Target>();
  const skipped = new Map<string, string>();
  let servers = 0;
  let serversSkipped = 0;
  let remotes = 0;
  for await (const item of eachItem(snapshotPath)) {
    servers++;
    if (item.census.skipped) serversSkipped++;
    for (const r of remotesOf(item)) {
      remotes++;
      if (r.kind !== 'streamable-http') continue;
      let host: HostKey;
      try {
        host = hostKey(checkUrl(r.url, { allowPrivate: opts.allowPrivate, allowHttp: opts.allowHttp }));
      } catch (err) {
        skipped.set(r.url, `refused by the address rule: ${(err as Error).message}`);
        continue;
      }
      if (optedOut(opts.optOut, host)) {
        skipped.set(r.url, 'its host opted out');
        continue;
      }
      const t = targets.get(r.url);
      targets.set(r.url, { url: r.url, requiresAuth: (t?.requiresAuth ?? false) || r.requiresAuth, host });
    }
  }

  // Only the URLs are held while probing: the observations stay in the log until the records are made.
  const done = new Set<string>();
  if (opts.resume)
    await eachDone(donePath, (o) => {
      done.add(o.url);
    });
  const todo = [...targets.values()].filter((t) => !done.has(t.url));
  const probedBefore = done.size;
  const log = await open(donePath, 'a');
  let writing: Promise<unknown> = Promise.resolve();
  // One lookup per host name for the whole census: the schedule counts the addresses the probes connect to.
  const lookup = guardedLookup([], resolvedOnce(systemResolver), { allowPrivate: opts.allowPrivate });
  const dispatcher = probeDispatcher(opts.timeoutMs, lookup);
  const budget = new BodyBudget();
  try {
    if (opts.vantages) {
      // Through the workers: one job per URL and vantage (the run id is the registry read's, so a resumed census
      // enqueues nothing twice), one probe per host over every worker, each host resting `gap` after a probe.
      await acrossWorkers(
        todo,
        opts,
        opts.vantages,
        { id: `census-${readAt.replace(/[^0-9TZ]/g, '')}`, startedAt: readAt },
        gap,
        async (o) => {
          await log.write(`${JSON.stringify(boundedObservationLine(o as unknown as Record<string, unknown>))}\n`);
          done.add(o.url);
        },
      );
    } else
      await eachInTurn(
        todo,
        {
          concurrency: opts.concurrency,
          restMs: gap,
          hostOf: (t) => t.host,
          addressesOf: addressesBy(lookup),
          exempt: (a) => opts.allowPrivate && isLoopback(a),
          order: 'most-left',
        },
        async (t) => {
          const result = await probe(t.url, {
            profile: opts.profile,
            matrix: opts.matrix,
            timeoutMs: opts.timeoutMs,
            requiresAuth: t.requiresAuth,
            identity: opts.userAgent,
            allowPrivate: opts.allowPrivate,
            dispatcher,
            budget,
          });
          const { snapshot: _s, ...observation } = result;
          const line = JSON.stringify(boundedObservationLine(observation as unknown as Record<string, unknown>));
          // One write per line, in order: a kill leaves whole lines, or a last one cut short that does not read.
          writing = writing.then(() => log.write(`${line}\n`));
          await writing;
          done.add(t.url);
          opts.onProbed?.(t.url, observation, done.size, targets.size);
          return observation.reason === 'rate-limited' ? retryAfterMs(observation) : 0;
        },
      );
  } finally {
    await log.close();
    dispatcher.destroy().catch(() => {});
  }

  let probed = 0;
  const guard = new OutageGuard();
  await eachDone(donePath, (o) => {
    if (!targets.has(o.url)) return;
    probed++;
    guard.add(o.url, o.reason);
  });
  const result = { servers, remotes, probed, probedNow: probed - probedBefore, skipped: skipped.size, serversSkipped };
  // This machine's network, not the registry's servers: nothing is published (the state stays for a rerun).
  const outage = guard.outage();
  if (outage) return { ...result, code: 3, outage };
  // What the records keep of each observation; its whole JSON goes to its evidence file, one at a time.
  const kept = new Map<string, Observed>();
  const dir = join(dirname(opts.out), 'evidence');
  await mkdir(dir, { recursive: true });
  // Written a thousand at a time: each batch atomically, and never all of them held at once.
  let batch: Array<{ path: string; content: string }> = [];
  await eachDone(donePath, async (o) => {
    if (!targets.has(o.url)) return;
    const { kept: k, json } = observed(o);
    kept.set(o.url, k);
    batch.push({ path: join(dir, `${k.evidence}.json`), content: json });
    if (batch.length >= 1_000) {
      await writeAllAtomic(batch);
      batch = [];
    }
  });
  await writeAllAtomic(batch);
  // Which servers serve the same set: every probed remote, known by its server's name.
  const prints: ToolSetPrint[] = [];
  for await (const item of eachItem(snapshotPath)) prints.push(...printsOf(item, kept));
  const verifiedAt = now();
  const context: CensusContext = {
    observed: kept,
    skipped,
    same: sameToolsIndex(prints),
    publisher: opts.publisher,
    version: ONETAP_VERSION,
    verifiedAt: verifiedAt.toISOString(),
    expiresAt: new Date(verifiedAt.getTime() + opts.expiresAfterDays * 86_400_000).toISOString(),
    method: {
      profile: opts.profile.id,
      protocolVersion: opts.profile.protocolVersion,
      vantages: opts.vantages?.names ?? ['local'],
      signed: false,
      steps: [
        'initialize',
        'notifications/initialized',
        'tools/list',
        ...(opts.matrix ? ['every other client profile'] : []),
        'the spec-correct diagnosis, only when the deciding client failed',
      ],
    },
  };
  // The document one entry at a time, from the snapshot read once more.
  await writeFileAtomic(
    opts.out,
    listText(
      (async function* () {
        for await (const item of eachItem(snapshotPath)) yield censusEntry(item, context);
      })(),
      opts.publisher,
    ),
  );
  return { ...result, code: 0, outage: null };
}

/**
 * The targets through the workers, each URL's answers made one observation by the rules of a run across vantages and
 * handed to `take` as they are read back, a page at a time (never the whole run's observations at once).
 */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function acrossWorkers(
  targets: readonly Target[],
  opts: CensusOptions,
  v: NonNullable<CensusOptions['vantages']>,
  run: { id: string; startedAt: string },
  gapMs: number,
  take: (o: Observation) => Promise<void>,
): Promise<void> {
  const [{ openPgStore }, { awaitAcross }, { acrossVantages, unansweredAt }] = await Promise.all([
    import('../store/pg-store.js'),
    import('../refresh/across.js'),
    import('../decide/decide.js'),
  ]);
  const store = await openPgStore(v.storeUrl);
  try {
    await awaitAcross(
      targets.map((t) => ({ url: t.url, name: t.url, requiresAuth: t.requiresAuth, headers: {} })),
      [],
      store,
      run,
      {
        profile: opts.profile,
        timeoutMs: opts.timeoutMs,
        matrix: opts.matrix,
        allowHttp: opts.allowHttp,
        perHost: 1,
        census: { identity: opts.userAgent, gapMs },
      },
      { vantages: v.names, queueUrl: v.storeUrl, deadlineMs: v.deadlineMs ?? 24 * 3_600_000 },
    );
    const quorum = majority(v.names.length);
    const wanted = new Set(targets.map((t) => t.url));
    const combine = (url: string, answers: Observation[]) =>
      take(acrossVantages(answers, v.names, quorum, () => unansweredAt(url, run, v.names[0]!)).observation);
    // In URL order: a URL's answers are consecutive.
    for await (const [url, answers] of runsOf(store.observationPages(run.id), (o) => o.url)) {
      const asked = answers.filter((o) => v.names.includes(o.vantage));
      if (!asked.length || !wanted.delete(url)) continue;
      await combine(url, asked);
    }
    // No vantage answered by the deadline: unanswered, as a run across vantages says.
    for (const missing of wanted) await combine(missing, []);
  } finally {
    await store.close();
  }
}

/**
 * Each name resolved once (the census's every lookup of it, the schedule's and the probes', gets that answer), in at
 * most `RESOLVE_MS` (a DNS server that does not answer is a temporary failure). Names are told apart as hosts are: no
 * case, no trailing dot.
 */
function resolvedOnce(resolver: Resolver): Resolver {
  const answers = new Map<string, ReturnType<Resolver>>();
  const bounded = resolverWithin(resolver, RESOLVE_MS);
  return (hostname) => {
    const name = hostname.toLowerCase().replace(/\.+$/, '');
    let answer = answers.get(name);
    if (!answer) answers.set(name, (answer = bounded(name)));
    return answer;
  };
}

/**
 * The registry read into the state's `registry.jsonl`: the latest version of each server, each kept (over the
 * limits: the record of why) in a spill file as it is read, so the registry is never held in memory whatever its
 * items' sizes, then written out in the registry's order with what the census made of each (`stateItem`).
 */
async function readSnapshot(
  opts: CensusOptions,
  snapshotPath: string,
  readAt: string,
  donePath: string,
): Promise<void> {
  const spillPath = `${snapshotPath}.read`;
  const spill = await open(spillPath, 'w+');
  try {
    const latest = new LatestOnly<{ pos: number; len: number }>();
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async (file: FileHandle) => {
      if (pending.length) await file.write(Buffer.concat(pending), 0, pendingBytes, size - pendingBytes);
      pending = [];
      pendingBytes = 0;
    };
    try {
      await readRegistry(opts.registry, { allowPrivate: opts.allowPrivate, timeoutMs: 30_000 }, async (item) => {
        latest.add(item, () => {
          const text = Buffer.from(limited(item));
          pending.push(text);
          pendingBytes += text.length;
          size += text.length;
          return { pos: size - text.length, len: text.length };
        });
        if (pendingBytes >= 1024 * 1024) await flush(spill);
      });
      await flush(spill);
    } catch (err) {
      throw new RegistryUnreadable((err as Error).message);
    }
    await rm(donePath, { force: true });
    const header: SnapshotHeader = { source: opts.registry, readAt, servers: latest.size };
    await writeFileAtomic(
      snapshotPath,
      (async function* () {
        yield `${JSON.stringify(header)}\n`;
        for (const at of latest.kept()) {
          const text = Buffer.alloc(at.len);
          await spill.read(text, 0, at.len, at.pos);
          yield `${JSON.stringify(stateItem(JSON.parse(text.toString('utf8'))))}\n`;
        }
      })(),
    );
  } finally {
    await spill.close();
    await rm(spillPath, { force: true });
  }
}
