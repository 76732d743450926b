/**
 * `refresh`: collect → decide → apply. Probe every catalog entry (`collect`), decide per row from the records, the
 * history and the acceptances (`decide`, pure), show the plan, then (when recorded) record and apply it
 * (`applyPlan`). The order is the contract: nothing is written before `onPlan` has been called.
 *
 * A run id is recorded once. A run is held by its id while it is decided and recorded (`Store.holdRun`: a second
 * decider of the same id waits); one whose id is recorded already is not probed or decided again: its recorded plan
 * is shown (and applied, when it was not and this run writes).
 */
import { existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { PROBE_MANY_DEFAULTS } from '../attest/probe-many.js';
import type { ProbeOptions } from '../attest/probe.js';
import { alreadyRecordedAction, applyPlan, applyRecordedRun, recordedPlan } from '../apply/apply.js';
import { CatalogError, loadCatalog, type Catalog } from '../catalog/model.js';
import { isLoopbackUrl } from '../catalog/url.js';
import { collect } from '../collect/collect.js';
import { targetOf } from '../attest/keys.js';
import { catalogProfile, type ClientProfile } from '../attest/profile.js';
import { outputsProblems, resolveOutputs } from '../catalog/outputs.js';
import { KOTLIN_PACKAGE, type OutputName } from '../catalog/schema.js';
import { decide } from '../decide/decide.js';
import type { HistoryProblems, Plan, RecordedRun } from '../model/plan.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import { RunRecordedError, type Store, type VantageObservations } from '../store/store.js';
import { defaultDeadlineMs, gatherAcross, type AcrossOptions } from './across.js';

export interface RefreshOptions {
  catalogPath: string;
  /** Where runs are read from and recorded (default: `openStore`'s choice, from ONETAP_STORE_URL in `env`). */
  store?: Store;
  /** Kept for the `--state` flag of 0.1 (the index is in memory since 0.2.0): unused. */
  statePath?: string;
  write?: boolean;
  /**
   * Record the run in the history. Default: only a `write` run records; `true` also records a plan-only run
   * (one that should count); `false` never touches any history or store (e.g. for agents).
   */
  record?: boolean;
  /** Also run every client profile and record the matrix (informational: only the deciding profile decides). */
  matrix?: boolean;
  /** The deciding client profile (default: the catalog's `policy.clientProfile`, else `kai-9000`). */
  profile?: string;
  concurrency?: number;
  /** Probes in flight per host (default 4). */
  perHost?: number;
  /** Progress: a row's probe started / ended (by catalog index). */
  onProbeStart?: (index: number) => void;
  onProbeResult?: (index: number) => void;
  /** Per-request time limit override (default: the catalog's `policy.timeoutMs`, else the profile's own). */
  timeoutMs?: number;
  allowHttp?: boolean;
  confirmDrops?: number;
  /** Directory for generated files (default: the catalog's directory). */
  outDir?: string;
  /** The generated files to write, over the catalog's `outputs` (default: what the catalog says). */
  outputs?: OutputName[];
  /** The generated Kotlin's package, over the catalog's. */
  kotlinPackage?: string;
  /** Days until the next scheduled run (a quiet run refreshes the snapshot's dates only if they go stale first). */
  nextRunDays?: number;
  /** Where probe-only keys are read from (default: this process's environment). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The run's id (default: its start time). */
  runId?: string;
  /**
   * A run across vantages: jobs for workers (`onetap worker`) on the queue, their observations read from the store
   * (which must be one workers record to: PostgreSQL), then one decision per row by the quorum rules.
   */
  vantages?: {
    names: readonly string[];
    quorum: number;
    queueUrl: string;
    deadlineMs?: number;
    pollMs?: number;
  } & Pick<AcrossOptions, 'onWaiting' | 'onPollFailed' | 'onWaited' | 'clock'>;
  /** Called when another process is deciding the same run id: this one waits for it. */
  onRunBusy?: (runId: string) => void;
  /** Called with the plan before anything is written. */
  onPlan?: (plan: Plan) => void;
  /** Passed to every probe (retry delay, user agent, …). */
  probe?: Omit<
    ProbeOptions,
    | 'requiresAuth'
    | 'headers'
    | 'keys'
    | 'missingKeys'
    | 'refusedKeys'
    | 'timeoutMs'
    | 'dispatcher'
    | 'profile'
    | 'matrix'
  >;
  now?: () => Date;
}

export interface RefreshResult {
  plan: Plan;
  probedAt: string;
  /** Every file whose bytes the run changed: generated files, the catalog, the lock, snapshots, the history. */
  written: string[];
  /** A `--write` run that changed nothing: no generated file was written (but perhaps the snapshot's dates). */
  quiet: boolean;
  /** A quiet run that refreshed only the snapshot's dates, which would have gone stale before the next run. */
  datesOnly: boolean;
  /** 0 ran, 3 the outage guard aborted. */
  exitCode: 0 | 3;
  /** History lines skipped as unreadable when this run read the history (they decide nothing). */
  historyProblems: HistoryProblems;
  /**
   * The run id was recorded already: nothing was probed or recorded again, `plan` is the recorded one and `exitCode`
   * the recorded run's (`written` what applying it wrote, when it was recorded but not applied and this run writes).
   */
  alreadyRecorded: boolean;
}

export async function refresh(opts: RefreshOptions): Promise<RefreshResult> {
  const now = opts.now ?? (() => new Date());
  // What would make the write fail is checked before the first probe.
  if (opts.kotlinPackage !== undefined && !KOTLIN_PACKAGE.test(opts.kotlinPackage))
    throw new CatalogError(`--kotlin-package: not a Kotlin package name: "${opts.kotlinPackage}"`);
  if (opts.outDir !== undefined && existsSync(opts.outDir) && !statSync(opts.outDir).isDirectory())
    throw new CatalogError(`--out: ${opts.outDir} exists and is not a directory`);
  const { catalog, text } = await loadCatalog(opts.catalogPath);
  const outputs = resolveOutputs(catalog.outputs, opts.outputs, opts.kotlinPackage);
  const outputProblems = outputsProblems(catalog.outputs, basename(opts.catalogPath));
  if (outputProblems.length) throw new CatalogError(outputProblems.map((p) => `${opts.catalogPath}: ${p}`).join('\n'));
  let profile: ClientProfile;
  try {
    profile = catalogProfile(catalog.policy, opts.profile);
  } catch (err) {
    throw new CatalogError(`${opts.catalogPath}: ${(err as Error).message}`);
  }
  const insecure = catalog.servers.filter(
    (s) => !s.url.startsWith('https://') && !(opts.allowHttp && s.url.startsWith('http://') && isLoopbackUrl(s.url)),
  );
  if (insecure.length)
    throw new CatalogError(
      `${opts.catalogPath}: HTTPS only (--allow-http opens http:// on loopback only): ${insecure.map((s) => s.url).join(', ')}`,
    );
  const recorded = opts.record ?? !!opts.write;
  // The store (and the schemas that validate what it reads) loads when a refresh runs, not with the CLI: the one
  // factory's choice (the text history beside the catalog, or PostgreSQL named by ONETAP_STORE_URL in `env`).
  const store = opts.store ?? (await (await import('../store/open.js')).openStore(opts.catalogPath, { env: opts.env }));
  try {
    const historyProblems = await store.problems();
    const confirmDrops = opts.confirmDrops ?? catalog.policy.confirmDrops ?? 1;
    const startedAt = now().toISOString();
    const asked = { id: opts.runId ?? startedAt, startedAt };
    // A run that records is held by its id until it is recorded: a second decider of it waits, then finds it recorded.
    const release = recorded ? await store.holdRun(asked.id, () => opts.onRunBusy?.(asked.id)) : null;
    try {
      const before = await store.recordedRun(asked.id);
      if (before && alreadyRecordedAction(before.run, !!opts.write) !== 'decide')
        return await shown(before, { opts, catalog, text, outputs, store, historyProblems });
      return await decided(asked, {
        opts,
        catalog,
        text,
        outputs,
        store,
        historyProblems,
        profile,
        confirmDrops,
        recorded,
        now,
      });
    } catch (err) {
      // Recorded meanwhile by a decider this one did not wait for (its hold was lost): the run as that one recorded it
      // (`onPlan` is then called a second time, with that plan: the one that stands).
      if (!(err instanceof RunRecordedError)) throw err;
      const by = await store.recordedRun(err.runId);
      if (!by) throw err;
      return await shown(by, { opts, catalog, text, outputs, store, historyProblems });
    } finally {
      await release?.();
    }
  } finally {
    if (!opts.store) await store.close();
  }
}

/** What a refresh works with once the catalog and the store are open. */
interface Context {
  opts: RefreshOptions;
  catalog: Catalog;
  text: string;
  outputs: ReturnType<typeof resolveOutputs>;
  store: Store;
  historyProblems: HistoryProblems;
}

/**
 * A run whose id is recorded already: its recorded plan, and its recorded exit code; applied now when it was recorded
 * but not applied and this run writes (`alreadyRecordedAction`). Nothing is probed or recorded again.
 */
async function shown(
  before: RecordedRun,
  { opts, catalog, text, outputs, store, historyProblems }: Context,
): Promise<RefreshResult> {
  const plan = recordedPlan(before);
  const exitCode = plan.aborted ? 3 : 0;
  const result: RefreshResult = {
    plan,
    probedAt: before.run.startedAt,
    written: [],
    quiet: false,
    datesOnly: false,
    exitCode,
    historyProblems,
    alreadyRecorded: true,
  };
  opts.onPlan?.(plan);
  if (alreadyRecordedAction(before.run, !!opts.write) !== 'apply') return result;
  // The tool lists its rows name, as stored when it was recorded (the acceptances on first use carry their digests).
  const snapshots = new Map<string, StoredSnapshot>();
  for (const r of plan.rows) {
    if (r.toolsHash === null || snapshots.has(r.toolsHash)) continue;
    const read = await store.snapshot(r.toolsHash, r.snapshotSha256);
    if (read.snapshot) snapshots.set(r.toolsHash, read.snapshot);
  }
  const applied = await applyRecordedRun(before, {
    store,
    catalogPath: opts.catalogPath,
    catalog,
    catalogText: text,
    snapshots,
    lock: await store.acceptances(),
    outDir: opts.outDir,
    outputs,
    nextRunDays: opts.nextRunDays,
    now: opts.now,
  });
  return { ...result, ...applied };
}

/** A run not recorded yet: collected (here or by the workers), decided, and recorded and applied when asked. */
async function decided(
  asked: { id: string; startedAt: string },
  ctx: Context & { profile: ClientProfile; confirmDrops: number; recorded: boolean; now: () => Date },
): Promise<RefreshResult> {
  const { opts, catalog, text, outputs, store, historyProblems, profile, confirmDrops, recorded, now } = ctx;
  // Here, or by the workers of several vantages (then the quorum rules decide): each row's observations. A run across
  // vantages is the run as its first enqueue registered it: its start is that one's, whoever decides it.
  const collected = opts.vantages
    ? await collectAcross(opts, catalog, store, asked, profile)
    : await collect(
        catalog.servers.map((s) => targetOf(s, opts.env, catalog.policy.keyEnv)),
        {
          ...opts.probe,
          run: asked,
          concurrency: opts.concurrency ?? PROBE_MANY_DEFAULTS.concurrency,
          perHost: opts.perHost,
          timeoutMs: opts.timeoutMs ?? catalog.policy.timeoutMs,
          profile,
          matrix: opts.matrix,
          allowPrivateCard: (url) => !!opts.allowHttp && isLoopbackUrl(url),
          canaries: catalog.policy.canaries ?? [],
          canaryTimeoutMs: opts.timeoutMs ?? catalog.policy.timeoutMs,
          onStart: opts.onProbeStart,
          onObservation: opts.onProbeResult ? (_, i) => opts.onProbeResult!(i) : undefined,
        },
      ).then((c) => ({
        ...c,
        observations: c.observations.map((o) => [o]),
        unanswered: undefined,
        vantages: undefined,
        warnings: [],
        run: asked,
      }));
  const run = collected.run;
  // What decide reads besides the records: the acceptances, the accepted lists (verified), the rows before.
  const lock = await store.acceptances();
  const warnings: string[] = [...collected.warnings];
  const snapshots = new Map<string, StoredSnapshot>(collected.snapshots);
  for (const o of collected.observations.flat()) {
    const accepted = lock.servers[o.url];
    if (!accepted || o.toolsHash === null || o.toolsHash === accepted.hash || snapshots.has(accepted.hash)) continue;
    const read = await store.snapshot(accepted.hash, accepted.snapshotSha256);
    if (read.warning) warnings.push(read.warning);
    if (read.snapshot) snapshots.set(accepted.hash, read.snapshot);
  }
  const history = await Promise.all(catalog.servers.map((s) => store.recent(s.url, confirmDrops + 1)));
  const plan = decide({
    rows: catalog.servers.map((s, i) => ({
      name: s.name,
      url: s.url,
      observations: collected.observations[i]!,
      unanswered: collected.unanswered?.[i],
      history: history[i]!,
    })),
    lock,
    snapshots,
    snapshotSha256: await store.snapshotDigests([...collected.snapshots.values()], !!opts.write),
    confirmDrops,
    canaries: collected.canaries,
    warnings,
    vantages: collected.vantages,
    maxToolTokens: catalog.policy.maxToolTokens,
  });
  opts.onPlan?.(plan);
  const exitCode = plan.aborted ? 3 : 0;
  const result = {
    plan,
    probedAt: run.startedAt,
    written: [],
    quiet: false,
    datesOnly: false,
    exitCode,
    historyProblems,
    alreadyRecorded: false,
  } as const;
  if (!recorded) return { ...result, written: [] };
  const applied = await applyPlan(plan, {
    store,
    catalogPath: opts.catalogPath,
    catalog,
    catalogText: text,
    run,
    write: !!opts.write,
    snapshots: collected.snapshots,
    lock,
    outDir: opts.outDir,
    outputs,
    nextRunDays: opts.nextRunDays,
    now,
  });
  return { ...result, ...applied };
}

/** A run across vantages, the collecting half: the workers probe; their observations come back per row. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function collectAcross(
  opts: RefreshOptions,
  catalog: Catalog,
  store: Store,
  asked: { id: string; startedAt: string },
  profile: ClientProfile,
) {
  const v = opts.vantages!;
  const s = store as Store & Partial<VantageObservations>;
  if (typeof s.observationsOf !== 'function' || typeof s.canariesOf !== 'function')
    throw new CatalogError(
      'a run across vantages needs a store workers record to (PostgreSQL: --store or ONETAP_STORE_URL)',
    );
  const timeoutMs = opts.timeoutMs ?? catalog.policy.timeoutMs;
  const gathered = await gatherAcross(
    catalog.servers,
    catalog.policy.canaries ?? [],
    s as Store & VantageObservations,
    asked,
    {
      profile,
      timeoutMs,
      matrix: !!opts.matrix,
      allowHttp: !!opts.allowHttp,
      perHost: opts.perHost ?? PROBE_MANY_DEFAULTS.perHost,
    },
    {
      vantages: v.names,
      queueUrl: v.queueUrl,
      deadlineMs: v.deadlineMs ?? defaultDeadlineMs(profile, timeoutMs),
      pollMs: v.pollMs,
      onWaiting: v.onWaiting,
      onPollFailed: v.onPollFailed,
      onWaited: v.onWaited,
      clock: v.clock,
      signed: catalog.policy.signedVantages === true,
      env: opts.env,
      keyEnv: catalog.policy.keyEnv,
    },
  );
  const run = gathered.run;
  return {
    run,
    observations: catalog.servers.map((srv) => gathered.byUrl.get(srv.url) ?? []),
    snapshots: gathered.snapshots,
    unanswered: catalog.servers.map((srv) => gathered.unanswered.get(srv.url)),
    // Each vantage's canaries decide for it (the rules in `decide`); none for the run as a whole.
    canaries: { configured: 0, reachable: 0 },
    vantages: { asked: v.names, quorum: v.quorum, canaries: gathered.canaries, run },
    warnings: gathered.warnings,
  };
}
