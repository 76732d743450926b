/**
 * Spec-correct clients, as the MCP specification's Streamable HTTP transport says (revisions 2025-03-26 to
 * 2026-07-28) and the official TypeScript SDK's `StreamableHTTPClientTransport` does; test/interop.test.ts holds
 * them to real servers of both eras. Status codes checked, SSE parsed as WHATWG says (eventsource-parser), the
 * response matched to the request id, reading stopped at the response.
 * - `runSpecClient`: the classic handshake (initialize → notifications/initialized → tools/list with
 *   cursor pagination), `MCP-Protocol-Version` after initialize when the profile speaks a version that has it.
 *   With the DIAGNOSIS profile it is the reading that explains why the app fails.
 * - `runStatelessClient`: the 2026-07-28 revision (`server/discover`, then `tools/list`, no session).
 */
import { addQuirk, emptyRun, toolDefinition, type LiveExchange, type LiveRun } from './live.js';
import type { StepName } from '../model/words.js';
import type { ToolDefinition } from '../model/snapshot.js';
import { invalidToolHeaders } from './tool-headers.js';
import { squeezed } from '../text/clip.js';
import type { ClientProfile } from './profile.js';
import { deleteSession, postJsonRpc, type PostOutcome } from './transport.js';
import type { ClientOptions } from './app-client.js';

/** Versions that carry `MCP-Protocol-Version` on the requests after initialize (2025-06-18 on). */
const HEADER_VERSIONS = new Set(['2025-06-18', '2025-11-25', '2026-07-28']);

interface Session {
  run: LiveRun;
  headers: Record<string, string>;
}

function baseHeaders(profile: ClientProfile, opts: ClientOptions): Record<string, string> {
  const agent = opts.userAgent ?? profile.userAgent;
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(profile.acceptEncoding !== null ? { 'accept-encoding': profile.acceptEncoding } : {}),
    ...(agent !== null ? { 'user-agent': agent } : {}),
    ...opts.headers,
  };
}

// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function post(
  url: string,
  s: Session,
  profile: ClientProfile,
  opts: ClientOptions,
  step: StepName,
  message: unknown,
  id: number | null,
  headers = s.headers,
): Promise<PostOutcome> {
  const out = await postJsonRpc(url, step, message, id, {
    headers,
    timeoutMs: opts.requestTimeoutMs,
    maxBodyBytes: opts.maxBodyBytes,
    dispatcher: opts.dispatcher,
    budget: opts.budget,
  });
  s.run.steps.push(out.exchange);
  for (const q of out.quirks) addQuirk(s.run, q);
  if (out.exchange.errorCode === 'TIMEOUT' && opts.requestTimeoutMs < profile.requestTimeoutMs) s.run.cutShort = true;
  return out;
}

/** A usable JSON-RPC result: HTTP 2xx, a result object, no error. */
function resultOf(e: LiveExchange): Record<string, unknown> | null {
  if ((e.status ?? 0) >= 300 || !e.response || e.response.error) return null;
  const r = e.response.result;
  return typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : null;
}

/** The failure as short text: transport error, JSON-RPC error, HTTP status, or body problem. */
export function exchangeError(e: LiveExchange): string {
  if (e.error) return `${e.error} on ${e.step}`;
  if (e.response?.error)
    return `JSON-RPC error ${e.response.error.code} on ${e.step}: ${String(e.response.error.message).slice(0, 160)}`;
  if (e.status !== null && e.status >= 300)
    return `HTTP ${e.status} on ${e.step}${e.bodySnippet ? `: ${squeezed(e.bodySnippet, 120)}` : ''}`;
  if (e.problem) return `${e.problem} on ${e.step}${e.bodySnippet ? `: ${squeezed(e.bodySnippet, 120)}` : ''}`;
  return `no result on ${e.step}`;
}

function finish(run: LiveRun, started: number): LiveRun {
  run.works = (run.tools?.length ?? 0) > 0;
  if (!run.works && run.error === null && run.tools !== null) run.error = 'tools/list returned 0 tools';
  run.durationMs = Math.round(performance.now() - started);
  return run;
}

