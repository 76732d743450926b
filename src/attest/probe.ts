/**
 * Attest one server with the app's handshake: initialize → notifications/initialized → tools/list.
 * Records an observation, asks the policy for a verdict, and retries exactly once when the policy
 * calls the failure retryable.
 */
import type { Dispatcher } from 'undici';
import { classify, RETRYABLE, REASON_TEXT, type Reason, type VerdictName } from '../policy/policy.js';
import type { Exchange, Observation, Quirk } from './observation.js';
import { stepOf } from './observation.js';
import { BROWSER_USER_AGENT, KAI_9000, type ClientProfile } from './profile.js';
import { deleteSession, firstSseEvent, postJsonRpc } from './transport.js';
import { withDefaults } from '../util/defaults.js';

export interface ProbeOptions {
  /** The entry is auth-optional (initialize without a key is enough). */
  requiresAuth?: boolean;
  /** Per-attempt time limit for the whole handshake, ms. */
  timeoutMs?: number;
  /** Extra request headers (the entry's own headers; sent to this URL only). */
  headers?: Record<string, string>;
  userAgent?: string;
  profile?: ClientProfile;
  /** Cap on one response body after decompression, bytes. */
  maxBodyBytes?: number;
  /** How many tools/list pages to follow through nextCursor. */
  maxToolPages?: number;
  /** Pause before the one retry, ms. */
  retryDelayMs?: number;
  /** A 429's Retry-After is honoured up to this long; a longer one is not retried. */
  maxRetryAfterMs?: number;
  dispatcher?: Dispatcher;
}

export interface ProbeResult {
  url: string;
  verdict: VerdictName;
  reason: Reason;
  /** Plain-language reason. */
  detail: string;
  attempts: number;
  /** HTTP status of the step that decided (initialize, or tools/list once initialize succeeded). */
  httpStatus: number | null;
  protocolVersion: string | null;
  serverName: string | null;
  serverVersion: string | null;
  tools: string[] | null;
  sessionId: boolean;
  durationMs: number;
  error: string | null;
  quirks: Quirk[];
  observation: Observation;
}

export const PROBE_DEFAULTS = {
  timeoutMs: 15_000,
  maxBodyBytes: 4 * 1024 * 1024,
  maxToolPages: 10,
  retryDelayMs: 1_000,
  maxRetryAfterMs: 5_000,
} as const;

export async function probe(url: string, options: ProbeOptions = {}): Promise<ProbeResult> {
  const opts = withDefaults(PROBE_DEFAULTS, options);
  const entry = { requiresAuth: options.requiresAuth ?? false };
  const startedAt = new Date();
  const started = performance.now();
  const first = await attempt(url, opts);
  let verdict = classify(first, entry);
  let attempts = 1;
  let observation = first;
  if (RETRYABLE.has(verdict.reason)) {
    const wait = retryWait(first, opts);
    if (wait !== null) {
      await sleep(wait);
      observation = await attempt(url, opts);
      verdict = classify(observation, entry);
      attempts = 2;
    }
  }
  observation.attempts = attempts;
  observation.firstAttempt = attempts === 2 ? first.steps : null;
  observation.startedAt = startedAt.toISOString();
  observation.durationMs = Math.round(performance.now() - started);
  return summarize(observation, verdict.verdict, verdict.reason);
}

function summarize(o: Observation, verdict: VerdictName, reason: Reason): ProbeResult {
  const init = stepOf(o, 'initialize');
  // tools/list is only attempted once initialize succeeded, so when it exists it is the deciding step.
  const deciding = stepOf(o, 'tools/list') ?? init;
  return {
    url: o.url,
    verdict,
    reason,
    detail: REASON_TEXT[reason],
    attempts: o.attempts,
    httpStatus: deciding?.status ?? null,
    protocolVersion: o.protocolVersion,
    serverName: o.serverInfo?.name ?? null,
    serverVersion: o.serverInfo?.version ?? null,
    tools: o.tools,
    sessionId: o.sessionId,
    durationMs: o.durationMs,
    error: verdict === 'live' && reason === 'ok' ? null : errorText(o),
    quirks: o.quirks,
    observation: o,
  };
}

/** The first thing that went wrong, as short human text. */
function errorText(o: Observation): string | null {
  if (o.legacySse) return 'GET answered with an SSE `endpoint` event: legacy HTTP+SSE transport';
  for (const s of o.steps) {
    if (s.step === 'notifications/initialized') continue;
    if (s.error) return `${s.error} on ${s.step}`;
    if (s.response?.error) return `JSON-RPC error ${s.response.error.code} on ${s.step}: ${String(s.response.error.message).slice(0, 160)}`;
    if (s.status !== null && s.status >= 300) return `HTTP ${s.status} on ${s.step}${s.bodySnippet ? `: ${oneLine(s.bodySnippet)}` : ''}`;
    if (s.problem) return `${s.problem} on ${s.step}${s.bodySnippet ? `: ${oneLine(s.bodySnippet)}` : ''}`;
  }
  if (o.tools && o.tools.length === 0) return 'tools/list returned 0 tools';
  return null;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}

