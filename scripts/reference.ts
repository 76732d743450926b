/**
 * The reference in `docs/reference/`, generated from the code: one page per command from the commander
 * definitions (usage, arguments, every option with its default, `--help` as the command prints it, exit
 * codes), the verdict and reason table from the policy table, the limits from the exported constants, the
 * file formats from the catalog schema and the documented types. `npm run docs` writes the pages
 * (./docs.ts); test/docs-reference.test.ts fails when one is stale or differs from the real `--help`.
 *
 * Pure apart from reading source files of this repository (comments, the schema): the same tree gives the
 * same bytes, whatever the terminal (help is laid out at HELP_WIDTH columns, without colour).
 */
import { REGISTRY_LIMITS } from '../src/census/registry.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { Command, Help, Option } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { mdText } from '../src/text/escape.js';
import { POLICY_TABLE, REASON_TEXT, RETRYABLE, type Reason } from '../src/policy/policy.js';
import { HELD_OUT } from '../src/decide/drift.js';
import { PROBE_DEFAULTS } from '../src/attest/probe.js';
import { PROBE_MANY_DEFAULTS } from '../src/attest/probe-many.js';
import { RECORD_LIMITS } from '../src/model/limits.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_LIMITS } from '../src/model/snapshot-hash.js';
import { TOKEN_LIMITS } from '../src/attest/tokens.js';
import { MAX_NESTING } from '../src/util/json.js';
import { RECORD_SCHEMAS, recordJsonSchemas, type JsonSchema } from '../src/model/json-schema.js';
import { HISTORY_LIMITS, HISTORY_LINE_VERSION } from '../src/store/lines.js';
import { DEFAULT_RETENTION_DAYS } from '../src/status/build.js';
import { DISCOVERY_LIMITS } from '../src/discover/discover.js';
import { MAX_ENTRIES } from '../src/discover/documents.js';
import { ERROR_SEARCH_NODES, MAX_ERRORS } from '../src/discover/card.js';
import { SERVE_LIMITS } from '../src/serve/server.js';
import { LIMITS } from '../src/status/model.js';
import { MCP_LIMITS } from '../src/mcp/limits.js';
import { MAX_TIMER_MS } from '../src/cli/args.js';
import { catalogJsonSchema } from '../src/catalog/schema.js';
import { STALE_AFTER_DAYS } from '../src/apply/apply.js';
import { JOB_LIMITS } from '../src/model/jobs.js';
import { MAX_STALLS } from '../src/worker/worker.js';

/** The repository's root (this file runs from dist/scripts/). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the pages go, relative to the root. */
export const REFERENCE_DIR = 'docs/reference';

/**
 * The width help is laid out at: commander's own when stdout is not a terminal (80; it asks
 * `process.stdout.columns` only on a TTY and ignores COLUMNS), so `onetap <command> --help | cat` prints
 * exactly what the pages hold.
 */
export const HELP_WIDTH = 80;

export interface ReferencePage {
  path: string;
  content: string;
}

/** One exit code of a command; `code` null: the command does not end on its own. */
export interface ExitCode {
  code: number | null;
  meaning: string;
}

/**
 * Each command's exit codes (as the README's commands table states them). A command without an entry here
 * fails test/docs-reference.test.ts. General rule: 0 ok, 1 a finding or an error, 2 a usage error (checked
 * before any work), 3 only refresh's outage guard.
 */
