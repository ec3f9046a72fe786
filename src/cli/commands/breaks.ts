/** `ramp-recon breaks list|show|ack|unack|note|assign|import`: working breaks from the terminal, or from a returned
 * workbook (docs/working-breaks.md).
 */
import { envUserName } from '../../config/process.js';
import { COMMAND_INFO } from './info.js';
import { userInfo } from 'node:os';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { plural } from '../../util/words.js';
import { z } from 'zod';
import { ConfigError, EXIT } from '../../errors.js';
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log/logger.js';
import type { Store } from '../../store/db/database.js';
import { isLosslessNumber, type LosslessNumber } from '../../decimal/json.js';
import type { Actor } from '../../domain/index.js';
import {
  LIST_STATUSES,
  listBreaks,
  type BreakHistory,
  type HistoryEntry,
  type ListStatus,
  type WorkedBreak,
} from '../../store/workflow/break-workflow.js';
import {
  ack,
  amountsWords,
  assign,
  importReturnedRows,
  note,
  showBreak,
  unack,
  type Change,
  type ImportAction,
  type ImportResult,
} from '../../workflow/index.js';
import { readReturnedWorkbook } from '../../report/read-workbook.js';
import { breakSentence } from '../../rules/describe.js';
import { accountOption, action, createContext } from '../context.js';
import { usageLine } from '../usage.js';
import { openRunStore } from './run.js';

/** What a change says it did. */
const DONE: Record<string, string> = {
  ack: 'acknowledged',
  unack: 'acknowledgement taken back:',
  note: 'noted',
  assign: 'assigned',
};

const limitSchema = z.coerce.number().int().min(1).max(10_000);

/** The name changes are recorded under: --by, else the OS user name; never empty. */
export function whoIs(by: string | undefined): string {
  if (by !== undefined) {
    const name = by.trim();
    if (!name) throw new ConfigError(['--by: must not be empty (the name the change is recorded under)']);
    return name;
  }
  let name: string;
  try {
    name = userInfo().username.trim();
  } catch {
    name = envUserName();
  }
  if (!name)
    throw new ConfigError(['--by: the OS user name is unknown here; say who records the change with --by NAME']);
  return name;
}

/**
 * Opens the store, runs fn, closes it. The embedded database refuses a second process while a run holds it: "another
 * run is in progress".
 */
async function withStore<T>(
  command: Command,
  fn: (store: Store, config: Config, logger: Logger) => Promise<T>,
): Promise<T> {
  const { config, logger } = createContext(command, { one: true });
  const store = await openRunStore(config, logger);
  try {
    return await fn(store, config, logger);
  } finally {
    await store.close();
  }
}

/**
 * JSON on stdout: dates as ISO text, lossless numbers (a break's detail) exact (as text when a double would change
 * them).
 */
function printJson(value: unknown): void {
  const replacer = (_key: string, v: unknown) => {
    if (!isLosslessNumber(v)) return v;
    const text = (v as LosslessNumber).value;
    return String(Number(text)) === text ? Number(text) : text;
  };
  process.stdout.write(`${JSON.stringify(value, replacer, 2)}\n`);
}

export function register(program: Command): void {
  const breaks = accountOption(
    program.command('breaks').description(COMMAND_INFO['breaks'].description),
    'the account whose breaks (needed when the config has several)',
    true,
  );
  registerList(breaks);
  registerShow(breaks);
  for (const change of CHANGES) registerChange(breaks, change);
  registerImport(breaks);
  // Bad usage of a subcommand in one line, pointing at its own --help.
  for (const sub of breaks.commands)
    sub.configureOutput({ outputError: (text, write) => write(usageLine(text, `breaks ${sub.name()}`)) });
}

interface ListOptions {
  status: string;
  rule?: string;
  owner?: string;
  limit: string;
  json?: boolean;
}

function registerList(breaks: Command): void {
  breaks
    .command('list')
    .description('one line per break: severity, code, key, status, owner, age (days since first seen), what happened')
    .option('--status <status>', `open (explained or not), explained, unexplained, resolved, all`, 'open')
    .option('--rule <code>', 'only this rule code')
    .option('--owner <name>', 'only breaks owned by this name')
    .option('--limit <n>', 'at most this many breaks', '200')
    .option('--json', 'print a JSON document on stdout')
    .action(action(listBreaksCommand));
}

