/** `ramp-recon sandbox`: serves the simulated Partner and Exchange APIs, loaded on demand from sandbox/. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { AppError, ConfigError } from '../../errors.js';
import { action } from '../context.js';
import type { SandboxOptions } from '../../../sandbox/index.js';

/**
 * The simulator lives outside the product code (sandbox/ at the checkout's root) and is not in the
 * production image: loaded on demand, with a plain message where it is absent.
 */
async function loadSandbox(): Promise<typeof import('../../../sandbox/index.js')> {
  try {
    return await import('../../../sandbox/index.js');
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new AppError(
      'SANDBOX_MISSING',
      'the sandbox is not part of this installation (the production image ships without it); run `npx ramp-recon ' +
        'sandbox` from a checkout',
      2,
      { cause: err },
    );
  }
}

interface SandboxFlags {
  port: string;
  host: string;
  seed: string;
  days: string;
  ordersPerDay: string;
  fillsPerOrder: string;
  exchangeOrdersPerDay: string;
  depositsPerDay: string;
  withdrawalsPerDay: string;
  discrepancies?: boolean;
  stateChanges?: boolean;
  faults: string;
  live?: boolean;
  webhookUrl?: string;
  fillsOrder: string;
  execIdBound: string;
  fromBound: string;
  toBound: string;
  partnerToBound: string;
  sameMsOrder: string;
  now?: string;
  webhookGapDueIn?: string;
  accounts?: string;
}

function int(name: string, v: string, min: number, problems: string[]): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    problems.push(`--${name}: must be an integer >= ${min} (got ${JSON.stringify(v)})`);
  return n;
}

function oneOf<T extends string>(name: string, v: string, allowed: readonly T[], problems: string[]): T {
  if (!allowed.includes(v as T))
    problems.push(`--${name}: must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`);
  return v as T;
}

