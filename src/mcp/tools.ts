/**
 * The tools of `onetap mcp`: each a thin call into the library, its input a zod schema (the handler's arguments are
 * what it parses; the published JSON Schema is what zod generates), a JSON Schema for its output, a text summary for
 * the model and `structuredContent` carrying what the matching `--json` prints.
 * Nothing here writes: no catalog write, no history record, no add, no accept.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { planRowJsonSchema, probeJsonSchema } from '../model/views.js';
import { planSummarySchema } from '../model/plan.js';
import { join } from 'node:path';
import { loadCatalog, parseCatalog, type Catalog } from '../catalog/model.js';
import { lintCatalog } from '../catalog/lint.js';
import { discover, DISCOVERY_LIMITS } from '../discover/discover.js';
import { addCommand } from '../discover/eligibility.js';
import { assertPublicTarget, FetchRefused, guardedLookup } from '../net/fetcher.js';
import { detailOf, POLICY_TABLE, REASON_TEXT, type Reason } from '../policy/policy.js';
import { refresh } from '../refresh/refresh.js';
import { planJson } from '../views/plan.js';
import type { ProbeResult } from '../attest/probe.js';
import { probeMany } from '../attest/probe-many.js';
import { catalogProfile, CLIENT_PROFILES, DEFAULT_PROFILE_ID } from '../attest/profile.js';
import { probeJson } from '../views/probe.js';
import { inert } from '../text/escape.js';
import { APP_WOULD_SAY, describe, matrixLine } from '../model/describe.js';
import { confinedPath } from './confine.js';
import { openStore } from '../store/open.js';
import { toolSetPrints } from '../store/tool-sets.js';
import { ProgressCounter, withinTime, type McpLimits } from './limits.js';

/** A refusal the model should read and can act on (bad input, a forbidden target, a limit). */
export class ToolRefused extends Error {}

export interface ToolContext {
  /** Real path of the directory the server was started in; catalog paths stay inside it. */
  root: string;
  allowPrivate: boolean;
  limits: McpLimits;
  /** Reports progress when the caller asked for it (a progressToken); a no-op otherwise. */
  progress: (progress: number, total: number | undefined, message: string) => void;
  /**
   * The PostgreSQL store the tools read (`--store`); else `openStore`'s choice (ONETAP_STORE_URL, the text history).
   */
  store?: string;
}

export interface ToolOutcome {
  summary: string;
  structured: Record<string, unknown>;
}

/** A tool as written here: its arguments are what `inputSchema` parses. */
interface ToolDefinition<I extends z.ZodObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: Record<string, unknown>;
  annotations: { title: string; readOnlyHint: true; openWorldHint: boolean };
  run: (args: z.output<I>, ctx: ToolContext) => Promise<ToolOutcome>;
}

/** A tool as the server lists and calls it: its input schema as JSON Schema, and a call that parses its arguments. */
export interface ToolSpec extends Omit<ToolDefinition<z.ZodObject>, 'inputSchema' | 'run'> {
  inputSchema: Record<string, unknown>;
  /** Parses `args` with the tool's schema and runs it; arguments the schema refuses are a `ToolRefused`. */
  call: (args: unknown, ctx: ToolContext) => Promise<ToolOutcome>;
}

/** Where in the arguments a problem is (a JSON pointer), or `(arguments)`. */
const pointer = (path: readonly PropertyKey[]) => (path.length ? `/${path.map(String).join('/')}` : '(arguments)');

/** A tool ready to list and call: its zod input schema published as the JSON Schema zod generates. */
function defineTool<I extends z.ZodObject>(tool: ToolDefinition<I>): ToolSpec {
  const { inputSchema, run, ...rest } = tool;
  const { $schema: _, ...json } = z.toJSONSchema(inputSchema, { io: 'input' });
  return {
    ...rest,
    inputSchema: json,
    call: async (args, ctx) => {
      const parsed = inputSchema.safeParse(args);
      if (!parsed.success)
        throw new ToolRefused(
          `invalid arguments for ${tool.name}: ${parsed.error.issues.map((e) => `${pointer(e.path)} ${e.message}`).join('; ')}`,
        );
      return run(parsed.data, ctx);
    },
  };
}

const DEFAULT_CATALOG = 'catalog/servers.json';
const str = { type: 'string' } as const;
const strOrNull = { type: ['string', 'null'] } as const;

