// The pull-request check of the onetap action (mode: check): the rows a pull request adds or changes,
// attested the way the weekly refresh does. Lint runs before this (in check.sh) on the whole catalog.
//
//   node check-pr.mjs <catalog> <base catalog file, or an empty file when the base has none>
//
// Prints one line per probed row and GitHub annotations; exit 1 when a changed row is not live
// (drop or review), 0 otherwise (a `failed` probe is a warning: a flake is no reason to block a pull request).
// Every line quotes text the pull request or a server chose (names, URLs, error messages): it is printed
// through log-safe.mjs, so it stays one line and never reads as a workflow command.
import { readFileSync } from 'node:fs';
import { parseCatalog, probeMany } from '../dist/src/index.js';
import { checkUrl, guardedLookup } from '../dist/src/net/fetcher.js';
import { commandData, commandProperty, logLine } from './log-safe.mjs';

const [catalogPath, basePath] = process.argv.slice(2);
const file = commandProperty(catalogPath);
const catalog = parseCatalog(readFileSync(catalogPath, 'utf8'), catalogPath);
const baseText = readFileSync(basePath, 'utf8');
const base = baseText.trim() ? parseCatalog(baseText, `base ${catalogPath}`) : { servers: [] };

// A row is "changed" when its URL is new, or its entry differs in anything the probe or the app reads.
const key = (s) => JSON.stringify({ name: s.name, url: s.url, description: s.description, requiresAuth: s.requiresAuth, headers: s.headers ?? {} });
const before = new Map(base.servers.map((s) => [s.url, key(s)]));
const changed = catalog.servers.filter((s) => before.get(s.url) !== key(s));
const timeoutMs = Number(process.env.INPUT_TIMEOUT) || catalog.policy?.timeoutMs || 15_000;
// A pull request (perhaps from a fork) chooses these URLs: probe them under discovery's address rules, so a
// row cannot point the runner at its own network (metadata service, private ranges). allow-http is for
// loopback fixtures only and lifts the rules.
const allowPrivate = process.env.INPUT_ALLOW_HTTP === 'true';

console.log(`${changed.length} row(s) added or changed against the base`);
let failures = 0;
const refused = new Map();
for (const s of changed) {
  try { checkUrl(s.url, { allowPrivate }); } catch (err) { refused.set(s.url, err.message); }
}
const probed = changed.filter((s) => !refused.has(s.url));
const results = await probeMany(probed.map((s) => ({ url: s.url, requiresAuth: s.requiresAuth, headers: s.headers ?? {} })), {
  timeoutMs, concurrency: 8, lookup: allowPrivate ? undefined : guardedLookup(),
});
for (const s of changed.filter((x) => refused.has(x.url))) {
  failures++;
  const line = `${s.name} (${s.url}): refused: ${refused.get(s.url)}`;
  console.log(`  ${logLine(line)}`);
  console.log(`::error file=${file},title=onetap: not one-tap ready::${commandData(line)}`);
}
for (const [i, s] of probed.entries()) {
  const r = results[i];
  const line = `${s.name} (${s.url}): ${r.verdict}/${r.reason}${r.tools ? `, ${r.tools.length} tools` : ''}${r.error ? ` (${r.error})` : ''}`;
  console.log(`  ${logLine(line)}`);
  // A name that resolved to a private address was stopped by the lookup: as refused as an IP literal.
  if (r.verdict === 'drop' || r.verdict === 'review' || /private or reserved address/.test(r.error ?? '')) {
    failures++;
    console.log(`::error file=${file},title=onetap: not one-tap ready::${commandData(line)}`);
  } else if (r.verdict === 'failed') {
    console.log(`::warning file=${file},title=onetap: probe failed::${commandData(line)}`);
  }
}
if (process.env.GITHUB_OUTPUT) {
  const { appendFileSync } = await import('node:fs');
  appendFileSync(process.env.GITHUB_OUTPUT, `checked=${changed.length}\nnot-ready=${failures}\n`);
}
process.exitCode = failures ? 1 : 0;