export const EXIT_CODES: Readonly<Record<string, readonly ExitCode[]>> = {
  init: [
    { code: 0, meaning: 'written' },
    { code: 1, meaning: 'a file it would write exists (nothing written), or an error' },
    { code: 2, meaning: 'usage' },
  ],
  probe: [
    { code: 0, meaning: 'every URL is live' },
    { code: 1, meaning: 'any URL is not live' },
    { code: 2, meaning: 'usage' },
  ],
  lint: [
    { code: 0, meaning: 'clean' },
    { code: 1, meaning: 'problems, or an unreadable catalog' },
    { code: 2, meaning: 'usage' },
  ],
  add: [
    { code: 0, meaning: 'added' },
    { code: 1, meaning: 'refused, or an error' },
    { code: 2, meaning: 'usage' },
  ],
  restore: [
    { code: 0, meaning: 'restored' },
    { code: 1, meaning: 'refused (not removed, permanent, lint, not live), or an error' },
    { code: 2, meaning: 'usage' },
  ],
  refresh: [
    {
      code: 0,
      meaning:
        'ran (whatever the plan says); a run id recorded already exits with its recorded code, its plan as recorded (`alreadyRecorded` in `--json`)',
    },
    {
      code: 1,
      meaning:
        'an error (a store whose schema is behind names `onetap store migrate`; a store lost mid-run records nothing of the run and says so; with `--vantages`, a store or queue that could not be read until the deadline, each failed poll tried again with backoff)',
    },
    { code: 2, meaning: 'usage' },
    { code: 3, meaning: 'the outage guard stopped the run (now, or when the run id was recorded)' },
  ],
  rejudge: [
    { code: 0, meaning: 'no verdict differs (rows without evidence are no difference)' },
    { code: 1, meaning: 'a verdict differs, or an error' },
    { code: 2, meaning: 'usage' },
  ],
  accept: [
    { code: 0, meaning: 'accepted' },
    { code: 1, meaning: 'nothing to accept' },
    { code: 2, meaning: 'usage' },
  ],
  discover: [
    { code: 0, meaning: 'at least one Server Card was read' },
    { code: 1, meaning: 'none found, or the source was refused' },
    { code: 2, meaning: 'usage' },
  ],
  validate: [
    { code: 0, meaning: 'valid' },
    { code: 1, meaning: 'invalid or unreadable' },
    { code: 2, meaning: 'usage' },
  ],
  publish: [
    { code: 0, meaning: 'published' },
    { code: 1, meaning: 'the catalog fails lint, or an error' },
    { code: 2, meaning: 'usage' },
  ],
  serve: [
    {
      code: null,
      meaning:
        'runs until stopped (SIGINT or SIGTERM); a catalog that fails lint is served with its findings on the status page, its published documents answered 503',
    },
    { code: 1, meaning: 'an unreadable catalog, the port cannot be bound, or an error' },
    { code: 2, meaning: 'usage' },
  ],
  report: [
    { code: 0, meaning: 'written' },
    { code: 1, meaning: 'an error' },
    { code: 2, meaning: 'usage' },
  ],
  site: [
    {
      code: 0,
      meaning:
        'written (a catalog that fails lint: the status pages with its findings, no published documents; the findings on stderr)',
    },
    { code: 1, meaning: 'a catalog that would leak a secret, or an error' },
    { code: 2, meaning: 'usage' },
  ],
  mcp: [
    { code: 0, meaning: 'stopped (it runs until stopped)' },
    { code: 1, meaning: 'the port cannot be bound' },
    { code: 2, meaning: 'usage' },
  ],
  demo: [{ code: 0, meaning: 'the demo ran' }],
  worker: [
    { code: 0, meaning: 'stopped by SIGTERM or SIGINT (jobs in flight finished within --drain, the rest handed back)' },
    { code: 1, meaning: 'the store or queue cannot be reached, or its schema is behind (`onetap store migrate`)' },
    {
      code: 2,
      meaning:
        "usage (also: ONETAP_WORKER_KEY_ENV not a list of variable names, or one of onetap's own; ONETAP_VANTAGE_KEY shorter than 32 characters)",
    },
  ],
  census: [
    { code: 0, meaning: 'the census completed: the records written' },
    { code: 1, meaning: 'the registry could not be read (nothing probed), or an error' },
    { code: 2, meaning: 'usage' },
    {
      code: 3,
      meaning:
        'the outage guard: at least 20 hosts were probed and at least half of them failed at the network level, every probe of each (nothing published; the state is kept)',
    },
  ],
  store: [
    { code: 0, meaning: '`--help`' },
    { code: 2, meaning: 'no subcommand, or an unknown one' },
  ],
  'store migrate': [
    { code: 0, meaning: 'migrated, or up to date' },
    {
      code: 1,
      meaning: 'the store cannot be reached, is newer than this onetap, or a migration failed (nothing of it applied)',
    },
    { code: 2, meaning: 'usage (no URL, or not a PostgreSQL one)' },
  ],
  'store import': [
    {
      code: 0,
      meaning: 'imported (runs the store holds already are left out; unusable lines are counted as history problems)',
    },
    { code: 1, meaning: 'an error: nothing was imported' },
    { code: 2, meaning: 'usage' },
  ],
  'store grant-vantage': [
    { code: 0, meaning: 'the SQL printed (nothing is connected to or changed)' },
    {
      code: 2,
      meaning:
        'usage (no URL, not a PostgreSQL one, not a vantage name, or a default role name over 63 bytes: give --role)',
    },
  ],
  'store export': [
    { code: 0, meaning: 'exported' },
    { code: 1, meaning: 'an error' },
    { code: 2, meaning: 'usage (also: --to holds files, or tools.lock.json exists beside it)' },
  ],
};

/** The program's own exit codes (no command, `--help`, `--version`). */
export const PROGRAM_EXIT_CODES: readonly ExitCode[] = [
  { code: 0, meaning: '`--help`, `help [command]`, `--version`' },
  { code: 2, meaning: 'no command (the help is printed on stderr), an unknown command or option' },
];

/** The CLI's own program (its output settings are fixed per page, so the pages do not depend on the terminal). */
export function buildReferenceProgram(): Command {
  return buildProgram();
}