/**
 * A view's JSON Schema, derived from the record's (`src/model/views.ts`), without its `$schema` (it sits inside a
 * tool's).
 */
function viewSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

/** The per-URL object of `probe --json`. */
const probeResultSchema = viewSchema(probeJsonSchema);

const catalogPathSchema = z
  .string()
  .min(1)
  .describe(`Path of a catalog file inside the directory the server was started in (default ${DEFAULT_CATALOG}).`);

/** Runs `work` under the call's time limit with a progress heartbeat. */
async function timed<T>(ctx: ToolContext, counter: ProgressCounter, label: () => string, work: Promise<T>) {
  const started = Date.now();
  const heartbeat = setInterval(() => {
    ctx.progress(counter.beat(), counter.total, `${label()}; ${Math.round((Date.now() - started) / 1000)} s so far`);
  }, ctx.limits.heartbeatMs);
  try {
    return await withinTime(work, ctx.limits.callTimeMs);
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Every network target must pass discovery's address rule unless the server was started with --allow-private:
 * checked up front (IP literals, `localhost`, and the addresses names resolve to), so a refused call contacts
 * nothing; the probes' own lookups check again on every connection (a name may answer differently later).
 */
async function refuseTargets(urls: string[], ctx: ToolContext, what: string): Promise<void> {
  const refusals = await Promise.all(
    urls.map((u) =>
      assertPublicTarget(u, { allowPrivate: ctx.allowPrivate }).then(
        () => null,
        (err: unknown) => `${inert(u)}: ${err instanceof Error ? err.message : String(err)}`,
      ),
    ),
  );
  const refused = refusals.filter((r) => r !== null);
  if (refused.length)
    throw new ToolRefused(`refused, nothing was contacted (${what}):\n${refused.map((r) => `- ${r}`).join('\n')}`);
}

const lookupFor = (ctx: ToolContext) => (ctx.allowPrivate ? undefined : guardedLookup());

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

function probeLine(r: ProbeResult): string {
  const tools = r.tools === null ? '' : `, ${r.tools.length} tools`;
  const d = describe(r);
  const notes = [
    d.error ? inert(d.error) : null,
    d.appSays ? `${APP_WOULD_SAY}: ${inert(d.appSays)}` : null,
    r.matrix ? matrixLine(r.matrix) : null,
  ].filter((n) => n !== null);
  return `- ${inert(r.url)}: ${d.outcome}${tools} (${detailOf(r)})${notes.map((n) => `; ${n}`).join('')}`;
}

const probeTool = defineTool({
  name: 'probe',
  title: 'Attest MCP servers the way the app connects',
  description: [
    "Use to check whether remote MCP servers (Streamable HTTP URLs) work for the app: it runs the app's own client handshake",
    '(initialize, notifications/initialized, tools/list) against each URL and returns the verdict (live, review, drop, failed),',
    'the reason, the tools the app would see, and the evidence (HTTP status, steps, quirks). Use `explain` on a reason for its meaning.',
    'Slow: each URL may take up to minutes (the app waits 60 s per request); progress is reported while it runs.',
    'It never writes anything and never adds a server to the catalog. It only contacts the URLs given, which must be public https',
    'addresses (loopback and private addresses are refused unless the server was started with --allow-private).',
  ].join(' '),
  inputSchema: z.strictObject({
    urls: z.array(z.string().min(1)).min(1).describe('MCP endpoint URLs, e.g. https://mcp.example.com/mcp.'),
    profile: z
      .enum(Object.keys(CLIENT_PROFILES))
      .default(DEFAULT_PROFILE_ID)
      .describe(
        `Client profile that decides the verdict (default ${DEFAULT_PROFILE_ID}, the app's own client): ${Object.values(
          CLIENT_PROFILES,
        )
          .map((p) => `${p.id} (${p.label})`)
          .join(', ')}.`,
      ),
    requiresAuth: z
      .boolean()
      .default(false)
      .describe('Treat every URL as auth-optional: initialize without a key is enough.'),
    matrix: z
      .boolean()
      .default(false)
      .describe(
        'Also run every client profile per URL: each result gets matrix {profileId: {works, verdict, reason, ' +
          'tools}} (which clients would work, e.g. after an app upgrade). Slower.',
      ),
  }),
  outputSchema: {
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        items: probeResultSchema,
        description: 'One object per finished URL, in input order: what `onetap probe --json` prints.',
      },
      unfinished: {
        type: 'array',
        items: str,
        description: 'URLs still probing when the per-call time limit ran out.',
      },
    },
  },
  annotations: { title: 'Attest MCP servers', readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const { urls } = args;
    if (urls.length > ctx.limits.maxUrls)
      throw new ToolRefused(
        `at most ${ctx.limits.maxUrls} URLs per call, got ${urls.length}: split them over several calls`,
      );
    await refuseTargets(urls, ctx, 'probe');
    const counter = new ProgressCounter(urls.length);
    const finished: (ProbeResult | undefined)[] = new Array(urls.length);
    // The options `onetap probe` uses when given no flags, so the JSON is the CLI's.
    const work = probeMany(
      urls.map((url) => ({ url, requiresAuth: args.requiresAuth })),
      {
        profile: args.profile,
        matrix: args.matrix,
        headers: {},
        concurrency: 16,
        allowPrivate: ctx.allowPrivate,
        lookup: lookupFor(ctx),
        onResult: (r, i) => {
          finished[i] = r;
          ctx.progress(
            counter.complete(),
            urls.length,
            `${counter.finished}/${urls.length} probed; ${inert(r.url)}: ${r.verdict}/${r.reason}`,
          );
        },
      },
    );
    const outcome = await timed(ctx, counter, () => `${counter.finished}/${urls.length} probed`, work);
    const results = outcome.done ? outcome.value : finished.filter((r): r is ProbeResult => r !== undefined);
    const unfinished = outcome.done ? [] : urls.filter((_, i) => finished[i] === undefined);
    const live = results.filter((r) => r.verdict === 'live').length;
    const summary = [
      `${live}/${urls.length} live.`,
      ...results.map(probeLine),
      ...(unfinished.length
        ? [
            `Not finished within the per-call limit of ${seconds(ctx.limits.callTimeMs)} (probe them in a smaller call): ${unfinished.map(inert).join(', ')}`,
          ]
        : []),
    ].join('\n');
    return {
      summary,
      structured: { results: results.map((r) => probeJson(r)), ...(unfinished.length ? { unfinished } : {}) },
    };
  },
});

