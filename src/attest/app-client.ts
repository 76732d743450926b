/**
 * The app's MCP client, emulated as its code behaves (docs/app-client.md §4.2, classic McpClient.kt):
 *   1. POST initialize (id 1), `Accept: application/json, text/event-stream`;
 *   2. POST notifications/initialized with no Accept of its own (Ktor adds `Accept: *\/*`), answer read and ignored;
 *   3. POST tools/list (id 2, no params), page 1 only.
 * Ktor adds `User-Agent: Ktor client` and `Accept-Charset: UTF-8`; Android's engine adds `Accept-Encoding: gzip`
 * and un-gzips (§8). The session id is taken from every request's response, the latest winning. User headers are
 * appended after the client's own (duplicates possible). No DELETE, no MCP-Protocol-Version, no cursor.
 * Not reproducible from Node and left out: OkHttp's HTTP/2 negotiation and its TLS fingerprint.
 *
 * The fork's chain (§4.4, `kai-fallback`) reuses the same requests and reader.
 */
import type { Dispatcher } from 'undici';
import type { BodyBudget } from './budget.js';
import { decodeAppTools } from './app-reader.js';
import { addQuirk, emptyRun, toolDefinition, type LiveRun } from './live.js';
import type { StepName } from '../model/words.js';
import type { ClientProfile } from './profile.js';
import { appPost, type AppPostOutcome } from './transport.js';

export interface ClientOptions {
  /** The entry's own headers, sent to this URL only. */
  headers: Record<string, string>;
  /** Per-request time limit (the profile's, or a shorter override). */
  requestTimeoutMs: number;
  maxBodyBytes: number;
  dispatcher: Dispatcher;
  /** Replaces the profile's User-Agent (a diagnostic override). */
  userAgent?: string;
  /** Shared across a run's probes (src/attest/budget.ts). */
  budget?: BodyBudget;
}

/** Thrown inside a handshake with the client's own words; ends the run as a failure. */
class ClientFailure extends Error {}

/** One app-style connection: its request ids, its session id, and the run it records. */
class AppConnection {
  private nextId = 0;
  private sessionId: string | null = null;
  /** The user's headers as name/value pairs, flattened once per connection. */
  private readonly userHeaders: string[];

  constructor(
    readonly url: string,
    readonly profile: ClientProfile,
    readonly opts: ClientOptions,
    readonly run: LiveRun,
  ) {
    this.userHeaders = Object.entries(opts.headers).flat();
  }

  private headers(accept: string | null, extra: string[] = []): string[] {
    const h = ['content-type', 'application/json'];
    if (accept !== null) h.push('accept', accept);
    if (this.sessionId !== null) h.push('mcp-session-id', this.sessionId);
    for (const item of extra) h.push(item);
    for (const item of this.userHeaders) h.push(item);
    // Added by Ktor (DefaultTransform, HttpPlainText, the default agent) and the engine, after the request's own.
    if (accept === null) h.push('accept', '*/*');
    h.push('accept-charset', 'UTF-8');
    const agent = this.opts.userAgent ?? this.profile.userAgent;
    if (agent !== null) h.push('user-agent', agent);
    if (this.profile.acceptEncoding !== null) h.push('accept-encoding', this.profile.acceptEncoding);
    return h;
  }

  // biome-ignore lint/complexity/useMaxParams: positional before the rule came (0.4); to take an options object
  private async post(
    step: StepName,
    message: unknown,
    accept: string | null,
    extra: string[],
    expectAnswer: boolean,
  ): Promise<AppPostOutcome> {
    const out = await appPost(this.url, step, message, expectAnswer, {
      headers: this.headers(accept, extra),
      timeoutMs: this.opts.requestTimeoutMs,
      maxBodyBytes: this.opts.maxBodyBytes,
      dispatcher: this.opts.dispatcher,
      budget: this.opts.budget,
      gunzip: this.profile.acceptEncoding?.includes('gzip') ?? false,
    });
    this.run.steps.push(out.exchange);
    if (out.exchange.headers['content-encoding']?.includes('gzip')) addQuirk(this.run, 'gzip-response');
    if (out.exchange.errorCode === 'TIMEOUT' && this.opts.requestTimeoutMs < this.profile.requestTimeoutMs)
      this.run.cutShort = true;
    if (out.exchange.error !== null)
      throw new ClientFailure(
        appNetworkError(out.exchange.errorCode!, out.exchange.error, this.url, this.opts.requestTimeoutMs),
      );
    if (out.exchange.problem === 'oversize')
      throw new ClientFailure(`response body over ${this.opts.maxBodyBytes} bytes (onetap's cap; the app has none)`);
    return out;
  }