/**
 * A command and where its page goes: `path` its words after `onetap` (`['probe']`), `file` relative to docs/reference.
 */
export interface ReferenceCommand {
  command: Command;
  path: string[];
  file: string;
}

/** Every command with a page, nested subcommands included, depth first in the order the help lists them. */
export function referenceCommands(program: Command): ReferenceCommand[] {
  const out: ReferenceCommand[] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if ((sub as unknown as { _hidden?: boolean })._hidden) continue;
      const p = [...path, sub.name()];
      out.push({ command: sub, path: p, file: `${p.join('-')}.md` });
      walk(sub, p);
    }
  };
  walk(program, []);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Markdown helpers

/** Inline code, safe in a table cell (`|` escaped, which GitHub unescapes inside code in tables). */
function code(text: string): string {
  const run = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(run + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text.replace(/\|/g, '\\|')}${pad}${fence}`;
}

/** A fenced block holding `text` exactly (the fence is longer than any backtick run inside). */
export function fenced(text: string, info = 'text'): string {
  const run = Math.max(2, ...[...text.matchAll(/^`+/gm)].map((m) => m[0].length));
  const fence = '`'.repeat(run + 1);
  return `${fence}${info}\n${text.endsWith('\n') ? text : `${text}\n`}${fence}`;
}

/** The text of the first fenced `text` block of a page, or null. */
export function firstTextBlock(markdown: string): string | null {
  const m = /^(`{3,})text\n([\s\S]*?)^\1$/m.exec(markdown);
  return m ? m[2]! : null;
}

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const cell = (text: string) => (text === '' ? '' : mdText(text));

/**
 * Text written in this code base (descriptions, comments, REASON_TEXT), whose backtick spans are code: those
 * stay code (safe in a table cell), the rest is escaped as plain text, spaces around the spans kept.
 */
function prose(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(`[^`]+`)/)
    .map((part, i) => {
      if (i % 2) return code(part.slice(1, -1));
      const lead = /^ /.test(part) ? ' ' : '';
      const trail = / $/.test(part) && part.trim() ? ' ' : '';
      return part.trim() ? lead + mdText(part) + trail : part;
    })
    .join('');
}

// ---------------------------------------------------------------------------------------------------------
// Commands

/** Help as the command prints it on a pipe: HELP_WIDTH columns, no colour (a copy of the output settings). */
function helpText(cmd: Command): string {
  const saved = cmd.configureOutput();
  cmd.configureOutput({ ...saved, getOutHelpWidth: () => HELP_WIDTH, getOutHasColors: () => false });
  try {
    return cmd.helpInformation();
  } finally {
    cmd.configureOutput(saved);
  }
}

function helper(cmd: Command): Help {
  const h = cmd.createHelp();
  h.prepareContext({ helpWidth: HELP_WIDTH, outputHasColors: false });
  return h;
}

/** What commander knows as the option's default, as its help shows it ("" when it has none). */
function optionDefault(option: Option): string {
  if (option.defaultValue === undefined) return '';
  return option.defaultValueDescription || JSON.stringify(option.defaultValue);
}

function optionsTable(cmd: Command): string {
  const rows = helper(cmd)
    .visibleOptions(cmd)
    .map((o) => {
      const dflt = optionDefault(o);
      const extra = [
        o.argChoices ? `choices: ${o.argChoices.join(', ')}` : '',
        o.variadic ? 'repeatable' : '',
        o.envVar ? `env: ${o.envVar}` : '',
      ]
        .filter(Boolean)
        .join('; ');
      return [
        code(o.flags),
        cell(o.description) + (extra ? ` (${cell(extra)})` : ''),
        o.mandatory ? 'required' : dflt ? code(dflt) : '—',
      ];
    });
  return table(['flags', 'description', 'default'], rows);
}

function argumentsTable(cmd: Command): string | null {
  const args = cmd.registeredArguments;
  if (!args.length) return null;
  return table(
    ['argument', 'description', 'required', 'default'],
    args.map((a) => [
      code(a.required ? `<${a.name()}${a.variadic ? '...' : ''}>` : `[${a.name()}${a.variadic ? '...' : ''}]`),
      cell(a.description),
      a.required ? 'yes' : 'no',
      a.defaultValue === undefined ? '—' : code(a.defaultValueDescription || JSON.stringify(a.defaultValue)),
    ]),
  );
}

function exitCodesTable(codes: readonly ExitCode[]): string {
  return table(
    ['exit code', 'meaning'],
    codes.map((c) => [c.code === null ? '—' : code(String(c.code)), prose(c.meaning)]),
  );
}

const GENERATED = (source: string) => `<!-- Generated by \`npm run docs\` from ${source}; do not edit by hand. -->`;