/** The store the tools read: `--store`, else `openStore`'s choice. */
const storeOf = (ctx: ToolContext) => (ctx.store === undefined ? {} : { store: ctx.store });

/** The curated and removed entries' last tool sets, from the catalog's store. */
async function knownOf(path: string, catalog: Catalog, ctx: ToolContext) {
  const store = await openStore(path, storeOf(ctx));
  try {
    return await toolSetPrints(store, [...catalog.servers, ...catalog.removed]);
  } finally {
    await store.close();
  }
}

async function readCatalogArg(
  args: { catalog?: Record<string, unknown>; catalogPath?: string },
  ctx: ToolContext,
): Promise<{ catalog: Catalog; label: string; path: string | null }> {
  if (args.catalog !== undefined) {
    if (args.catalogPath !== undefined) throw new ToolRefused('give either catalogPath or catalog, not both');
    return {
      catalog: parseCatalog(JSON.stringify(args.catalog), 'inline catalog'),
      label: 'inline catalog',
      path: null,
    };
  }
  const label = args.catalogPath ?? DEFAULT_CATALOG;
  const path = await confinedPath(ctx.root, label);
  return { catalog: (await loadCatalog(path)).catalog, label, path };
}

const lintTool = defineTool({
  name: 'lint',
  title: 'Check a catalog against the curation rules',
  description: [
    'Use to check a curated catalog of one-tap MCP servers against the curation rules (HTTPS Streamable HTTP only, no secret',
    'default headers, a decision record per entry, no duplicate hosts, nothing previously removed, ...) before proposing a change.',
    'Give a catalogPath inside the directory the server was started in, or an inline catalog object to check a draft.',
    'Returns one finding per problem (empty when clean). It contacts no server and never writes.',
  ].join(' '),
  inputSchema: z.strictObject({
    catalogPath: catalogPathSchema.optional(),
    catalog: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('An inline catalog ({policy, servers, removed}) instead of a file.'),
    allowHttp: z.boolean().default(false).describe('Permit http:// URLs on loopback addresses (local fixtures only).'),
  }),
  outputSchema: {
    type: 'object',
    required: ['results', 'servers', 'removed'],
    properties: {
      results: {
        type: 'array',
        items: { type: 'object', required: ['where', 'message'], properties: { where: str, message: str } },
        description: 'The findings `onetap lint` prints, one per problem.',
      },
      catalog: str,
      servers: { type: 'integer' },
      removed: { type: 'integer' },
    },
  },
  annotations: { title: 'Lint a catalog', readOnlyHint: true, openWorldHint: false },
  async run(args, ctx) {
    const { catalog, label } = await readCatalogArg(args, ctx);
    const problems = lintCatalog(catalog, { allowHttp: args.allowHttp });
    const head =
      `${inert(label)}: ${catalog.servers.length} servers, ${catalog.removed.length} removed, ` +
      `${problems.length ? `${problems.length} problem(s)` : 'no problems'}`;
    return {
      summary: [head, ...problems.map((p) => `- ${inert(p.where)}: ${inert(p.message)}`)].join('\n'),
      structured: {
        results: problems,
        catalog: label,
        servers: catalog.servers.length,
        removed: catalog.removed.length,
      },
    };
  },
});

