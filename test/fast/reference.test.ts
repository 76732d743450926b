/**
 * The published reference says what the code says (fast, no process started): the verdicts and reasons page from
 * the policy table, the limits page from the exported constants, the formats page from the record's schemas and the
 * store's comments. A change to any of them that the committed pages do not show fails here; `npm run docs` writes
 * them again (test/docs-reference.test.ts also holds every command's page to its real `--help`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatsPage, limitsPage, REFERENCE_DIR, ROOT, verdictsPage } from '../../scripts/reference.js';
import { recordJsonSchemas } from '../../src/model/json-schema.js';

const committed = (file: string) => readFileSync(join(ROOT, REFERENCE_DIR, file), 'utf8');

describe('the generated reference is current', () => {
  for (const [file, page] of [
    ['verdicts.md', verdictsPage],
    ['limits.md', limitsPage],
    ['formats.md', formatsPage],
  ] as const) {
    it(`${file} is what the code says (npm run docs writes it again)`, () => assert.equal(page(), committed(file)));
  }
  it('each record JSON Schema names its fields as the schema does', () => {
    for (const [name, schema] of Object.entries(recordJsonSchemas())) {
      const published = JSON.parse(committed(`schemas/${name}.schema.json`)) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      assert.deepEqual(Object.keys(published.properties ?? {}), Object.keys((schema.properties ?? {}) as object), name);
      assert.deepEqual(published.required, schema.required, name);
    }
  });
});