export async function runSpecClient(url: string, profile: ClientProfile, opts: ClientOptions): Promise<LiveRun> {
  const started = performance.now();
  const s: Session = { run: emptyRun(profile.id), headers: baseHeaders(profile, opts) };
  const { run } = s;
  let sessionId: string | null = null;
  try {
    const init = await post(
      url,
      s,
      profile,
      opts,
      'initialize',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: profile.protocolVersion,
          capabilities: profile.capabilities,
          clientInfo: profile.clientInfo,
        },
      },
      1,
    );
    const result = resultOf(init.exchange);
    if (!result) {
      run.error = exchangeError(init.exchange);
      return finish(run, started);
    }
    const version = typeof result.protocolVersion === 'string' ? result.protocolVersion : null;
    run.protocolVersion = version;
    if (version === null) addQuirk(run, 'no-protocol-version');
    if (profile.supportedVersions.length && (version === null || !profile.supportedVersions.includes(version))) {
      run.error = `Server's protocol version is not supported: ${version}`;
      return finish(run, started);
    }
    const info = result.serverInfo as { name?: unknown; version?: unknown } | undefined;
    if (info && typeof info.name === 'string')
      run.serverInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : null };
    run.connected = true;
    sessionId = init.sessionId;
    run.sessionId = sessionId !== null;
    s.headers = {
      ...s.headers,
      ...(sessionId !== null ? { 'mcp-session-id': sessionId } : {}),
      ...(profile.supportedVersions.length && version !== null && HEADER_VERSIONS.has(version)
        ? { 'mcp-protocol-version': version }
        : {}),
    };
    const note = await post(
      url,
      s,
      profile,
      opts,
      'notifications/initialized',
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      null,
    );
    await listToolPages(url, s, profile, opts, 2, {});
    if ((note.exchange.status ?? 0) >= 400 && run.tools !== null) addQuirk(run, 'notification-rejected');
    return finish(run, started);
  } finally {
    if (sessionId !== null)
      await deleteSession(url, s.headers, sessionId, Math.min(2_000, opts.requestTimeoutMs), opts.dispatcher);
  }
}