async function listBreaksCommand(opts: ListOptions, command: Command): Promise<number> {
  if (!LIST_STATUSES.includes(opts.status as ListStatus))
    throw new ConfigError([
      `--status: must be one of ${LIST_STATUSES.join(', ')} (got ${JSON.stringify(opts.status)})`,
    ]);
  const limit = limitSchema.safeParse(opts.limit);
  if (!limit.success)
    throw new ConfigError([`--limit: must be a whole number from 1 to 10000 (got ${JSON.stringify(opts.limit)})`]);
  return withStore(command, async (store, config) => {
    const filter = { status: opts.status as ListStatus, rule: opts.rule, owner: opts.owner, limit: limit.data };
    const found = await listBreaks(store.db, config.account, filter);
    const now = new Date();
    if (opts.json)
      printJson({
        account: config.account,
        status: opts.status,
        breaks: found.breaks.map((b) => ({ ...listed(b, now), account: config.account })),
        more: found.more,
      });
    else process.stdout.write(formatList(found.breaks, found.more, now));
    return EXIT.ok;
  });
}

function registerShow(breaks: Command): void {
  breaks
    .command('show')
    .description(
      'a break, where people stand on it, and its whole history: runs (opened, seen, resolved, reopened) and people ' +
        '(who, when, why)',
    )
    .argument('<code>', 'rule code, e.g. P_FEE_USD')
    .argument('<key>', "the break's key, e.g. an order id")
    .option('--json', 'print a JSON document on stdout')
    .action(
      action(async (code: string, key: string, opts: { json?: boolean }, command: Command) =>
        withStore(command, async (store, config) => {
          const shown = await showBreak(store.db, config.account, code, key);
          if (opts.json) printJson({ account: config.account, ...shown });
          else process.stdout.write(formatShow(shown, new Date()));
          return EXIT.ok;
        }),
      ),
    );
}

/** A person's change to one break: its sub-command, its arguments, and the workflow call that makes it. */
interface ChangeCommand {
  name: string;
  description: string;
  args: Array<[string, string]>;
  run: (store: Store, account: string, args: string[], actor: Actor, opts: Record<string, unknown>) => Promise<Change>;
  extra?: (c: Command) => Command;
}

const CODE_AND_KEY: Array<[string, string]> = [
  ['<code>', 'rule code'],
  ['<key>', "the break's key"],
];

const CHANGES: ChangeCommand[] = [
  {
    name: 'ack',
    description:
      'acknowledge an open break with a reason: it stays listed, counted apart as explained, until its amounts change',
    args: [...CODE_AND_KEY, ['<reason>', 'why it is acceptable (quote it)']],
    run: (store, account, [code, key, reason], actor) => ack(store.db, account, code!, key!, reason!, actor),
  },
  {
    name: 'unack',
    description: 'take an acknowledgement back: the break is unexplained again',
    args: [...CODE_AND_KEY, ['[reason]', 'why (optional)']],
    run: (store, account, [code, key, reason], actor) => unack(store.db, account, code!, key!, reason || null, actor),
  },
  {
    name: 'note',
    description: 'add a note to a break (open or resolved)',
    args: [...CODE_AND_KEY, ['<text>', 'the note (quote it)']],
    run: (store, account, [code, key, text], actor) => note(store.db, account, code!, key!, text!, actor),
  },
  {
    name: 'assign',
    description: "set a break's owner (or --clear it)",
    args: [...CODE_AND_KEY, ['[owner]', 'who owns it']],
    run: (store, account, [code, key, owner], actor, opts) => {
      if (opts.clear === true && owner) throw new ConfigError(['give an owner or --clear, not both']);
      if (opts.clear !== true && !owner?.trim())
        throw new ConfigError(['the owner must not be empty (or pass --clear to remove the owner)']);
      return assign(store.db, account, code!, key!, opts.clear === true ? null : owner!, actor);
    },
    extra: (c) => c.option('--clear', 'remove the owner'),
  },
];

