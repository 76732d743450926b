/**
 * The curated catalog file (default `catalog/servers.json`, schema `catalog/servers.schema.json`).
 * Loading checks the structure every command relies on (types, and name/url/description/requiresAuth);
 * `lint` enforces the curation rules.
 */
import { clipText } from '../text/clip.js';
import { readFile } from 'node:fs/promises';
import { once } from '../util/once.js';
import { isObject } from '../util/json.js';
import { readPackageJson } from '../util/package-file.js';
import { jsonInvisibleEscaped } from '../text/escape.js';
import type { z } from 'zod';
import type { CatalogOutputs } from './outputs.js';
import type {
  catalogPolicySchema,
  catalogSchema,
  catalogServerSchema,
  decisionRecordSchema,
  probeHeaderSchema,
  profileDefinitionSchema,
  removedEntrySchema,
} from './schema.js';

// The catalog's types, derived from its one schema (./schema.ts); loading uses no zod (see parseCatalog).
export type DecisionRecord = z.output<typeof decisionRecordSchema>;
/** A probe-only header's value: the environment variable that holds it, after an optional prefix (`Bearer `). */
export type ProbeHeader = z.output<typeof probeHeaderSchema>;
/**
 * A client profile of the list's own client: a built-in one (`extends`) with what differs. Loading checks types
 * only, so `extends` is any string here; resolving the profile refuses one that is not built in.
 */
export type ProfileDefinition = Omit<z.output<typeof profileDefinitionSchema>, 'extends'> & { extends: string };
export type RemovedEntry = z.output<typeof removedEntrySchema>;
export type CatalogPolicy = Omit<z.output<typeof catalogPolicySchema>, 'profiles'> & {
  profiles?: Record<string, ProfileDefinition>;
};

/**
 * A server as loading guarantees it: the schema's fields, of which `headers` and `decision` are required by `lint`
 * (not by loading); unknown fields are kept for `lint` to name.
 */
export type CatalogServer = Omit<z.output<typeof catalogServerSchema>, 'headers' | 'decision'> &
  Partial<Pick<z.output<typeof catalogServerSchema>, 'headers' | 'decision'>> & { [extra: string]: unknown };

export type Catalog = Omit<z.output<typeof catalogSchema>, 'servers' | 'policy' | 'outputs'> & {
  policy: CatalogPolicy;
  outputs?: CatalogOutputs;
  servers: CatalogServer[];
};

/** One problem in a catalog file: where (`servers[2] (Name).headers.X`, `policy.canaries[0]`) and what. */
export interface CatalogProblem {
  where: string;
  message: string;
}

/** The catalog cannot be used: unreadable, not JSON, or of the wrong structure (then `problems` lists each). */
export class CatalogError extends Error {
  constructor(
    message: string,
    readonly problems: CatalogProblem[] = [],
  ) {
    super(message);
  }
}

const DEFAULT_POLICY: CatalogPolicy = { authOptionalHosts: [], sharedGatewayHosts: [] };

export async function loadCatalog(path: string): Promise<{ catalog: Catalog; text: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CatalogError(`${path}: cannot read the catalog (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return { catalog: parseCatalog(text, path), text };
}

/**
 * Parses a catalog and checks its structure against `catalog/servers.schema.json`: every field that is
 * present has the schema's type (so no command meets a number where it reads a string), and each server has
 * at least name, url, description and requiresAuth. The curation rules (required decision records, no
 * unknown fields, URL formats, …) are `lint`'s.
 */
export function parseCatalog(text: string, path = 'catalog'): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${path}: not JSON (${(err as Error).message})`);
  }
  const problems = structureProblems(raw);
  if (problems.length)
    throw new CatalogError(problems.map((p) => `${path}: ${p.where}: ${p.message}`).join('\n'), problems);
  const catalog = raw as Record<string, unknown>;
  const policy = { ...DEFAULT_POLICY, ...(catalog.policy as Partial<CatalogPolicy> | undefined) };
  return {
    ...catalog,
    policy,
    servers: catalog.servers as CatalogServer[],
    removed: (catalog.removed as RemovedEntry[] | undefined) ?? [],
  } as Catalog;
}

/** At most this many problems are listed; the rest are counted (a broken file must not flood the terminal). */
const MAX_PROBLEMS = 50;

/**
 * The schema's type rules, checked by a small walker rather than ajv: compiling the schema costs ~130 ms
 * at every CLI start, and loading needs only `type`, `properties`, `items`, `additionalProperties` (a
 * schema), `$ref`, `required`, `minimum`, `maximum` and `minLength`. `lint` checks the whole schema with ajv.
 */
interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: boolean | SchemaNode;
  $ref?: string;
  required?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
}

