/**
 * CommonJS dependencies loaded on first use rather than with the library: a process that only probes
 * (`onetap probe`, a host calling `probeMany`) never validates a schema or opens SQLite, and ajv and
 * better-sqlite3 cost it about 6 MB of memory before its first probe.
 */
import { createRequire } from 'node:module';
import type Database from 'better-sqlite3';
import { once } from './once.js';

const require = createRequire(import.meta.url);

export const ajv = once(() => ({
  Ajv: (require('ajv') as typeof import('ajv')).Ajv,
  Ajv2020: (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020,
  addFormats: require('ajv-formats') as (ajv: object) => void,
}));

export const sqlite: () => typeof Database = once(() => require('better-sqlite3') as typeof Database);
