/**
 * Atomic writes and the write lock (fast: a temporary folder, in this process). What must hold is what a user
 * relies on: each file is written whole and fsynced before it is renamed into place; a batch that fails leaves
 * every file as it was and no temporary file; a dead writer's leftovers are swept, a live one's are not; one writer
 * at a time, and a dead holder's lock is taken over.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, readFile, writeFile, mkdir, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, LockBusyError, writeAllAtomic, writeFileAtomic } from '../../src/util/atomic.js';
import { clipText, oneLine, oneLineOrNull, squeezed } from '../../src/text/clip.js';
import { firstHidden, hiddenCharacters, hiddenKind, hasHidden, maybeHidden } from '../../src/text/unicode.js';

const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as typeof import('node:fs/promises');
const dir = () => mkdtempSync(join(tmpdir(), 'onetap-atomic-'));
/** A pid no process has (the kernel's limit is below it). */
const DEAD_PID = 4_194_304 + 17;

describe('atomic writes', () => {
  const events: string[] = [];
  const realRename = fsp.rename;
  let realSync: ((this: unknown) => Promise<void>) | null = null;
  let handleProto: { sync: (this: unknown) => Promise<void> } | null = null;

  after(() => {
    fsp.rename = realRename;
    syncBuiltinESMExports();
    if (handleProto && realSync) handleProto.sync = realSync;
  });

  it('every staged file is fsynced before the first rename, and renamed in the order given', async () => {
    const d = dir();
    const probe = await open(join(d, 'probe'), 'w');
    handleProto = Object.getPrototypeOf(probe) as { sync: (this: unknown) => Promise<void> };
    await probe.close();
    realSync = handleProto.sync;
    const sync = realSync;
    handleProto.sync = function (this: unknown) {
      events.push('sync');
      return sync.call(this);
    };
    fsp.rename = (async (from: string, to: string) => {
      events.push(`rename ${to.split('/').pop()}`);
      return realRename(from, to);
    }) as typeof fsp.rename;
    syncBuiltinESMExports();
    try {
      await writeAllAtomic([
        { path: join(d, 'a.json'), content: 'A' },
        { path: join(d, 'sub', 'b.json'), content: 'B' },
        { path: join(d, 'c.json'), content: 'C' },
      ]);
    } finally {
      fsp.rename = realRename;
      syncBuiltinESMExports();
      handleProto.sync = sync;
    }
    assert.deepEqual(events, ['sync', 'sync', 'sync', 'rename a.json', 'rename b.json', 'rename c.json']);
    assert.deepEqual(await Promise.all(['a.json', 'sub/b.json', 'c.json'].map((f) => readFile(join(d, f), 'utf8'))), [
      'A',
      'B',
      'C',
    ]);
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
  });

  it('a rename that fails puts back the files already renamed: the batch is all old, and no temporary file is left', async () => {
    const d = dir();
    await writeFile(join(d, 'a.json'), 'old a');
    await writeFile(join(d, 'c.json'), 'old c');
    await assert.rejects(
      writeAllAtomic(
        [
          { path: join(d, 'a.json'), content: 'new a' },
          { path: join(d, 'b.json'), content: 'new b' },
          { path: join(d, 'c.json'), content: 'new c' },
        ],
        { faults: { failRename: 3 } },
      ),
      /EIO: injected fault/,
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old a');
    assert.equal(existsSync(join(d, 'b.json')), false, 'a file that did not exist does not exist after');
    assert.equal(await readFile(join(d, 'c.json'), 'utf8'), 'old c');
    assert.deepEqual((await readdir(d)).sort(), ['a.json', 'c.json']);
  });

  it('a fault for another batch does not apply', async () => {
    const d = dir();
    await writeAllAtomic([{ path: join(d, 'a.json'), content: 'x' }], {
      faults: { failRename: 1, batchWith: 'servers.json' },
    });
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'x');
  });

  it('a file that cannot be staged writes nothing of the batch', async () => {
    const d = dir();
    await writeFile(join(d, 'a.json'), 'old');
    await writeFile(join(d, 'blocker'), 'a file where a folder is needed');
    await assert.rejects(
      writeAllAtomic([
        { path: join(d, 'a.json'), content: 'new' },
        { path: join(d, 'blocker', 'b.json'), content: 'b' },
      ]),
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old');
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
    );
  });

  it('a file written in parts: whole when every part came (2 MB, more than one write), old and no temporary file when a part failed', async () => {
    const d = dir();
    const path = join(d, 'census.json');
    await writeFile(path, 'old');
    const part = 'x'.repeat(1_000);
    await assert.rejects(
      writeFileAtomic(
        path,
        (async function* () {
          for (let i = 0; i < 2_000; i++) yield part;
          throw new Error('the source failed half way');
        })(),
      ),
      /half way/,
    );
    assert.equal(await readFile(path, 'utf8'), 'old');
    assert.deepEqual(
      (await readdir(d)).filter((f) => f.endsWith('.tmp')),
      [],
    );
    await writeFileAtomic(
      path,
      (function* () {
        for (let i = 0; i < 2_000; i++) yield `${i},`;
      })(),
    );
    assert.equal(await readFile(path, 'utf8'), Array.from({ length: 2_000 }, (_, i) => `${i},`).join(''));
    await writeFileAtomic(
      path,
      (function* () {
        for (let i = 0; i < 2_100; i++) yield part;
      })(),
    );
    assert.equal((await readFile(path, 'utf8')).length, 2_100_000);
  });

  it("a dead writer's temporary files of these targets are swept; a live writer's, and other files, are kept", async () => {
    const d = dir();
    const dead = join(d, `a.json.${DEAD_PID}.0123abcd.tmp`);
    const deadBackup = join(d, `a.json.${DEAD_PID}.0123abcd.old.tmp`);
    const live = join(d, `a.json.${process.pid}.89abcdef.tmp`);
    const otherTarget = join(d, `z.json.${DEAD_PID}.0123abcd.tmp`);
    for (const f of [dead, deadBackup, live, otherTarget]) await writeFile(f, 'leftover');
    await writeFileAtomic(join(d, 'a.json'), 'new');
    assert.deepEqual(
      [existsSync(dead), existsSync(deadBackup), existsSync(live), existsSync(otherTarget)],
      [false, false, true, true],
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'new');
  });
});

