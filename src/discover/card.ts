/**
 * Server Card (and registry server.json) validation with ajv against the vendored schemas, bounded: a hostile
 * document must not cost more than a few milliseconds nor produce an unbounded error list.
 *
 * Two passes. The verdict comes from a validator that stops at the first error (linear in the document, no
 * error objects to build). Only an invalid document gets the second pass, which lists errors (`allErrors`) on
 * a copy pruned to a node budget: ajv's error collection is quadratic in the number of errors (each `$ref`
 * call concatenates the list so far), which made 85,000 empty remotes cost ~40 s and 170,000 lines.
 */
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ajv as loadAjv } from '../util/lazy.js';
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';

export interface ValidationError {
  pointer: string;
  message: string;
}

export interface Validation {
  kind: 'server-card' | 'registry-server';
  valid: boolean;
  /**
   * The schema reading that accepts the document: `current` (the card-only schema), `legacy` (only the earlier
   * seed-era schema, which still named the registry types and any `/v1/*.schema.json` `$schema`), or null.
   */
  schema: 'current' | 'legacy' | null;
  /** At most MAX_ERRORS errors, in document order as ajv finds them. */
  errors: ValidationError[];
  /** How many errors were found; more than `errors.length` when the list was cut. */
  errorCount: number;
  /** False when only part of a large document was searched for errors: `errorCount` is then a lower bound. */
  errorsComplete: boolean;
  /** Why a document is accepted only leniently (the legacy reading), or why its error list is partial. */
  warnings: string[];
  /** Milliseconds spent validating (both passes, both readings). */
  elapsedMs: number;
}

export interface ValidateOptions {
  /** Accept a card that passes only the legacy (seed-era) schema as valid, with a warning. Default false. */
  legacy?: boolean;
  /** Time already left for this document; when the verdict alone uses it up, no error list is built. */
  budgetMs?: number;
}

/** The most errors listed for one document. */
export const MAX_ERRORS = 100;
/** The most JSON values (objects, arrays, scalars) the error-listing pass looks at. */
export const ERROR_SEARCH_NODES = 2_000;
export const CURRENT_CARD_SCHEMA_URI = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';

const withFormats = <T extends object>(ajv: T) => {
  loadAjv().addFormats(ajv);
  return ajv;
};

/** Stop-at-first and all-errors validators of one schema, each compiled on first use. */
interface Validators {
  first: () => ValidateFunction;
  all: () => ValidateFunction;
}

function cardValidators(file: string): Validators {
  const compile = (allErrors: boolean) =>
    once(() => {
      const ajv = withFormats(new (loadAjv().Ajv2020)({ allErrors, strict: false }));
      ajv.addSchema(readPackageJson(file) as object, 'card');
      return ajv.getSchema('card#/$defs/ServerCard')!;
    });
  return { first: compile(false), all: compile(true) };
}
const currentCard = cardValidators('schemas/server-card.schema.json');
const legacyCard = cardValidators('schemas/server-card.schema.seed-era.json');
const registryServer: Validators = (() => {
  const compile = (allErrors: boolean) =>
    once(() =>
      withFormats(new (loadAjv().Ajv)({ allErrors, strict: false })).compile(
        readPackageJson('schemas/registry-server.schema.2025-12-11.json') as object,
      ),
    );
  return { first: compile(false), all: compile(true) };
})();

/** Property names any of the schemas requires: pruning keeps them so it never invents a "required" error. */
const requiredNames = once(() => {
  const names = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'required' && Array.isArray(v))
        for (const n of v)
          if (typeof n === 'string') names.add(n);
          else visit(v);
    }
  };
  for (const f of [
    'schemas/server-card.schema.json',
    'schemas/server-card.schema.seed-era.json',
    'schemas/registry-server.schema.2025-12-11.json',
  ])
    visit(readPackageJson(f));
  return names;
});

/**
 * A copy of `value` holding at most about `budget` values, depth first, so the first items stay whole. Arrays
 * are cut and optional properties dropped once the budget is spent; required property names are always kept
 * (recursively pruned). The schemas use no minItems, minProperties or dependencies, so every error the copy
 * shows is an error of the whole document too.
 */
