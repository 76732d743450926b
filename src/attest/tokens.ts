/**
 * What a tool list costs a conversation: the o200k token count of exactly
 * `JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema ?? {}
 * })))`
 * over the full list (before anything is clipped), the compact form a registry census counts, so figures compare.
 *
 * Bounded in time: gpt-tokenizer's byte-pair step is quadratic in the length of one piece of its pre-tokenizer (a run
 * of one character or of `abab…`: 80,000 characters took 7.6 s), so no piece longer than TOKEN_LIMITS.pieceChars goes
 * to it whole: a longer one is counted in windows (`loadCounter`; docs/context-cost.md says how that count can differ).
 * Off the event loop: `countTokens` counts in a worker thread (tokens-worker.ts), started on the first count, which
 * loads the tokenizer there (about 260 ms and 66 MB of resident memory, BENCHMARKS.md); a count past its time budget is
 * given up (the worker is ended, the next count starts another) and `tokens` is null with why. A list counted already
 * in this process is not counted again (list-cache.ts), nor one kept in the user's cache when the caller keeps counts
 * there (`keepCountsIn`, count-cache.ts); a count is never read from a store.
 */
import { hash as digestOf } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { ToolDefinition } from '../model/snapshot.js';
import { remembered } from './list-cache.js';
import { CountCache, counterIdentity } from './count-cache.js';

export const TOKEN_LIMITS = {
  /**
   * The longest piece (UTF-16 code units) the byte-pair step is given whole; a longer one goes in windows this long.
   */
  pieceChars: 512,
  /** A window keeps the tokens that end at least this many bytes before its end (the longest o200k token is 128). */
  marginBytes: 128,
  /** How long one count may take (ms) before `tokens` is null; a probe's own per-request limit lowers it. */
  countMs: 10_000,
} as const;

/** A list's count, or why there is none (`tokensError` in the record). */
export type TokenCount = { tokens: number; tokensError: null } | { tokens: null; tokensError: string };

/** Counts a text; `fed` sees every input the byte-pair step is given (tests and the bench check their lengths). */
export type Counter = (text: string, fed?: (input: string) => void) => number;

type Tools = readonly Pick<ToolDefinition, 'name' | 'description' | 'inputSchema'>[];

/** The text that is counted. */
export const contextText = (tools: Tools): string =>
  JSON.stringify(
    tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.inputSchema ?? {} })),
  );

const utf8Bytes = (codePoint: number) => (codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4);

/**
 * The o200k counter, in this thread (the worker's, or a test's): gpt-tokenizer's own pre-tokenizer and byte-pair core,
 * each piece counted as the package counts it, except that a piece longer than `pieceChars` is counted in windows of
 * `pieceChars`: each window keeps its tokens that end at least `marginBytes` before its end, on a character boundary
 * (only tokens near a window's end can differ from the whole piece's), and the next window starts where they end.
 */
export async function loadCounter(): Promise<Counter> {
  const [{ default: ranks }, { BytePairEncodingCore }, { O200K_TOKEN_SPLIT_REGEX }] = await Promise.all([
    import('gpt-tokenizer/bpeRanks/o200k_base'),
    import('gpt-tokenizer/BytePairEncodingCore'),
    import('gpt-tokenizer/encodingParams/constants'),
  ]);
  // Given one piece at a time (the pre-tokenizer ran already), so its own split keeps the input whole. No merge cache:
  // the package's (a Map that evicts its oldest key) gets several times slower once full, as it is in a long-lived
  // process.
  const core = new BytePairEncodingCore({ bytePairRankDecoder: ranks, tokenSplitRegex: /[^]+/gu, mergeCacheSize: 0 });
  const tokenBytes = Uint8Array.from(ranks, (t) => (typeof t === 'string' ? Buffer.byteLength(t) : (t?.length ?? 0)));
  const { pieceChars, marginBytes } = TOKEN_LIMITS;

  /**
   * The tokens a window keeps and the characters they cover; all of it when no token ends early enough on a character
   * boundary.
   */
  const kept = (window: string): { tokens: number; chars: number } => {
    const ids = core.encodeNative(window);
    const until = Buffer.byteLength(window) - marginBytes;
    let keep = { tokens: ids.length, chars: window.length };
    for (let k = 0, bytes = 0, charBytes = 0, chars = 0; k < ids.length; k++) {
      bytes += tokenBytes[ids[k]!]!;
      if (bytes > until) break;
      while (charBytes < bytes) {
        const cp = window.codePointAt(chars)!;
        charBytes += utf8Bytes(cp);
        chars += cp > 0xffff ? 2 : 1;
      }
      if (charBytes === bytes) keep = { tokens: k + 1, chars };
    }
    return keep;
  };
  /** The window of `piece` from `at`, never ending inside a surrogate pair. */
  const windowOf = (piece: string, at: number) => {
    const end = at + pieceChars;
    const high = piece.charCodeAt(end - 1);
    return piece.slice(at, high >= 0xd800 && high < 0xdc00 ? end - 1 : end);
  };

  return (text, fed) => {
    let tokens = 0;
    // A long run is one window again and again: encoded once.
    let last = { window: '', kept: { tokens: 0, chars: 0 } };
    for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
      let at = 0;
      while (piece.length - at > pieceChars) {
        const window = windowOf(piece, at);
        if (window !== last.window) {
          fed?.(window);
          last = { window, kept: kept(window) };
        }
        tokens += last.kept.tokens;
        at += last.kept.chars;
      }
      const rest = at ? piece.slice(at) : piece;
      fed?.(rest);
      tokens += core.countNative(rest);
    }
    return tokens;
  };
}

