/**
 * SVG badges (`/badge/<id>.svg`, `/badge/list.svg`, and the same files from `onetap site`): a label and a message
 * in the shields.io layout, drawn with system fonts only (nothing is fetched), every text escaped.
 */
import type { VerdictName } from '../model/words.js';
import { escapeHtml } from '../text/escape.js';

/** The verdicts' colours, as the status page shows them (its light theme). */
export const VERDICT_COLOUR: Readonly<Record<VerdictName | 'none', string>> = {
  live: '#1a7f37',
  review: '#9a6700',
  failed: '#bc4c00',
  drop: '#cf222e',
  none: '#59636e',
};

/** The word a badge says for a verdict. */
export const BADGE_WORD: Readonly<Record<VerdictName, string>> = {
  live: 'live',
  review: 'review',
  failed: 'failed',
  drop: 'drop',
};

/** Width of a text at 11 px in a sans-serif, estimated per character (no font is measured or loaded). */
function textWidth(text: string): number {
  let w = 0;
  for (const ch of text)
    w += /[ilj.,:;'|!/ ]/.test(ch) ? 3.5 : /[mwMW]/.test(ch) ? 10 : /[A-Z0-9]/.test(ch) ? 7.5 : 6.5;
  return Math.ceil(w);
}

/** A two-part badge: `label` on grey, `message` on `colour`. */
export function badge(label: string, message: string, colour: string): string {
  const l = textWidth(label) + 12;
  const m = textWidth(message) + 12;
  const [lt, mt] = [escapeHtml(label), escapeHtml(message)];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${l + m}" height="20" role="img" aria-label="${lt}: ${mt}"><title>${lt}: ${mt}</title>` +
    `<rect width="${l}" height="20" rx="3" fill="#555"/><rect x="${l}" width="${m}" height="20" rx="3" ` +
    `fill="${colour}"/><rect x="${l}" width="4" height="20" fill="${colour}"/>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,Geneva,sans-serif" font-size="11">` +
    `<text x="${l / 2}" y="14">${lt}</text><text x="${l + m / 2}" y="14">${mt}</text></g></svg>\n`
  );
}

/** A server's badge: `one-tap | <verdict>` in the verdict's colour (`not probed` in grey without a known verdict). */
export function serverBadge(verdict: VerdictName | null): string {
  // The history is untrusted: a word outside the policy is shown as no verdict.
  return verdict && Object.hasOwn(BADGE_WORD, verdict)
    ? badge('one-tap', BADGE_WORD[verdict], VERDICT_COLOUR[verdict])
    : badge('one-tap', 'not probed', VERDICT_COLOUR.none);
}

/** The list's badge: `one-tap | n/m live`, green when every server is live, else the review colour. */
export function listBadge(live: number, total: number): string {
  return badge(
    'one-tap',
    `${live}/${total} live`,
    total > 0 && live === total ? VERDICT_COLOUR.live : total === 0 ? VERDICT_COLOUR.none : VERDICT_COLOUR.review,
  );
}
