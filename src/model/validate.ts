/**
 * Validation of anything read back (a history line, a lock file, a worker's message, an API body) against the
 * record's schemas, with one short problem in onetap's words: where, and what was expected there. Never the value
 * itself: it is untrusted.
 */
import { z } from 'zod';
import { REASONS } from './words.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
  record: 'an object',
  null: 'null',
  nan: 'a number',
  bigint: 'a number',
  literal: 'a fixed value',
};

/**
 * `servers.*.hash`, `steps[2].status`: the path as onetap's messages write it (object keys of records are untrusted:
 * `*`).
 */
function where(path: ReadonlyArray<PropertyKey>, recordKeys: ReadonlySet<string>): string {
  let out = '';
  path.forEach((p, i) => {
    if (typeof p === 'number') out += `[${p}]`;
    else out += `${i ? '.' : ''}${recordKeys.has(path.slice(0, i + 1).join('\u0000')) ? '*' : String(p)}`;
  });
  return out;
}

function expected(issue: z.core.$ZodIssue, at: z.ZodType | null): string {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_WORDS[issue.expected] ?? `a ${issue.expected}`;
    case 'invalid_value': {
      const values = issue.values as unknown[];
      if (values.length === REASONS.length && values.every((v) => (REASONS as readonly unknown[]).includes(v)))
        return 'a known reason';
      return values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.map(String).join(', ')}`;
    }
    case 'too_small':
      return issue.origin === 'number'
        ? `a ${isWhole(at) ? 'whole number' : 'number'} >= ${String(issue.minimum)}`
        : `at least ${String(issue.minimum)} item(s)`;
    case 'too_big':
      return issue.origin === 'number'
        ? `a number <= ${String(issue.maximum)}`
        : `at most ${String(issue.maximum)} item(s)`;
    // The schemas name what a format means (`an ISO time (UTC)`); the pattern itself says little to a reader.
    case 'invalid_format':
    case 'custom':
      return issue.message;
    case 'invalid_union':
      return 'one of the allowed forms';
    default:
      return 'a valid value';
  }
}

/** The value parsed by `schema` (unknown keys dropped), or the first problem. */
export function check<S extends z.ZodType>(schema: S, value: unknown): Checked<z.infer<S>> {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const issue = r.error.issues[0]!;
  const at = where(issue.path, recordPaths(schema, issue.path));
  // A value that is only null where something else belongs: say what belongs there.
  return {
    ok: false,
    problem: `${at ? `${at}: ` : ''}expected ${expected(issue, schemaAt(schema, issue.path))}${
      isNullable(schema, issue.path) && issue.code === 'invalid_type' ? ', or null' : ''
    }`,
  };
}

/** The schema at a path (through objects, arrays, records, nullable and optional wrappers), or null. */
function schemaAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): z.ZodType | null {
  let s: z.ZodType | null = schema;
  for (const p of path) {
    s = unwrap(s);
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, z.ZodType>)[String(p)] ?? null;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return null;
    if (!s) return null;
  }
  return s;
}

const isWhole = (s: z.ZodType | null) => {
  const x = s && unwrap(s);
  return x instanceof z.ZodNumber && x.format === 'safeint';
};

function unwrap(s: z.ZodType): z.ZodType {
  let x = s;
  while (x instanceof z.ZodNullable || x instanceof z.ZodOptional) x = x.unwrap() as z.ZodType;
  return x;
}

function isNullable(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): boolean {
  const s = schemaAt(schema, path);
  let x = s;
  while (x instanceof z.ZodOptional) x = x.unwrap() as z.ZodType;
  return x instanceof z.ZodNullable;
}

/** The prefixes of `path` (joined) whose next key is a record's key, which the message shows as `*`. */
function recordPaths(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): Set<string> {
  const keys = new Set<string>();
  for (let i = 0; i < path.length; i++) {
    const s = schemaAt(schema, path.slice(0, i));
    if (s && unwrap(s) instanceof z.ZodRecord) keys.add(path.slice(0, i + 1).join('\u0000'));
  }
  return keys;
}
