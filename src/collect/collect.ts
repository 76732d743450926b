/**
 * `collect`: targets → observation records. Every target is probed the way the deciding client connects; each
 * row's own Server Card is fetched while it is probed (no added wall time) and compared with what answered; the
 * canaries say whether this machine reaches the internet. Nothing is decided here and nothing is written: the
 * records carry everything the later stages read, so a caller can collect in one process and decide in another.
 */
import { probeMany, type ProbeManyOptions, type ProbeTarget } from '../attest/probe-many.js';
import type { ProbeResult } from '../attest/probe.js';
import { profileById } from '../attest/profile.js';
import { isReachable } from '../attest/reachable.js';
import { cardMismatches } from '../discover/consistency.js';
import { curatedCard } from '../discover/discover.js';
import type { CanaryCheck } from '../model/plan.js';
import { asUnprocessable } from '../policy/policy.js';
import { LOCAL_VANTAGE } from '../model/limits.js';
import type { Mismatch, Observation } from '../model/observation.js';
import type { StoredSnapshot } from '../model/snapshot.js';

export interface CollectOptions extends Omit<ProbeManyOptions, 'retain' | 'onResult'> {
  /** The run the observations belong to: its id and start time (every observation carries the run's time). */
  run: { id: string; startedAt: string; vantage?: string };
  /** Fetch each target's Server Card and compare it with what answered (default true). */
  cards?: boolean;
  /**
   * Card fetches for this URL, or this canary, may reach a private address (loopback fixtures under `--allow-http`).
   */
  allowPrivateCard?: (url: string) => boolean;
  /** URLs that must answer when this machine's network is up (any HTTP answer counts). */
  canaries?: readonly string[];
  /** Per canary (default 15 s: they only say whether this machine reaches the internet). */
  canaryTimeoutMs?: number;
  /** Called as each target's observation is made (by target index). */
  onObservation?: (o: Observation, index: number) => void;
}

export interface Collected {
  /** One per target, in target order. */
  observations: Observation[];
  /** The tool lists the observations name (`toolsHash`), by hash. */
  snapshots: Map<string, StoredSnapshot>;
  canaries: CanaryCheck;
}

const CANARY_TIMEOUT_MS = 15_000;

export async function collect(targets: readonly ProbeTarget[], opts: CollectOptions): Promise<Collected> {
  const {
    run,
    cards = true,
    allowPrivateCard,
    canaries = [],
    canaryTimeoutMs,
    onObservation,
    onStart,
    ...probeOptions
  } = opts;
  const pendingCards: Array<Promise<unknown | null>> = [];
  const snapshots = new Map<string, StoredSnapshot>();
  const observations: Observation[] = new Array(targets.length);
  const done: Array<Promise<void>> = [];
  const [, reached] = await Promise.all([
    probeMany(targets, {
      ...probeOptions,
      retain: false,
      onStart: (i) => {
        const url = targets[i]!.url;
        if (cards)
          pendingCards[i] = curatedCard(url, {
            allowPrivate: allowPrivateCard?.(url) ?? false,
            fence: probeOptions.fence,
          }).catch(() => null);
        onStart?.(i);
      },
      onResult: (r, i) => {
        done.push(
          observed(r, run, pendingCards[i] ?? Promise.resolve(null)).then(({ observation, snapshot }) => {
            if (snapshot) snapshots.set(snapshot.hash, snapshot);
            observations[i] = observation;
            onObservation?.(observation, i);
          }),
        );
      },
    }),
    Promise.all(
      canaries.map((u) =>
        isReachable(u, Math.min(canaryTimeoutMs ?? CANARY_TIMEOUT_MS, CANARY_TIMEOUT_MS), {
          allowPrivate: allowPrivateCard?.(u) ?? false,
        }),
      ),
    ),
  ]);
  await Promise.all(done);
  return {
    observations,
    snapshots,
    canaries: { configured: canaries.length, reachable: reached.filter(Boolean).length },
  };
}

/**
 * One probe's record in the run, with its card check. Whatever goes wrong here is this row's verdict
 * (review/unprocessable), never the run's: the other rows are decided, written and recorded.
 */
async function observed(
  r: ProbeResult,
  run: CollectOptions['run'],
  card: Promise<unknown | null>,
): Promise<{ observation: Observation; snapshot: StoredSnapshot | null }> {
  const { snapshot, ...probed } = r;
  let o: Observation = { ...probed, run: run.id, vantage: run.vantage ?? LOCAL_VANTAGE, observedAt: run.startedAt };
  try {
    o.cardMismatches = cardCheck(o, await card);
  } catch (err) {
    return { observation: asUnprocessable(o, 'review', err), snapshot: null };
  }
  try {
    JSON.stringify(o); // what will be recorded must serialise
  } catch (err) {
    o = asUnprocessable({ ...o, cardMismatches: null }, 'store', err);
    return { observation: o, snapshot: null };
  }
  return { observation: o, snapshot };
}

/** The server's own card (`<url>/server-card`) against what answered; null without a card. */
function cardCheck(o: Observation, card: unknown | null): Mismatch[] | null {
  if (card === null || o.verdict === 'drop' || o.verdict === 'failed') return null;
  const eras = Object.fromEntries(
    Object.entries(o.matrix ?? {}).flatMap(([id, cell]) => {
      const p = profileById(id);
      return p && p.handshake !== 'app-fallback' ? [[p.protocolVersion, cell.works]] : [];
    }),
  );
  // The deciding client's reading first; when it never got past initialize, the diagnosis's.
  return cardMismatches(card, {
    url: o.url,
    serverVersion: o.serverVersion ?? o.diagnosis?.serverVersion ?? null,
    protocolVersion: o.protocolVersion ?? o.diagnosis?.protocolVersion ?? null,
    eras,
  });
}