export function register(program: Command): void {
  program
    .command('sandbox')
    .description(COMMAND_INFO['sandbox'].description)
    .option('--port <n>', 'port to listen on (0 = any free port)', '4010')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--seed <n>', 'PRNG seed', '1')
    .option('--days <n>', 'full UTC days of history before today', '7')
    .option('--orders-per-day <n>', 'partner orders per day', '40')
    .option('--fills-per-order <n>', 'mean fills per filled exchange order', '3')
    .option('--exchange-orders-per-day <n>', 'exchange orders per day', '40')
    .option('--deposits-per-day <n>', 'exchange deposits per day (besides partner orders paid to us)', '4')
    .option('--withdrawals-per-day <n>', 'exchange withdrawals per day', '3')
    .option('--discrepancies', 'plant one case of every rule code (GET /_sandbox/expected-breaks lists them)')
    .option(
      '--state-changes',
      'a deposit UNCONFIRMED and a withdrawal PENDING at the first GET /accounts, COMPLETED and REFUNDED (credited ' +
        'back) at the second',
    )
    .option('--faults <profile>', 'fault injection: none | default', 'none')
    .option('--live', 'keep trading, depositing and withdrawing as wall-clock time passes')
    .option(
      '--webhook-url <url>',
      "deliver partner order events to this URL (with --accounts: the receiver's base URL, each account's events " +
        'to <url>/webhooks/<account>)',
    )
    .option(
      '--fills-order <order>',
      'order of a /fills page requested with fromExecId: newest-first | oldest-first',
      'newest-first',
    )
    .option('--exec-id-bound <bound>', 'fromExecId/toExecId: inclusive | exclusive', 'inclusive')
    .option('--from-bound <bound>', 'exchange from=: inclusive | exclusive', 'inclusive')
    .option('--to-bound <bound>', 'exchange to=: inclusive | exclusive', 'exclusive')
    .option('--partner-to-bound <bound>', 'partner to date: exclusive | inclusive', 'exclusive')
    .option('--same-ms-order <order>', 'records of one millisecond in newest-first lists: id-desc | id-asc', 'id-desc')
    .option(
      '--webhook-gap-due-in <ms>',
      'plant a partner order without its COMPLETED webhook whose 3-day retry window passes this many ms from now ' +
        '(negative: already past)',
    )
    .option('--now <iso>', 'anchor of the history instead of the wall clock (ISO date-time)')
    .option(
      '--accounts <names>',
      'serve several accounts on the one port, comma-separated (e.g. acme,globex): each its own data (seed + i) and ' +
        'keys, printed as <NAME>_PARTNER_API_URL, ...',
    )
    .action(
      action(async (flags: SandboxFlags) => {
        const problems: string[] = [];
        const bounds = ['inclusive', 'exclusive'] as const;
        const options: Partial<SandboxOptions> & { port: number; host: string } = {
          port: int('port', flags.port, 0, problems),
          host: flags.host,
          seed: int('seed', flags.seed, 0, problems),
          days: int('days', flags.days, 0, problems),
          ordersPerDay: int('orders-per-day', flags.ordersPerDay, 0, problems),
          fillsPerOrder: int('fills-per-order', flags.fillsPerOrder, 1, problems),
          exchangeOrdersPerDay: int('exchange-orders-per-day', flags.exchangeOrdersPerDay, 0, problems),
          depositsPerDay: int('deposits-per-day', flags.depositsPerDay, 0, problems),
          withdrawalsPerDay: int('withdrawals-per-day', flags.withdrawalsPerDay, 0, problems),
          discrepancies: flags.discrepancies === true,
          stateChanges: flags.stateChanges === true,
          faults: oneOf('faults', flags.faults, ['none', 'default'] as const, problems),
          live: flags.live === true,
          fillsOrder: oneOf('fills-order', flags.fillsOrder, ['newest-first', 'oldest-first'] as const, problems),
          execIdBound: oneOf('exec-id-bound', flags.execIdBound, bounds, problems),
          exchangeFromBound: oneOf('from-bound', flags.fromBound, bounds, problems),
          exchangeToBound: oneOf('to-bound', flags.toBound, bounds, problems),
          partnerToBound: oneOf('partner-to-bound', flags.partnerToBound, bounds, problems),
          sameMsOrder: oneOf('same-ms-order', flags.sameMsOrder, ['id-desc', 'id-asc'] as const, problems),
        };
        if (flags.webhookUrl !== undefined) {
          if (!/^https?:\/\//.test(flags.webhookUrl))
            problems.push('--webhook-url: must be an http:// or https:// URL');
          options.webhookUrl = flags.webhookUrl;
        }
        if (flags.webhookGapDueIn !== undefined) {
          const ms = Number(flags.webhookGapDueIn);
          if (!Number.isInteger(ms))
            problems.push(
              `--webhook-gap-due-in: must be an integer number of ms (got ${JSON.stringify(flags.webhookGapDueIn)})`,
            );
          options.webhookGapDueInMs = ms;
        }
        if (flags.now !== undefined) {
          const d = new Date(flags.now);
          if (Number.isNaN(d.getTime())) problems.push(`--now: not a date-time (got ${JSON.stringify(flags.now)})`);
          options.now = d;
        }
        if (options.discrepancies && (options.days ?? 0) < 2) problems.push('--discrepancies: needs --days 2 or more');
        const names = flags.accounts?.split(',').map((n) => n.trim());
        if (names) {
          // The naming rule (variable prefixes) is the sandbox's: loaded here to check the names.
          const { accountNameProblems } = await loadSandbox();
          for (const p of accountNameProblems(names))
            problems.push(`--accounts: ${p} (got ${JSON.stringify(flags.accounts)})`);
        }
        if (problems.length) throw new ConfigError(problems);
        const started = Date.now();
        const sandboxModule = await loadSandbox();
        if (names) return serveAccounts(sandboxModule, options, names, started);
        const sandbox = await sandboxModule.startSandbox(options);
        const out = process.stdout;
        out.write(`# ramp-recon sandbox listening on ${sandbox.url} (generated in ${Date.now() - started} ms)\n`);
        for (const [k, v] of Object.entries(sandbox.env)) out.write(`export ${k}=${v}\n`);
        out.write(`# suggested config: {"partner": {"feeRate": "${sandbox.partnerFeeRate}"}}\n`);
        out.write(
          `# fills: ${sandbox.data.fills().length}, partner orders: ${sandbox.data.partnerOrderRecords().length}, expected breaks: ${sandbox.expectedBreaks().length} (GET ${sandbox.url}/_sandbox/expected-breaks)\n`,
        );
        await untilSignal();
        await sandbox.close();
      }),
    );
}

/** `--accounts`: every account on one port, its variables under its prefix, until SIGINT / SIGTERM. */
async function serveAccounts(
  sandboxModule: Awaited<ReturnType<typeof loadSandbox>>,
  options: Partial<SandboxOptions> & { port: number; host: string },
  names: string[],
  started: number,
): Promise<void> {
  const group = await sandboxModule.startSandboxAccounts({ ...options, accounts: names.map((name) => ({ name })) });
  const out = process.stdout;
  out.write(
    `# ramp-recon sandbox listening on ${group.url} for accounts ${names.join(', ')} (generated in ${Date.now() - started} ms)\n`,
  );
  for (const name of names) {
    const prefix = sandboxModule.envPrefix(name);
    out.write(`# account ${name}\n`);
    for (const k of Object.keys(group.accounts[name]!.env))
      out.write(`export ${prefix}${k}=${group.env[prefix + k]}\n`);
  }
  const config = {
    accounts: names.map((name) => ({ name, partner: { feeRate: group.accounts[name]!.partnerFeeRate } })),
  };
  out.write(`# suggested config: ${JSON.stringify(config)}\n`);
  for (const name of names) {
    const sandbox = group.accounts[name]!;
    out.write(
      `# ${name}: fills: ${sandbox.data.fills().length}, partner orders: ${sandbox.data.partnerOrderRecords().length}, expected breaks: ${sandbox.expectedBreaks().length} (GET ${group.url}/_sandbox/expected-breaks?account=${encodeURIComponent(name)})\n`,
    );
    if (sandbox.options.webhookUrl) out.write(`# ${name}: webhooks delivered to ${sandbox.options.webhookUrl}\n`);
  }
  await untilSignal();
  await group.close();
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
