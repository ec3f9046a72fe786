/** Issue 43, point 5 end to end: a two-account config whose every secret is a known unique string, searched for in
 * every output of `config check`, `doctor`, a good night and a failing one (stdout, logs, e-mails, workbooks, CSV,
 * stored rows), on each database. One account's failure quoting the other's keys is masked too.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db/database.js';
import { startSandboxAccounts, type SandboxAccounts } from '../helpers/sandbox.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { textPart } from '../helpers/mime.js';
import { createTestStore, storeKinds, withCliStore, type TestStore } from '../helpers/db.js';
import { brief, childEnv, freePort, runCli } from '../e2e/helpers.js';
import { recordCase } from './figures.js';
import { filesText, leakedSecrets } from './outputs.js';

/** Every secret of the group, each a string found nowhere else. */
const KEYS = {
  acme: { partnerPublicKey: 'pk-acme-Q7v1x9', partnerPrivateKey: 'sk-acme-R2m8c4', exchangeToken: 'xt-acme-T5k3w6' },
  globex: {
    partnerPublicKey: 'pk-globex-H4n2p8',
    partnerPrivateKey: 'sk-globex-J9d6f1',
    exchangeToken: 'xt-globex-L3s7b5',
  },
};
const DB_USER_PASS = 'dbpass-user-V8q2z4';
const DB_QUERY_PASS = 'dbpass-query-W1r5y7';
const SSL_PASS = 'sslpass-X6t9u3';
const SMTP_PASS = 'smtppass-Z2e4g8';
const SECRETS = [
  ...Object.values(KEYS.acme),
  ...Object.values(KEYS.globex),
  DB_USER_PASS,
  DB_QUERY_PASS,
  SSL_PASS,
  SMTP_PASS,
];

/** A Postgres URL with a password in its user part and in `password=` / `sslpassword=` (the test server trusts). */
function withPasswords(url: string): string {
  const u = new URL(url);
  u.password = DB_USER_PASS;
  u.searchParams.set('password', DB_QUERY_PASS);
  u.searchParams.set('sslpassword', SSL_PASS);
  return u.toString();
}

/** Searches an output for every secret: masked, or a leak recorded (and the test fails). */
function expectMasked(output: string, text: string): void {
  const leaked = leakedSecrets(output, text, SECRETS);
  recordCase(`secrets masked in ${output}`, leaked.length ? 'unsafe' : 'masked');
  expect(leaked, `secrets in ${output}`).toEqual([]);
}