/** A command's page, relative links from docs/reference/. */
export function commandPage(ref: ReferenceCommand): string {
  const { command: cmd, path } = ref;
  const full = `onetap ${path.join(' ')}`;
  const codes = EXIT_CODES[path.join(' ')];
  const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const args = argumentsTable(cmd);
  const parts = [
    GENERATED('the commander definitions in src/cli/'),
    '',
    `# \`${full}\``,
    '',
    cell(cmd.description()),
    '',
    `Usage: ${code(helper(cmd).commandUsage(cmd))}`,
    '',
    `\`${full} --help\` prints:`,
    '',
    fenced(helpText(cmd)),
    '',
  ];
  if (args) parts.push('## Arguments', '', args, '');
  parts.push(
    '## Options',
    '',
    'A default is what the CLI definition gives commander; "—" means none there (the description says what applies).',
    '',
    optionsTable(cmd),
    '',
  );
  if (subs.length) {
    parts.push(
      '## Subcommands',
      '',
      ...subs.map((s) => `- [\`${full} ${s.name()}\`](${[...path, s.name()].join('-')}.md): ${cell(s.description())}`),
      '',
    );
  }
  parts.push(
    '## Exit codes',
    '',
    codes ? exitCodesTable(codes) : 'Not stated (EXIT_CODES in scripts/reference.ts has no entry).',
    '',
  );
  parts.push(
    'Every error goes to stderr as `onetap: …`. See also the [index](README.md) and the [verdicts and reasons](verdicts.md).',
    '',
  );
  return parts.join('\n');
}

