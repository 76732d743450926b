/** Terminal rendering helpers: colour only on a TTY without NO_COLOR, untrusted text made inert. */
import type { VerdictName } from '../policy/policy.js';
import { inert, jsonInvisibleEscaped } from '../text/escape.js';
import type { Finding, Mismatch } from '../model/observation.js';
import type { SameTools } from '../model/plan.js';
import { SAME_TOOLS_WORDS } from '../policy/same-tools.js';

export function useColor(stream: NodeJS.WriteStream): boolean {
  return !!stream.isTTY && !('NO_COLOR' in process.env && process.env.NO_COLOR !== '') && process.env.TERM !== 'dumb';
}

const VERDICT_COLOR: Record<string, number> = {
  live: 32,
  keep: 32,
  review: 33,
  failed: 35,
  'keep-failed': 35,
  drop: 31,
};

export function paint(text: string, verdict: VerdictName | string, color: boolean): string {
  const code = VERDICT_COLOR[verdict];
  return color && code ? `\x1b[${code}m${text}\x1b[0m` : text;
}

/** A plain text table; widths count code points of the text before colouring. */
export function table(
  header: string[],
  rows: string[][],
  paintCell?: (text: string, row: number, col: number) => string,
): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => [...(r[c] ?? '')].length)));
  const line = (cells: string[], row: number) =>
    cells
      .map((cell, c) => {
        const padded = c === cells.length - 1 ? cell : cell + ' '.repeat(widths[c]! - [...cell].length);
        return row >= 0 && paintCell ? paintCell(padded, row, c) : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(header, -1), ...rows.map((r, i) => line(r, i))].join('\n');
}

/** One JSON document on stdout (`--json`): two-space indent, no raw bidi or invisible character. */
export function printJson(value: unknown): void {
  process.stdout.write(jsonInvisibleEscaped(JSON.stringify(value, null, 2)) + '\n');
}

/** An error for stderr: every line `onetap: …`, control characters made inert. */
export function errorLines(message: string): string {
  return (
    message
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `onetap: ${inert(l)}`)
      .join('\n') + '\n'
  );
}

/**
 * A JSON array written as its items arrive, in index order: an item waits only for the ones before it, as the text
 * it will be written as. The whole is what `JSON.stringify(items, null, 2)` gives.
 */
export class OrderedJsonArray {
  private readonly waiting = new Map<number, Buffer>();
  private next = 0;

  /** `escapeJson` applies to each item's JSON text (for example `jsonInvisibleEscaped`). */
  constructor(
    private readonly write: (text: string | Uint8Array) => void,
    private readonly escapeJson: (json: string) => string = (json) => json,
  ) {}

  put(index: number, item: unknown): void {
    // Stringified inside a one-item array, it comes out indented as an array item (no second pass to indent).
    const text = this.escapeJson(JSON.stringify([item], null, 2).slice(2, -2));
    // An item that must wait for earlier ones (thousands behind one hanging server) waits as UTF-8 bytes, outside
    // V8's heap: held there, they would be promoted and would grow the old generation they then leave as garbage.
    if (index !== this.next) {
      this.waiting.set(index, Buffer.from(text));
      return;
    }
    this.emit(text);
    for (let held = this.waiting.get(this.next); held !== undefined; held = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      this.emit(held);
    }
  }

  end(): void {
    this.write(this.next === 0 ? '[]\n' : '\n]\n');
  }

  /** One write per item, its separator with it (a write to a pipe is a system call). */
  private emit(text: string | Buffer): void {
    const separator = this.next === 0 ? '[\n' : ',\n';
    this.write(typeof text === 'string' ? separator + text : Buffer.concat([Buffer.from(separator), text]));
    this.next++;
  }
}

/** The progress line on a terminal: done of total, and the slowest still pending (its URL and how long). */
export class Progress {
  private readonly started = new Map<number, number>();
  private finished = 0;
  private last = 0;

  constructor(
    private readonly labels: readonly string[],
    private readonly on: boolean,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  start(i: number): void {
    this.started.set(i, Date.now());
  }

  done(i: number): void {
    this.started.delete(i);
    this.finished++;
    this.draw();
  }

  private draw(): void {
    if (!this.on) return;
    const now = Date.now();
    if (now - this.last < 100 && this.finished < this.labels.length) return;
    this.last = now;
    let slowest: [number, number] | null = null;
    for (const [i, t] of this.started) if (slowest === null || t < slowest[1]) slowest = [i, t];
    const pending = slowest
      ? ` · slowest pending ${Math.round((now - slowest[1]) / 1000)} s: ${inert(this.labels[slowest[0]]!).slice(0, 60)}`
      : '';
    this.stream.write(`\r\x1b[K${this.finished}/${this.labels.length} done${pending}`);
  }

  clear(): void {
    if (this.on) this.stream.write('\r\x1b[K');
  }
}

/**
 * Screening findings, one indented line each (tool, field, rule, the words that fired it), at most `max` then a count.
 */
export function findingLines(findings: readonly Finding[], indent = '    ', max = 5): string[] {
  const lines = findings
    .slice(0, max)
    .map((f) => `${indent}${inert(f.tool)} ${inert(f.field)} [${f.rule}]: ${inert(f.excerpt)}`);
  if (findings.length > max) lines.push(`${indent}… ${findings.length - max} more (--json lists them all)`);
  return lines;
}

/** Where a Server Card disagrees with the live server: `field: card says "x", the server "y"`, joined by `; `. */
export function mismatchText(mismatches: readonly Mismatch[]): string {
  return mismatches
    .map(
      (m) =>
        `${m.field}: card says ${inert(JSON.stringify(m.card) ?? 'nothing')}, the server ${inert(JSON.stringify(m.live) ?? 'nothing')}`,
    )
    .join('; ');
}

/** Why a row was probed without its key: `A not set; B refused (…)`. */
export function withoutKeyText(keys: { missing: readonly string[]; refused?: readonly string[] }): string {
  const parts = keys.missing.length ? [`${keys.missing.map(inert).join(', ')} not set`] : [];
  if (keys.refused?.length)
    parts.push(
      `${keys.refused.map(inert).join(', ')} refused, never read: not a variable a catalog may name (onetap lint says why)`,
    );
  return parts.join('; ');
}

/** A token count for a table cell ("-": none counted). */
export const tokensCell = (tokens: number | null | undefined) =>
  typeof tokens === 'number' ? tokens.toLocaleString('en') : '-';

/** Entries that serve the same tool set: `A (the same tools, https://…); B (…)`. */
export function sameToolsText(same: readonly SameTools[]): string {
  return same.map((s) => `${inert(s.name)} (${SAME_TOOLS_WORDS[s.digest]}, ${inert(s.url)})`).join('; ');
}
