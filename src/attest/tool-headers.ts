/**
 * `x-mcp-header` declarations on a tool's inputSchema (2026-07-28, SEP-2243): a 2026-07-28 client excludes a
 * tool whose declaration is invalid, so the 2026-07-28 profile does too. The rules are the official client's
 * (`scanXMcpHeaderDeclarations` in @modelcontextprotocol/core 2.4.0), read for this: a declaration only on a
 * property reached through a chain of `properties` (never the root, never under items, anyOf, $defs, …), a
 * non-empty RFC 9110 token, on a property typed `string`, `integer` or `boolean`, unique case-insensitively.
 * Pure; bounded by MAX_NESTING.
 */
import { MAX_NESTING } from '../util/json.js';

const KEY = 'x-mcp-header';
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE = new Set(['string', 'integer', 'boolean']);
/** Subschema keywords a declaration may not sit under (the official client's list). */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;
/** Of those, the ones whose value is a name → subschema object. */
const BY_NAME = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** Why a tool's header declarations are invalid, or null when they are valid (or it declares none). */
export function invalidToolHeaders(inputSchema: unknown): string | null {
  const seen = new Map<string, string>();
  let numberFault: string | null = null;
  const visit = (node: unknown, path: readonly string[], reachable: boolean): string | null => {
    if (node === null || typeof node !== 'object' || path.length > MAX_NESTING) return null;
    const schema = node as Record<string, unknown>;
    const where = path.length ? path.join('.') : '<root>';
    if (Object.hasOwn(schema, KEY)) {
      if (!reachable || path.length === 0)
        return `${where}: x-mcp-header is only permitted on properties reached through 'properties'`;
      const name = schema[KEY];
      if (typeof name !== 'string' || name.length === 0) return `${where}: x-mcp-header must be a non-empty string`;
      if (!TOKEN.test(name)) return `${where}: x-mcp-header is not an RFC 9110 token`;
      const type = typeof schema.type === 'string' ? schema.type : null;
      if (type === null || !PRIMITIVE.has(type)) {
        const fault = `${where}: x-mcp-header is only permitted on string, integer or boolean properties (got ${type ?? 'no type'})`;
        // The official client goes on after a `number` (so the other faults are still found), then reports it.
        if (type !== 'number') return fault;
        numberFault ??= fault;
      }
      const prior = seen.get(name.toLowerCase());
      if (prior !== undefined) return `x-mcp-header '${name}' is not unique case-insensitively (also '${prior}')`;
      seen.set(name.toLowerCase(), name);
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object') {
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault) return fault;
      }
    }
    for (const k of UNREACHABLE) {
      const sub = schema[k];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub)
        ? sub
        : sub !== null && typeof sub === 'object' && BY_NAME.has(k)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${k}>`], false);
        if (fault) return fault;
      }
    }
    return null;
  };
  const fault = visit(inputSchema, [], true);
  return numberFault ?? fault;
}
