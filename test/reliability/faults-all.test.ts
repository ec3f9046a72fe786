import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS, type FaultProfile } from '../../sandbox/faults.js';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { storeKinds } from '../helpers/db.js';
import { brief, runCli } from '../e2e/helpers.js';
import { recordFigure } from './figures.js';
import { yesterday } from '../../src/util/dates.js';
import { compare, dropTemplate, openTarget } from './world.js';

/**
 * Every fault of the sandbox at once (sandbox/faults.ts: 429 with Retry-After, 500, 503, answers
 * slower than the client's timeout, bodies cut in the middle, a malformed record inside a good
 * page, the partner's public-key rate limit): a run ends with exactly the data and the breaks of a
 * run against the same sandbox without faults. Probabilities are high enough that each fires on
 * these few hundred requests (seeded: the same requests fail on every run).
 */
const ALL_FAULTS: FaultProfile = {
  rateLimited: 0.06,
  retryAfterSeconds: 1,
  serverError500: 0.06,
  serverError503: 0.06,
  slow: 0.03,
  slowMs: 2_500,
  truncated: 0.06,
  malformedRecord: true,
  publicRateLimitPerSecond: 10,
};
// The client gives up on an answer after 1.5 s (slow answers take 2.5 s) and retries quickly.
const CONFIG_HTTP = {
  bodyTimeoutMs: 1_500,
  connectTimeoutMs: 1_500,
  retryBaseMs: 50,
  retryMaxMs: 1_000,
  maxRetries: 8,
};
// The period is fixed when the suite loads: a suite that runs across midnight UTC must not compare a
// rerun for the new yesterday with a reference taken for the old one.
const RUN = ['run', '--from', yesterday(new Date()).from, '--no-email', '--json', '--wait'];

interface Summary {
  status: string;
  breaks: Array<{ code: string; key: string; severity: string; status: string }>;
  requests: Record<string, Record<string, { requests: number; retries: number }>>;
}

const breakSet = (s: Summary) =>
  s.breaks
    .filter((b) => b.code !== 'E_BALANCE_ROLL')
    .map((b) => `${b.code} ${b.key} ${b.severity} ${b.status}`)
    .sort();

for (const kind of storeKinds) {
  describe(`every sandbox fault at once ends with the data of a clean run [${kind}]`, () => {
    let sb: Sandbox;
    beforeAll(async () => {
      // The malformed record is planted when the sandbox starts: both runs see it.
      sb = await startSandbox({
        seed: 23,
        days: 3,
        ordersPerDay: 20,
        fillsPerOrder: 2,
        discrepancies: true,
        live: false,
        faults: ALL_FAULTS,
      });
    });
    afterAll(async () => {
      await sb?.close();
      await dropTemplate();
    });

    it('clean run, then a run with all faults: same rows, same breaks, the malformed record quarantined', async () => {
      const config = { partner: { feeRate: sb.partnerFeeRate }, http: CONFIG_HTTP };
      const clean = await openTarget(kind, sb.env, config);
      const faulty = await openTarget(kind, sb.env, config);
      try {
        sb.setOption('faults', { ...NO_FAULTS, malformedRecord: true });
        const a = await runCli(RUN, clean.env);
        expect(a.code, brief(a.stderr)).toBe(0);
        const reference = await clean.dump();

        sb.setOption('faults', ALL_FAULTS);
        const b = await runCli(RUN, faulty.env);
        expect(b.code, brief(b.stderr)).toBe(0);
        const summary = JSON.parse(b.stdout) as Summary;
        expect(summary.status).toBe('succeeded');
        const retries = Object.values(summary.requests)
          .flatMap((es) => Object.values(es))
          .reduce((n, e) => n + e.retries, 0);
        // Faults did fire: the client retried.
        expect(retries).toBeGreaterThanOrEqual(5);

        const { lost, duplicated, diff } = compare(reference, await faulty.dump());
        for (const name of Object.keys(ALL_FAULTS).filter((k) => k !== 'retryAfterSeconds' && k !== 'slowMs'))
          recordFigure({ kind: 'fault', name, db: kind, retries, lost: 0, duplicated: 0 });
        recordFigure({ kind: 'lost', name: `all faults [${kind}]`, count: lost, db: kind });
        recordFigure({ kind: 'duplicated', name: `all faults [${kind}]`, count: duplicated, db: kind });
        expect(diff).toEqual([]);
        expect(lost).toBe(0);
        expect(duplicated).toBe(0);
        expect(breakSet(summary)).toEqual(breakSet(JSON.parse(a.stdout) as Summary));
        expect(summary.breaks.some((x) => x.code === 'S_QUARANTINE')).toBe(true);
        expect(reference.quarantine!.length).toBeGreaterThan(0);
      } finally {
        await clean.drop();
        await faulty.drop();
      }
    });
  });
}
