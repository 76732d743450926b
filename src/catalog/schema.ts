/**
 * The catalog file's schema, declared once: the types every command reads (`model.ts` derives them) and
 * `catalog/servers.schema.json`, generated from it by `npm run docs` (tested for staleness). Loading checks the
 * generated file's types with a small walker, `lint` the whole of it with ajv; zod itself validates nothing here.
 */
import { z } from 'zod';

export const OUTPUT_NAMES = ['json', 'ts', 'kotlin', 'snapshot', 'log'] as const;
export type OutputName = (typeof OUTPUT_NAMES)[number];

/** Where each output goes by default, relative to the output directory (the catalog's, or `--out`). */
export const DEFAULT_OUTPUT_PATHS: Readonly<Record<OutputName, string>> = {
  json: 'generated/popular-servers.json',
  ts: 'generated/popular-servers.ts',
  kotlin: 'generated/PopularMcpServers.kt',
  snapshot: 'servers.md',
  log: 'log.md',
};

/** The package of the generated Kotlin when nothing names one: the app the default profile comes from. */
export const DEFAULT_KOTLIN_PACKAGE = 'com.inspiredandroid.kai.mcp';

/** A Kotlin package name: dot-separated identifiers (the generated file declares it). */
export const KOTLIN_PACKAGE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** The built-in client profiles a list's own profile can extend (held to the prober's profiles by a test). */
export const BUILT_IN_PROFILE_IDS = ['kai-9000', 'kai-fallback', 'mcp-2025-11-25', 'mcp-2026-07-28'] as const;

const MAX_TIMER_MS = 2_147_483_647;
const text = () => z.string().min(1);
const hosts = (description: string) => z.array(z.string()).describe(description);
const headerValues = z.record(z.string(), z.string());
const where = text().describe("Where, relative to the catalog's directory.");

/** One generated file: on (`true`, or where) or off (`false`). */
const outputSchema = z.union([z.boolean(), z.strictObject({ path: where.optional() })]).meta({ id: 'output' });

const kotlinOutputSchema = z
  .union([
    z.boolean(),
    z.strictObject({
      path: where.optional(),
      package: z.string().regex(KOTLIN_PACKAGE).describe('The package the Kotlin file declares.').optional(),
    }),
  ])
  .meta({ id: 'kotlinOutput' });

export const profileDefinitionSchema = z
  .strictObject({
    extends: z
      .enum(BUILT_IN_PROFILE_IDS)
      .describe('The built-in profile this one changes: its handshake, limits and reading of answers.'),
    clientInfo: z.strictObject({ name: text(), version: text() }).optional(),
    userAgent: z.string().nullable().describe('The User-Agent the client sends (null: none).').optional(),
    protocolVersion: text().describe('The protocol version the client asks for in initialize.').optional(),
    headers: headerValues.describe('Headers the client sends on every request (not secrets).').optional(),
    timeoutMs: z.int().min(1).max(MAX_TIMER_MS).describe("The client's per-request time limit, ms.").optional(),
  })
  .meta({ id: 'profile' });

export const probeHeaderSchema = z
  .strictObject({
    env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .describe('The environment variable holding the value (a repository secret in the Action).'),
    prefix: z.string().describe('Text before the value, such as "Bearer ".').optional(),
  })
  .meta({ id: 'probeHeader' });

export const decisionRecordSchema = z
  .strictObject({
    by: text().describe('Who decided.'),
    at: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}/)
      .describe('ISO date or date-time.'),
    why: text(),
  })
  .meta({ id: 'decision' });

export const catalogServerSchema = z
  .strictObject({
    name: text(),
    url: z.url(),
    description: text(),
    requiresAuth: z.boolean(),
    headers: headerValues.describe('Non-secret default headers only.'),
    probeHeaders: z
      .record(z.string(), probeHeaderSchema)
      .describe(
        'requiresAuth entries only: headers sent when onetap probes (never published), each value read from an ' +
          'environment variable.',
      )
      .optional(),
    decision: decisionRecordSchema,
    note: z.string().optional(),
  })
  .meta({ id: 'server' });

export const removedEntrySchema = z
  .strictObject({
    name: z.string(),
    url: z.string(),
    description: z.string().describe('The description the entry had, kept for `onetap restore`.').optional(),
    reason: text(),
    removedAt: z.string().nullable().optional(),
    note: z.string().optional(),
    permanent: z.boolean().describe('Never to be added back: `add` and `restore` refuse it.').optional(),
    decision: decisionRecordSchema.optional(),
    added: decisionRecordSchema.describe('The decision record that added it (kept for `onetap restore`).').optional(),
  })
  .meta({ id: 'removed' });

