/**
 * A census as verification records another registry client can check (pure): the sub-registry as one v0.1 list
 * document, each item's `_meta` carrying the registry's own entry and `"<publisher>/verification"` with what was
 * checked, how, when, until when, and a digest of each remote's recorded observation (its JSON is published beside
 * the document as `evidence/<digest>.json`). docs/census.md documents the field. The records are not signed.
 */
import { createHash } from 'node:crypto';
import type { Checks, CheckResult, RemoteRecord, Verification } from '../model/census.js';
import type { Observation } from '../model/observation.js';
import type { SameTools } from '../model/plan.js';
import { NETWORK_LEVEL } from '../policy/policy.js';
import type { ToolSetPrint } from '../policy/same-tools.js';
import { remotesOf, type CensusItem } from './registry.js';

/**
 * Failures before any HTTP answer: the server could not be reached at all (the network-level ones, or its origin's).
 */
const UNREACHED: ReadonlySet<string> = new Set([...NETWORK_LEVEL, 'origin-dns', 'origin-tls']);
const NOT_MCP = new Set([
  'http-404',
  'http-410',
  'not-mcp',
  'not-streamable-http',
  'non-retryable-5xx',
  'retryable-5xx',
  'edge-blocked',
  'rate-limited',
  'redirected',
  'handshake-error',
  'era-incompatible',
  'oversize',
  'unprocessable',
]);
const AUTH = new Set(['auth-required', 'payment-required']);

/** The checks an observation passed, each one a result that could have gone the other way. */
export function checksOf(o: Pick<Observation, 'verdict' | 'reason' | 'httpStatus' | 'toolCount'>): Checks {
  const reached = !UNREACHED.has(o.reason) || o.httpStatus !== null;
  const auth: CheckResult = !reached ? 'not run' : AUTH.has(o.reason) ? 'failed' : 'passed';
  const mcp: CheckResult = !reached || auth === 'failed' ? 'not run' : NOT_MCP.has(o.reason) ? 'failed' : 'passed';
  const tools: CheckResult =
    mcp !== 'passed' ? 'not run' : (o.toolCount ?? 0) > 0 || o.reason === 'auth-optional' ? 'passed' : 'failed';
  return {
    reachable: reached ? 'passed' : 'failed',
    mcp,
    tools,
    auth,
    'one-tap': o.verdict === 'live' ? 'passed' : 'failed',
  };
}

const NOT_RUN: Checks = {
  reachable: 'not run',
  mcp: 'not run',
  tools: 'not run',
  auth: 'not run',
  'one-tap': 'not run',
};

export const evidenceDigest = (json: string) => createHash('sha256').update(json).digest('hex');

/** What a record keeps of a remote's observation (the whole one is its evidence file). */
export type Observed = Pick<
  Observation,
  | 'verdict'
  | 'reason'
  | 'httpStatus'
  | 'toolCount'
  | 'toolsHash'
  | 'toolsDigest'
  | 'nameBlindDigest'
  | 'descriptionBlindDigest'
  | 'tokens'
> & {
  /** SHA-256 of the observation's JSON: its evidence file's name. */
  evidence: string;
};

/** The observation as a record keeps it, and its evidence file (digest and JSON). */
export function observed(o: Observation): { kept: Observed; json: string } {
  const json = JSON.stringify(o);
  return {
    kept: {
      verdict: o.verdict,
      reason: o.reason,
      httpStatus: o.httpStatus,
      toolCount: o.toolCount,
      toolsHash: o.toolsHash,
      toolsDigest: o.toolsDigest,
      nameBlindDigest: o.nameBlindDigest ?? null,
      descriptionBlindDigest: o.descriptionBlindDigest ?? null,
      tokens: o.tokens ?? null,
      evidence: evidenceDigest(json),
    },
    json,
  };
}

