/** A tagged template that escapes every interpolation unless it is already `Html`: XSS-safe by construction. */
import { escapeHtml } from '../outputs/escape.js';

export class Html {
  constructor(readonly value: string) {}
  toString(): string { return this.value; }
}

/** Trusted markup (only for constants written in this code base). */
export const trusted = (markup: string) => new Html(markup);

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => { out += render(v) + strings[i + 1]!; });
  return new Html(out);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}