export function pruneForErrors(value: unknown, budget = ERROR_SEARCH_NODES): { value: unknown; pruned: boolean } {
  const required = requiredNames();
  let left = budget;
  let pruned = false;
  const copy = (v: unknown, depth: number): unknown => {
    left--;
    if (typeof v !== 'object' || v === null) return v;
    if (depth > 64) {
      pruned = true;
      return Array.isArray(v) ? [] : {};
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const item of v) {
        if (left <= 0) {
          pruned = true;
          break;
        }
        out.push(copy(item, depth + 1));
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      if (left > 0 || required.has(k)) out[k] = copy(item, depth + 1);
      else pruned = true;
    }
    return out;
  };
  return { value: copy(value, 0), pruned };
}

interface Pass {
  valid: boolean;
  errors: ValidationError[];
  errorCount: number;
  errorsComplete: boolean;
}

/** The verdict on the whole document, then (when invalid and time is left) a bounded error list. */
function run(validators: Validators, value: unknown, deadline: number): Pass {
  const first = validators.first();
  if (first(value)) return { valid: true, errors: [], errorCount: 0, errorsComplete: true };
  const firstError = toErrors(first.errors)[0] ?? { pointer: '/', message: 'is invalid' };
  if (performance.now() > deadline) return { valid: false, errors: [firstError], errorCount: 1, errorsComplete: false };
  const { value: small, pruned } = pruneForErrors(value);
  const all = validators.all();
  all(small);
  const found = toErrors(all.errors);
  // The first error may sit past the pruned part: it is listed all the same.
  if (!found.some((e) => e.pointer === firstError.pointer && e.message === firstError.message))
    found.unshift(firstError);
  return { valid: false, errors: found.slice(0, MAX_ERRORS), errorCount: found.length, errorsComplete: !pruned };
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
function finish(
  kind: Validation['kind'],
  pass: Pass,
  schema: Validation['schema'],
  warnings: string[],
  start: number,
): Validation {
  if (!pass.errorsComplete && !pass.valid)
    warnings.push(
      `the error list covers the first ${ERROR_SEARCH_NODES} values of a large document: there may be more errors`,
    );
  return {
    kind,
    valid: pass.valid,
    schema,
    errors: pass.errors,
    errorCount: pass.errorCount,
    errorsComplete: pass.errorsComplete,
    warnings,
    elapsedMs: performance.now() - start,
  };
}

/** A registry server.json names a dated `…/<date>/server.schema.json` as its `$schema` (not `/v1/`). */
function isRegistryServerJson(value: unknown): boolean {
  const schema = (value as { $schema?: unknown } | null)?.$schema;
  return typeof schema === 'string' && /\/server\.schema\.json$/.test(schema) && !/\/v1\//.test(schema);
}

/**
 * A Server Card against the current (card-only) schema. One that fails it but passes the earlier seed-era schema
 * is reported with `schema: 'legacy'` and a warning; it counts as valid only with `opts.legacy` (discovery reads
 * old cards leniently; `validate` gives upstream's verdict unless asked).
 */
export function validateCard(value: unknown, opts: ValidateOptions = {}): Validation {
  const start = performance.now();
  const deadline = start + (opts.budgetMs ?? Infinity);
  const current = run(currentCard, value, deadline);
  if (current.valid) return finish('server-card', current, 'current', [], start);
  if (!legacyCard.first()(value)) return finish('server-card', current, null, [], start);
  const why =
    `passes only the earlier (seed-era) Server Card schema; the current one (card-only since 2026-06-18) ` +
    `says: ${current.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ')}`;
  if (opts.legacy)
    return finish(
      'server-card',
      { valid: true, errors: [], errorCount: 0, errorsComplete: true },
      'legacy',
      [why],
      start,
    );
  return finish('server-card', current, 'legacy', [why], start);
}

export function validateRegistryServer(value: unknown, opts: ValidateOptions = {}): Validation {
  const start = performance.now();
  const pass = run(registryServer, value, start + (opts.budgetMs ?? Infinity));
  return finish('registry-server', pass, pass.valid ? 'current' : null, [], start);
}

/** Validates as a registry server.json when its `$schema` says so, else as a Server Card. */
export function validateDocument(value: unknown, opts: ValidateOptions = {}): Validation {
  return isRegistryServerJson(value) ? validateRegistryServer(value, opts) : validateCard(value, opts);
}

function toErrors(errors: ErrorObject[] | null | undefined): ValidationError[] {
  const out: ValidationError[] = [];
  for (const e of errors ?? []) {
    const extra =
      e.keyword === 'additionalProperties'
        ? `: "${(e.params as { additionalProperty: string }).additionalProperty}"`
        : '';
    out.push({ pointer: e.instancePath || '/', message: `${e.message ?? 'is invalid'}${extra}` });
  }
  return out;
}