const planTool = defineTool({
  name: 'plan_refresh',
  title: 'Plan a catalog refresh (never applied)',
  description: [
    'Use to see what a refresh of a curated catalog would decide per server (keep, keep-failed, review, drop) and why: it probes',
    'every entry the way the app connects and applies the written policy, the history of earlier runs and the outage guard.',
    'It only plans: it never writes the catalog or any generated file and never records the run in the history.',
    'The catalog path must be inside the directory the server was started in; its server URLs must be public https addresses',
    'unless the server was started with --allow-private. Slow (minutes for a slow server); progress is reported while it runs.',
  ].join(' '),
  inputSchema: z.strictObject({
    catalogPath: catalogPathSchema.optional(),
    profile: z
      .string()
      .max(64)
      .optional()
      .describe(
        `The deciding client profile: ${Object.keys(CLIENT_PROFILES).join(', ')}, or one of the catalog's ` +
          `policy.profiles (default: the catalog's policy.clientProfile, else ${DEFAULT_PROFILE_ID}).`,
      ),
    matrix: z
      .boolean()
      .default(false)
      .describe(
        'Also run every client profile per server: each row gets matrix {profileId: {works, verdict, reason, ' +
          'tools}}, to see which servers survive an app upgrade. Informational: only the deciding profile decides. Slower.',
      ),
  }),
  outputSchema: {
    type: 'object',
    required: ['plan', 'summary', 'aborted'],
    properties: {
      plan: {
        type: 'array',
        description: 'One row per catalog server: what `onetap refresh --json` prints.',
        items: viewSchema(planRowJsonSchema),
      },
      summary: viewSchema(planSummarySchema),
      aborted: strOrNull,
      warnings: { type: 'array', items: str },
      probedAt: str,
      written: { type: 'array', items: str, maxItems: 0 },
      quiet: {
        type: 'boolean',
        const: false,
        description: 'A --write that changed nothing (never: this tool writes nothing).',
      },
      datesOnly: { type: 'boolean', const: false },
    },
  },
  annotations: { title: 'Plan a refresh', readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const label = args.catalogPath ?? DEFAULT_CATALOG;
    const path = await confinedPath(ctx.root, label);
    const { catalog } = await loadCatalog(path);
    if (catalog.servers.length > ctx.limits.maxCatalogServers)
      throw new ToolRefused(
        `at most ${ctx.limits.maxCatalogServers} servers per catalog, ${label} has ${catalog.servers.length}`,
      );
    await refuseTargets(
      [...catalog.servers.map((s) => s.url), ...(catalog.policy.canaries ?? [])],
      ctx,
      `servers and canaries of ${inert(label)}`,
    );
    if (args.profile !== undefined) {
      try {
        catalogProfile(catalog.policy, args.profile);
      } catch (err) {
        throw new ToolRefused((err as Error).message);
      }
    }
    const counter = new ProgressCounter();
    // refresh() hands its `probe` options to probeMany, which takes the address-checking lookup.
    const probe = { lookup: lookupFor(ctx) } as NonNullable<Parameters<typeof refresh>[0]['probe']>;
    // The history the plan reads, closed when the refresh ends (a call past its limit returns before that).
    const store = await openStore(path, storeOf(ctx));
    const outcome = await timed(
      ctx,
      counter,
      () => `probing ${catalog.servers.length} servers`,
      refresh({
        catalogPath: path,
        store,
        write: false,
        record: false,
        allowHttp: ctx.allowPrivate,
        probe,
        profile: args.profile,
        matrix: args.matrix,
      }).finally(() => store.close()),
    );
    if (!outcome.done)
      throw new ToolRefused(
        `the plan did not finish within the per-call limit of ${seconds(ctx.limits.callTimeMs)}; nothing was written`,
      );
    const { plan, probedAt } = outcome.value;
    const s = plan.summary;
    const summary = [
      `Refresh plan for ${inert(label)} (not applied, nothing written): ${s.keep} keep, ${s.keepFailed} keep-failed, ${s.review} review, ${s.drop} drop.`,
      ...(plan.aborted ? [`OUTAGE GUARD: ${inert(plan.aborted)} (a real refresh would change nothing)`] : []),
      ...plan.rows.map(
        (r) =>
          `- ${inert(r.name)} (${inert(r.url)}): ${r.decision}, ${r.verdict}/${r.reason}${
            r.note ? `; ${inert(r.note)}` : ''
          }${r.error ? `; ${inert(r.error)}` : ''}${r.matrix ? `; ${matrixLine(r.matrix)}` : ''}`,
      ),
    ].join('\n');
    return { summary, structured: { ...planJson(plan), probedAt, written: [], quiet: false, datesOnly: false } };
  },
});