  /** `sendRequest`: a request whose answer is decoded as the app's DTO; the session id is taken from it. */
  async request(method: StepName, params: unknown, extra: string[] = []) {
    const id = ++this.nextId;
    const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
    const out = await this.post(method, message, 'application/json, text/event-stream', extra, true);
    if (out.sessionId !== null) {
      this.sessionId = out.sessionId;
      this.run.sessionId = true;
    }
    const decoded = out.decoded!;
    if (!decoded.ok) throw new ClientFailure(decoded.error);
    if (decoded.value.id !== null && decoded.value.id !== id) addQuirk(this.run, 'id-not-matching');
    if ((out.exchange.status ?? 0) >= 400 && decoded.value.error === null) addQuirk(this.run, 'http-error-status');
    const app = out.exchange.app;
    if (app?.read === 'sse' && app.spacelessDataLines > 0) addQuirk(this.run, 'sse-data-without-space');
    if (app?.winner !== null && app?.winner !== 'response') addQuirk(this.run, 'messages-before-response');
    return decoded.value;
  }

  /** `sendNotification`: the answer is read to its end (Ktor saves the body) and ignored. */
  async notify(method: StepName, extra: string[] = []): Promise<void> {
    await this.post(method, { jsonrpc: '2.0', method }, null, extra, false);
  }
}

function startRun(profile: ClientProfile) {
  return { run: emptyRun(profile.id), started: performance.now() };
}

function finish(run: LiveRun, started: number, err?: unknown): LiveRun {
  if (err !== undefined && err !== null) {
    if (!(err instanceof ClientFailure)) throw err;
    run.error = err.message;
  }
  run.works = (run.tools?.length ?? 0) > 0;
  run.durationMs = Math.round(performance.now() - started);
  return run;
}

/** initialize → notifications/initialized → tools/list, as the classic client does. */
export async function runAppClient(url: string, profile: ClientProfile, opts: ClientOptions): Promise<LiveRun> {
  const { run, started } = startRun(profile);
  const conn = new AppConnection(url, profile, opts, run);
  try {
    await classicHandshake(conn, profile.protocolVersion);
    return finish(run, started);
  } catch (err) {
    return finish(run, started, err);
  }
}

/** The classic handshake; `extra` adds per-method headers (the fork's version headers). */
async function classicHandshake(
  conn: AppConnection,
  version: string,
  extra: (method: string) => string[] = () => [],
): Promise<string[]> {
  const { run, profile } = conn;
  const init = await conn.request(
    'initialize',
    { protocolVersion: version, capabilities: profile.capabilities, clientInfo: profile.clientInfo },
    extra('initialize'),
  );
  if (init.error) throw new ClientFailure(`Initialize failed: ${init.error.message}`);
  readServerInfo(run, init.result);
  run.connected = true;
  await conn.notify('notifications/initialized', extra('notifications/initialized'));
  return listTools(conn, extra('tools/list'));
}

/** `listTools()`: an error fails, a missing result is an empty list, the result decoded as `McpToolsResult`. */
async function listTools(conn: AppConnection, extra: string[]): Promise<string[]> {
  const { run } = conn;
  const res = await conn.request('tools/list', undefined, extra);
  if (res.error) throw new ClientFailure(`tools/list failed: ${res.error.message}`);
  const tools = res.result === null ? { ok: true as const, value: [] } : decodeAppTools(res.result);
  if (!tools.ok) throw new ClientFailure(tools.error);
  run.tools = tools.value.map((t) => t.name);
  run.toolDefinitions = toolDefinitions(res.result);
  if (typeof (res.result as { nextCursor?: unknown } | null)?.nextCursor === 'string') addQuirk(run, 'tools-paginated');
  return run.tools;
}

