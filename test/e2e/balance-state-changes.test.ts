import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds } from '../helpers/db.js';
import { type CliWorld, brief, openCliWorld, runCli } from './helpers.js';

interface Summary {
  runId: string;
  status: string;
  breaks: Array<{ code: string; key: string; expected?: string; actual?: string; difference?: string }>;
  report: string | null;
}

/**
 * Issue 14, point 1, end to end through the CLI: a deposit UNCONFIRMED at the first balance
 * snapshot and COMPLETED before the second (credited between them), and a withdrawal PENDING at the
 * first (debited) and REFUNDED before the second (credited back). Two runs, two snapshots: the
 * roll-forward places both state changes in that pair, so no E_BALANCE_ROLL.
 */
const SANDBOX = { seed: 14, days: 2, ordersPerDay: 6, fillsPerOrder: 2, exchangeOrdersPerDay: 10 };

for (const kind of storeKinds) {
  describe(`roll-forward across deposit and withdrawal state changes [${kind}]`, { timeout: 240_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    const today = toDay(new Date());
    const periodArgs = ['--from', addDays(today, -SANDBOX.days), '--to', addDays(today, 1)];

    beforeAll(async () => {
      sandbox = await startSandbox({
        ...SANDBOX,
        stateChanges: true,
        discrepancies: false,
        live: false,
        faults: 'none',
      });
      world = await openCliWorld(kind, 'state-changes', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    const run = async (): Promise<Summary> => {
      const result = await runCli(['run', ...periodArgs, '--json', '--no-email'], world!.env);
      expect(result.code, brief(result.stderr)).toBe(0);
      return JSON.parse(result.stdout) as Summary;
    };

    it('two runs across the state changes: no false E_BALANCE_ROLL, the Balances sheet says what was placed by state change', async () => {
      const deposit = () => sandbox.data.deposits().find((d) => d.amount === '0.04200000' && d.currency === 'BTC')!;
      const withdrawal = () => sandbox.data.withdrawals().find((w) => w.amount === '1500.00' && w.currency === 'USD')!;
      expect(deposit().state).toBe('UNCONFIRMED');
      expect(withdrawal().state).toBe('PENDING');

      const first = await run();
      expect(first.status).toBe('succeeded');
      expect(first.breaks.filter((b) => b.code === 'E_BALANCE_ROLL')).toEqual([]);
      // The first run's snapshot saw them UNCONFIRMED / PENDING; the second /accounts changes them.
      const second = await run();
      expect(second.status).toBe('succeeded');
      expect(deposit().state).toBe('COMPLETED');
      expect(withdrawal().state).toBe('REFUNDED');
      expect(second.breaks.filter((b) => b.code === 'E_BALANCE_ROLL')).toEqual([]);
      expect(second.breaks).toEqual([]);

      // The Balances sheet: the latest pair's BTC deposit and USD refund, placed by state change.
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.readFile(second.report!);
      const sheet = workbook.getWorksheet('Balances')!;
      const headers = (sheet.getRow(1).values as unknown[]).map((v) => String(v ?? ''));
      const col = (name: string) => headers.indexOf(name);
      const firstRowOf = (currency: string) => {
        for (let i = 2; i <= sheet.rowCount; i++)
          if (sheet.getRow(i).getCell(col('Currency')).value === currency) return sheet.getRow(i);
        throw new Error(`no Balances row for ${currency}`);
      };
      const btc = firstRowOf('BTC');
      expect(Number(btc.getCell(col('Deposits placed by state change')).value)).toBe(0.042);
      const usd = firstRowOf('USD');
      expect(Number(usd.getCell(col('Withdrawals placed by state change')).value)).toBeLessThan(-1500);
      expect(Number(usd.getCell(col('Residual')).value)).toBe(0);
    });
  });
}