const discoverTool = defineTool({
  name: 'discover',
  title: 'Find candidate MCP servers from a domain or URL',
  description: [
    'Use to find candidate one-tap MCP servers a site publishes: from a domain or origin it reads the AI Catalog',
    '(/.well-known/ai-catalog.json, else the MCP Catalog); from a URL it reads that catalog, Server Card or the card of that',
    'MCP endpoint. Each card is validated and judged for one-tap eligibility against the curated catalog (removed entries,',
    'duplicate hosts); with probe=true each eligible remote is also attested. It proposes only: it never adds anything and',
    'never writes. Sources and remotes must be public https addresses unless the server was started with --allow-private.',
  ].join(' '),
  inputSchema: z.strictObject({
    source: z.string().min(1).describe('A domain (example.com), an origin (https://host[:port]) or a URL.'),
    probe: z.boolean().default(false).describe('Attest each eligible remote as the app would connect (slower).'),
    catalogPath: catalogPathSchema
      .describe(`The curated catalog to judge against (default ${DEFAULT_CATALOG} when it exists, else none).`)
      .optional(),
  }),
  outputSchema: {
    type: 'object',
    required: ['source', 'catalogs', 'candidates'],
    properties: {
      source: str,
      catalogs: { type: 'array', items: { type: 'object' }, description: 'Documents read, with errors.' },
      unread: {
        type: 'array',
        items: { type: 'object' },
        description: 'Documents known but not read (limits, depth), with why.',
      },
      unreadCount: { type: 'integer' },
      candidates: {
        type: 'array',
        description:
          'What `onetap discover --json` prints per Server Card; addCommand is a suggestion for a human, never run here.',
        items: {
          type: 'object',
          required: ['url', 'valid', 'eligible', 'why'],
          properties: {
            url: strOrNull,
            valid: { type: 'boolean' },
            eligible: { type: 'boolean' },
            curated: { type: 'boolean' },
            why: str,
            verdict: strOrNull,
            reason: strOrNull,
          },
        },
      },
    },
  },
  annotations: { title: 'Discover servers', readOnlyHint: true, openWorldHint: true },
  async run(args, ctx) {
    const useCatalog = args.catalogPath !== undefined || existsSync(join(ctx.root, DEFAULT_CATALOG));
    const curated = useCatalog ? await readCatalogArg({ catalogPath: args.catalogPath }, ctx) : null;
    const catalog = curated?.catalog ?? parseCatalog('{"servers":[]}');
    // With probing, what the list's entries last served (its text history), as `onetap discover --probe` reads it.
    const known = args.probe && curated?.path ? await knownOf(curated.path, catalog, ctx) : [];
    const { source } = args;
    const counter = new ProgressCounter();
    let outcome;
    try {
      // The options `onetap discover` uses; with probing, every document read may become a probe, so the
      // per-call URL limit caps the documents.
      outcome = await timed(
        ctx,
        counter,
        () => `discovering from ${inert(source)}`,
        discover(source, {
          catalog,
          probe: args.probe,
          allowPrivate: ctx.allowPrivate,
          timeoutMs: 10_000,
          maxDocuments: args.probe
            ? Math.min(ctx.limits.maxUrls, DISCOVERY_LIMITS.maxDocuments)
            : DISCOVERY_LIMITS.maxDocuments,
          maxPerOrigin: DISCOVERY_LIMITS.maxPerOrigin,
          known,
        }),
      );
    } catch (err) {
      if (err instanceof FetchRefused) throw new ToolRefused(`refused, nothing was contacted: ${err.message}`);
      throw err;
    }
    if (!outcome.done)
      throw new ToolRefused(`discovery did not finish within the per-call limit of ${seconds(ctx.limits.callTimeMs)}`);
    // The proposed `onetap add` adds to the catalog discovery judged against, as the CLI's does.
    if (curated && curated.label !== DEFAULT_CATALOG)
      for (const c of outcome.value.candidates)
        if (c.addCommand) c.addCommand = addCommand(c, ['--catalog', curated.label]);
    const r = outcome.value;
    const fresh = r.candidates.filter((c) => c.eligible && !c.curated).length;
    const summary = [
      `Discovery from ${inert(r.source)}: ${r.candidates.length} candidates, ${fresh} new and eligible (nothing was added).`,
      ...r.catalogs.map(
        (c) => `- read ${inert(c.url)} (${c.kind}, ${c.entries} entries)${c.error ? `: ${inert(c.error)}` : ''}`,
      ),
      ...r.candidates.map(
        (c) =>
          `- ${inert(c.title ?? c.name ?? '?')} ${inert(c.url ?? c.cardUrl ?? '-')}: ${
            c.valid ? 'valid' : 'invalid'
          } card, ${
            c.eligible ? (c.curated ? 'already curated' : 'eligible') : 'not eligible'
          }; ${inert(c.why)}${c.verdict ? `; probe ${c.verdict}/${c.reason}` : ''}${
            c.mismatches.length ? `; ${c.mismatches.length} card/server mismatch(es)` : ''
          }`,
      ),
      ...(r.unreadCount
        ? [
            `${r.unreadCount} document(s) known but not read, e.g. ${r.unread
              .slice(0, 3)
              .map((u) => `${inert(u.url)} (${inert(u.why)})`)
              .join(', ')}`,
          ]
        : []),
    ].join('\n');
    return { summary, structured: r as unknown as Record<string, unknown> };
  },
});

