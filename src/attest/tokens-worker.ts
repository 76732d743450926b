/**
 * The thread `countTokens` (tokens.ts) counts in: it loads the tokenizer as it starts, says so, then answers each text
 * it is sent with its count, one at a time. A count that takes too long is not its business: tokens.ts ends the thread.
 */
import { parentPort } from 'node:worker_threads';
import { loadCounter, type WorkerAnswer } from './tokens.js';

const port = parentPort!;
const count = await loadCounter();
const answer = (a: WorkerAnswer) => port.postMessage(a);
port.on('message', (text: string) => {
  try {
    answer({ tokens: count(text) });
  } catch (err) {
    answer({ error: String((err as Error)?.message ?? err) });
  }
});
answer({ ready: true });
