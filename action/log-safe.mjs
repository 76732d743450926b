// Text the onetap action prints that it does not control (what a server answered, a pull request's catalog,
// onetap's own output quoting them) must never be read by the runner as a workflow command. The runner reads
// `::command::` at the start of any line (after leading whitespace) and the legacy `##[command]` anywhere in
// one, and it ends a line at CR as well as LF. So every such line goes through this one helper:
//
//   - one line: CR, LF and the other line breaks become spaces;
//   - control characters become U+FFFD, and invisible, bidi and tag characters a visible ⟨U+XXXX⟩ (the shared
//     decision of src/text/unicode.ts), so nothing hidden can stand in front of `::`;
//   - a leading `::` becomes `\::`, and every `##[` becomes `#\#[`.
//
// Imported by check-pr.mjs; as a program (`node log-safe.mjs`), a filter that applies it to every line of stdin
// (run.sh and check.sh pipe onetap's output through it). The action's own commands never pass through it.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { escapeHidden, visibleCodePoint } from '../dist/src/text/unicode.js';

const BREAKS = /\r\n|[\r\n\v\f\u0085\u2028\u2029]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g;

/** Controls as U+FFFD, hidden characters as ⟨U+XXXX⟩ (text already on one line). */
function visible(line) {
  return escapeHidden(line.replace(CONTROLS, '\uFFFD'), visibleCodePoint);
}

/** Every legacy `##[command]` (read anywhere in a line) broken by a backslash: `#\#[`. */
function noLegacyCommand(text) {
  let s = text;
  while (s.includes('##[')) s = s.replaceAll('##[', '#\\#[');
  return s;
}

/** No workflow command: a leading `::` (after any whitespace .NET trims) and every `##[` broken by a backslash. */
function notACommand(line) {
  return noLegacyCommand(line.replace(/^([\s\u0085]*)::/u, '$1\\::'));
}

/** Text of any origin as one log line the runner cannot read as a command. */
export function logLine(text) {
  return notACommand(visible(String(text ?? '').replace(BREAKS, ' ')));
}

/** Text of any origin as the data of the action's own `::error …::` or `::warning …::` (one line, no `##[`, % escaped). */
export function commandData(text) {
  return noLegacyCommand(visible(String(text ?? '').replace(BREAKS, ' '))).replaceAll('%', '%25');
}

/** Text as a property value of a workflow command (`file=…`, `title=…`): also `:` and `,` escaped. */
export function commandProperty(text) {
  return commandData(text).replaceAll(':', '%3A').replaceAll(',', '%2C');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // A filter: every line of stdin (ended by CR, LF or CRLF, as the runner ends them) made safe, in order.
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) process.stdout.write(`${notACommand(visible(line.replace(BREAKS, ' ')))}\n`);
}
