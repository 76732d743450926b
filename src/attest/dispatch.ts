/**
 * One request through undici's handler API, its body read as chunks rather than as a stream. undici's
 * `request()` wraps every body in a Readable (an async resource, its events, a buffer ahead of the reader),
 * which for the small bodies of a handshake costs more than reading them (`npm run bench`: a handshake read
 * this way costs about what the floor's three bare `request()` calls do). Backpressure is undici's own: a reader
 * that must wait pauses the parser, so a paused body holds only what its socket has read.
 */
import { getGlobalDispatcher, util, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/** Keep reading (false), stop (true), or a promise of either once the reader may go on. */
export type OnChunk = (chunk: Buffer) => boolean | Promise<boolean>;

/** A response body, read once. */
export interface BodyReader {
  /**
   * Feeds chunks to `onChunk` until it returns true (stop) or the body ends; resolves true when stopped, rejects
   * when the body fails. On a stop the body gets one turn of the event loop to end by itself, so that a finished
   * response keeps its connection for reuse; a body still open after that is destroyed.
   */
  read(onChunk: OnChunk): Promise<boolean>;
  /** Ends the body (its connection is closed); a read in progress rejects with `err`. */
  destroy(err?: Error): void;
}

export interface ResponseHead {
  statusCode: number;
  /** As `request()` gives them: lower-case names, repeated headers as arrays. */
  headers: IncomingHttpHeaders;
}

export interface RequestOptions {
  method: string;
  headers: Record<string, string> | string[];
  body?: string;
  /** undici's: until the answer starts, and between body chunks. */
  headersTimeout: number;
  bodyTimeout: number;
  dispatcher?: Dispatcher;
}

/** Sends the request; resolves with the head once it arrives (the body is then read with `body.read`). */
export function dispatchRequest(url: string, opts: RequestOptions): Promise<{ head: ResponseHead; body: BodyReader }> {
  const target = new URL(url);
  const handler = new ChunkedResponse();
  (opts.dispatcher ?? getGlobalDispatcher()).dispatch(
    {
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: opts.method as Dispatcher.HttpMethod,
      headers: opts.headers,
      body: opts.body,
      headersTimeout: opts.headersTimeout,
      bodyTimeout: opts.bodyTimeout,
    },
    handler,
  );
  return handler.head.then((head) => ({ head, body: handler }));
}

/** Chunks arriving before the reader are kept up to this many bytes, then the parser waits for the reader. */
const AHEAD_BYTES = 64 * 1024;

class ChunkedResponse implements Dispatcher.DispatchHandler, BodyReader {
  readonly head: Promise<ResponseHead>;
  private settleHead!: { resolve: (head: ResponseHead) => void; reject: (err: unknown) => void };
  private abort: ((err?: Error) => void) | null = null;
  private resume: (() => void) | null = null;
  private reader: { onChunk: OnChunk; resolve: (stopped: boolean) => void; reject: (err: unknown) => void } | null =
    null;
  private queue: Buffer[] = [];
  private queued = 0;
  private headSeen = false;
  private parserPaused = false;
  private waiting = false;
  private complete = false;
  private stopped = false;
  private failure: unknown = null;

  constructor() {
    this.head = new Promise((resolve, reject) => {
      this.settleHead = { resolve, reject };
    });
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // informational: the answer is still to come
    this.resume = resume;
    this.headSeen = true;
    this.settleHead.resolve({ statusCode, headers: util.parseHeaders(rawHeaders) as IncomingHttpHeaders });
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.stopped) return true; // a stopped read lets the rest pass, so the response can end by itself
    this.queue.push(chunk);
    this.queued += chunk.length;
    this.pump();
    this.parserPaused = this.waiting || this.queued > AHEAD_BYTES;
    return !this.parserPaused;
  }

  onComplete(): void {
    this.complete = true;
    this.pump();
  }

  onError(err: Error): void {
    if (!this.headSeen) {
      this.settleHead.reject(err);
      return;
    }
    if (this.stopped || this.complete) return;
    this.failure = err;
    this.reader?.reject(err);
  }

  read(onChunk: OnChunk): Promise<boolean> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.reader = { onChunk, resolve, reject };
      this.pump();
    });
  }

  destroy(err?: Error): void {
    if (this.complete) return;
    this.abort?.(err);
  }

  /** Hands queued chunks to the reader, in order, while it is not waiting; ends the read when all is done. */
  private pump(): void {
    const reader = this.reader;
    if (!reader || this.stopped || this.failure !== null) return;
    while (!this.waiting && this.queue.length > 0) {
      const chunk = this.queue.shift()!;
      this.queued -= chunk.length;
      let go: boolean | Promise<boolean>;
      try {
        go = reader.onChunk(chunk);
      } catch (err) {
        this.stop();
        reader.reject(err);
        return;
      }
      if (go === true) {
        this.stop();
        reader.resolve(true);
        return;
      }
      if (go !== false) {
        this.waiting = true;
        go.then(
          (halt) => {
            this.waiting = false;
            if (halt) {
              this.stop();
              reader.resolve(true);
            } else this.pump();
          },
          (err) => {
            this.stop();
            reader.reject(err);
          },
        );
        return;
      }
    }
    if (this.waiting) return;
    if (this.complete) {
      reader.resolve(false);
      return;
    }
    if (this.parserPaused) {
      this.parserPaused = false;
      this.resume?.();
    }
  }

  /** Drops the rest; the response has one turn of the event loop to end by itself before it is destroyed. */
  private stop(): void {
    this.stopped = true;
    this.queue = [];
    this.queued = 0;
    if (this.parserPaused) {
      this.parserPaused = false;
      this.resume?.();
    }
    setImmediate(() => {
      if (!this.complete) this.abort?.();
    });
  }
}

/** A Readable (a decompressing stream) as a BodyReader; `destroy` also ends `source` (the body it reads). */
export function streamReader(stream: Readable, source: BodyReader): BodyReader {
  return {
    read: (onChunk) =>
      new Promise((resolve, reject) => {
        let stopped = false;
        const stop = () => {
          stopped = true;
          stream.off('data', onData);
          setImmediate(() => {
            if (!stream.readableEnded) {
              stream.destroy();
              source.destroy();
            }
            resolve(true);
          });
        };
        const onData = (chunk: Buffer) => {
          const go = onChunk(chunk);
          if (go === false) return;
          if (go === true) return stop();
          stream.pause();
          go.then((halt) => (halt ? stop() : stream.resume()), reject);
        };
        stream.on('data', onData);
        stream.once('end', () => resolve(stopped));
        stream.on('error', (err) => (stopped ? resolve(true) : reject(err)));
      }),
    destroy: (err) => {
      stream.destroy(err);
      source.destroy(err);
    },
  };
}