/** What every record of one census shares. */
export interface CensusContext {
  /** Per probed URL, what the record keeps of its observation. */
  observed: ReadonlyMap<string, Observed>;
  /** Per URL not probed although streamable-http, why (opted out, the address rule). */
  skipped: ReadonlyMap<string, string>;
  /** The other servers serving a remote's tool set: `sameToolsIndex` over every item's `printsOf`. */
  same: (print: ToolSetPrint) => SameTools[];
  publisher: string;
  version: string;
  verifiedAt: string;
  expiresAt: string;
  method: Verification['method'];
}

export interface CensusEntry {
  server: Record<string, unknown>;
  _meta: Record<string, unknown>;
}

const printOf = (name: string, url: string, o: Observed): ToolSetPrint => ({
  name,
  url,
  toolCount: o.toolCount,
  toolsDigest: o.toolsDigest,
  nameBlindDigest: o.nameBlindDigest ?? null,
  descriptionBlindDigest: o.descriptionBlindDigest ?? null,
});

/** The tool sets an item's probed remotes serve, known by the server's name. */
export function printsOf(item: CensusItem, observed: ReadonlyMap<string, Observed>): ToolSetPrint[] {
  return remotesOf(item).flatMap((r) => {
    const o = observed.get(r.url);
    return o ? [printOf(item.server.name as string, r.url, o)] : [];
  });
}

/** One item of the list document: the registry's item with the census's verification of each of its remotes. */
export function censusEntry(item: CensusItem, ctx: CensusContext): CensusEntry {
  const name = item.server.name as string;
  const remotes = remotesOf(item).map((r): RemoteRecord => {
    const o = ctx.observed.get(r.url);
    if (!o) {
      const why = r.why ?? ctx.skipped.get(r.url) ?? 'not probed';
      return {
        url: r.url,
        verdict: 'not probed',
        reason: why,
        checks: NOT_RUN,
        toolsHash: null,
        toolCount: null,
        tokens: null,
        sameToolsAs: [],
        evidence: null,
      };
    }
    return {
      url: r.url,
      verdict: o.verdict,
      reason: o.reason,
      checks: checksOf(o),
      toolsHash: o.toolsHash,
      toolCount: o.toolCount,
      tokens: o.tokens ?? null,
      sameToolsAs: ctx.same(printOf(name, r.url, o)).filter((s) => s.name !== name),
      evidence: o.evidence,
    };
  });
  const verification: Verification = {
    verifier: { publisher: ctx.publisher, tool: 'onetap', version: ctx.version },
    verifiedAt: ctx.verifiedAt,
    expiresAt: ctx.expiresAt,
    method: ctx.method,
    remotes,
    serverJson: item.census.serverJson,
    skipped: item.census.skipped,
  };
  return { server: item.server, _meta: { ...item._meta, [`${ctx.publisher}/verification`]: verification } };
}

/**
 * The list document's JSON text in parts, exactly as `JSON.stringify({servers, metadata: {count, publisher}}, null,
 * 2)` writes it, one entry at a time: a census of the whole registry is never held as one document. `publisher` says
 * whose records it holds: a reader shows the records under its key as the census's, any other as a claim.
 */
export async function* listText(
  entries: Iterable<CensusEntry> | AsyncIterable<CensusEntry>,
  publisher: string,
): AsyncGenerator<string> {
  let count = 0;
  for await (const entry of entries) {
    // JSON text has no raw line breaks inside strings, so every one is between values: indent each by two levels.
    yield `${count ? ',\n' : '{\n  "servers": [\n'}    ${JSON.stringify(entry, null, 2).replaceAll('\n', '\n    ')}`;
    count++;
  }
  const metadata = JSON.stringify({ count, publisher }, null, 2).replaceAll('\n', '\n  ');
  yield count
    ? `\n  ],\n  "metadata": ${metadata}\n}\n`
    : `${JSON.stringify({ servers: [], metadata: { count: 0, publisher } }, null, 2)}\n`;
}
