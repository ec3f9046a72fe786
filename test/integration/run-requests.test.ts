import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRuns, listRuns } from '../../src/cli/commands/runs.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { NO_FAULTS } from '../../sandbox/faults.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';

/**
 * A run records the requests it made per API and endpoint, equal to what the services saw
 * (every attempt, retries included), each at the rate limit of its class of call; `runs --json`
 * lists them and the workbook's Summary shows the same table.
 */
const SANDBOX = { seed: 12, days: 2, ordersPerDay: 6, fillsPerOrder: 2 };
/** Distinct rates, so each endpoint's class shows in the record (and the test is not paced). */
const RATES = { partnerPublic: 500, partnerPrivate: 900, exchange: 700 };
type Counts = Record<string, Record<string, number>>;

/** The sandbox sees concrete paths; the run records templates. */
function template(api: 'partner' | 'exchange', path: string): string {
  if (api === 'partner') return path.startsWith('/orders/') ? '/orders/{id}' : path;
  return path.replace(/^\/(orders|deposits|withdrawals)\/[^/]+$/, '/$1/{id}');
}

for (const kind of storeKinds) {
  describe(`run requests per endpoint [${kind}]`, { timeout: 180_000 }, () => {
    let sandbox: Sandbox;
    let test: TestStore;
    let config: Config;
    let dir: string;
    let seen: Counts = {};
    const today = toDay(new Date());
    const period = { from: addDays(today, -SANDBOX.days), to: addDays(today, 1) };

    beforeAll(async () => {
      test = await createTestStore(kind);
      dir = mkdtempSync(join(tmpdir(), 'rr-requests-'));
      // Some 503s, so that retries are counted as requests and shown apart; the planted cases
      // leave partner orders open and fills without their order (exchange /orders/{id}).
      sandbox = await startSandbox({
        ...SANDBOX,
        discrepancies: true,
        live: false,
        faults: { ...NO_FAULTS, serverError503: 0.04 },
      });
      sandbox.onRequest(({ api, method, path }) => {
        const endpoint = `${method} ${template(api, path)}`;
        const byApi = (seen[api] ??= {});
        byApi[endpoint] = (byApi[endpoint] ?? 0) + 1;
      });
      const configPath = join(dir, 'config.json');
      writeFileSync(
        configPath,
        JSON.stringify({
          partner: { publicRateLimitPerSecond: RATES.partnerPublic, privateRateLimitPerSecond: RATES.partnerPrivate },
          exchange: { rateLimitPerSecond: RATES.exchange },
          http: { retryBaseMs: 5, retryMaxMs: 20 },
        }),
      );
      config = loadConfig({ env: { ...sandbox.env, REPORTS_DIR: join(dir, 'reports') }, configPath });
    });

    afterAll(async () => {
      await sandbox?.close();
      await test?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const run = async (p = period) => {
      seen = {};
      const result = await runPipeline(
        { store: test.store, config, logger: silentLogger() },
        { period: p, trigger: 'cli', email: false },
      );
      expect(result.status, result.error).toBe('succeeded');
      return { result, seen };
    };

    it('records per endpoint what the sandbox served, at the class rates; runs and the Summary show it', async () => {
      // The second run, of today only, refreshes the partner orders of earlier days left open.
      await run();
      const { result, seen: served } = await run({ from: today, to: addDays(today, 1) });

      const [listing] = await listRuns(test.store.db, config.account, 1);
      expect(listing!.runId).toBe(result.runId);
      const recorded: Counts = Object.fromEntries(
        Object.entries(listing!.requests).map(([api, endpoints]) => [
          api,
          Object.fromEntries(Object.entries(endpoints).map(([e, c]) => [e, c.requests])),
        ]),
      );
      expect(recorded).toEqual(served);
      // (The partner's open orders of past days are refreshed by listing their day when that is
      // cheaper, as here; test/unit/partner-api.test.ts checks that GET /orders/{id} is metered.)
      expect(Object.keys(served.partner ?? {})).toEqual(expect.arrayContaining(['GET /currencies', 'GET /orders']));
      expect(Object.keys(served.exchange ?? {})).toEqual(
        expect.arrayContaining(['GET /fills', 'GET /orders', 'GET /orders/{id}', 'GET /accounts']),
      );

      // Each endpoint at the rate of its class; the time is requests / rate, summed per API.
      const partner = listing!.requests.partner!;
      const exchange = listing!.requests.exchange!;
      expect(partner['GET /currencies']!.perSecond).toBe(RATES.partnerPublic);
      expect(partner['GET /orders']!.perSecond).toBe(RATES.partnerPrivate);
      for (const e of Object.values(exchange)) expect(e.perSecond).toBe(RATES.exchange);
      const orders = partner['GET /orders']!;
      expect(orders.seconds).toBe(Math.round((orders.requests / RATES.partnerPrivate) * 1000) / 1000);
      const publicRequests = Object.values(partner)
        .filter((e) => e.perSecond === RATES.partnerPublic)
        .reduce((n, e) => n + e.requests, 0);
      const privateRequests = Object.values(partner)
        .filter((e) => e.perSecond === RATES.partnerPrivate)
        .reduce((n, e) => n + e.requests, 0);
      const exchangeRequests = Object.values(served.exchange!).reduce((n, c) => n + c, 0);
      const t = listing!.requestTotals;
      expect(t.apis.partner!.requests).toBe(publicRequests + privateRequests);
      expect(t.apis.partner!.seconds).toBeCloseTo(
        publicRequests / RATES.partnerPublic + privateRequests / RATES.partnerPrivate,
        3,
      );
      expect(t.apis.exchange!.requests).toBe(exchangeRequests);
      expect(t.apis.exchange!.seconds).toBeCloseTo(exchangeRequests / RATES.exchange, 3);
      expect(t.all.requests).toBe(publicRequests + privateRequests + exchangeRequests);
      // Retries are requests too (the sandbox saw them), and shown apart.
      expect(t.all.retries).toBeGreaterThan(0);
      expect(t.all.retries).toBe(
        Object.values(listing!.requests)
          .flatMap((e) => Object.values(e))
          .reduce((n, e) => n + e.retries, 0),
      );

      // `runs --json` prints the listing as JSON; the text has one requests line per run.
      const json = JSON.parse(JSON.stringify([listing])) as Array<{
        requests: Record<string, Record<string, { requests: number }>>;
      }>;
      expect(json[0]!.requests.exchange!['GET /fills']!.requests).toBe(served.exchange!['GET /fills']);
      const text = formatRuns([listing!]);
      expect(text).toContain(
        `    requests  partner ${t.apis.partner!.requests}${retriesText(t.apis.partner!.retries)} ${t.apis.partner!.seconds.toFixed(1)}s at ${RATES.partnerPublic}/s+${RATES.partnerPrivate}/s; exchange ${t.apis.exchange!.requests}${retriesText(t.apis.exchange!.retries)} ${t.apis.exchange!.seconds.toFixed(1)}s at ${RATES.exchange}/s; total ${t.all.requests}`,
      );

      // The JSON summary of the run carries the same record.
      expect(result.summary.requests).toEqual(
        Object.fromEntries(
          Object.entries(listing!.requests).map(([api, es]) => [
            api,
            Object.fromEntries(Object.entries(es).map(([e, { seconds: _s, ...c }]) => [e, c])),
          ]),
        ),
      );

      // The workbook's Summary: the "API requests" table, row for row.
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(result.reportPath!);
      const rows: unknown[][] = [];
      wb.getWorksheet('Summary')!.eachRow((row) => rows.push((row.values as unknown[]).slice(1, 7)));
      const start = rows.findIndex((r) => r[0] === 'API requests');
      expect(rows[start + 1]).toEqual([
        'API',
        'Endpoint',
        'Requests',
        'Retries',
        'Rate limit (/s)',
        'Time at that rate (s)',
      ]);
      const table = rows.slice(start + 2).filter((r) => r[1] !== 'total');
      const expected = [
        ...Object.entries(partner).map(([e, c]) => ['Partner API', e, c.requests, c.retries, c.perSecond, c.seconds]),
        ...Object.entries(exchange).map(([e, c]) => ['Exchange API', e, c.requests, c.retries, c.perSecond, c.seconds]),
      ];
      expect(table.slice(0, expected.length)).toEqual(expected);
      const totalRow = rows.find((r) => r[0] === 'All APIs');
      expect(totalRow?.slice(1, 4)).toEqual(['total', t.all.requests, t.all.retries]);
      expect(totalRow?.[5]).toBe(t.all.seconds);
    });
  });
}

function retriesText(n: number): string {
  return n ? ` (${n} ${n === 1 ? 'retry' : 'retries'})` : '';
}