function registerChange(breaks: Command, change: ChangeCommand): void {
  let c = breaks.command(change.name).description(change.description);
  for (const [arg, help] of change.args) c = c.argument(arg, help);
  c = c
    .option('--by <name>', 'who records it (default: the OS user name)')
    .option('--json', 'print the result as JSON');
  if (change.extra) c = change.extra(c);
  c.action(
    action(async (...all: unknown[]) => {
      const command = all.at(-1) as Command;
      const opts = all.at(-2) as { by?: string; json?: boolean } & Record<string, unknown>;
      const values = all.slice(0, -2).map((v) => (typeof v === 'string' ? v : ''));
      const by = whoIs(opts.by);
      return withStore(command, async (store, config) => {
        const result = await change.run(store, config.account, values, { by, source: 'cli' }, opts);
        if (opts.json) printJson({ account: config.account, ...result, by });
        else process.stdout.write(`${changeLine(change.name, result, by)}\n`);
        return EXIT.ok;
      });
    }),
  );
}

/** "acknowledged P_FEE_USD 123 (by ana): explained, "rounding"", or "nothing to do: ..." when nothing changed. */
function changeLine(name: string, result: Change, by: string): string {
  const done = result.changed ? DONE[name] : 'nothing to do:';
  return `${done} ${result.code} ${result.key} (by ${by}): ${describeWorkflow(result.workflow)}`;
}

function registerImport(breaks: Command): void {
  breaks
    .command('import')
    .description(
      "record a returned workbook's filled-in Owner / Explanation / Explained? cells: only what changes; rows whose " +
        'break is gone or whose amounts changed are skipped, saying why; a file is applied once',
    )
    .argument('<workbook>', 'the .xlsx file, as finance returned it')
    .option('--by <name>', 'who filled it in (default: the OS user name)')
    .option('--json', 'print the result as JSON')
    .action(action(importWorkbookCommand));
}

async function importWorkbookCommand(file: string, opts: { by?: string; json?: boolean }, command: Command) {
  const by = whoIs(opts.by);
  return withStore(command, async (store, config) => {
    const book = await readReturnedWorkbook(file, {
      maxBytes: config.reports.maxImportBytes,
      maxUnzippedBytes: config.reports.maxImportUnzippedBytes,
    });
    const returned = { runId: book.runId, sha256: book.sha256, rows: book.rows, by };
    const result = await importReturnedRows(store.db, config.account, returned);
    if (opts.json) printJson({ account: config.account, file, ...result });
    else process.stdout.write(formatImport(basename(file), result));
    return EXIT.ok;
  });
}

function describeWorkflow(w: Change['workflow']): string {
  return `${w.status}${w.owner ? `, owner ${w.owner}` : ''}${w.explanation ? `, "${w.explanation}"` : ''}`;
}

/** Whole days since the break was first seen. */
const ageDays = (b: WorkedBreak, now: Date) =>
  Math.max(0, Math.floor((now.getTime() - b.firstSeenAt.getTime()) / 86_400_000));
const statusOf = (b: WorkedBreak) => (b.status === 'resolved' ? 'resolved' : b.workflow.status);

function listed(b: WorkedBreak, now: Date) {
  return {
    code: b.code,
    key: b.key,
    severity: b.severity,
    status: statusOf(b),
    currency: b.currency,
    expected: b.expected,
    actual: b.actual,
    difference: b.difference,
    sentence: breakSentence(b),
    ageDays: ageDays(b, now),
    firstSeenRun: b.firstSeenRun,
    lastSeenRun: b.lastSeenRun,
    resolvedRun: b.resolvedRun,
    workflow: b.workflow,
  };
}

export function formatList(list: WorkedBreak[], more: boolean, now: Date): string {
  if (list.length === 0) return 'no breaks match\n';
  const width = (f: (b: WorkedBreak) => string) => Math.max(...list.map((b) => f(b).length));
  const [wc, wk, ws, wo] = [
    width((b) => b.code),
    width((b) => b.key),
    width(statusOf),
    width((b) => b.workflow.owner ?? '-'),
  ];
  const lines = list.map((b) =>
    [
      b.severity.padEnd(6),
      b.code.padEnd(wc),
      b.key.padEnd(wk),
      statusOf(b).padEnd(ws),
      (b.workflow.owner ?? '-').padEnd(wo),
      `${ageDays(b, now)}d`.padStart(4),
      breakSentence(b),
    ].join('  '),
  );
  if (more) lines.push(`... more breaks match: raise --limit (${list.length} shown)`);
  return `${lines.join('\n')}\n`;
}