export function indexPage(program: Command, refs: ReferenceCommand[]): string {
  const rows = refs.map((r) => {
    const codes = EXIT_CODES[r.path.join(' ')] ?? [];
    return [
      `[${code(`onetap ${r.path.join(' ')}`)}](${r.file})`,
      cell(r.command.description()),
      codes.map((c) => (c.code === null ? prose(c.meaning) : `${code(String(c.code))} ${prose(c.meaning)}`)).join('; '),
    ];
  });
  const help = helper(program)
    .visibleCommands(program)
    .find((c) => !program.commands.includes(c));
  if (help)
    rows.push([
      code(`onetap ${help.name()} [command]`),
      `${cell(help.description())} (the same text as ${code('onetap <command> --help')})`,
      code('0'),
    ]);
  return [
    GENERATED('the commander definitions in src/cli/ and the tables in src/'),
    '',
    '# onetap reference',
    '',
    'Generated from the code: one page per command, the verdicts and reasons, the limits and the file formats.',
    'Run `npm run docs` after changing any of them; `test/docs-reference.test.ts` fails while a page is stale.',
    '',
    '## Commands',
    '',
    table(['command', 'what it does', 'exit codes'], rows),
    '',
    'Exit codes in general: `0` ok, `1` a finding or an error, `2` a usage error (checked before any work), `3` only',
    "for `refresh`'s outage guard.",
    '',
    '`onetap --help` prints:',
    '',
    fenced(helpText(program)),
    '',
    `\`onetap --version\` prints \`${program.version()}\`.`,
    '',
    '### Options of `onetap`',
    '',
    optionsTable(program),
    '',
    '### Exit codes of `onetap` without a command',
    '',
    exitCodesTable(PROGRAM_EXIT_CODES),
    '',
    '## Tables',
    '',
    '- [Verdicts and reasons](verdicts.md): the policy table, every reason in plain language, what is retried.',
    '- [Limits](limits.md): what onetap reads, keeps and allows at most, and its defaults.',
    '- [File formats](formats.md): the catalog (`servers.json`), `tools.lock.json`, the history lines.',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Verdicts

export function verdictsPage(): string {
  const reasons = Object.keys(REASON_TEXT) as Reason[];
  const verdictsOf = (r: Reason) => [
    ...new Set(POLICY_TABLE.filter((row) => row.reason === r).map((row) => row.verdict)),
  ];
  const reasonRows = reasons.map((r) => [
    code(r),
    verdictsOf(r)
      .map((v) => code(v))
      .join(', ') || '—',
    prose(REASON_TEXT[r]),
    RETRYABLE.has(r) ? 'yes' : '',
    HELD_OUT.has(r) ? 'yes' : '',
  ]);
  return [
    GENERATED('POLICY_TABLE, REASON_TEXT and RETRYABLE in src/policy/policy.ts, HELD_OUT in src/decide/drift.ts'),
    '',
    '# Verdicts and reasons',
    '',
    'Every probe ends in one verdict (`live`, `review`, `drop`, `failed`) and one reason. The rules are tried in',
    'the order below; in each stage the first rule that holds gives the reason, and every rule that holds is in',
    '`reasons`. Each rule quotes the sentence of the [one-tap policy](../one-tap-policy.md) it implements.',
    '',
    '## The policy table',
    '',
    table(
      ['#', 'stage', 'verdict', 'reason', 'policy'],
      POLICY_TABLE.map((row, i) => [
        String(i + 1),
        code(row.stage),
        code(row.verdict),
        code(row.reason),
        prose(row.policy),
      ]),
    ),
    '',
    '## Reasons',
    '',
    '"retried": a failure worth exactly one retry (`RETRYABLE`); "held out": the row is left out of the generated',
    'runtime lists until a maintainer accepts it (`HELD_OUT`).',
    '',
    table(['reason', 'verdict', 'meaning', 'retried', 'held out'], reasonRows),
    '',
    `Retried once: ${[...RETRYABLE].map((r) => code(r)).join(', ')}.`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// Limits: the values at run time, their comments from the source

interface LimitConstant {
  name: string;
  file: string;
  value: unknown;
}

/**
 * The exported limits and defaults; test/docs-reference.test.ts checks every exported `*_LIMITS`, `*_DEFAULTS`,
 * `LIMITS` and `MAX_*` is here.
 */
export const LIMIT_CONSTANTS: readonly LimitConstant[] = [
  { name: 'PROBE_DEFAULTS', file: 'src/attest/probe.ts', value: PROBE_DEFAULTS },
  { name: 'PROBE_MANY_DEFAULTS', file: 'src/attest/probe-many.ts', value: PROBE_MANY_DEFAULTS },
  { name: 'RECORD_LIMITS', file: 'src/model/limits.ts', value: RECORD_LIMITS },
  { name: 'SNAPSHOT_LIMITS', file: 'src/model/snapshot-hash.ts', value: SNAPSHOT_LIMITS },
  { name: 'TOKEN_LIMITS', file: 'src/attest/tokens.ts', value: TOKEN_LIMITS },
  { name: 'MAX_NESTING', file: 'src/util/json.ts', value: MAX_NESTING },
  { name: 'MAX_TIMER_MS', file: 'src/cli/args.ts', value: MAX_TIMER_MS },
  { name: 'HISTORY_LIMITS', file: 'src/store/lines.ts', value: HISTORY_LIMITS },
  { name: 'DEFAULT_RETENTION_DAYS', file: 'src/status/build.ts', value: DEFAULT_RETENTION_DAYS },
  { name: 'STALE_AFTER_DAYS', file: 'src/apply/apply.ts', value: STALE_AFTER_DAYS },
  { name: 'DISCOVERY_LIMITS', file: 'src/discover/discover.ts', value: DISCOVERY_LIMITS },
  { name: 'REGISTRY_LIMITS', file: 'src/census/registry.ts', value: REGISTRY_LIMITS },
  { name: 'MAX_ENTRIES', file: 'src/discover/documents.ts', value: MAX_ENTRIES },
  { name: 'MAX_ERRORS', file: 'src/discover/card.ts', value: MAX_ERRORS },
  { name: 'ERROR_SEARCH_NODES', file: 'src/discover/card.ts', value: ERROR_SEARCH_NODES },
  { name: 'SERVE_LIMITS', file: 'src/serve/server.ts', value: SERVE_LIMITS },
  { name: 'LIMITS', file: 'src/status/model.ts', value: LIMITS },
  { name: 'MCP_LIMITS', file: 'src/mcp/limits.ts', value: MCP_LIMITS },
  { name: 'JOB_LIMITS', file: 'src/model/jobs.ts', value: JOB_LIMITS },
  { name: 'MAX_STALLS', file: 'src/worker/worker.ts', value: MAX_STALLS },
];

const sources = new Map<string, ts.SourceFile>();
function source(file: string): ts.SourceFile {
  let sf = sources.get(file);
  if (!sf) {
    sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    sources.set(file, sf);
  }
  return sf;
}

/** The last `/** … *\/` comment before a node, as one paragraph ("" without one). */
function docComment(sf: ts.SourceFile, node: ts.Node): string {
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? [];
  const doc = ranges.filter((r) => sf.text.startsWith('/**', r.pos)).at(-1);
  if (!doc) return '';
  return sf.text
    .slice(doc.pos + 3, doc.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trim())
    .filter(Boolean)
    .join(' ');
}

/** A module's opening comment, its lines kept (indentation after ` * ` too). */
function moduleComment(file: string): string {
  const sf = source(file);
  const first = sf.statements[0];
  const ranges = first ? (ts.getLeadingCommentRanges(sf.text, first.getFullStart()) ?? []) : [];
  const doc = ranges.find((r) => sf.text.startsWith('/**', r.pos));
  if (!doc) return '';
  return sf.text
    .slice(doc.pos + 3, doc.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\*( |$)/, '').trimEnd())
    .join('\n')
    .trim();
}

function variable(
  sf: ts.SourceFile,
  name: string,
): { statement: ts.VariableStatement; decl: ts.VariableDeclaration } | null {
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const decl of st.declarationList.declarations)
      if (ts.isIdentifier(decl.name) && decl.name.text === name) return { statement: st, decl };
  }
  return null;
}

function memberDocs(sf: ts.SourceFile, members: ts.NodeArray<ts.Node>): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of members) {
    const name = (m as ts.NamedDeclaration).name;
    if (name && (ts.isIdentifier(name) || ts.isStringLiteral(name))) out.set(name.text, docComment(sf, m));
  }
  return out;
}