describe('the write lock', () => {
  it('one holder at a time: a second waits or fails naming the holder; released, it is free', async () => {
    const target = join(dir(), 'servers.json');
    const release = await acquireLock(target);
    assert.equal(await readFile(`${target}.lock`, 'utf8').then((t) => Number(t.trim())), process.pid);
    await assert.rejects(
      acquireLock(target, 0),
      (err: Error) => err instanceof LockBusyError && err.message.includes(`pid ${process.pid}`),
    );
    const waiting = acquireLock(target, 5_000);
    await release();
    const second = await waiting;
    assert.ok(existsSync(`${target}.lock`));
    await second();
    assert.equal(existsSync(`${target}.lock`), false);
  });

  it('a lock whose holder died is taken over', async () => {
    const target = join(dir(), 'servers.json');
    await writeFile(`${target}.lock`, String(DEAD_PID));
    const release = await acquireLock(target, 0);
    assert.equal(Number((await readFile(`${target}.lock`, 'utf8')).trim()), process.pid);
    await release();
  });
});

/*
 * Edges of the text helpers and of the atomic writes that the other fast tests leave open (found by mutation
 * testing). Each expectation comes from the documented behaviour, not from the code's output:
 * - src/text/clip.ts: at most `max` UTF-16 units with the `…` included, a surrogate pair never split, every kind
 *   of line break (CR, LF, CRLF, VT, FF, NEL, U+2028, U+2029) as a space;
 * - src/text/unicode.ts: the header's list of what is shown escaped, Unicode facts (surrogates, Script_Extensions,
 *   Ideographic, Emoji_Modifier), and the prefilter's documented decision by code unit;
 * - src/util/atomic.ts and docs/files.md ("Atomic writes, and what a failure leaves"): temporary names, rollback to
 *   all old, the faults of ONETAP_TEST_FAULT, the write lock (a live holder waits, a dead one is taken over).
 * Pure and fast: a temporary folder, this process only.
 */

const made: string[] = [];
const tidyDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'onetap-mutants-'));
  made.push(d);
  return d;
};
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const tmpFiles = async (d: string) => (await readdir(d)).filter((f) => f.endsWith('.tmp'));
const hex = (s: string) => [...s].map((c) => c.codePointAt(0)!.toString(16)).join(' ');