const explainTool = defineTool({
  name: 'explain',
  title: 'Explain a verdict reason',
  description: [
    'Use when a probe, plan or discovery result carries a reason (e.g. "zero-tools", "auth-required" or "drop/http-404") and you need',
    'its plain-language meaning and the sentence of the written one-tap policy behind it, with the verdict each rule gives.',
    'It contacts nothing and never writes.',
  ].join(' '),
  inputSchema: z.strictObject({
    reason: z
      .string()
      .min(1)
      .describe(`A reason, optionally as verdict/reason: ${Object.keys(REASON_TEXT).join(', ')}.`),
  }),
  outputSchema: {
    type: 'object',
    required: ['reason', 'meaning', 'rules'],
    properties: {
      reason: str,
      meaning: str,
      rules: {
        type: 'array',
        description: 'Every policy rule that gives this reason, in the order the policy tries them.',
        items: {
          type: 'object',
          required: ['verdict', 'stage', 'policy'],
          properties: {
            verdict: str,
            stage: {
              type: 'string',
              description:
                'Where the policy applies it: live (the deciding client lists tools), app-trip (alive, but the app trips), review, initialize or tools/list.',
            },
            policy: str,
          },
        },
      },
    },
  },
  annotations: { title: 'Explain a reason', readOnlyHint: true, openWorldHint: false },
  async run(args) {
    const given = args.reason.trim();
    const reason = given.includes('/') ? given.slice(given.indexOf('/') + 1) : given;
    if (!Object.hasOwn(REASON_TEXT, reason))
      throw new ToolRefused(`unknown reason "${inert(given)}"; known reasons: ${Object.keys(REASON_TEXT).join(', ')}`);
    const meaning = REASON_TEXT[reason as Reason];
    const rules = POLICY_TABLE.filter((r) => r.reason === reason).map((r) => ({
      verdict: r.verdict,
      stage: r.stage,
      policy: r.policy,
    }));
    const summary = [
      `${reason}: ${meaning}.`,
      ...rules.map((r) => `- ${r.verdict} (stage ${r.stage}): ${r.policy}`),
    ].join('\n');
    return { summary, structured: { reason, meaning, rules } };
  },
});

export const TOOLS: readonly ToolSpec[] = [probeTool, lintTool, planTool, discoverTool, explainTool];
