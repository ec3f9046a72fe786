/** Every command's name, arguments and description: the root --help lists them without loading any command (a fast
 * start).
 */

export interface CommandInfo {
  /** Arguments as commander declares them ('[runId]', '<runId>'), '' for none. */
  args: string;
  description: string;
}

/** In the order `--help` lists them; each command module takes its description from here. */
export const COMMAND_INFO = {
  run: {
    args: '',
    description:
      'sync both sources, reconcile, write the workbook and e-mail it, for a period of UTC days (default: yesterday)',
  },
  sync: {
    args: '',
    description:
      'fetch from the Partner and/or Exchange API into the database, without reconciling (a run record is kept)',
  },
  reconcile: {
    args: '',
    description:
      'check the stored data of a period against every rule and update the breaks, without syncing (a run record is ' +
      'kept)',
  },
  report: {
    args: '[runId]',
    description:
      'write the Excel workbook of a run and its detail folder (every record of the period, gzip CSV) to REPORTS_DIR ' +
      '(default: the latest run that reconciled) and print their paths',
  },
  deliver: {
    args: '<runId>',
    description: "e-mail a run's workbook (retries a failed delivery); needs SMTP_URL, email.from and email.to",
  },
  schedule: {
    args: '',
    description:
      'stay up and fire `run` for the previous UTC day by schedule.cron in schedule.timezone (default 02:00 UTC ' +
      'daily), exactly as `run` does',
  },
  worker: {
    args: '',
    description:
      'take account jobs from the queue in the shared Postgres (pg-boss) and run them, on any number of machines; ' +
      'stops gracefully on SIGTERM',
  },
  enqueue: {
    args: '',
    description:
      "plan a batch for the workers (one job per account) and print its id; --wait waits for the batch's group report",
  },
  runs: {
    args: '',
    description: 'list past runs, newest first: period, status, stage timings, counts, open breaks, workbook, delivery',
  },
  breaks: {
    args: '',
    description:
      'work the breaks: list and show them with their history, acknowledge (explain) one with a reason, note, assign ' +
      'an owner, import a returned workbook',
  },
  close: {
    args: '',
    description:
      'sign off a period of UTC days (month-end close): record who, when, the open breaks and an evidence digest, ' +
      'and write the signed workbook to REPORTS_DIR/signed',
  },
  verify: {
    args: '[closeId]',
    description:
      "recompute a close's evidence digest and list every record changed since the sign-off (exit 1); --audit " +
      'checks the audit log',
  },
  reopen: { args: '<closeId>', description: 'reopen a signed period, with who and why (--by, --reason)' },
  closes: {
    args: '',
    description: 'list the period closes with their state: signed, changed since sign-off, reopened',
  },
  'serve-webhooks': {
    args: '',
    description:
      'receive partner order events over HTTP(S) (HTTPS when webhooks.tlsCertFile/tlsKeyFile are set); accepts only ' +
      'the configured sender addresses; with several accounts, one URL per account: POST /webhooks/<account>; ' +
      'stops cleanly on SIGTERM/SIGINT',
  },
  migrate: {
    args: '',
    description: 'create or update the database schema (embedded under ./data when DATABASE_URL is not set)',
  },
  config: { args: '', description: 'inspect the configuration' },
  doctor: {
    args: '',
    description:
      'prove the set-up: validate the config, then try the database, both APIs, SMTP and the webhook port for real ' +
      '(exit 2 on a problem)',
  },
  sandbox: {
    args: '',
    description: 'serve a simulated Partner API and Exchange API on localhost from deterministic generated data',
  },
} as const satisfies Record<string, CommandInfo>;

export type CommandName = keyof typeof COMMAND_INFO;