/** The promise's value, or a failure after `ms` (then `cleanup` lets a runaway loop end). */
async function within<T>(
  p: Promise<T>,
  ms: number,
  what: string,
  cleanup: () => Promise<unknown> = async () => {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } catch (err) {
    if ((err as Error).message.includes('not settled within')) {
      await cleanup();
      await p.catch(() => {});
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(10);
  }
}

/** Replaces an export of node:fs/promises (as the module under test sees it) for the duration of `run`. */
async function withFsp<K extends 'link' | 'rename'>(
  name: K,
  impl: (typeof fsp)[K],
  run: () => Promise<void>,
): Promise<void> {
  const real = fsp[name];
  fsp[name] = impl;
  syncBuiltinESMExports();
  try {
    await run();
  } finally {
    fsp[name] = real;
    syncBuiltinESMExports();
  }
}

// ---------------------------------------------------------------------------------------------------------
describe('clipText: at most max UTF-16 units, the … included; a surrogate pair never split', () => {
  it('text of exactly max units is not cut; one unit more is cut to max with …', () => {
    assert.equal(clipText('abcd', 4), 'abcd');
    assert.equal(clipText('abcde', 4), 'abc…');
    assert.equal(clipText('', 0), '');
  });

  it('a pair that would be split at the cut goes whole (for every lead surrogate: U+D800, U+D83D, U+DBFF)', () => {
    for (const astral of ['\u{10000}', '😀', '\u{10fc00}']) {
      const out = clipText(`ab${astral}cd`, 4);
      assert.equal(out, 'ab…', hex(astral));
      assert.ok(out.length <= 4);
    }
  });

  it('a pair that fits before the cut is kept whole; a BMP character at or above U+D800 (U+F900) is not a surrogate', () => {
    assert.equal(clipText('a😀bc', 4), 'a😀…');
    assert.equal(clipText('ab\uf900cd', 4), 'ab\uf900…');
    assert.equal(clipText('ab\uffa0cd', 4), 'ab\uffa0…');
  });
});

describe('oneLine: line breaks of every kind as spaces, at most max units', () => {
  it('CR, LF, VT, FF, NEL, LS and PS each become a space; CRLF (one break) one space', () => {
    for (const br of ['\r', '\n', '\u000b', '\u000c', '\u0085', '\u2028', '\u2029', '\r\n']) {
      assert.equal(oneLine(`a${br}b`, 100), 'a b', JSON.stringify(br));
      assert.equal(oneLine(br, 100), ' ', `only ${JSON.stringify(br)}`);
    }
    assert.equal(oneLine('no break at all', 100), 'no break at all');
  });

  it('long text is cut to max units with …', () => {
    assert.equal(oneLine('abcdefgh', 4), 'abc…');
    assert.equal(oneLine('abcd', 4), 'abcd');
    assert.equal(oneLine('a\nb\nc\nd\ne', 4), 'a b…');
    assert.equal(oneLine(`ab😀${'x'.repeat(50)}`, 4), 'ab…');
  });

  it('oneLineOrNull: null and undefined stay null; a string is made one line', () => {
    assert.equal(oneLineOrNull(null, 10), null);
    assert.equal(oneLineOrNull(undefined, 10), null);
    assert.equal(oneLineOrNull('a\r\nb', 10), 'a b');
    assert.equal(oneLineOrNull('', 10), '');
  });
});

describe('squeezed: whitespace runs as one space, trimmed, at most max units', () => {
  it('runs of any whitespace become one space; leading and trailing whitespace goes', () => {
    assert.equal(squeezed('  a \t\n  b\r\n c  ', 100), 'a b c');
    assert.equal(squeezed('a\u00a0\u2003b', 100), 'a b');
    assert.equal(squeezed('plain', 100), 'plain');
  });

  it('cut after squeezing', () => {
    assert.equal(squeezed('a   b   c   d   e', 5), 'a b …');
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('maybeHidden: decided by code unit, so honest text without any listed unit is not flagged', () => {
  it(
    'false for Latin, Cyrillic, Arabic and Devanagari letters, CJK, Hangul, typographic punctuation, fullwidth ' +
      'forms, U+FFFD, emoji and other astral characters',
    () => {
      const honest = [
        'café',
        'Привет',
        'مرحبا',
        'नमस्ते',
        '日本語',
        '한국어',
        'ＡＢＣ',
        '\ufffc\ufffd',
        '\uf900',
        '😀',
        '🐀',
        '🏿',
        '𝐀',
        '\u{233ff}',
        '\u{10000}',
        '\u{10ffff}',
        'ok 😀 日本 café',
        'a\u00a0b',
        '\u0606\u200a',
        '\u2030\u205f',
        '\u2070\ufe10',
        '\ufff0',
        '\u2010\u2014 \u2018quoted\u2019 \u201cquoted\u201d ' +
          '' +
          '' +
          '' +
          '' +
          '' +
          '' +
          '\u2020\u2022\u2026\u2027', // dashes, quotes, dagger, bullet, ellipsis (U+2010–U+2027)
      ];
      for (const t of honest) assert.equal(maybeHidden(t), false, hex(t));
    },
  );

  it('true for a lead surrogate followed by anything but a trail surrogate, even a unit at or above U+DC00 (U+E000…)', () => {
    for (const t of ['\ud83d\uff21', '\ud83d\ufffd', '\ud83d\uf900', 'x\ud83d\ue000', '\ud83d\ud83d'])
      assert.equal(maybeHidden(t), true, hex(t));
  });
});

describe('which characters are shown escaped: edges', () => {
  it('a format character is never a variation selector: U+FEFF after an ideograph is shown', () => {
    assert.deepEqual(
      hiddenCharacters('日\ufeff本').map((h) => h.index),
      [1],
    );
    assert.deepEqual(
      hiddenCharacters('日\ufff9本').map((h) => h.index),
      [1],
    );
  });

  it('the last selector, VS256 (U+E01EF), after an ideograph is an ideographic variation sequence', () => {
    assert.deepEqual(hiddenCharacters('葛\u{e01ef}'), []);
    assert.deepEqual(hiddenCharacters('葛\u{e01ef}!'), []);
  });

  it('a selector followed by a character that is no selector (U+FF01, U+F0000) is one selector, not a run', () => {
    assert.deepEqual(hiddenCharacters('葛\u{e0100}\uff01'), []);
    assert.deepEqual(hiddenCharacters('葛\u{e0100}\u{f0000}'), []);
    assert.deepEqual(hiddenCharacters('❤\ufe0f\uff01'), []);
  });

  it('ZWNJ/ZWJ stay only between letters: Arabic-Indic digits and an Arabic comma (script Arabic, not letters) do not count', () => {
    assert.deepEqual(
      hiddenCharacters('١\u200c٢').map((h) => h.index),
      [1],
    );
    assert.deepEqual(
      hiddenCharacters('٣\u200d٤').map((h) => h.index),
      [1],
    );
    assert.deepEqual(
      hiddenCharacters('م\u200c،').map((h) => h.index),
      [1],
    );
    assert.deepEqual(hiddenCharacters('م\u200cی'), [], 'between two Persian letters it stays');
  });

  it('a tag character before a black flag is outside the flag sequence: shown', () => {
    const england = '\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}';
    assert.deepEqual(
      hiddenCharacters(`\u{e0041}🏴${england}`).map((h) => h.index),
      [0],
    );
    assert.deepEqual(
      hiddenCharacters(`a\u{e0041}🏴${england}`).map((h) => h.index),
      [1],
    );
    assert.deepEqual(hiddenCharacters(`🏴${england}`), []);
  });

  it('the character before a selector or joiner is the whole code point before it, never glued to a lone surrogate', () => {
    // A lone lead surrogate before '#': the '#' + VS16 without a keycap is still shown.
    assert.deepEqual(
      hiddenCharacters('\ud800#\ufe0f').map((h) => h.index),
      [0, 2],
    );
    assert.deepEqual(
      hiddenCharacters('\ud8001\ufe0f').map((h) => h.index),
      [0, 2],
    );
    // A lone trail surrogate is the base: no keycap, no ideograph.
    assert.deepEqual(
      hiddenCharacters('#\udc00\ufe0f\u20e3').map((h) => h.index),
      [1, 2],
    );
    assert.deepEqual(
      hiddenCharacters('\uf900\udc00\ufe00').map((h) => h.index),
      [1, 2],
    );
    assert.deepEqual(hiddenCharacters('\uf900\ufe00'), [], 'a compatibility ideograph takes a selector');
    // Pairs whose trail surrogate is the first or the last one (U+DC00, U+DFFF) are whole characters.
    assert.deepEqual(hiddenCharacters('🐀\u200d🐁'), [], 'U+1F400 ZWJ U+1F401');
    assert.deepEqual(hiddenCharacters('👩🏿\u200d💻'), [], 'skin tone U+1F3FF before ZWJ');
  });

  it('JSON text: a selector after an escape written at the very start of the text has no base', () => {
    assert.equal(hasHidden('\\u0031\ufe0f\u20e3', { json: true }), true);
    assert.equal(hasHidden('\\u0031\ufe0f\u20e3'), false, 'as plain text it is a keycap (1️⃣ after the letters)');
    assert.equal(
      hasHidden('\\\\u0031\ufe0f\u20e3', { json: true }),
      false,
      'an escaped backslash: the 1 is a character',
    );
  });

  it('firstHidden: the first one, its index and whole character; null when there is none', () => {
    assert.deepEqual(firstHidden('ab\u202ec\u{e0041}d'), { index: 2, char: '\u202e' });
    assert.deepEqual(firstHidden('x\u{e0041}\u202e'), { index: 1, char: '\u{e0041}' });
    assert.equal(firstHidden('plain 日本'), null);
  });
});

describe('hiddenKind: a few words per kind, for lint messages', () => {
  it('each kind at the edges of its ranges', () => {
    const table: Array<[string, string[]]> = [
      ['tag character', ['\u{e0000}', '\u{e0001}', '\u{e0041}', '\u{e007f}']],
      ['variation selector outside an emoji or ideograph sequence', ['\ufe00', '\ufe0f', '\u{e0100}', '\u{e01ef}']],
      ['Hangul filler', ['\u115f', '\u1160', '\u3164', '\uffa0']],
      [
        'bidi control',
        [
          '\u061c',
          '\u200e',
          '\u200f',
          '\u202a',
          '\u202b',
          '\u202c',
          '\u202d',
          '\u202e',
          '\u2066',
          '\u2067',
          '\u2068',
          '\u2069',
        ],
      ],
      ['control character', ['\u0000', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f']],
      ['line separator', ['\u2028', '\u2029']],
      ['lone surrogate', ['\ud800', '\udbff', '\udc00', '\udfff']],
      [
        'invisible format character',
        [
          '\u00ad',
          '\u034f',
          '\u180e',
          '\u200b',
          '\u200c',
          '\u200d',
          '\u2060',
          '\u2064',
          '\u206a',
          '\u206f',
          '\ufeff',
          '\ufff9',
          '\u{110bd}',
          '\u{1d173}',
        ],
      ],
    ];
    for (const [kind, chars] of table)
      for (const ch of chars) assert.equal(hiddenKind(ch), kind, `${hex(ch)} is a ${kind}`);
  });
});

// ---------------------------------------------------------------------------------------------------------
describe('atomic writes: faults, rollback, temporary names', () => {
  it('ONETAP_TEST_FAULT (JSON) injects a fault; unset, empty or not JSON, it does nothing', async () => {
    const d = tidyDir();
    const a = join(d, 'a.json');
    await writeFile(a, 'old');
    const saved = process.env.ONETAP_TEST_FAULT;
    try {
      process.env.ONETAP_TEST_FAULT = JSON.stringify({ failRename: 1 });
      await assert.rejects(
        writeFileAtomic(a, 'new'),
        (err: NodeJS.ErrnoException) => err.code === 'EIO' && /EIO: injected fault/.test(err.message),
      );
      assert.equal(await readFile(a, 'utf8'), 'old');
      assert.deepEqual(await tmpFiles(d), []);
      for (const text of ['', 'not json {']) {
        process.env.ONETAP_TEST_FAULT = text;
        await writeFileAtomic(a, `new ${text}`);
        assert.equal(await readFile(a, 'utf8'), `new ${text}`);
      }
    } finally {
      if (saved === undefined) delete process.env.ONETAP_TEST_FAULT;
      else process.env.ONETAP_TEST_FAULT = saved;
    }
  });

  it('batchWith applies to a batch that writes a file of that name among others', async () => {
    const d = tidyDir();
    await writeFile(join(d, 'a.json'), 'old a');
    await assert.rejects(
      writeAllAtomic(
        [
          { path: join(d, 'a.json'), content: 'new a' },
          { path: join(d, 'servers.json'), content: 'new s' },
        ],
        { faults: { failRename: 2, batchWith: 'servers.json' } },
      ),
      (err: NodeJS.ErrnoException) => err.code === 'EIO',
    );
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old a');
    assert.equal(existsSync(join(d, 'servers.json')), false);
    assert.deepEqual(await tmpFiles(d), []);
  });

  it('failRename N fails only the Nth rename: a batch shorter than N is written', async () => {
    const d = tidyDir();
    await writeAllAtomic(
      [
        { path: join(d, 'a.json'), content: 'A' },
        { path: join(d, 'b.json'), content: 'B' },
      ],
      { faults: { failRename: 3 } },
    );
    assert.deepEqual(
      [await readFile(join(d, 'a.json'), 'utf8'), await readFile(join(d, 'b.json'), 'utf8')],
      ['A', 'B'],
    );
    await assert.rejects(
      writeAllAtomic(
        [
          { path: join(d, 'a.json'), content: 'A2' },
          { path: join(d, 'b.json'), content: 'B2' },
        ],
        { faults: { failRename: 2 } },
      ),
      (err: NodeJS.ErrnoException) => err.code === 'EIO',
    );
    assert.deepEqual(
      [await readFile(join(d, 'a.json'), 'utf8'), await readFile(join(d, 'b.json'), 'utf8')],
      ['A', 'B'],
    );
  });

  it('a failed batch that wrote the same file twice leaves it as it was before the batch (put back newest first)', async () => {
    const d = tidyDir();
    const a = join(d, 'a.json');
    await writeFile(a, 'old');
    await assert.rejects(
      writeAllAtomic(
        [
          { path: a, content: 'first' },
          { path: a, content: 'second' },
          { path: join(d, 'b.json'), content: 'b' },
        ],
        { faults: { failRename: 3 } },
      ),
    );
    assert.equal(await readFile(a, 'utf8'), 'old');
    assert.deepEqual((await readdir(d)).sort(), ['a.json']);
  });

  it('overwriting existing files leaves no backup behind', async () => {
    const d = tidyDir();
    await writeFile(join(d, 'a.json'), 'old a');
    await writeFile(join(d, 'b.json'), 'old b');
    await writeAllAtomic([
      { path: join(d, 'a.json'), content: 'new a' },
      { path: join(d, 'b.json'), content: 'new b' },
    ]);
    assert.deepEqual((await readdir(d)).sort(), ['a.json', 'b.json']);
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'new a');
  });

  it('staged and backup files are named <file>.<pid>.<8 hex>.tmp and <file>.<pid>.<8 hex>.old.tmp', async () => {
    const d = tidyDir();
    const a = join(d, 'a.json');
    await writeFile(a, 'old');
    const links: string[] = [];
    const renames: string[] = [];
    const realLink = fsp.link;
    const realRename = fsp.rename;
    await withFsp(
      'link',
      (async (from: string, to: string) => {
        links.push(String(to));
        return realLink(from, to);
      }) as typeof fsp.link,
      () =>
        withFsp(
          'rename',
          (async (from: string, to: string) => {
            renames.push(String(from));
            return realRename(from, to);
          }) as typeof fsp.rename,
          () => writeFileAtomic(a, 'new'),
        ),
    );
    const base = `^${a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\.${process.pid}\\.[0-9a-f]{8}`;
    assert.equal(links.length, 1);
    assert.match(links[0]!, new RegExp(`${base}\\.old\\.tmp$`));
    assert.equal(renames.length, 1);
    assert.match(renames[0]!, new RegExp(`${base}\\.tmp$`));
    assert.doesNotMatch(renames[0]!, /\.old\.tmp$/);
    assert.equal(await readFile(a, 'utf8'), 'new');
  });

  it("only onetap's exact temporary-name pattern is swept: a dead pid's name with more after .tmp is kept", async () => {
    const d = tidyDir();
    const kept = [
      `a.json.${DEAD_PID}.0123abcd.tmp.keep`,
      `a.json.${DEAD_PID}.0123abcd.tmpx`,
      `a.json.${DEAD_PID}.0123abcd.old.tmp~`,
    ];
    for (const f of kept) await writeFile(join(d, f), 'not ours');
    await writeFile(join(d, `a.json.${DEAD_PID}.0123abcd.tmp`), 'ours');
    await writeFileAtomic(join(d, 'a.json'), 'new');
    assert.deepEqual((await readdir(d)).sort(), ['a.json', ...kept].sort());
  });

  it('without hard links (link fails with EPERM) the backup is a copy: a failed batch still puts the old file back', async () => {
    const d = tidyDir();
    await writeFile(join(d, 'a.json'), 'old a');
    const eperm = (async () => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
    }) as unknown as typeof fsp.link;
    await withFsp('link', eperm, async () => {
      await assert.rejects(
        writeAllAtomic(
          [
            { path: join(d, 'a.json'), content: 'new a' },
            { path: join(d, 'b.json'), content: 'new b' },
          ],
          { faults: { failRename: 2 } },
        ),
      );
      assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old a');
      assert.deepEqual((await readdir(d)).sort(), ['a.json']);
      await writeAllAtomic([{ path: join(d, 'a.json'), content: 'new a' }]);
      assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'new a');
      assert.deepEqual((await readdir(d)).sort(), ['a.json'], 'the copy is removed after a write that succeeds');
    });
  });

  it('a backup name that is already taken (EEXIST) is never overwritten: the batch fails and stays old', async () => {
    const d = tidyDir();
    const a = join(d, 'a.json');
    await writeFile(a, 'old');
    let taken = '';
    const eexist = (async (_from: string, to: string) => {
      taken = String(to);
      await writeFile(taken, "someone else's");
      throw Object.assign(new Error('EEXIST: file already exists, link'), { code: 'EEXIST' });
    }) as unknown as typeof fsp.link;
    await withFsp('link', eexist, async () => {
      await assert.rejects(writeFileAtomic(a, 'new'), (err: NodeJS.ErrnoException) => err.code === 'EEXIST');
    });
    assert.equal(await readFile(a, 'utf8'), 'old');
    assert.equal(await readFile(taken, 'utf8'), "someone else's");
  });

  it('a file whose fsync fails is not renamed: the error is thrown, the batch stays old, its temporary file is removed', async () => {
    const d = tidyDir();
    await writeFile(join(d, 'a.json'), 'old');
    const probe = await open(join(d, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { sync: (this: unknown) => Promise<void> };
    await probe.close();
    await unlink(join(d, 'probe'));
    const realSync = proto.sync;
    proto.sync = async () => {
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    };
    try {
      await assert.rejects(writeFileAtomic(join(d, 'a.json'), 'new'), /EIO: i\/o error, fsync/);
    } finally {
      proto.sync = realSync;
    }
    assert.equal(await readFile(join(d, 'a.json'), 'utf8'), 'old');
    assert.deepEqual(await readdir(d), ['a.json']);
  });

  it('holdBeforeRename: after staging, the signal file is written and the writer waits to be killed, every target still old', async () => {
    const d = tidyDir();
    const a = join(d, 'a.json');
    await writeFile(a, 'old');
    const signal = join(d, 'staged.signal');
    const realSetInterval = globalThis.setInterval;
    const timers: NodeJS.Timeout[] = [];
    globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => {
      const t = realSetInterval(...args);
      timers.push(t);
      return t;
    }) as typeof setInterval;
    try {
      void writeFileAtomic(a, 'new', { faults: { holdBeforeRename: signal } }).catch(() => {});
      await until(() => existsSync(signal), 2_000, 'the signal file');
      await sleep(30);
      assert.equal(await readFile(a, 'utf8'), 'old');
      const staged = await tmpFiles(d);
      assert.equal(staged.length, 1);
      assert.match(staged[0]!, new RegExp(`^a\\.json\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`));
      assert.equal(await readFile(join(d, staged[0]!), 'utf8'), 'new', 'staged whole before the hold');
      assert.ok(
        timers.some((t) => t.hasRef()),
        'the waiting writer keeps its process alive until it is killed',
      );
    } finally {
      globalThis.setInterval = realSetInterval;
      for (const t of timers) clearInterval(t);
    }
  });
});

describe('the write lock: edges', () => {
  it('waits while a live holder has it, and takes it once released within the wait', async () => {
    const target = join(tidyDir(), 'servers.json');
    const release = await acquireLock(target);
    const started = Date.now();
    setTimeout(() => {
      void release();
    }, 150);
    const second = await within(acquireLock(target, 3_000), 2_500, 'waiting for the lock');
    assert.ok(Date.now() - started >= 100, 'it waited for the release');
    assert.equal(Number((await readFile(`${target}.lock`, 'utf8')).trim()), process.pid);
    await second();
  });

  it("a dead holder's lock is taken over at once, even with a long wait allowed", async () => {
    const target = join(tidyDir(), 'servers.json');
    await writeFile(`${target}.lock`, String(DEAD_PID));
    // Ten minutes allowed, one given: taken over, not waited out (an outcome a loaded machine cannot fake).
    const release = await within(acquireLock(target, 600_000), 60_000, 'taking over a dead lock', () =>
      unlink(`${target}.lock`).catch(() => {}),
    );
    await release();
  });

  it('a lock with no pid (its writer died before writing it) is taken over once the wait is over', async () => {
    const target = join(tidyDir(), 'servers.json');
    await writeFile(`${target}.lock`, '');
    const release = await within(acquireLock(target, 0), 1_500, 'taking over an empty lock', () =>
      unlink(`${target}.lock`).catch(() => {}),
    );
    assert.equal(Number((await readFile(`${target}.lock`, 'utf8')).trim()), process.pid);
    await release();
  });

  it('a lock being written (no pid yet) is not taken while the wait lasts; its holder is then waited for', async () => {
    const target = join(tidyDir(), 'servers.json');
    const lock = `${target}.lock`;
    await writeFile(lock, '');
    let acquired = false;
    const p = acquireLock(target, 3_000).then((r) => {
      acquired = true;
      return r;
    });
    await sleep(120);
    assert.equal(acquired, false, 'not taken while its writer may still write its pid');
    await writeFile(lock, String(process.pid));
    await sleep(120);
    assert.equal(acquired, false, 'a live holder is waited for');
    await unlink(lock);
    const release = await within(p, 2_000, 'the lock after its release');
    await release();
  });

  it("a holder that exists but cannot be signalled (EPERM: another user's process) is alive", async () => {
    const d = tidyDir();
    const target = join(d, 'servers.json');
    const OTHER_USER = 4_194_304 + 23;
    await writeFile(`${target}.lock`, String(OTHER_USER));
    const leftover = join(d, `servers.json.${OTHER_USER}.0123abcd.tmp`);
    await writeFile(leftover, "a live writer's");
    const realKill = process.kill;
    process.kill = ((pid: number, signal?: string | number) => {
      if (pid === OTHER_USER) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      return realKill.call(process, pid, signal);
    }) as typeof process.kill;
    try {
      await assert.rejects(
        acquireLock(target, 0),
        (err: Error) => err instanceof LockBusyError && err.message.includes(`pid ${OTHER_USER}`),
      );
      await writeFileAtomic(target, '{}');
      assert.equal(existsSync(leftover), true, "a live writer's temporary file is kept");
    } finally {
      process.kill = realKill;
    }
  });

  it('an error other than an existing lock (its folder is missing) is thrown, not waited on', async () => {
    const d = tidyDir();
    const target = join(d, 'missing', 'servers.json');
    await assert.rejects(
      within(acquireLock(target, 0), 1_500, 'a lock in a missing folder', () => mkdir(join(d, 'missing'))),
      (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
    );
  });
});

describe('oneLine: a cut is marked however many breaks were squeezed before it', () => {
  it('reads on past squeezed breaks until the line is over the limit, then cuts with … and never splits a pair', () => {
    assert.equal(oneLine('ab\n\n\n\ncd', 4), 'ab …');
    assert.equal(oneLine('a\r\n\r\nbcdefgh', 6), 'a bcd…');
    assert.equal(oneLine('a\n\n\n😀xyz', 4), 'a …');
    assert.equal(oneLine(`${'\n'.repeat(100_000)}a`, 10), ' a', 'a long run of breaks is one space');
  });
});