/** tools/list through nextCursor, up to the profile's page count. */
// biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
async function listToolPages(
  url: string,
  s: Session,
  profile: ClientProfile,
  opts: ClientOptions,
  firstId: number,
  params: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<void> {
  const { run } = s;
  let cursor: string | undefined;
  for (let page = 0, id = firstId; page < profile.toolPages; page++, id++) {
    const p = cursor === undefined ? params : { ...params, cursor };
    const message = Object.keys(p).length
      ? { jsonrpc: '2.0', id, method: 'tools/list', params: p }
      : { jsonrpc: '2.0', id, method: 'tools/list' };
    const res = await post(url, s, profile, opts, 'tools/list', message, id, headers);
    const list = resultOf(res.exchange);
    if (!list || !Array.isArray(list.tools)) {
      run.error = exchangeError(res.exchange);
      return;
    }
    run.tools ??= [];
    run.toolDefinitions ??= [];
    for (const t of list.tools as Array<Record<string, unknown>>) {
      if (!t || typeof t.name !== 'string') continue;
      run.tools.push(t.name);
      run.toolDefinitions.push(toolDefinition(t));
    }
    const next =
      typeof list.nextCursor === 'string' && list.nextCursor !== '' && list.nextCursor !== cursor
        ? list.nextCursor
        : undefined;
    if (next === undefined) return;
    cursor = next;
  }
}

/**
 * The 2026-07-28 revision, as the official client (`@modelcontextprotocol/client` 2.4.0, `versionNegotiation`)
 * speaks it: every POST carries `MCP-Protocol-Version`, `Mcp-Method` and the `_meta` keys
 * (`io.modelcontextprotocol/protocolVersion`, `…/clientInfo`, `…/clientCapabilities`); no session. A -32022
 * (unsupported protocol version) answer to `server/discover` is retried once with the first version of ours the
 * error's `data.supported` lists (our order, not the server's); without one, or on a second -32022, the client
 * stops. Tools with an invalid `x-mcp-header` declaration are excluded, as that client excludes them.
 */
export async function runStatelessClient(url: string, profile: ClientProfile, opts: ClientOptions): Promise<LiveRun> {
  const started = performance.now();
  const s: Session = { run: emptyRun(profile.id), headers: baseHeaders(profile, opts) };
  const { run } = s;
  const metaFor = (version: string) => ({
    _meta: {
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientInfo': profile.clientInfo,
      'io.modelcontextprotocol/clientCapabilities': profile.capabilities,
    },
  });
  const headersFor = (version: string, method: string) => ({
    ...s.headers,
    'mcp-protocol-version': version,
    'mcp-method': method,
  });
  let version = profile.protocolVersion;
  let id = 1;
  let discover = await post(
    url,
    s,
    profile,
    opts,
    'server/discover',
    { jsonrpc: '2.0', id, method: 'server/discover', params: metaFor(version) },
    id,
    headersFor(version, 'server/discover'),
  );
  const refusedStep = discover.exchange;
  const refused = refusedStep.response?.error;
  if (refused?.code === UNSUPPORTED_VERSION) {
    const data = refused.data as { supported?: unknown } | undefined;
    const supported = Array.isArray(data?.supported)
      ? data.supported.filter((v): v is string => typeof v === 'string')
      : [];
    const mutual = profile.supportedVersions.find((v) => supported.includes(v));
    if (mutual === undefined) {
      run.error = `-32022 on server/discover: the server supports ${
        supported.join(', ') || 'no version it names'
      }, none of ours (${profile.supportedVersions.join(', ')})`;
      return finish(run, started);
    }
    version = mutual;
    id++;
    discover = await post(
      url,
      s,
      profile,
      opts,
      'server/discover',
      { jsonrpc: '2.0', id, method: 'server/discover', params: metaFor(version) },
      id,
      headersFor(version, 'server/discover'),
    );
    // Corrected: the exchange that decides is the retry, not the refusal (kept as a quirk).
    if (resultOf(discover.exchange)) {
      run.steps.splice(run.steps.indexOf(refusedStep), 1);
      addQuirk(run, 'version-corrected');
    }
  }
  const result = resultOf(discover.exchange);
  if (!result) {
    run.error = exchangeError(discover.exchange);
    return finish(run, started);
  }
  const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : [];
  if (!versions.includes(version)) {
    run.error = `server/discover lists no supported version of ours (${versions.map(String).join(', ') || 'none'})`;
    return finish(run, started);
  }
  run.protocolVersion = version;
  const info = (result._meta as Record<string, { name?: unknown; version?: unknown }> | undefined)?.[
    'io.modelcontextprotocol/serverInfo'
  ];
  if (info && typeof info.name === 'string')
    run.serverInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : null };
  run.connected = true;
  await listToolPages(url, s, profile, opts, id + 1, metaFor(version), headersFor(version, 'tools/list'));
  excludeInvalidToolHeaders(run);
  return finish(run, started);
}

/** JSON-RPC error code of the 2026-07-28 revision: the protocol version is not supported. */
const UNSUPPORTED_VERSION = -32022;

/** A 2026-07-28 client drops tools whose `x-mcp-header` declarations are invalid: they are not in its list. */
function excludeInvalidToolHeaders(run: LiveRun): void {
  if (!run.toolDefinitions) return;
  const kept: ToolDefinition[] = [];
  const excluded: LiveRun['excludedTools'] = [];
  for (const t of run.toolDefinitions) {
    const reason = invalidToolHeaders(t.inputSchema);
    if (reason === null) kept.push(t);
    else excluded.push({ name: t.name, reason });
  }
  if (excluded.length === 0) return;
  run.excludedTools = excluded;
  run.toolDefinitions = kept;
  run.tools = kept.map((t) => t.name);
  addQuirk(run, 'invalid-tool-headers');
}
