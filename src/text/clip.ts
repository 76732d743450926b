/** Text helpers for what servers send: bounded and one line before it is recorded or printed. */

/** At most `max` UTF-16 units, the `…` that marks a cut included; a surrogate pair is never split. */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * One line (line breaks and other vertical whitespace as spaces, a run of them as one), at most `max` units. The
 * text is read only until the line holds more than `max` units (a 3 MB message is not scanned whole), however many
 * breaks it squeezed on the way, so a cut is always marked.
 */
export function oneLine(text: string, max: number): string {
  let line = '';
  let at = 0;
  while (at < text.length && line.length <= max) {
    const window = text.slice(at, at + max + 1 - line.length);
    const found = window.search(BREAK);
    if (found === -1) {
      line += window;
      at += window.length;
      continue;
    }
    line += `${window.slice(0, found)} `;
    BREAK_RUN.lastIndex = at + found;
    BREAK_RUN.test(text);
    at = BREAK_RUN.lastIndex;
  }
  return clipText(line, max);
}
const BREAK = /[\r\n\v\f\u0085\u2028\u2029]/;
const BREAK_RUN = /[\r\n\v\f\u0085\u2028\u2029]+/y;

/** Whitespace runs as one space, trimmed, at most `max` units: a snippet of a body inside a sentence. */
export function squeezed(text: string, max: number): string {
  return clipText(text.replace(/\s+/g, ' ').trim(), max);
}

export function oneLineOrNull(text: string | null | undefined, max: number): string | null {
  return typeof text === 'string' ? oneLine(text, max) : null;
}
