/**
 * Captures `tools/list` from real MCP servers published on npm, for the screening false-positive corpus
 * (test/screen/benign/). Run by hand, never by the tests: the captured JSON is committed with its provenance.
 *
 *   mkdir /tmp/capture && cd /tmp/capture && echo '{"private":true}' > package.json
 *   npm install --ignore-scripts @modelcontextprotocol/server-memory ...   # outside the project, never package.json
 *   npx tsc -p . && node dist/bench/capture-tools.js /tmp/capture [package ...]
 *
 * Each server is started over stdio with the SDK client and dummy credentials (listing tools needs none), and
 * its tools are stored exactly as listed, so the corpus screens the same text a client would have seen.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeFileAtomic } from '../src/util/atomic.js';

interface ServerSpec {
  package: string;
  /** Arguments after the package's bin script. */
  args?: string[];
  env?: Record<string, string>;
}

const DUMMY = 'dummy-token-for-listing-tools';

/** The servers captured so far; the arguments and environment are only what each needs to start. */
const SERVERS: ServerSpec[] = [
  { package: '@modelcontextprotocol/server-everything', args: ['stdio'] },
  {
    package: '@modelcontextprotocol/server-memory',
    env: { MEMORY_FILE_PATH: join(tmpdir(), 'onetap-capture-memory.jsonl') },
  },
  { package: '@modelcontextprotocol/server-filesystem', args: [tmpdir()] },
  { package: '@modelcontextprotocol/server-sequential-thinking' },
  { package: '@modelcontextprotocol/server-github', env: { GITHUB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  { package: '@modelcontextprotocol/server-gitlab', env: { GITLAB_PERSONAL_ACCESS_TOKEN: DUMMY } },
  { package: '@modelcontextprotocol/server-slack', env: { SLACK_BOT_TOKEN: DUMMY, SLACK_TEAM_ID: 'T00000000' } },
  { package: '@modelcontextprotocol/server-puppeteer' },
  { package: '@modelcontextprotocol/server-brave-search', env: { BRAVE_API_KEY: DUMMY } },
  { package: '@modelcontextprotocol/server-google-maps', env: { GOOGLE_MAPS_API_KEY: DUMMY } },
  { package: '@modelcontextprotocol/server-everart', env: { EVERART_API_KEY: DUMMY } },
  {
    package: '@modelcontextprotocol/server-aws-kb-retrieval',
    env: { AWS_ACCESS_KEY_ID: DUMMY, AWS_SECRET_ACCESS_KEY: DUMMY, AWS_REGION: 'us-east-1' },
  },
  { package: '@modelcontextprotocol/server-postgres', args: ['postgresql://127.0.0.1:1/none'] },
  { package: '@playwright/mcp' },
  { package: '@upstash/context7-mcp' },
  { package: '@notionhq/notion-mcp-server', env: { NOTION_TOKEN: DUMMY } },
  { package: 'firecrawl-mcp', env: { FIRECRAWL_API_KEY: 'fc-' + DUMMY } },
  { package: 'mcp-server-kubernetes' },
  { package: '@sentry/mcp-server', args: ['--access-token', DUMMY] },
  { package: '@shopify/dev-mcp' },
  { package: 'tavily-mcp', env: { TAVILY_API_KEY: DUMMY } },
  // desktop-commander reads its config from HOME (the temp dir here): telemetry off there before capturing.
  { package: '@wonderwhy-er/desktop-commander' },
  { package: 'exa-mcp-server', env: { EXA_API_KEY: DUMMY } },
  { package: '@cyanheads/git-mcp-server', env: { MCP_TRANSPORT_TYPE: 'stdio', MCP_LOG_LEVEL: 'error' } },
  { package: 'figma-developer-mcp', args: ['--stdio'], env: { FIGMA_API_KEY: DUMMY } },
  { package: '@executeautomation/playwright-mcp-server' },
  { package: 'mcp-server-commands' },
  {
    package: '@browserbasehq/mcp-server-browserbase',
    env: { BROWSERBASE_API_KEY: DUMMY, BROWSERBASE_PROJECT_ID: DUMMY },
  },
  // Not capturable without a live backend (they call it before answering tools/list or exit without it):
  // server-redis, server-gdrive, @supabase/mcp-server-supabase, @stripe/mcp, @heroku/mcp-server.
];

interface PackageJson {
  name: string;
  version: string;
  bin?: string | Record<string, string>;
}

function binOf(pkg: PackageJson): string {
  if (typeof pkg.bin === 'string') return pkg.bin;
  const bins = Object.values(pkg.bin ?? {});
  if (bins.length === 0) throw new Error(`${pkg.name} has no bin`);
  return bins[0]!;
}

async function capture(prefix: string, spec: ServerSpec, outDir: string): Promise<void> {
  // server-everything is a devDependency of onetap; the others live under the throw-away prefix.
  const roots = [join(prefix, 'node_modules', spec.package), resolve('node_modules', spec.package)];
  const root = roots.find((r) => {
    try {
      readFileSync(join(r, 'package.json'));
      return true;
    } catch {
      return false;
    }
  });
  if (!root) throw new Error(`${spec.package} is not installed under ${prefix}/node_modules`);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, binOf(pkg)), ...(spec.args ?? [])],
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...(spec.env ?? {}) },
    cwd: tmpdir(), // some servers print their working directory into descriptions
    stderr: 'ignore',
  });
  const client = new Client({ name: 'onetap-capture', version: '0' });
  try {
    await client.connect(transport, { timeout: 30_000 });
    const tools: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: 30_000 });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const file = {
      provenance: {
        package: `${pkg.name}@${pkg.version}`,
        registry: 'npm',
        capturedAt: new Date().toISOString().slice(0, 10),
        how: 'bench/capture-tools.ts: stdio, SDK client, tools/list (all pages), dummy credentials',
        serverInfo: client.getServerVersion() ?? null,
      },
      tools,
    };
    const name = pkg.name.replace(/^@/, '').replace(/\//g, '__');
    await writeFileAtomic(join(outDir, `${name}.json`), JSON.stringify(file, null, 2) + '\n');
    console.log(`${pkg.name}@${pkg.version}: ${tools.length} tools`);
  } finally {
    await client.close().catch(() => {});
  }
}

async function main(): Promise<void> {
  const [prefix, ...only] = process.argv.slice(2);
  if (!prefix) {
    console.error('usage: node dist/bench/capture-tools.js <npm-prefix> [package ...]');
    process.exit(2);
  }
  const outDir = resolve('test/screen/benign');
  const chosen = only.length ? SERVERS.filter((s) => only.includes(s.package)) : SERVERS;
  let failed = 0;
  for (const spec of chosen) {
    try {
      await capture(resolve(prefix), spec, outDir);
    } catch (err) {
      failed++;
      console.error(`${spec.package}: ${(err as Error).message}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

await main();
