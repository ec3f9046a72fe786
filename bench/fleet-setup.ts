/**
 * bench:fleet's set-up: its knobs (validated environment variables), each account's sandbox volumes from its fills a
 * day, and the config of the fleet's accounts, each paced at the knob's requests per second.
 */
import { DEFAULT_OPTIONS, type SandboxOptions } from '../sandbox/index.js';
import { MS_PER_DAY, toDay } from '../src/util/dates.js';

export interface FleetKnobs {
  accounts: number;
  workers: number;
  /** Fills a day of each account. */
  fills: number;
  /** Full days of history before the history batch. */
  days: number;
  /** Requests per second of each account, to each API. */
  rate: number;
}

export const DEFAULT_KNOBS: FleetKnobs = { accounts: 100, workers: 8, fills: 10_000, days: 4, rate: 4 };

interface Bounds {
  min: number;
  max: number;
  whole: boolean;
  what: string;
}

const BOUNDS: Record<keyof FleetKnobs, [string, Bounds]> = {
  accounts: ['BENCH_FLEET_ACCOUNTS', { min: 1, max: 500, whole: true, what: 'accounts' }],
  workers: ['BENCH_FLEET_WORKERS', { min: 1, max: 32, whole: true, what: 'worker processes' }],
  fills: ['BENCH_FLEET_FILLS', { min: 10, max: 200_000, whole: true, what: 'fills a day per account' }],
  // the sandbox plants its stale deposit (E_STALE) three days before the first batch: inside the history from 3 days
  days: ['BENCH_FLEET_DAYS', { min: 3, max: 30, whole: true, what: 'days of history' }],
  rate: ['BENCH_RATE', { min: 0.1, max: 1000, whole: false, what: 'requests per second per account' }],
};

/** One knob: unset or empty is its default; anything else must be a number within its bounds. */
function knob(env: NodeJS.ProcessEnv, key: keyof FleetKnobs): number {
  const [name, b] = BOUNDS[key];
  const text = env[name];
  if (text === undefined || text.trim() === '') return DEFAULT_KNOBS[key];
  const n = Number(text);
  const shape = b.whole ? 'a whole number' : 'a number';
  if (!Number.isFinite(n) || (b.whole && !Number.isInteger(n)) || n < b.min || n > b.max)
    throw new Error(`${name} must be ${shape} of ${b.what} from ${b.min} to ${b.max} (got ${JSON.stringify(text)})`);
  return n;
}

/** Every knob, or an error naming each one that is wrong. */
export function knobsFromEnv(env: NodeJS.ProcessEnv): FleetKnobs {
  const problems: string[] = [];
  const read = (key: keyof FleetKnobs): number => {
    try {
      return knob(env, key);
    } catch (err) {
      problems.push((err as Error).message);
      return DEFAULT_KNOBS[key];
    }
  };
  const knobs = {
    accounts: read('accounts'),
    workers: read('workers'),
    fills: read('fills'),
    days: read('days'),
    rate: read('rate'),
  };
  if (problems.length) throw new Error(`bench:fleet: ${problems.join('; ')}`);
  return knobs;
}

export const isDefault = (k: FleetKnobs): boolean =>
  (Object.keys(DEFAULT_KNOBS) as Array<keyof FleetKnobs>).every((key) => k[key] === DEFAULT_KNOBS[key]);

/** Mean fills per filled exchange order, and the share of orders that fill (the sandbox's, bench/scenario.ts). */
const FILLS_PER_ORDER = 6;
const FILLED_SHARE = 0.85;

/** An account's activity a day, from its fills in the ratios of the nightly bench (100,000 fills, 10,000 orders). */
export function dailyRates(fills: number) {
  return {
    exchangeOrdersPerDay: Math.max(1, Math.round(fills / (FILLS_PER_ORDER * FILLED_SHARE))),
    ordersPerDay: Math.max(1, Math.round(fills / 10)),
    depositsPerDay: Math.max(1, Math.round(fills / 500)),
    withdrawalsPerDay: Math.max(1, Math.round(fills / 1000)),
  };
}

/** Every account's sandbox: `days` of history up to `firstAt`, one of every discrepancy planted, live activity. */
export function fleetSandboxOptions(
  k: FleetKnobs,
  firstAt: number,
): Partial<SandboxOptions> & { clockOffsetMs: number } {
  return {
    seed: 47,
    days: k.days,
    ...dailyRates(k.fills),
    fillsPerOrder: FILLS_PER_ORDER,
    paidToUsShare: 0.015,
    discrepancies: true,
    faults: 'none',
    exchangeOrdersCap: 1000,
    live: true,
    now: new Date(firstAt),
    clockOffsetMs: firstAt - Date.now(),
  };
}

/** The fleet's config: every account paced at `rate` on each API, its history from the sandbox's first day. */
export function fleetConfig(names: readonly string[], k: FleetKnobs, dayX: number) {
  return {
    accounts: names.map((name) => ({
      name,
      partner: {
        feeRate: DEFAULT_OPTIONS.partnerFeeRate,
        publicRateLimitPerSecond: k.rate,
        privateRateLimitPerSecond: k.rate,
      },
      exchange: { rateLimitPerSecond: k.rate, historyStart: toDay(new Date(dayX - k.days * MS_PER_DAY)) },
    })),
  };
}