/** The constant's comment and each key's: on the object literal's properties, else on its declared interface. */
function limitDocs(c: LimitConstant): { doc: string; keys: Map<string, string> } {
  const sf = source(c.file);
  const found = variable(sf, c.name);
  if (!found) throw new Error(`${c.file}: no exported const ${c.name}`);
  let init = found.decl.initializer;
  while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)))
    init = init.expression;
  const keys = init && ts.isObjectLiteralExpression(init) ? memberDocs(sf, init.properties) : new Map<string, string>();
  const type = found.decl.type;
  if (type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
    const typeName = type.typeName.text;
    const iface = sf.statements.find(
      (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === typeName,
    );
    if (iface) for (const [k, d] of memberDocs(sf, iface.members)) if (d && !keys.get(k)) keys.set(k, d);
  }
  return { doc: docComment(sf, found.statement), keys };
}

/** A number with its unit spelled out when its key names one (`…Bytes`, `…Ms`). */
function humane(key: string, value: unknown): string {
  if (typeof value !== 'number') return '';
  if (/bytes$/i.test(key) && value >= 1024 && value % 1024 === 0)
    return value % (1024 * 1024) === 0 ? `${value / 1024 / 1024} MiB` : `${value / 1024} KiB`;
  if (/Ms$/.test(key) && value >= 1000 && value % 1000 === 0)
    return value % 60_000 === 0 ? `${value / 60_000} min` : `${value / 1000} s`;
  return '';
}

export function limitsPage(): string {
  const parts = [
    GENERATED('the exported constants named below (values at run time, comments from the source)'),
    '',
    '# Limits',
    '',
    'What onetap reads, keeps and allows at most, and the defaults it starts from, as the code exports them.',
    'Flags that override one of them say so on the [command pages](README.md).',
    '',
  ];
  for (const c of LIMIT_CONSTANTS) {
    const { doc, keys } = limitDocs(c);
    parts.push(`## \`${c.name}\``, '', `[${c.file}](../../${c.file})${doc ? `: ${prose(doc)}` : ''}`, '');
    if (c.value !== null && typeof c.value === 'object') {
      parts.push(
        table(
          ['key', 'value', 'meaning'],
          Object.entries(c.value).map(([k, v]) => {
            const h = humane(k, v);
            return [code(k), code(JSON.stringify(v)) + (h ? ` (${h})` : ''), prose(keys.get(k) ?? '')];
          }),
        ),
        '',
      );
    } else {
      const h = humane(c.name.endsWith('_MS') ? 'Ms' : c.name, c.value);
      parts.push(`Value: ${code(JSON.stringify(c.value))}${h ? ` (${h})` : ''}`, '');
    }
  }
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// File formats

type Schema = Record<string, unknown>;

function schemaType(s: Schema, defsAnchor: (name: string) => string): string {
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/$defs/', '').replace(/\.schema\.json$/, '');
    return `[${mdText(name)}](#${defsAnchor(name)})`;
  }
  if (Array.isArray(s.anyOf)) return (s.anyOf as Schema[]).map((x) => schemaType(x, defsAnchor)).join(' or ');
  if (s.const !== undefined) return code(JSON.stringify(s.const));
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => code(JSON.stringify(v))).join(', ')}`;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : typeof s.type === 'string' ? s.type : 'any';
  if (type === 'array' && s.items && typeof s.items === 'object')
    return `array of ${schemaType(s.items as Schema, defsAnchor)}`;
  if (type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    return `object of ${schemaType(s.additionalProperties as Schema, defsAnchor)} values`;
  if (type === 'object' && s.properties && typeof s['x-anchor'] === 'string') return `[object](#${s['x-anchor']})`;
  return mdText(type);
}