/** A gateway in front of an API that answers every request 502, quoting another account's keys and the SMTP password. */
async function leakyGateway(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: `upstream refused ${KEYS.globex.exchangeToken} and ${KEYS.globex.partnerPrivateKey} (relay ${SMTP_PASS})`,
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

for (const kind of storeKinds)
  describe(`secrets never printed [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: SandboxAccounts;
    let smtp: Mailbox;
    let pg: TestStore | undefined;
    let dir: string;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      sandbox = await startSandboxAccounts({
        accounts: [
          { name: 'acme', ...KEYS.acme },
          { name: 'globex', ...KEYS.globex },
        ],
        days: 2,
        ordersPerDay: 10,
        fillsPerOrder: 2,
        exchangeOrdersPerDay: 10,
        faults: 'none',
      });
      const port = await freePort();
      smtp = mailbox({ login: { user: 'mailer', pass: SMTP_PASS } });
      await smtp.listen(port);
      if (kind === 'postgres') pg = await createTestStore('postgres');
      dir = mkdtempSync(join(tmpdir(), `rr-security-secrets-${kind}-`));
      writeFileSync(
        join(dir, 'config.json'),
        JSON.stringify({
          accounts: [
            { name: 'acme', email: { to: ['acme-finance@example.test'] } },
            { name: 'globex', email: { to: ['globex-finance@example.test'] } },
          ],
          partner: { feeRate: sandbox.accounts.acme!.partnerFeeRate },
          email: { from: 'recon@example.test', to: ['group-finance@example.test'] },
          http: { maxRetries: 0, connectTimeoutMs: 2_000 },
        }),
      );
      env = childEnv({
        ...sandbox.env,
        RAMP_RECON_DATA_DIR: join(dir, 'data'),
        REPORTS_DIR: join(dir, 'reports'),
        RAMP_RECON_CONFIG: join(dir, 'config.json'),
        DATABASE_URL: pg ? withPasswords(pg.url!) : undefined,
        SMTP_URL: `smtp://mailer:${SMTP_PASS}@127.0.0.1:${port}`,
        // Every log line, nested fields included.
        LOG_LEVEL: 'debug',
      });
    });

    afterAll(async () => {
      await smtp?.close();
      await sandbox?.close();
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The database the CLI wrote: the test's schema, or the embedded folder while no CLI runs. */
    const withDb = <T>(fn: (store: Store) => Promise<T>): Promise<T> => withCliStore(pg, join(dir, 'data'), fn);

    /** Every stored row of the runs, their batches and the quarantine, as text. */
    const storedRows = () =>
      withDb(async (store) => {
        const rows = [];
        for (const table of ['run', 'batch', 'batch_account', 'quarantine'])
          rows.push(...(await sql`select * from ${sql.table(table)}`.execute(store.db)).rows);
        return JSON.stringify(rows);
      });

    /** Every mail taken since `from`: raw, and its text and HTML parts decoded. */
    const mailsText = (from: number) =>
      smtp.mails
        .slice(from)
        .map((m) => [m, textPart(m, 'text/plain'), textPart(m, 'text/html')].join('\n'))
        .join('\n');

    const reportsText = async () =>
      (await filesText(join(dir, 'reports'))).map((f) => `${f.path}\n${f.text}`).join('\n');

    it('config check and doctor mask every key and password', async () => {
      const check = await runCli(['config', 'check'], env);
      expect(check.code, brief(check.stderr)).toBe(0);
      expectMasked(`config check [${kind}]`, check.stdout + check.stderr);
      const doctor = await runCli(['doctor', '--json', '--timeout-ms', '5000'], env);
      expect(doctor.stdout).toContain('"checks"');
      expectMasked(`doctor [${kind}]`, doctor.stdout + doctor.stderr);
      // A database that refuses: its URL, passwords and all, in doctor's and the run's words.
      const away = childEnv({
        ...env,
        DATABASE_URL: withPasswords('postgres://recon@127.0.0.1:1/recon'),
      });
      const down = await runCli(['doctor', '--json', '--timeout-ms', '1000'], away);
      expect(down.code).toBe(2);
      expectMasked(`doctor, database unreachable [${kind}]`, down.stdout + down.stderr);
      const refused = await runCli(['run', '--json'], away);
      expect(refused.code).not.toBe(0);
      expectMasked(`run, database unreachable [${kind}]`, refused.stdout + refused.stderr);
    });

    it('a night of both accounts: stdout, logs, e-mails, workbooks, CSV and stored rows hold no secret', async () => {
      const run = await runCli(['run', '--json'], env);
      expect(run.code, brief(run.stderr)).toBe(0);
      expect(smtp.mails.length).toBe(3);
      expect(run.stderr.split('\n').filter((l) => l.startsWith('{')).length).toBeGreaterThan(10);
      expectMasked(`run --json [${kind}]`, run.stdout);
      expectMasked(`run logs [${kind}]`, run.stderr);
      expectMasked(`run e-mails [${kind}]`, mailsText(0));
      expectMasked(`run workbooks and CSV [${kind}]`, await reportsText());
      expectMasked(`run stored rows [${kind}]`, await storedRows());
    });

    it("a failing night: one account's API down, the other's gateway quoting the first one's keys", async () => {
      const gateway = await leakyGateway();
      const closed = await freePort();
      try {
        const mailsBefore = smtp.mails.length;
        const failing = childEnv({
          ...env,
          ACME_EXCHANGE_API_URL: `${gateway.url}/v3/exchange`,
          GLOBEX_PARTNER_API_URL: `http://127.0.0.1:${closed}/partner-gateway/partner-api`,
        });
        const run = await runCli(['run', '--json'], failing);
        expect(run.code, brief(run.stderr)).toBe(1);
        // acme's failure quotes globex's keys: masked although acme's run knows only its own.
        const summary = JSON.parse(run.stdout) as { accounts?: Array<{ account: string; status: string }> };
        expect(JSON.stringify(summary)).toContain('502');
        expectMasked(`failing run --json [${kind}]`, run.stdout);
        expectMasked(`failing run logs [${kind}]`, run.stderr);
        expect(smtp.mails.length).toBeGreaterThan(mailsBefore);
        expectMasked(`failing run e-mails [${kind}]`, mailsText(mailsBefore));
        expectMasked(`failing run workbooks and CSV [${kind}]`, await reportsText());
        const rows = await storedRows();
        // The gateway's answer reached the stored errors, its keys masked.
        expect(rows).toContain('upstream refused ******** and ********');
        expectMasked(`failing run stored run and batch rows [${kind}]`, rows);
        const runs = await runCli(['runs', '--account', 'acme'], env);
        expectMasked(`runs listing [${kind}]`, runs.stdout + runs.stderr);
      } finally {
        await gateway.close();
      }
    });
  });
