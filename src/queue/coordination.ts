/**
 * What the workers of a run across vantages share through their store, as the queue needs it: the host leases
 * (per-host and per-address slots, and the not-before times a 429 or a census's rest set), and the vantages'
 * observations. Declared here, above the store: the PostgreSQL store (`store/pg-store.ts`) satisfies it
 * structurally, without importing it, and a worker depends on the interface, not on the store.
 */
import type { CanaryCheck } from '../model/plan.js';
import type { Observation } from '../model/observation.js';
import type { StoredSnapshot } from '../model/snapshot.js';
import type { VantageObservations } from '../store/store.js';

/**
 * Politeness shared by every prober of a store: leased slots on a host and on its addresses (a lease ends when it
 * expires, `leaseMs` after its last renewal) and the host's not-before time. A scheduler of probes takes its leases
 * through this interface.
 */
export interface HostLeases {
  /** One of a host's `limit` slots for `holder`, unless all are held or the host is held back: the slot, or null. */
  acquireHost(host: string, limit: number, holder: string, leaseMs: number): Promise<number | null>;
  /** Extends a held slot's lease (false: it expired and was taken by another). */
  renewHost(host: string, slot: number, holder: string, leaseMs: number): Promise<boolean>;
  releaseHost(host: string, slot: number, holder: string): Promise<void>;
  /** A slot on each of `addresses` (asked on `port`, at most `limit` holders each): all of them or none (false). */
  acquireAddresses(
    addresses: readonly string[],
    port: number,
    limit: number,
    holder: string,
    leaseMs: number,
  ): Promise<boolean>;
  /** Extends `holder`'s unexpired address leases; false when one of them was not held any more. */
  renewAddresses(addresses: readonly string[], holder: string, leaseMs: number): Promise<boolean>;
  releaseAddresses(addresses: readonly string[], holder: string): Promise<void>;
  /** No prober asks `host` for `ms` from now, by the store's clock (a later time already set stays). */
  holdHost(host: string, ms: number): Promise<void>;
}

/** What a worker records of a job: its observation (the first one stays: true when this one did), its canaries. */
export interface VantageRecords {
  recordObservation(o: Observation, snapshot: StoredSnapshot | null, key?: string | null): Promise<boolean>;
  recordCanaries(runId: string, vantage: string, canaries: CanaryCheck, key?: string | null): Promise<void>;
}

/** The queue's coordination: leases, not-before times, and the vantages' observations written and read. */
export interface Coordination extends HostLeases, VantageRecords, VantageObservations {
  /** Whether the store answers now (a worker that lost it asks before it takes jobs again). */
  reachable(): Promise<boolean>;
}