function schemaConstraints(s: Schema): string {
  const out: string[] = [];
  const own = Array.isArray(s.anyOf) ? ((s.anyOf as Schema[]).find((x) => x.type !== 'null') ?? s) : s;
  // A whole number's own range (±2^53-1) says nothing a reader needs.
  const safe = (k: string, v: unknown) =>
    (k === 'minimum' || k === 'maximum') && Math.abs(Number(v)) === Number.MAX_SAFE_INTEGER;
  for (const k of ['format', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength'])
    if (own[k] !== undefined && !safe(k, own[k])) out.push(`${k} ${code(String(own[k]))}`);
  const items = s.items as Schema | undefined;
  if (items && typeof items === 'object' && items.format !== undefined)
    out.push(`items: format ${code(String(items.format))}`);
  return out.join(', ');
}

function schemaObjectTable(s: Schema, defsAnchor: (name: string) => string): string {
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const rows = Object.entries(props).map(([name, p]) => [
    code(name),
    schemaType(p, defsAnchor),
    required.has(name) ? 'yes' : '',
    schemaConstraints(p),
    prose(typeof p.description === 'string' ? p.description : ''),
  ]);
  const closed = s.additionalProperties === false ? '\n\nNo other fields are allowed.' : '';
  return table(['field', 'type', 'required', 'constraints', 'description'], rows) + closed;
}

/** A heading with an anchor of its own (links in the tables point at it). */
const anchorHeading = (name: string, anchor: string, title: string) =>
  `### ${title} (\`${name}\`) <a id="${anchor}"></a>`;

/** The JSDoc of each property of the object literals in a schema's declaration (`z.object({…})`, `.extend({…})`). */
function schemaComments(file: string, names: readonly string[]): Map<string, string> {
  const sf = source(file);
  const out = new Map<string, string>();
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const decl of st.declarationList.declarations) {
      if (!ts.isIdentifier(decl.name) || !names.includes(decl.name.text) || !decl.initializer) continue;
      const visit = (node: ts.Node): void => {
        if (ts.isObjectLiteralExpression(node)) {
          for (const p of node.properties) {
            if (!ts.isPropertyAssignment(p) && !ts.isShorthandPropertyAssignment(p)) continue;
            const comment = docComment(sf, p);
            if (comment && !out.has(p.name.getText(sf))) out.set(p.name.getText(sf), comment);
          }
          return;
        }
        ts.forEachChild(node, visit);
      };
      visit(decl.initializer);
    }
  }
  return out;
}

const inheritsOf = (part: (typeof RECORD_SCHEMAS)[number]): readonly string[] =>
  'inherits' in part ? part.inherits : [];

/** Sets each property's description from the first source naming it. */
function describeFields(schema: JsonSchema, sources: ReadonlyArray<ReadonlyMap<string, string>>): void {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [field, p] of Object.entries(props)) {
    const text = sources.map((c) => c.get(field)).find((t) => t !== undefined);
    if (text) p.description = text;
  }
}

/**
 * The record's JSON Schemas with each field's description from its declaration (a plan row's observation fields from
 * the observation's).
 */
export const describedSchemas = (() => {
  let made: Record<string, JsonSchema> | null = null;
  return () => {
    if (made) return made;
    const schemas = recordJsonSchemas();
    const commentsOf = (name: string) => {
      const part = RECORD_SCHEMAS.find((s) => s.name === name)!;
      return schemaComments(part.file, part.declared);
    };
    for (const part of RECORD_SCHEMAS) {
      // Its own comments first, then those of the parts it copies fields from (a plan row's observation fields).
      const sources = [part.name, ...(part.name === 'PlanRow' ? ['Observation'] : []), ...inheritsOf(part)].map(
        commentsOf,
      );
      describeFields(schemas[part.name]!, sources);
    }
    return (made = schemas);
  };
})();

