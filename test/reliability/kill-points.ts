/** The seeded kill -9 suite, run per database by kill-embedded.test.ts and kill-postgres.test.ts. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import type { StoreKind } from '../helpers/db.js';
import { brief, logLines, runCli, startCli } from '../e2e/helpers.js';
import { recordFigure } from './figures.js';
import { yesterday } from '../../src/util/dates.js';
import { compare, dropTemplate, openTarget, seeded, type Dump } from './world.js';

/** The stages a kill lands in; sync counts twice (exchange and partner are separate stages). */
export const KILL_STAGES = ['sync.exchange', 'sync.partner', 'reconcile', 'report'] as const;

const SANDBOX = {
  seed: 17,
  days: 3,
  ordersPerDay: 20,
  fillsPerOrder: 2,
  discrepancies: true,
  live: false,
  faults: 'none' as const,
};
// The period is fixed when the suite loads: a suite that runs across midnight UTC must not compare a
// rerun for the new yesterday with a reference taken for the old one.
const RUN = ['run', '--from', yesterday(new Date()).from, '--no-email', '--json', '--wait'];

interface Summary {
  status: string;
  breaks: Array<{ code: string; key: string; severity: string; status: string }>;
}

const breakSet = (s: Summary) =>
  s.breaks
    .filter((b) => b.code !== 'E_BALANCE_ROLL')
    .map((b) => `${b.code} ${b.key} ${b.severity} ${b.status}`)
    .sort();

/** Start and length (ms) of each stage in a run's log. */
function stageTimes(stderr: string): Map<string, { start: number; ms: number }> {
  const out = new Map<string, { start: number; ms: number }>();
  for (const l of logLines(stderr)) {
    const stage = typeof l.stage === 'string' ? l.stage : undefined;
    const t = typeof l.time === 'string' ? Date.parse(l.time) : Number(l.time);
    if (!stage) continue;
    if (l.msg === 'stage started') out.set(stage, { start: t, ms: 0 });
    if (l.msg === 'stage finished' && out.has(stage)) out.get(stage)!.ms = t - out.get(stage)!.start;
  }
  return out;
}

/**
 * Kill points on one database: each a fresh store, `ramp-recon run` killed with SIGKILL at a
 * seeded moment inside a stage (a random fraction of that stage's length in the undisturbed run,
 * counted from its "stage started" line), then run again to the end; the stored data and the
 * breaks must equal the undisturbed run's: nothing lost, nothing twice.
 */
export function killSuite(kind: StoreKind, points: number, seed: number): void {
  describe(`kill -9 at ${points} seeded points of sync, reconcile and report, then run again [${kind}]`, () => {
    let sb: Sandbox;
    let config: unknown;
    let reference: Dump;
    let referenceBreaks: string[];
    let times: Map<string, { start: number; ms: number }>;

    beforeAll(async () => {
      sb = await startSandbox(SANDBOX);
      config = { partner: { feeRate: sb.partnerFeeRate } };
      const t = await openTarget(kind, sb.env, config);
      try {
        const r = await runCli(RUN, t.env);
        expect(r.code, brief(r.stderr)).toBe(0);
        referenceBreaks = breakSet(JSON.parse(r.stdout) as Summary);
        times = stageTimes(r.stderr);
        reference = await t.dump();
      } finally {
        await t.drop();
      }
      expect(reference.exchange_fill!.length).toBeGreaterThan(0);
      expect(reference.partner_order!.length).toBeGreaterThan(0);
      expect(referenceBreaks.length).toBeGreaterThan(0);
    });

    afterAll(async () => {
      await sb?.close();
      await dropTemplate();
    });

    const rng = seeded(seed);
    const plan = Array.from({ length: points }, (_, i) => ({
      stage: KILL_STAGES[i % KILL_STAGES.length]!,
      fraction: rng(),
    }));

    for (const [i, p] of plan.entries()) {
      it(`kill ${i + 1}: in ${p.stage} at ${(p.fraction * 100).toFixed(0)}% of its length`, async () => {
        const t = await openTarget(kind, sb.env, config);
        try {
          const stage = times.get(p.stage);
          expect(stage, `stage ${p.stage} in the undisturbed run`).toBeDefined();
          // Within the first 80% of the stage's undisturbed length: under load a stage can run shorter than it did then.
          const delay = Math.round(p.fraction * 0.8 * stage!.ms);
          // The stage may end before the moment (it runs shorter than in the undisturbed run): then that run
          // finished, and the next run of the same database is killed at a quarter of the moment.
          let attempt = await killAt(t.env, p.stage, delay);
          if (!attempt.killedIn) attempt = await killAt(t.env, p.stage, Math.round(delay / 4));
          const { killedIn, used } = attempt;
          const wasKilled = killedIn !== null;

          const again = await runCli(RUN, t.env);
          expect(again.code, brief(again.stderr)).toBe(0);
          const summary = JSON.parse(again.stdout) as Summary;
          expect(summary.status).toBe('succeeded');
          const { lost, duplicated, diff } = compare(reference, await t.dump());
          // Named by the stage the kill landed in (a short stage may have ended before the moment).
          const name = `${killedIn ?? p.stage} (aimed at ${p.stage} +${used} ms) #${i + 1} [${kind}]`;
          if (wasKilled)
            recordFigure({
              kind: 'kill',
              name,
              db: kind,
              stage: p.stage,
              killedIn,
              delayMs: used,
              seed,
              lost,
              duplicated,
            });
          else recordFigure({ kind: 'lost', name: `not killed: ${name}`, count: lost, db: kind });
          expect(diff).toEqual([]);
          expect(lost).toBe(0);
          expect(duplicated).toBe(0);
          expect(breakSet(summary)).toEqual(referenceBreaks);
        } finally {
          await t.drop();
        }
      });
    }
  });
}

/** Runs the CLI and kills it with SIGKILL `delay` ms after `stage` starts; killedIn is the stage it was in, or null when the run ended first. */
async function killAt(
  env: NodeJS.ProcessEnv,
  stage: string,
  delay: number,
): Promise<{ killedIn: string | null; used: number }> {
  const child = startCli(RUN, env);
  let killedIn: string | null = null;
  let seen = 0;
  let timer: NodeJS.Timeout | undefined;
  const watch = setInterval(() => {
    const lines = logLines(child.stderr());
    for (const l of lines.slice(seen)) {
      if (l.msg === 'stage started' && l.stage === stage && !timer)
        timer = setTimeout(() => {
          const current = logLines(child.stderr())
            .filter((x) => x.msg === 'stage started')
            .at(-1);
          killedIn = String(current?.stage ?? stage);
          child.child.kill('SIGKILL');
        }, delay);
    }
    seen = lines.length;
  }, 5);
  const result = await child.done.finally(() => {
    clearInterval(watch);
    if (timer) clearTimeout(timer);
  });
  return { killedIn: result.signal === 'SIGKILL' ? killedIn : null, used: delay };
}
