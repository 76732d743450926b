/**
 * Token counts this machine's counter worked out, kept on disk so that a run where no tool list changed loads no
 * tokenizer (about 0.4 s and 50 MB a process). One small file per counted text, named by the SHA-256 of exactly that
 * text, in a folder named by the counter (onetap's and gpt-tokenizer's versions, the window rule): a count is only
 * ever reused for the same text counted the same way.
 *
 * A user's cache, never the store: a store is written by workers and imports that a run must not trust for a count
 * (a low one seeded there would slip past `maxToolTokens`), so no count is read from a record. The CLI keeps counts
 * in `$ONETAP_CACHE_DIR` (default `$XDG_CACHE_HOME/onetap` or `~/.cache/onetap`; empty: off); the library only when
 * `keepCountsIn` is called. Reading is bounded (a file over 64 bytes or not a count is a miss), every write atomic,
 * and a cache that cannot be read or written is only a miss: a probe never fails for it.
 */
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hash } from 'node:crypto';
import { writeFileAtomic } from '../util/atomic.js';
import { ONETAP_VERSION } from '../util/version.js';

/** Files kept at most: past this, the oldest go (each is a few bytes; 10,000 distinct lists is a large census). */
export const COUNT_CACHE_ENTRIES = 20_000;
const MAX_FILE_BYTES = 64;

/** The folder the CLI keeps counts in by default. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'onetap');
}

function tokenizerVersion(): string {
  try {
    return String((createRequire(import.meta.url)('gpt-tokenizer/package.json') as { version?: unknown }).version);
  } catch {
    return 'unknown';
  }
}

export class CountCache {
  private folder: string | null = null;
  private pruned = false;

  /**
   * `root`: the cache folder; `counter`: what identifies the counting (its versions and window rule), asked on the
   * first read or write, not when a command starts.
   */
  constructor(
    private readonly root: string,
    private readonly counter: string | (() => string),
    private readonly entries = COUNT_CACHE_ENTRIES,
  ) {}

  private get dir(): string {
    if (this.folder === null) {
      const counter = typeof this.counter === 'string' ? this.counter : this.counter();
      this.folder = join(this.root, `tokens-${hash('sha256', counter, 'hex').slice(0, 16)}`);
    }
    return this.folder;
  }

  /** The count kept for this text digest, or null. */
  async get(digest: string): Promise<number | null> {
    if (!/^[0-9a-f]{64}$/.test(digest)) return null;
    try {
      const path = join(this.dir, digest);
      if ((await stat(path)).size > MAX_FILE_BYTES) return null;
      const text = (await readFile(path, 'utf8')).trim();
      if (!/^(0|[1-9][0-9]{0,9})$/.test(text)) return null;
      return Number(text);
    } catch {
      return null;
    }
  }

  async put(digest: string, tokens: number): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(digest) || !Number.isSafeInteger(tokens) || tokens < 0) return;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(join(this.dir, digest), `${tokens}\n`);
      if (!this.pruned) await this.prune();
    } catch {
      /* a cache that cannot be written is a miss next time */
    }
  }

  /** Once per process: past its entries, the files written longest ago go. */
  private async prune(): Promise<void> {
    this.pruned = true;
    const names = (await readdir(this.dir)).filter((n) => /^[0-9a-f]{64}$/.test(n));
    if (names.length <= this.entries) return;
    const aged = await Promise.all(
      names.map(async (n) => ({ n, at: (await stat(join(this.dir, n)).catch(() => null))?.mtimeMs ?? 0 })),
    );
    aged.sort((a, b) => a.at - b.at);
    for (const { n } of aged.slice(0, names.length - this.entries)) await rm(join(this.dir, n), { force: true });
  }
}

/** The counter's identity: what must be the same for a kept count to be the count this process would make. */
export const counterIdentity = (windowRule: string): string =>
  `onetap ${ONETAP_VERSION}; gpt-tokenizer ${tokenizerVersion()}; o200k; ${windowRule}`;
