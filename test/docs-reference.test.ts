/**
 * docs/reference/ is generated from the code (scripts/reference.ts): a page that differs from what the
 * generator makes now is stale (`npm run docs`), and every page's help block is what the command prints.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  EXIT_CODES,
  LIMIT_CONSTANTS,
  REFERENCE_DIR,
  buildReferenceProgram,
  firstTextBlock,
  referenceCommands,
  referencePages,
} from '../scripts/reference.js';
import { REASON_TEXT } from '../src/policy/policy.js';
import { catalogSchema } from '../src/catalog/schema.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const STALE = 'is stale: run `npm run docs` and commit docs/reference/';

const program = buildReferenceProgram();
const refs = referenceCommands(program);
const pages = referencePages(program);
const onDisk = (path: string) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : null);

/**
 * `onetap … --help` as a user's pipe sees it: stdout not a terminal, so commander lays help out at 80 columns
 * (it ignores COLUMNS) and without colour (FORCE_COLOR would turn it on).
 */
async function helpOf(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, COLUMNS: '80' };
  delete env.FORCE_COLOR;
  delete env.CLICOLOR_FORCE;
  const { stdout } = await run(process.execPath, [join(ROOT, 'bin/onetap'), ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  return stdout;
}

describe('docs/reference is generated from the code', () => {
  it('every page on disk equals what the generator makes now', () => {
    const stale = pages.filter((p) => onDisk(p.path) !== p.content).map((p) => p.path);
    assert.deepEqual(stale, [], `${stale.join(', ')} ${STALE}`);
  });

  it("catalog/servers.schema.json is generated from the catalog's zod schema, which the shipped catalog meets", () => {
    assert.ok(pages.some((p) => p.path === 'catalog/servers.schema.json'));
    const shipped = JSON.parse(readFileSync(join(ROOT, 'catalog/servers.json'), 'utf8'));
    const parsed = catalogSchema.safeParse(shipped);
    assert.ok(parsed.success, parsed.error?.message);
    assert.equal(catalogSchema.safeParse({ ...shipped, extra: 1 }).success, false);
  });

  it('docs/reference holds no page the generator does not make', () => {
    const made = new Set(pages.map((p) => p.path));
    const extra = readdirSync(join(ROOT, REFERENCE_DIR))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `${REFERENCE_DIR}/${f}`)
      .filter((p) => !made.has(p));
    assert.deepEqual(extra, [], `${extra.join(', ')}: no command has this page any more; npm run docs removes it`);
  });

  it("each command page's help block is what `onetap <command> --help` prints, and the index holds `onetap --help`", async () => {
    const targets = [
      { page: `${REFERENCE_DIR}/README.md`, args: [] as string[] },
      ...refs.map((r) => ({ page: `${REFERENCE_DIR}/${r.file}`, args: r.path })),
    ];
    // In parallel: each is a Node start-up.
    const [version, ...helps] = await Promise.all([
      helpOf(['--version']),
      ...targets.map((t) => helpOf([...t.args, '--help'])),
    ]);
    targets.forEach((t, i) => {
      const text = onDisk(t.page);
      assert.ok(text, `${t.page} is missing: run npm run docs`);
      assert.equal(
        firstTextBlock(text),
        helps[i],
        `${t.page}: its help block is not what \`onetap ${[...t.args, '--help'].join(
          ' ',
        )}\` prints (npm run docs; or scripts/reference.ts builds another program than src/cli/main.ts)`,
      );
    });
    assert.ok(
      onDisk(`${REFERENCE_DIR}/README.md`)!.includes(`\`onetap --version\` prints \`${version.trim()}\`.`),
      'the index names another version than `onetap --version` prints',
    );
  });

  it('the verdicts page names every reason of REASON_TEXT', () => {
    const text = onDisk(`${REFERENCE_DIR}/verdicts.md`) ?? '';
    const missing = Object.keys(REASON_TEXT).filter((r) => !text.includes(`| \`${r}\` |`));
    assert.deepEqual(missing, []);
  });

  it('every command has its exit codes, and every entry of EXIT_CODES is a command', () => {
    const names = refs.map((r) => r.path.join(' '));
    assert.deepEqual(
      names.filter((n) => !Object.hasOwn(EXIT_CODES, n)),
      [],
      'add the command to EXIT_CODES in scripts/reference.ts',
    );
    assert.deepEqual(
      Object.keys(EXIT_CODES).filter((n) => !names.includes(n)),
      [],
      'EXIT_CODES names a command the CLI does not have',
    );
  });

  it('the limits page lists every exported *_LIMITS, *_DEFAULTS, LIMITS and MAX_* constant of src/', () => {
    const exported: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) walk(rel);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
          for (const m of readFileSync(join(ROOT, rel), 'utf8').matchAll(
            /^export const ((?:[A-Z0-9_]+_)?(?:LIMITS|DEFAULTS)|MAX_[A-Z0-9_]+)\b/gm,
          ))
            exported.push(`${m[1]} (${rel})`);
        }
      }
    };
    walk('src');
    const listed = new Set(LIMIT_CONSTANTS.map((c) => `${c.name} (${c.file})`));
    assert.deepEqual(
      exported.filter((e) => !listed.has(e)).sort(),
      [],
      'add these to LIMIT_CONSTANTS in scripts/reference.ts',
    );
  });
});