/** What the worker says: the tokenizer is loaded, a text's count, or why it could not count it. */
export type WorkerAnswer = { ready: true } | { tokens: number } | { error: string };

interface Job {
  text: string;
  budgetMs: number;
  settle: (count: TokenCount) => void;
}

/**
 * The counting worker: one text at a time, first come first counted, each within its own budget from when it is sent.
 */
const counting = {
  worker: null as Worker | null,
  ready: false,
  queue: [] as Job[],
  current: null as { job: Job; timer: NodeJS.Timeout } | null,
  /** Texts sent to a worker (tests: a list counted already is not sent again). */
  sent: 0,
};

/** How many texts this process has sent to be counted. */
export const countsSent = () => counting.sent;

/**
 * The list's o200k count (the text above), in the worker thread, within `budgetMs`; once per list per process.
 * Never rejects: a count past its budget, or a worker that failed, is `tokens: null` with why.
 */
export function countTokens(tools: Tools, budgetMs: number = TOKEN_LIMITS.countMs): Promise<TokenCount> {
  const text = contextText(tools);
  // Keyed by the counted text, not the tools digest: that ignores the tools' order, which moves a count by a token.
  const digest = digestOf('sha256', text, 'hex');
  return remembered('tokens', digest, async () => {
    const kept = (await keptCounts?.get(digest)) ?? null;
    if (kept !== null) return { tokens: kept, tokensError: null };
    const counted = await new Promise<TokenCount>((settle) => {
      counting.queue.push({ text, budgetMs, settle });
      next();
    });
    if (counted.tokens !== null) await keptCounts?.put(digest, counted.tokens);
    return counted;
  });
}

let keptCounts: CountCache | null = null;

/**
 * Keeps counts in `dir` across processes (count-cache.ts), or, with null, in this process only (the default). A
 * count made in this process is never replaced by a kept one.
 */
export function keepCountsIn(dir: string | null): void {
  const { pieceChars, marginBytes } = TOKEN_LIMITS;
  keptCounts = dir ? new CountCache(dir, () => counterIdentity(`windows ${pieceChars}/${marginBytes}`)) : null;
}

function next(): void {
  if (!counting.worker && counting.queue.length) start();
  if (!counting.current && counting.ready && counting.queue.length) {
    const job = counting.queue.shift()!;
    const timer = setTimeout(
      () => stop(`not counted: counting took longer than its ${job.budgetMs} ms budget`),
      job.budgetMs,
    );
    counting.current = { job, timer };
    counting.sent++;
    counting.worker!.postMessage(job.text);
  }
  // The worker keeps the process alive only while a count is waited for.
  if (counting.current || counting.queue.length) counting.worker?.ref();
  else counting.worker?.unref();
}

function start(): void {
  const worker = new Worker(new URL('./tokens-worker.js', import.meta.url));
  counting.worker = worker;
  counting.ready = false;
  worker.on('message', (answer: WorkerAnswer) => {
    if (worker !== counting.worker) return;
    if ('ready' in answer) {
      counting.ready = true;
      next();
    } else if (counting.current) {
      const { job, timer } = counting.current;
      clearTimeout(timer);
      counting.current = null;
      job.settle(
        'tokens' in answer
          ? { tokens: answer.tokens, tokensError: null }
          : { tokens: null, tokensError: `not counted: ${answer.error}` },
      );
      next();
    }
  });
  worker.on('error', (err) => {
    if (worker === counting.worker) stop(`not counted: ${err.message}`);
  });
  worker.on('exit', (code) => {
    if (worker === counting.worker) stop(`not counted: the counting worker exited with code ${code}`);
  });
}

/**
 * Ends the worker (a count past its budget, or a worker that failed): the count in progress gets `why` (or, when the
 * tokenizer never loaded, every waiting count does: each would fail the same way); the next count starts a new worker.
 */
function stop(why: string): void {
  const { worker, current } = counting;
  counting.worker = null;
  counting.ready = false;
  counting.current = null;
  void worker?.terminate();
  if (current) clearTimeout(current.timer);
  for (const job of current ? [current.job] : counting.queue.splice(0)) job.settle({ tokens: null, tokensError: why });
  next();
}
