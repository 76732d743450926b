/**
 * CommonJS dependencies loaded on first use rather than with the library: a process that only probes
 * (`onetap probe`, a host calling `probeMany`) never validates a catalog or card schema, and ajv costs it a few MB
 * of memory before its first probe.
 */
import { createRequire } from 'node:module';
import { once } from './once.js';

const require = createRequire(import.meta.url);

export const ajv = once(() => ({
  Ajv: (require('ajv') as typeof import('ajv')).Ajv,
  Ajv2020: (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020,
  addFormats: require('ajv-formats') as (ajv: object) => void,
}));
