/** Text helpers for what servers send: bounded and one line before it is recorded or printed. */

/** At most `max` UTF-16 units, the `…` that marks a cut included; a surrogate pair is never split. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** One line (line breaks and other vertical whitespace as spaces), at most `max` units. */
export function oneLine(text: string, max: number): string {
  const head = text.length > max + 1 ? text.slice(0, max + 1) : text; // a 3 MB message is not scanned whole
  return clipText(BREAKS.test(head) ? head.replace(BREAKS_ALL, ' ') : head, max);
}
const BREAKS = /[\r\n\v\f\u0085\u2028\u2029]/;
const BREAKS_ALL = /[\r\n\v\f\u0085\u2028\u2029]+/g;

/** Whitespace runs as one space, trimmed, at most `max` units: a snippet of a body inside a sentence. */
export function squeezed(text: string, max: number): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), max);
}

export function oneLineOrNull(text: string | null | undefined, max: number): string | null {
  return typeof text === 'string' ? oneLine(text, max) : null;
}
