import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { attachment, header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { brief, childEnv, freePort, runCli } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

/** The small relay's limit, as its EHLO states it (SIZE) and as it enforces it: 552 5.3.4 after DATA, as Postfix does. */
const RELAY_LIMIT = 60_000;
/** A relay that takes this workbook. */
const LARGE_RELAY_LIMIT = 5_000_000;

for (const kind of storeKinds)
  describe(`a mailed report that never bounces: a relay with a size limit [${kind}]`, { timeout: 240_000 }, () => {
    let sandbox: Sandbox;
    let pg: TestStore | undefined;
    let dir: string;
    let env: NodeJS.ProcessEnv;
    let relay: Mailbox;
    let largeRelay: Mailbox;
    let largePort: number;
    const today = toDay(new Date());
    const periodArgs = ['--from', addDays(today, -2), '--to', today];
    const configWith = (maxMessageBytes?: number) => {
      const file = join(dir, `config-${maxMessageBytes ?? 'default'}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          partner: { feeRate: sandbox.partnerFeeRate ?? '0.01' },
          email: { from: 'recon@example.com', to: ['finance-ops@example.com'], maxMessageBytes },
        }),
      );
      return { ...env, RAMP_RECON_CONFIG: file };
    };

    beforeAll(async () => {
      sandbox = await startSandbox({
        seed: 5,
        days: 2,
        ordersPerDay: 40,
        fillsPerOrder: 2,
        discrepancies: true,
        live: false,
        faults: 'none',
      });
      dir = mkdtempSync(join(tmpdir(), 'rr-e2e-size-'));
      if (kind === 'postgres') pg = await createTestStore('postgres');
      const port = await freePort();
      relay = mailbox({ size: RELAY_LIMIT });
      await relay.listen(port);
      largePort = await freePort();
      largeRelay = mailbox({ size: LARGE_RELAY_LIMIT });
      await largeRelay.listen(largePort);
      env = childEnv({
        ...sandbox.env,
        RAMP_RECON_DATA_DIR: join(dir, 'data'),
        REPORTS_DIR: join(dir, 'reports'),
        DATABASE_URL: pg?.url,
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
      });
    });

    afterAll(async () => {
      await relay?.close();
      await largeRelay?.close();
      await sandbox?.close();
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('over the relay limit: refused with 552, sent again without the workbook, saying why and where it is; `deliver` attaches it when it fits; email.maxMessageBytes keeps it off before sending', async () => {
      // The default email.maxMessageBytes (10 MB) is above this relay's limit: the relay refuses, the run still delivers.
      const run = await runCli(['run', ...periodArgs, '--json'], configWith());
      expect(run.code, brief(run.stderr)).toBe(0);
      const summary = JSON.parse(run.stdout) as { runId: string; status: string; report: string; partial: boolean };
      expect(summary.status).toBe('succeeded');
      expect(summary.partial).toBe(false);
      const workbookBytes = statSync(summary.report).size;
      // Base64 makes the message about 4/3 of the workbook: it cannot fit this relay.
      expect(workbookBytes * (4 / 3)).toBeGreaterThan(RELAY_LIMIT);
      expect(relay.refused).toHaveLength(1);
      expect(relay.refused[0]).toBeGreaterThan(RELAY_LIMIT);
      expect(relay.mails).toHaveLength(1);
      const name = summary.report.split('/').pop()!;
      const first = relay.mails[0]!;
      expect(first.length).toBeLessThanOrEqual(RELAY_LIMIT);
      expect(first).not.toMatch(/Content-Disposition: attachment/i);
      expect(header(first, 'Subject')).toMatch(/open break/);
      const text = textPart(first, 'text/plain');
      const refusal = new RegExp(
        `The workbook ${name.replace(/\./g, '\\.')} is not attached: the mail relay refused the message with it ` +
          '\\((\\d+) kB\\) as too large: 552 5\\.3\\.4 Message size exceeds fixed limit;',
      ).exec(text);
      expect(refusal, text).not.toBeNull();
      // The size it states is the message's, within the relay's counting of line ends.
      expect(Math.abs(Number(refusal![1]) - relay.refused[0]! / 1_000)).toBeLessThan(2);
      // where it is, and where every record of the period is (the detail folder beside it): on the last line only
      const where =
        `Where the files are, on ${hostname()}: the workbook ${summary.report}; every record of the period in ` +
        `${summary.report.replace(/\.xlsx$/, '_detail')} (one gzip CSV per data sheet).`;
      expect(text.trimEnd().split(/\r?\n/).at(-1)).toBe(where);
      expect(text.split(/\r?\n/).filter((l) => l.includes(summary.report.replace(/\.xlsx$/, '')))).toEqual([where]);
      expect(textPart(first, 'text/html')).toContain(where);
      expect(existsSync(join(summary.report.replace(/\.xlsx$/, '_detail'), 'fills.csv.gz'))).toBe(true);
      expect(run.stderr).toMatch(/report delivered without the workbook/);

      // email.maxMessageBytes below the message: measured before sending, so the relay refuses nothing.
      const small = await runCli(['deliver', summary.runId], configWith(RELAY_LIMIT - 10_000));
      expect(small.code, small.stderr).toBe(0);
      expect(small.stdout).toMatch(
        new RegExp(
          `^run ${summary.runId} delivered to finance-ops@example.com without the workbook: (the message with it ` +
            `would be \\d+ kB|the workbook alone takes \\d+ kB in a message), over email\\.maxMessageBytes \\(50 kB, what the mail relay is taken to accept\\)\\n$`,
        ),
      );
      expect(relay.refused).toHaveLength(1);
      expect(relay.mails).toHaveLength(2);
      expect(relay.mails[1]!).not.toMatch(/Content-Disposition: attachment/i);
      expect(textPart(relay.mails[1]!, 'text/plain')).toContain(
        `Where the files are, on ${hostname()}: the workbook ${summary.report};`,
      );

      // Asked for: without the workbook whatever its size.
      const asked = await runCli(['deliver', summary.runId, '--no-attachment'], configWith());
      expect(asked.code, asked.stderr).toBe(0);
      expect(asked.stdout).toContain('without the workbook: sent without it on request');
      expect(relay.mails).toHaveLength(3);
      expect(relay.mails[2]!).not.toMatch(/Content-Disposition: attachment/i);

      const runs = JSON.parse((await runCli(['runs', '--json', '--limit', '1'], configWith())).stdout) as Array<{
        delivered: boolean;
      }>;
      expect(runs[0]).toMatchObject({ delivered: true });

      // A relay that takes it: the same run's workbook is attached, byte for byte.
      const fits = await runCli(['deliver', summary.runId], {
        ...configWith(),
        SMTP_URL: `smtp://127.0.0.1:${largePort}`,
      });
      expect(fits.code, fits.stderr).toBe(0);
      expect(fits.stdout).toBe(`run ${summary.runId} delivered to finance-ops@example.com\n`);
      expect(largeRelay.refused).toEqual([]);
      expect(largeRelay.mails).toHaveLength(1);
      const mail = largeRelay.mails[0]!;
      expect(attachment(mail, name).bytes.equals(readFileSync(summary.report))).toBe(true);
      expect(textPart(mail, 'text/plain')).toContain(`The workbook ${name} is attached;`);
      expect(textPart(mail, 'text/plain')).toContain(
        `Where the files are, on ${hostname()}: the workbook ${summary.report};`,
      );
      expect(textPart(mail, 'text/plain')).not.toContain('is not attached');
    });
  });