/** The full definitions as the server sent them (the app keeps fewer fields; screening reads them all). */
function toolDefinitions(result: unknown): LiveRun['toolDefinitions'] {
  const tools = (result as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map(toolDefinition);
}

function readServerInfo(run: LiveRun, result: unknown): void {
  const r = result as { protocolVersion?: unknown; serverInfo?: { name?: unknown; version?: unknown } } | null;
  if (r === null || typeof r !== 'object') return;
  if (typeof r.protocolVersion === 'string') run.protocolVersion = r.protocolVersion;
  else addQuirk(run, 'no-protocol-version');
  const info = r.serverInfo;
  if (info && typeof info.name === 'string')
    run.serverInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : null };
}

/** `McpProtocol.isVersionMismatch(msg)`: the fork's test for "try the next older version". */
export function isVersionMismatch(message: string | null): boolean {
  if (message === null) return false;
  const m = message.toLowerCase();
  return m.includes('protocol version') || (m.includes('unsupported') && m.includes('version'));
}

/**
 * The fork's `connect()` (§4.4, rongyaoidea/Kai McpClient.kt): for each version newest first, a bare
 * `tools/list` (no params, no `_meta`) with `MCP-Protocol-Version` and `Mcp-Method`; a result without error
 * wins; a version-mismatch error moves on; otherwise the classic handshake on that version, whose failure
 * also moves on; once initialized, a failing tools/list ends the connection unless it names the version.
 * A non-JSON answer is the body's first 500 characters as the error (`McpException(body.take(500))`).
 */
export async function runAppFallbackClient(url: string, profile: ClientProfile, opts: ClientOptions): Promise<LiveRun> {
  const { run, started } = startRun(profile);
  let lastError: ClientFailure = new ClientFailure('Unable to connect: no protocol version accepted');
  const conn = new AppConnection(url, profile, opts, run);
  for (const version of profile.supportedVersions) {
    const headersFor = (method: string) => ['mcp-protocol-version', version, 'mcp-method', method];
    try {
      const res = await conn.request('tools/list', undefined, headersFor('tools/list'));
      if (res.error === null && res.result !== null) return finish(run, started, acceptTools(run, version, res.result));
      if (res.error !== null && isVersionMismatch(res.error.message)) {
        lastError = new ClientFailure(res.error.message);
        continue;
      }
    } catch (err) {
      lastError = forkWording(err, run);
      if (isVersionMismatch(lastError.message)) continue;
    }
    try {
      await classicHandshake(conn, version, headersFor);
      return finish(run, started);
    } catch (err) {
      lastError = forkWording(err, run);
      // Initialize failed (any reason): the next older version; tools/list failed after it: the end.
      if (run.connected && !isVersionMismatch(lastError.message)) break;
      run.connected = false;
    }
  }
  return finish(run, started, lastError);
}

function acceptTools(run: LiveRun, version: string, result: unknown): ClientFailure | undefined {
  const tools = decodeAppTools(result);
  if (!tools.ok) return new ClientFailure(tools.error);
  run.connected = true;
  run.protocolVersion = version;
  run.tools = tools.value.map((t) => t.name);
  run.toolDefinitions = toolDefinitions(result);
  return undefined;
}

/** The fork surfaces a non-JSON body itself (`body.take(500)`, "Empty response from server"). */
function forkWording(err: unknown, run: LiveRun): ClientFailure {
  if (!(err instanceof ClientFailure)) throw err;
  const last = run.steps.at(-1);
  if (last?.app?.read === 'json' && last.app.winner === null && last.error === null) {
    const body = (last.bodySnippet ?? '').slice(0, 500);
    return new ClientFailure(body.trim() === '' ? 'Empty response from server' : body);
  }
  return err;
}

/** The app's words for a failure below JSON-RPC (Ktor and Android's engine), as closely as Node can tell. */
function appNetworkError(code: string, fallback: string, url: string, requestTimeoutMs: number): string {
  const host = new URL(url).hostname;
  switch (code) {
    case 'TIMEOUT':
      return `Request timeout has expired [url=${url}, request_timeout=${requestTimeoutMs} ms]`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Unable to resolve host "${host}": No address associated with hostname`;
    case 'ECONNREFUSED':
      return `Failed to connect to ${host}: ECONNREFUSED (Connection refused)`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'unexpected end of stream';
  }
  return fallback;
}
