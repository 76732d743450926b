/** A tagged template that escapes every interpolation unless it is already `Html`: XSS-safe by construction. */
import { escapeHtml, escapingTemplate, SafeText } from '../text/escape.js';

export class Html extends SafeText {}

/** Trusted markup (only for constants written in this code base). */
export const trusted = (markup: string) => new Html(markup);

export const html = escapingTemplate(Html, escapeHtml);