export const catalogPolicySchema = z.strictObject({
  authOptionalHosts: hosts(
    'Hosts allowed to be requiresAuth (auth-optional with a free key). Today only mcp.jina.ai.',
  ).default([]),
  sharedGatewayHosts: hosts('Hosts where several servers live under different paths.').default([]),
  aliasedHosts: hosts('Hosts whose every path is the same server (the app matches saved URLs by host).').optional(),
  keyEnv: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(?:_\*)?$/))
    .refine((names) => new Set(names).size === names.length)
    .meta({ uniqueItems: true })
    .describe(
      'The environment variables probeHeaders may name: names, or PREFIX_* patterns; with it, only these. ' +
        'ONETAP_*, GITHUB_*, ACTIONS_*, RUNNER_* and PG* are refused always, and a name ending in _TOKEN, ' +
        '_PASSWORD or _URL only when listed here by its full name.',
    )
    .optional(),
  clientProfile: text()
    .describe(
      'The client profile whose outcome decides each row: a built-in one (kai-9000, the default: the Kai 9000 ' +
        "app's client; kai-fallback, mcp-2025-11-25, mcp-2026-07-28) or one of policy.profiles.",
    )
    .optional(),
  profiles: z
    .record(z.string(), profileDefinitionSchema)
    .describe("Client profiles of this list's own client, each derived from a built-in one, by id.")
    .optional(),
  timeoutMs: z
    .int()
    .min(1)
    .max(MAX_TIMER_MS)
    .describe(
      "Per-request time limit override, ms (default: the profile's own; 60000 for the app). Shorter limits fail " +
        'servers the app uses.',
    )
    .optional(),
  confirmDrops: z.int().min(1).describe('Consecutive drop-class runs before a drop.').optional(),
  canaries: z.array(z.url()).describe("URLs that answer whenever this machine's network is up.").optional(),
  vantages: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/))
    .min(1)
    .refine((names) => new Set(names).size === names.length)
    .meta({ uniqueItems: true })
    .describe(
      "A run across vantages: the workers' vantage names (onetap worker --vantage <name>); refresh then needs a " +
        'PostgreSQL store. --vantages wins.',
    )
    .optional(),
  quorum: z
    .int()
    .min(1)
    .describe(
      'With vantages: how many must see a server dead before it is dropped (default a majority; at most the ' +
        'number of vantages). --quorum wins.',
    )
    .optional(),
  signedVantages: z
    .boolean()
    .describe(
      'A run across vantages counts only observations each vantage signed with its key (ONETAP_VANTAGE_KEY in its ' +
        "workers' environment); the deciding process holds each key as ONETAP_VANTAGE_KEY_<NAME> (upper case, - as " +
        '_), never the store.',
    )
    .optional(),
  maxToolTokens: z
    .int()
    .min(1)
    .describe(
      'A live server whose tool list costs more o200k tokens than this (its compact {name, description, ' +
        'input_schema} form, the count every observation records) goes to review as review/context-budget. Off ' +
        'without it.',
    )
    .optional(),
});

const output = (description: string) => outputSchema.describe(description).optional();

export const catalogOutputsSchema = z
  .strictObject({
    json: output(`The runtime list as JSON (default ${DEFAULT_OUTPUT_PATHS.json}).`),
    ts: output(`The runtime list as TypeScript (default ${DEFAULT_OUTPUT_PATHS.ts}).`),
    kotlin: kotlinOutputSchema
      .describe(
        `The runtime list as Kotlin (default ${DEFAULT_OUTPUT_PATHS.kotlin}, package ${DEFAULT_KOTLIN_PACKAGE}).`,
      )
      .optional(),
    snapshot: output(`The list as Markdown (default ${DEFAULT_OUTPUT_PATHS.snapshot}).`),
    log: output(`The change log: one entry per run that changed something (default ${DEFAULT_OUTPUT_PATHS.log}).`),
  })
  .describe(
    'The generated files a refresh writes, each on (true, or {path}) or off (false); paths are relative to the ' +
      "catalog's directory. Without outputs, every one is written; --outputs overrides which are on.",
  );

export const catalogSchema = z
  .strictObject({
    $schema: z.string().optional(),
    about: z.string().optional(),
    policy: catalogPolicySchema.default({ authOptionalHosts: [], sharedGatewayHosts: [] }),
    outputs: catalogOutputsSchema.optional(),
    servers: z.array(catalogServerSchema),
    removed: z.array(removedEntrySchema).default([]),
  })
  .meta({
    $id: 'https://onetap.dev/schema/servers.schema.json',
    title: 'onetap curated catalog of one-tap remote MCP servers',
  });

type JsonSchema = Record<string, unknown>;

/**
 * What zod writes, in the forms the loader's walker reads: a choice of a boolean or an object as one node of both
 * types; no `propertyNames` a key always meets; no maximum of a whole number but JavaScript's own.
 */
function plainer(schema: JsonSchema): void {
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (anyOf?.every((s) => typeof s.type === 'string') && anyOf.filter((s) => s.type === 'object').length === 1) {
    const { type: _, ...object } = anyOf.find((s) => s.type === 'object')!;
    delete schema.anyOf;
    Object.assign(schema, { type: anyOf.map((s) => s.type) }, object);
  }
  if ((schema.propertyNames as JsonSchema | undefined)?.type === 'string') delete schema.propertyNames;
  if (schema.type === 'integer' && schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  for (const child of Object.values(schema))
    if (child && typeof child === 'object')
      for (const node of Array.isArray(child) ? child : [child]) if (node && typeof node === 'object') plainer(node);
}

/** `catalog/servers.schema.json` as generated: what a catalog file may hold, before defaults. */
export function catalogJsonSchema(): JsonSchema {
  const { $schema, $id, title, ...schema } = z.toJSONSchema(catalogSchema, { io: 'input', target: 'draft-2020-12' });
  plainer(schema);
  return { $schema, $id, title, ...schema };
}