type Resolved = Required<Omit<ProbeOptions, 'dispatcher' | 'userAgent' | 'headers' | 'profile' | 'requiresAuth'>> & ProbeOptions;

async function attempt(url: string, opts: Resolved): Promise<Observation> {
  const profile = opts.profile ?? KAI_9000;
  const o: Observation = {
    url, profile: profile.id, startedAt: '', durationMs: 0, attempts: 1, steps: [], firstAttempt: null,
    legacySse: null, protocolVersion: null, serverInfo: null, tools: null, toolsTruncated: false, sessionId: false, quirks: [],
  };
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  const baseHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': opts.userAgent ?? BROWSER_USER_AGENT,
    ...opts.headers,
  };
  let headers = baseHeaders;
  let sessionId: string | null = null;
  const post = async (step: Exchange['step'], message: unknown, id: number | null) => {
    const out = await postJsonRpc(url, step, message, id, { headers, signal: controller.signal, maxBodyBytes: opts.maxBodyBytes, dispatcher: opts.dispatcher });
    o.steps.push(out.exchange);
    for (const q of out.quirks) if (!o.quirks.includes(q)) o.quirks.push(q);
    return out;
  };
  try {
    const init = await post('initialize', {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: profile.protocolVersion, capabilities: profile.capabilities, clientInfo: profile.clientInfo },
    }, 1);
    const result = init.exchange.response?.result as { protocolVersion?: unknown; serverInfo?: { name?: unknown; version?: unknown } } | undefined;
    const initOk = (init.exchange.status ?? 0) < 300 && !!result && typeof result === 'object' && !init.exchange.response?.error;
    if (!initOk) {
      if (mayBeLegacySse(init.exchange)) {
        o.legacySse = (await firstSseEvent(url, baseHeaders, controller.signal, opts.dispatcher)) === 'endpoint';
      }
      return o;
    }
    o.protocolVersion = typeof result.protocolVersion === 'string' ? result.protocolVersion : null;
    const info = result.serverInfo;
    if (info && typeof info.name === 'string') o.serverInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : null };
    sessionId = init.sessionId;
    o.sessionId = sessionId !== null;
    if (sessionId !== null) headers = { ...baseHeaders, 'mcp-session-id': sessionId };

    const note = await post('notifications/initialized', { jsonrpc: '2.0', method: 'notifications/initialized' }, null);
    const noteStatus = note.exchange.status ?? 0;

    const tools: string[] = [];
    let cursor: string | undefined;
    for (let page = 0, id = 2; page < opts.maxToolPages; page++, id++) {
      const message = cursor === undefined
        ? { jsonrpc: '2.0', id, method: 'tools/list' }
        : { jsonrpc: '2.0', id, method: 'tools/list', params: { cursor } };
      const res = await post('tools/list', message, id);
      const list = res.exchange.response?.result as { tools?: unknown; nextCursor?: unknown } | undefined;
      if ((res.exchange.status ?? 0) >= 300 || res.exchange.response?.error || !list || !Array.isArray(list.tools)) break;
      for (const t of list.tools) if (t && typeof (t as { name?: unknown }).name === 'string') tools.push((t as { name: string }).name);
      o.tools = tools;
      const next = typeof list.nextCursor === 'string' && list.nextCursor !== '' && list.nextCursor !== cursor ? list.nextCursor : undefined;
      if (next === undefined) break;
      cursor = next;
      if (page === opts.maxToolPages - 1) o.toolsTruncated = true;
    }
    if (noteStatus >= 400 && o.tools !== null) o.quirks.push('notification-rejected');
  } finally {
    clearTimeout(timer);
    o.durationMs = Math.round(performance.now() - started);
  }
  if (sessionId !== null) await deleteSession(url, baseHeaders, sessionId, Math.min(2_000, opts.timeoutMs), opts.dispatcher);
  return o;
}

/** A POST refused with 404/405 (or answered with an `endpoint` event) may be a legacy HTTP+SSE server. */
function mayBeLegacySse(e: Exchange): boolean {
  if (e.problem === 'endpoint-event') return false; // already known
  return (e.status === 404 || e.status === 405 || e.status === 400) && e.response === null;
}

function retryWait(o: Observation, opts: Resolved): number | null {
  const limited = o.steps.find((s) => s.status === 429);
  if (!limited) return opts.retryDelayMs;
  const header = limited.headers['retry-after'];
  if (header === undefined) return opts.retryDelayMs;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  if (!Number.isFinite(ms)) return opts.retryDelayMs;
  return ms <= opts.maxRetryAfterMs ? Math.max(ms, 0) : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
