/**
 * The README is the front door (issue 21): at most 300 lines, and every example in it either checked here or
 * marked `<!-- illustrative: why -->` on the line before its fence. Shell lines: each onetap command exists and
 * takes every flag the line gives it. JSON: each catalog fragment passes lint where it belongs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { lintCatalog } from '../src/catalog/lint.js';
import { catalogOf, server } from './helpers.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The fenced blocks: language, text, and whether the line before the fence marks it illustrative. */
function blocks(text: string): Array<{ lang: string; body: string; illustrative: boolean; line: number }> {
  const lines = text.split('\n');
  const out: Array<{ lang: string; body: string; illustrative: boolean; line: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    out.push({
      lang: open[1]!,
      body: lines.slice(i + 1, end).join('\n'),
      illustrative: /^<!-- illustrative: .+ -->$/.test(lines[i - 1] ?? ''),
      line: i + 1,
    });
    i = end;
  }
  return out;
}

/** A shell line's words (single and double quotes, no expansion). */
const words = (line: string) =>
  [...line.replace(/\s+#.*$/, '').matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);

describe('README', () => {
  it('is at most 300 lines', () => {
    assert.ok(README.split('\n').length <= 300, `${README.split('\n').length} lines`);
  });

  it('every onetap command line in a shell block names a command and flags that exist', () => {
    const program = buildProgram();
    let checked = 0;
    for (const b of blocks(README).filter((x) => x.lang === 'sh' && !x.illustrative)) {
      for (const line of b.body.split('\n')) {
        const w = words(line);
        const at = w[0] === 'npx' ? 1 : w[0] === './bin/onetap' ? 0 : -1;
        if (at < 0 || (at === 1 && w[1] !== 'onetap')) continue;
        const [name, ...rest] = w.slice(at + 1);
        const cmd = program.commands.find((c: Command) => c.name() === name);
        assert.ok(cmd, `README line ${b.line}: no command "${name}"`);
        const flags = new Set(cmd.options.flatMap((o) => [o.long, o.short].filter(Boolean)));
        for (const f of rest.filter((x) => x.startsWith('-')))
          assert.ok(flags.has(f), `README line ${b.line}: onetap ${name} has no ${f}`);
        checked++;
      }
    }
    assert.ok(checked >= 8, `${checked} command lines checked`);
  });

  it('every JSON example is a catalog fragment that passes lint where it goes', () => {
    const json = blocks(README).filter((x) => x.lang === 'json' && !x.illustrative);
    assert.ok(json.length >= 2);
    for (const b of json) {
      const fragment = JSON.parse(`{${b.body}}`) as Record<string, unknown>;
      const catalog = fragment.policy
        ? catalogOf([], { policy: { authOptionalHosts: [], sharedGatewayHosts: [], ...(fragment.policy as object) } })
        : catalogOf([server('Keyed', 'https://mcp.keyed.example/v1', { requiresAuth: true, ...fragment })], {
            policy: { authOptionalHosts: ['mcp.keyed.example'], sharedGatewayHosts: [] },
          });
      assert.deepEqual(lintCatalog(catalog), [], `README line ${b.line}`);
    }
  });

  it('every other block is checked by name or marked illustrative', () => {
    const unchecked = blocks(README).filter((b) => !b.illustrative && !['sh', 'json', ''].includes(b.lang));
    assert.deepEqual(
      unchecked.map((b) => `line ${b.line}: ${b.lang}`),
      [],
    );
  });
});
