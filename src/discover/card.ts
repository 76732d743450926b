/** Server Card (and registry server.json) validation with ajv against the vendored schemas. */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { readPackageJson } from '../util/package-file.js';
import { once } from '../util/once.js';

export interface ValidationError { pointer: string; message: string }
export interface Validation { kind: 'server-card' | 'registry-server'; valid: boolean; errors: ValidationError[] }

const withFormats = <T>(ajv: T) => { (addFormats as unknown as (a: T) => void)(ajv); return ajv; };

const cardSchema = once(() => {
  const ajv = withFormats(new Ajv2020({ allErrors: true, strict: false }));
  ajv.addSchema(readPackageJson('schemas/server-card.schema.json') as object, 'server-card');
  return ajv.getSchema('server-card#/$defs/ServerCard')!;
});
const registrySchema = once(() => withFormats(new Ajv({ allErrors: true, strict: false })).compile(readPackageJson('schemas/registry-server.schema.2025-12-11.json') as object));

/** A registry server.json names a `…/server.schema.json` as its `$schema`. */
function isRegistryServerJson(value: unknown): boolean {
  const schema = (value as { $schema?: unknown } | null)?.$schema;
  return typeof schema === 'string' && /\/server\.schema\.json$/.test(schema) && !/\/v1\//.test(schema);
}

export function validateCard(value: unknown): Validation {
  const validate = cardSchema();
  const valid = validate(value) as boolean;
  return { kind: 'server-card', valid, errors: valid ? [] : toErrors(validate.errors) };
}

export function validateRegistryServer(value: unknown): Validation {
  const validate = registrySchema();
  const valid = validate(value);
  return { kind: 'registry-server', valid, errors: valid ? [] : toErrors(validate.errors) };
}

/** Validates as a registry server.json when its `$schema` says so, else as a Server Card. */
export function validateDocument(value: unknown): Validation {
  return isRegistryServerJson(value) ? validateRegistryServer(value) : validateCard(value);
}

function toErrors(errors: ErrorObject[] | null | undefined): ValidationError[] {
  return (errors ?? []).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? `: "${(e.params as { additionalProperty: string }).additionalProperty}"`
      : '';
    return { pointer: e.instancePath || '/', message: `${e.message ?? 'is invalid'}${extra}` };
  });
}
