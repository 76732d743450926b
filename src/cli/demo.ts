/**
 * `onetap demo`: the shipped catalog played by a loopback fleet, refreshed twice in a temporary workspace
 * (the plan, then `--write`). Works offline.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseCatalog, serializeCatalog } from '../catalog/model.js';
import { hostOf } from '../catalog/url.js';
import { runRefresh } from './refresh.js';
import { packagePath } from '../util/package-file.js';
import { startDemoServer, type DemoServer, type Role } from '../demo/fleet.js';
import { probeMany } from '../attest/probe-many.js';
import { renderProbeTable } from './probe.js';

/** How this onetap was started, as a command to print: the checkout's bin/onetap, else npx onetap. */
function invocation(): string {
  const bin = process.argv[1] ?? '';
  const rel = relative(process.cwd(), bin);
  return bin && !rel.startsWith('..') && !rel.includes('node_modules') ? `./${rel}` : 'npx onetap';
}

/** Who plays what; every other entry is live. */
const ROLES: Record<string, Role> = {
  'Jina AI': 'auth-optional',
  DeepWiki: 'flaky',
  'Find-A-Domain': 'dead',
  Malwarebytes: 'origin-526',
  MDN: 'live-sse',
  tldraw: 'live-sse',
};

const TOOLS: Record<string, string[]> = {
  Context7: ['resolve-library-id', 'query-docs'],
  MDN: ['get-compat', 'get-doc', 'search'],
  DeepWiki: ['ask_question', 'read_wiki_contents', 'read_wiki_structure'],
  'Parallel Search': ['web_search', 'web_fetch'],
  'Yahoo Finance': ['get_quote', 'search', 'get_chart', 'quote_summary'],
  CoinGecko: ['execute', 'search_docs'],
  'Open-Meteo Weather': ['expandSchema', 'getweatherdata'],
  'Kiwi.com': ['search-flight', 'feedback-to-devs'],
  tldraw: ['search', 'exec', 'read_checkpoint', 'save_checkpoint'],
  'SubwayInfo NYC': ['get_arrivals', 'get_alerts', 'get_bus_arrivals'],
};

export async function runDemo(out: { write: (s: string) => unknown } = process.stdout): Promise<number> {
  const shipped = parseCatalog(await readFile(packagePath('catalog/servers.json'), 'utf8'));
  const workspace = await mkdtemp(join(tmpdir(), 'onetap-demo-'));
  const servers: DemoServer[] = [];
  try {
    for (const s of shipped.servers)
      servers.push(await startDemoServer(ROLES[s.name] ?? 'live-json', s.name, TOOLS[s.name] ?? ['tool']));
    const catalog = {
      ...shipped,
      about: 'The shipped catalog, each server played on 127.0.0.1 by the demo fleet.',
      policy: {
        ...shipped.policy,
        authOptionalHosts: shipped.servers
          .filter((s) => s.requiresAuth)
          .map((s) => hostOf(servers[shipped.servers.indexOf(s)]!.url)!),
        timeoutMs: 5_000,
      },
      servers: shipped.servers.map((s, i) => ({ ...s, url: servers[i]!.url })),
    };
    delete catalog.$schema;
    const catalogPath = join(workspace, 'catalog', 'servers.json');
    await mkdir(join(workspace, 'catalog'));
    await writeFile(catalogPath, serializeCatalog(catalog));
    const flags = { catalog: catalogPath, concurrency: 16, allowHttp: true };
    out.write(
      `onetap demo: ${catalog.servers.length} shipped servers played on 127.0.0.1 (${Object.entries(ROLES)
        .map(([n, r]) => `${n}: ${r}`)
        .join(', ')})\nworkspace: ${workspace}\n\n`,
    );
    out.write('== 1. onetap refresh (the plan; nothing is written) ==\n\n');
    await runRefresh(flags, out);
    out.write('\n== 2. onetap refresh --write (the same plan, applied atomically) ==\n\n');
    const code = await runRefresh({ ...flags, write: true }, out);
    const one = catalog.servers.find((s) => (ROLES[s.name] ?? 'live-json') === 'live-json')!;
    out.write(`\n== 3. onetap probe (one server, as the app would connect) ==\n\n`);
    const probed = await probeMany([{ url: one.url }], { retain: true });
    out.write(renderProbeTable(probed, false) + '\n');
    const onetap = invocation();
    out.write(
      [
        '',
        `Look at: ${join(workspace, 'catalog', 'servers.md')} (snapshot), ${join(
          workspace,
          'catalog',
          'generated',
        )} (runtime lists), ${join(workspace, 'catalog', 'log.md')}`,
        `The status page of this run (the fleet is gone, its history stays; http:// because it played on 127.0.0.1):`,
        `  ${onetap} serve --catalog ${catalogPath} --allow-http     # then open http://127.0.0.1:8787/`,
        `Your own list: ${onetap} init --dir <your list repository> (README: "Your own list in five minutes")`,
        '',
      ].join('\n'),
    );
    return code;
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}
