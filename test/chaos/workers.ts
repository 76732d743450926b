/**
 * Real `onetap worker` processes for the chaos suite, each with its log kept line by line with when it arrived (so a
 * test can count what a worker said during a fault). `clockOffsetMs` starts it with the injected clock
 * (`clock-offset.ts`); `netns` starts it inside a network namespace (`ip netns exec`, which execs the worker: the
 * process's pid is the worker's, so SIGKILL and SIGSTOP reach it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from '../helpers.js';

const CLOCK = new URL('./clock-offset.js', import.meta.url).href;

export interface WorkerOptions {
  vantage: string;
  store: string;
  /** The queue's URL when it is not the store's. */
  queue?: string;
  concurrency?: number;
  /** ONETAP_QUEUE_LOCK_MS (default 2000). */
  lockMs?: number;
  clockOffsetMs?: number;
  netns?: string;
  extraArgs?: string[];
}

export interface WorkerProc {
  proc: ChildProcess;
  label: string;
  /** Every line it wrote (stdout and stderr), with when it arrived. */
  lines: () => Array<{ at: number; text: string }>;
  log: () => string;
  /** Lines naming a job of that run (`(run <id>,`), one per job it finished. */
  jobLines: (runId: string) => string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive: () => boolean;
  /** SIGKILL, and waits for it to be gone. */
  kill9: () => Promise<void>;
}

export function startWorker(o: WorkerOptions): WorkerProc {
  const args = [
    ...(o.clockOffsetMs ? ['--import', CLOCK] : []),
    BIN,
    'worker',
    '--vantage',
    o.vantage,
    '--store',
    o.store,
    ...(o.queue ? ['--queue', o.queue] : []),
    '--concurrency',
    String(o.concurrency ?? 4),
    '--allow-http',
    ...(o.extraArgs ?? []),
  ];
  const env = {
    ...process.env,
    NO_COLOR: '1',
    ONETAP_QUEUE_LOCK_MS: String(o.lockMs ?? 2_000),
    ONETAP_CHAOS_CLOCK_OFFSET_MS: String(o.clockOffsetMs ?? 0),
  };
  const proc = o.netns
    ? spawn('ip', ['netns', 'exec', o.netns, process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Array<{ at: number; text: string }> = [];
  const partial = { out: '', err: '' };
  const feed = (which: 'out' | 'err') => (d: Buffer) => {
    const text = partial[which] + String(d);
    const parts = text.split('\n');
    partial[which] = parts.pop()!;
    const at = Date.now();
    for (const p of parts) lines.push({ at, text: p });
  };
  proc.stdout!.on('data', feed('out'));
  proc.stderr!.on('data', feed('err'));
  let gone = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    }),
  );
  return {
    proc,
    label: `${o.vantage}${o.clockOffsetMs ? ` (clock ${o.clockOffsetMs > 0 ? '+' : ''}${o.clockOffsetMs} ms)` : ''}`,
    lines: () => lines,
    log: () =>
      lines.map((l) => l.text).join('\n') + (partial.out || partial.err ? `\n${partial.out}${partial.err}` : ''),
    jobLines: (runId) => lines.map((l) => l.text).filter((t) => t.includes(`(run ${runId},`)),
    exited,
    alive: () => !gone,
    kill9: async () => {
      if (gone) return;
      proc.kill('SIGCONT');
      proc.kill('SIGKILL');
      await exited;
    },
  };
}