export function formatsPage(): string {
  const schemaFile = 'catalog/servers.schema.json';
  const schema = catalogJsonSchema() as Schema;
  const anchor = (name: string) => `definition-${name.toLowerCase()}`;
  const defs = (schema.$defs ?? {}) as Record<string, Schema>;
  // Inline objects (policy) get a section of their own; the document's table links to it.
  const props = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, p]) => [
      name,
      p.type === 'object' && p.properties ? { ...p, 'x-anchor': name.toLowerCase() } : p,
    ]),
  );
  schema.properties = props;
  const parts = [
    GENERATED(
      `src/catalog/schema.ts, the record's schemas in src/model/ and the comments of src/store/lock.ts and src/store/lines.ts`,
    ),
    '',
    '# File formats',
    '',
    '## The catalog: `servers.json`',
    '',
    `From the JSON Schema [${schemaFile}](../../${schemaFile}), generated from [src/catalog/schema.ts](../../src/catalog/schema.ts)${typeof schema.title === 'string' ? ` (${cell(schema.title)})` : ''}. Loading checks the`,
    'types (and `minimum`, `maximum`, `minLength`) of every field present; the rest of the schema (required',
    'decision records, unknown fields, URL formats) is checked by `onetap lint`.',
    '',
    '### The document',
    '',
    schemaObjectTable(schema, anchor),
    '',
  ];
  for (const [name, p] of Object.entries(props)) {
    if (p.type === 'object' && p.properties) parts.push(`### \`${name}\``, '', schemaObjectTable(p, anchor), '');
  }
  for (const [name, d] of Object.entries(defs))
    parts.push(`### Definition: ${name}`, '', schemaObjectTable(d, anchor), '');
  const record = (name: string) => `record-${name.toLowerCase()}`;
  const recordTable = (name: string) => schemaObjectTable(describedSchemas()[name]!, record);
  parts.push(
    '## Accepted tool lists: `tools.lock.json`',
    '',
    `Beside the catalog. From the schema in [src/model/acceptance.ts](../../src/model/acceptance.ts) (JSON Schema: [ToolsLock](schemas/ToolsLock.schema.json)); read by [src/store/lock.ts](../../src/store/lock.ts):`,
    '',
    prose(moduleComment('src/store/lock.ts')),
    '',
    anchorHeading('ToolsLock', record('ToolsLock'), 'The document'),
    '',
    recordTable('ToolsLock'),
    '',
    "`servers` is keyed by the server's URL.",
    '',
    anchorHeading('LockEntry', record('LockEntry'), 'Each server'),
    '',
    recordTable('LockEntry'),
    '',
    `## The history: \`history/YYYY-MM.jsonl\`, line format version ${HISTORY_LINE_VERSION}`,
    '',
    "The format as [src/store/lines.ts](../../src/store/lines.ts) states it; every line is validated against the record's schema",
    `when read. Lines are at most ${HISTORY_LIMITS.lineBytes} bytes ([limits](limits.md#history_limits)).`,
    '',
    fenced(moduleComment('src/store/lines.ts')),
    '',
    'The records of a line, from the schemas in [src/model/](../../src/model/) (JSON Schemas in [schemas/](schemas/)):',
    '',
    anchorHeading('RunRecord', record('RunRecord'), 'A run line'),
    '',
    "A run line is this record with `v`, `type` (`run`) and `observations` (how many lines follow); an aborted run's line adds its rows as `plan`.",
    '',
    recordTable('RunRecord'),
    '',
    anchorHeading('PlanRow', record('PlanRow'), 'An observation line'),
    '',
    'An observation line is this record (`previous` and `changed` left out) with `v`, `type` (`observation`) and `run`. Its fields up to',
    '`evidence` are the [observation](schemas/Observation.schema.json) as `probe` made it; the rest is the decision.',
    '',
    recordTable('PlanRow'),
    '',
    anchorHeading('Evidence', record('Evidence'), 'The evidence'),
    '',
    prose(moduleComment('src/model/evidence.ts')),
    '',
    recordTable('Evidence'),
    '',
    anchorHeading('ClientRun', record('ClientRun'), "One client's run"),
    '',
    recordTable('ClientRun'),
    '',
    anchorHeading('Exchange', record('Exchange'), 'One exchange'),
    '',
    recordTable('Exchange'),
    '',
    ...['ProbeSettings', 'DiagnosisSummary', 'MatrixCell', 'Finding', 'ToolChanges'].flatMap((name) => [
      anchorHeading(name, record(name), 'Part'),
      '',
      recordTable(name),
      '',
    ]),
    anchorHeading(
      'StoredSnapshot',
      record('StoredSnapshot'),
      `Tool snapshots: \`history/snapshots/<hash>.json\`, format ${SNAPSHOT_FORMAT}`,
    ),
    '',
    `Bounded by [\`SNAPSHOT_LIMITS\`](limits.md#snapshot_limits); read back by [src/store/snapshots.ts](../../src/store/snapshots.ts) as untrusted input.`,
    '',
    recordTable('StoredSnapshot'),
    '',
    '## Views: what commands print and serve',
    '',
    'Each is declared once as a schema in [src/model/](../../src/model/), its fields the record’s where it carries one;',
    'the JSON Schemas are generated from them.',
    '',
    '| Schema | What it is |',
    '| --- | --- |',
    ...RECORD_SCHEMAS.filter((part) => 'shows' in part).map(
      (part) => `| [${part.name}](schemas/${part.name}.schema.json) | ${'shows' in part ? part.shows : ''} |`,
    ),
    '',
  );
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

/** Every page of docs/reference/, paths relative to the repository root, in a fixed order. */
export function referencePages(program: Command = buildReferenceProgram()): ReferencePage[] {
  const refs = referenceCommands(program);
  return [
    { path: `${REFERENCE_DIR}/README.md`, content: indexPage(program, refs) },
    ...refs.map((r) => ({ path: `${REFERENCE_DIR}/${r.file}`, content: commandPage(r) })),
    { path: `${REFERENCE_DIR}/verdicts.md`, content: verdictsPage() },
    { path: `${REFERENCE_DIR}/limits.md`, content: limitsPage() },
    { path: `${REFERENCE_DIR}/formats.md`, content: formatsPage() },
    { path: 'catalog/servers.schema.json', content: JSON.stringify(catalogJsonSchema(), null, 2) + '\n' },
    ...Object.entries(describedSchemas()).map(([name, schema]) => ({
      path: `${REFERENCE_DIR}/schemas/${name}.schema.json`,
      content: JSON.stringify(schema, null, 2) + '\n',
    })),
  ];
}