function entryLine(e: HistoryEntry): string {
  const at = e.at.toISOString().replace('.000Z', 'Z');
  const amounts = amountsWords({ ...e, currency: null });
  if (e.type === 'lifecycle') return `  ${at}  ${e.event.padEnd(14)} run ${e.runId}  ${amounts}`;
  return `  ${at}  ${e.event.padEnd(14)} ${e.by} (${e.source})${e.text ? `: ${e.text}` : ''}`;
}

export function formatShow(h: BreakHistory, now: Date): string {
  const b = h.break;
  const w = b.workflow;
  const state = b.status === 'resolved' ? `resolved in run ${b.resolvedRun}` : 'open';
  const owner = w.owner ? `  owner ${w.owner}` : '';
  const reopened = b.reopenedCount ? `, reopened ${plural(b.reopenedCount, 'time')}` : '';
  const firstSeen = `first in run ${b.firstSeenRun} (${plural(ageDays(b, now), 'day')} ago)`;
  const lines = [
    `${b.code} ${b.key}  ${b.severity}  ${state}  ${w.status}${owner}`,
    `  ${breakSentence(b)}`,
    `  amounts       expected / actual / difference: ${amountsWords(b)}`,
    `  seen          ${firstSeen}, last in run ${b.lastSeenRun}${reopened}`,
  ];
  if (w.explanation) lines.push(`  explanation   ${w.explanation}`);
  if (w.lastNote) lines.push(`  last note     ${w.lastNote} (${w.lastNoteBy}, ${w.lastNoteAt?.toISOString()})`);
  lines.push('history:');
  // A break seen night after night with the same amounts: one line for the run of them.
  for (let i = 0; i < h.events.length; i++) {
    const e = h.events[i]!;
    let j = i;
    const same = (x: HistoryEntry | undefined) =>
      x?.type === 'lifecycle' &&
      x.event === 'seen' &&
      x.expected === e.expected &&
      x.actual === e.actual &&
      x.difference === e.difference;
    if (e.type === 'lifecycle' && e.event === 'seen') while (same(h.events[j + 1])) j++;
    if (j > i + 1) {
      const last = h.events[j]! as Extract<HistoryEntry, { type: 'lifecycle' }>;
      const until = `to run ${last.runId} at ${last.at.toISOString()}`;
      lines.push(`${entryLine(e)}  (and ${j - i} more runs with the same amounts, ${until})`);
      i = j;
    } else lines.push(entryLine(e));
  }
  return `${lines.join('\n')}\n`;
}

const actionWords = (a: ImportAction) =>
  a.kind === 'assigned'
    ? `owner ${a.owner}`
    : a.kind === 'acknowledged'
      ? `explained: "${a.reason}"`
      : a.kind === 'noted'
        ? `note: "${a.text}"`
        : 'not explained any more';

export function formatImport(file: string, r: ImportResult): string {
  const book = `${file} (workbook of run ${r.runId})`;
  if (r.alreadyImported) {
    const { at, by } = r.alreadyImported;
    return `${book} already imported on ${at.toISOString()} by ${by}: nothing done\n`;
  }
  const unchanged = r.unchanged ? `, unchanged ${r.unchanged}` : '';
  const lines = [`${book}, by ${r.by}: applied ${r.applied.length}, skipped ${r.skipped.length}${unchanged}`];
  for (const a of r.applied)
    lines.push(`  applied  row ${a.row}  ${a.code} ${a.key}: ${a.actions.map(actionWords).join('; ')}`);
  for (const s of r.skipped) lines.push(`  skipped  row ${s.row}  ${s.code} ${s.key}: ${s.reason}`);
  return `${lines.join('\n')}\n`;
}
