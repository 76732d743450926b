/**
 * Lines fit in 120 characters (Biome's width, biome.json). Biome wraps code, not comments or literals: a line over
 * 120 may stay only when it is a literal (a string, template or regular expression, give or take a few characters of
 * code around it), and no line is over 160.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..', '..');
/** Biome's `files.includes` leaves these out: they are documents under test, not the project's code. */
const NOT_CODE = new Set(['test/fixtures', 'test/examples']);
const WIDTH = 120;
const HARD_WIDTH = 160;
/** Code a literal line may carry besides its literal: `key: `, `const name = `, `) +`, `,`. */
const CODE_AROUND_A_LITERAL = 30;

const LITERALS = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  // A template is a literal whole, its interpolations included: Biome leaves it as written.
  ts.SyntaxKind.TemplateExpression,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** Which characters of a file are inside a literal. */
function literalMask(path: string, text: string): Uint8Array {
  const mask = new Uint8Array(text.length);
  const visit = (node: ts.Node): void => {
    if (LITERALS.has(node.kind)) mask.fill(1, node.getStart(), node.getEnd());
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true));
  return mask;
}

/** Each line over the width that is not a literal, and each over the hard width, as "path:line: length". */
export function tooLong(path: string, text: string): string[] {
  const mask = literalMask(path, text);
  const problems: string[] = [];
  let offset = 0;
  text.split('\n').forEach((line, i) => {
    const start = offset;
    offset += line.length + 1;
    if (line.length <= WIDTH) return;
    let code = 0;
    for (let c = 0; c < line.length; c++) if (!mask[start + c] && line[c] !== ' ') code++;
    if (line.length > HARD_WIDTH || code > CODE_AROUND_A_LITERAL) problems.push(`${path}:${i + 1}: ${line.length}`);
  });
  return problems;
}

function tsFiles(dir: string): string[] {
  if (NOT_CODE.has(relative(ROOT, dir))) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

test('no line in src/ or test/ is over 120 characters unless it is a literal, and none is over 160', () => {
  const files = ['src', 'test'].flatMap((dir) => tsFiles(join(ROOT, dir)));
  const problems = files.flatMap((f) => tooLong(relative(ROOT, f), readFileSync(f, 'utf8')));
  assert.deepEqual(problems, [], `${problems.length} lines too long`);
});

test('a long comment or a long line of code is too long; a long literal is not (up to 160)', () => {
  const long = 'x'.repeat(130);
  assert.equal(tooLong('a.ts', `// ${long}\n`).length, 1);
  assert.equal(tooLong('a.ts', `call(${long.split('').join(',')});\n`).length, 1);
  assert.deepEqual(tooLong('a.ts', `const s =\n  '${long}';\n`), []);
  assert.deepEqual(tooLong('a.ts', `const t = \`\n${long} \${s} ${long.slice(0, 10)}\`;\n`), []);
  assert.equal(tooLong('a.ts', `const s = '${'y'.repeat(170)}';\n`).length, 1);
});