const structureSchema = once((): SchemaNode & { $defs: Record<string, SchemaNode> } => {
  const schema = readPackageJson<SchemaNode & { $defs: Record<string, SchemaNode> }>('catalog/servers.schema.json');
  // Required here: what every command reads. A partial decision record is lint's "no decision record".
  return {
    ...schema,
    $defs: {
      ...schema.$defs,
      server: { ...schema.$defs.server, required: ['name', 'url', 'description', 'requiresAuth'] },
      decision: { ...schema.$defs.decision, required: [] },
    },
  };
});

const TYPE_CHECK: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  integer: (v) => Number.isSafeInteger(v),
  array: Array.isArray,
  object: (v) => isObject(v),
};

function checkNode(
  node: SchemaNode,
  value: unknown,
  segments: string[],
  out: Array<{ segments: string[]; message: string }>,
): void {
  const root = structureSchema();
  while (node.$ref) node = root.$defs[node.$ref.replace('#/$defs/', '')]!;
  const types = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  if (types.length && !types.some((t) => TYPE_CHECK[t]?.(value))) {
    out.push({
      segments,
      message: `must be ${types.map((t) => (/^[aeio]/.test(t) ? `an ${t}` : `a ${t}`)).join(' or ')} (got ${describe(value)})`,
    });
    return;
  }
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum)
      out.push({ segments, message: `must be >= ${node.minimum} (got ${describe(value)})` });
    if (node.maximum !== undefined && value > node.maximum)
      out.push({ segments, message: `must be <= ${node.maximum} (got ${describe(value)})` });
  }
  if (typeof value === 'string' && node.minLength !== undefined && [...value].length < node.minLength)
    out.push({ segments, message: 'must not be empty' });
  if (Array.isArray(value) && node.items)
    value.forEach((item, i) => {
      checkNode(node.items!, item, [...segments, String(i)], out);
    });
  if (isObject(value)) {
    for (const key of node.required ?? [])
      if (!Object.hasOwn(value, key)) out.push({ segments: [...segments, key], message: 'is required' });
    for (const [key, child] of Object.entries(value)) {
      const schema =
        node.properties && Object.hasOwn(node.properties, key)
          ? node.properties[key]!
          : typeof node.additionalProperties === 'object'
            ? node.additionalProperties
            : null;
      if (schema) checkNode(schema, child, [...segments, key], out);
    }
  }
}

/** Structure problems, each place named like lint's (`servers[2] (Name).headers.X`). */
export function structureProblems(raw: unknown): CatalogProblem[] {
  const found: Array<{ segments: string[]; message: string }> = [];
  checkNode(structureSchema(), raw, [], found);
  const problems: CatalogProblem[] = found.map((f) => ({ where: placeOf(raw, f.segments), message: f.message }));
  // Blank strings pass minLength; a server without a real name, URL or description is unusable anyway.
  if (isObject(raw) && Array.isArray(raw.servers)) {
    raw.servers.forEach((s: unknown, i: number) => {
      if (!isObject(s)) return;
      for (const key of ['name', 'url', 'description'] as const) {
        if (typeof s[key] === 'string' && (s[key] as string).trim() === '')
          problems.push({ where: placeOf(raw, ['servers', String(i), key]), message: 'must not be blank' });
      }
    });
  }
  const seen = new Set<string>();
  const unique = problems.filter(
    (p) => !seen.has(`${p.where}\0${p.message}`) && !!seen.add(`${p.where}\0${p.message}`),
  );
  return unique.length > MAX_PROBLEMS
    ? [...unique.slice(0, MAX_PROBLEMS), { where: '…', message: `and ${unique.length - MAX_PROBLEMS} more problems` }]
    : unique;
}

/** A JSON location as a reader names it: `servers[2] (Name).headers.X`, `policy.canaries[0]`, `(root)`. */
export function placeOf(raw: unknown, segments: string[]): string {
  if (!segments.length) return '(root)';
  let place = '';
  let node: unknown = raw;
  segments.forEach((seg, i) => {
    const parent = node;
    node = Array.isArray(parent) ? parent[Number(seg)] : isObject(parent) ? parent[seg] : undefined;
    if (Array.isArray(parent)) {
      place += `[${seg}]`;
      // Entries are named as lint names them: servers[i] (name), removed[i] (name).
      if (i === 1 && (segments[0] === 'servers' || segments[0] === 'removed'))
        place += ` (${isObject(node) && typeof node.name === 'string' ? clipText(node.name, 61) : '?'})`;
    } else {
      place += /^[A-Za-z_$][\w$-]*$/.test(seg) ? `${place ? '.' : ''}${seg}` : `[${JSON.stringify(clipText(seg, 61))}]`;
    }
  });
  return place;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${JSON.stringify(clipText(value, 61))}`;
  return `${typeof value} ${String(value)}`;
}

/** The catalog as written to disk: stable key order, two-space indent, trailing newline, no raw bidi control. */
export function serializeCatalog(catalog: Catalog): string {
  return jsonInvisibleEscaped(JSON.stringify(catalog, null, 2)) + '\n';
}
