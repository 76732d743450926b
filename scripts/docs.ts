/**
 * `npm run docs`: writes docs/reference/ from the code (./reference.ts) and removes pages no command has any
 * more. `node dist/scripts/docs.js --check` writes nothing and exits 1 when a page is stale.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REFERENCE_DIR, ROOT, referencePages } from './reference.js';

/** Writes (or, with `check`, only compares) the pages; returns the paths that were stale. */
export function writeReference(check: boolean): string[] {
  const pages = referencePages();
  const wanted = new Set(pages.map((p) => p.path));
  const stale: string[] = [];

  for (const page of pages) {
    const file = join(ROOT, page.path);
    if (existsSync(file) && readFileSync(file, 'utf8') === page.content) continue;
    stale.push(page.path);
    if (!check) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, page.content);
    }
  }
  const generated = (folder: string, ext: string) => {
    const dir = join(ROOT, folder);
    return (existsSync(dir) ? readdirSync(dir) : []).filter((n) => n.endsWith(ext)).map((n) => `${folder}/${n}`);
  };
  for (const path of [...generated(REFERENCE_DIR, '.md'), ...generated(`${REFERENCE_DIR}/schemas`, '.schema.json')]) {
    if (wanted.has(path)) continue;
    stale.push(`${path} (no longer generated)`);
    if (!check) rmSync(join(ROOT, path));
  }
  return stale;
}

// Only when run (`node dist/scripts/docs.js`), never when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const check = process.argv.includes('--check');
  const stale = writeReference(check);
  if (check) {
    if (stale.length) process.stderr.write(`docs: stale, run npm run docs: ${stale.join(', ')}\n`);
    process.exitCode = stale.length ? 1 : 0;
  } else {
    process.stdout.write(stale.length ? `docs: wrote ${stale.join(', ')}\n` : 'docs: docs/reference is up to date\n');
  }
}
