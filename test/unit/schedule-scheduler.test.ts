import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { Scheduler, cronTrigger, validateSchedule, type Trigger } from '../../src/schedule/scheduler.js';
import { installSignalHandlers, type SignalTarget } from '../../src/schedule/signals.js';
import { runSchedule } from '../../src/schedule/nightly.js';
import { groupOf, loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import type { Store } from '../../src/store/db/database.js';

/** A trigger the test fires by hand: an injected clock. */
function manualTrigger(): Trigger & { tick(at?: Date): void; stopped: boolean } {
  let onFire: ((at: Date) => void) | undefined;
  return {
    stopped: false,
    start(fn) {
      onFire = fn;
    },
    stop() {
      this.stopped = true;
      onFire = undefined;
    },
    nextRun: () => null,
    tick(at = new Date()) {
      onFire?.(at);
    },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Scheduler', () => {
  it('never overlaps: a firing while a run is slow is skipped, the next one after it runs', async () => {
    const trigger = manualTrigger();
    let active = 0;
    let maxActive = 0;
    const slow = deferred();
    const fired: Date[] = [];
    const scheduler = new Scheduler({
      trigger,
      logger: silentLogger(),
      fire: async (at) => {
        fired.push(at);
        active += 1;
        maxActive = Math.max(maxActive, active);
        if (fired.length === 1) await slow.promise;
        active -= 1;
      },
    });
    scheduler.start();
    trigger.tick(new Date('2026-11-22T02:00:00Z'));
    trigger.tick(new Date('2026-11-22T02:00:01Z'));
    trigger.tick(new Date('2026-11-22T02:00:02Z'));
    expect(scheduler.stats).toEqual({ fired: 1, skipped: 2, busy: true });
    slow.resolve();
    await sleep(0);
    trigger.tick(new Date('2026-11-23T02:00:00Z'));
    await sleep(0);
    expect(fired.map((d) => d.toISOString())).toEqual(['2026-11-22T02:00:00.000Z', '2026-11-23T02:00:00.000Z']);
    expect(maxActive).toBe(1);
    await scheduler.stop();
  });

  it('stop() takes no new firings and waits for the run in progress', async () => {
    const trigger = manualTrigger();
    const slow = deferred();
    let finished = false;
    const scheduler = new Scheduler({
      trigger,
      logger: silentLogger(),
      fire: async () => {
        await slow.promise;
        finished = true;
      },
    });
    scheduler.start();
    trigger.tick();
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    expect(trigger.stopped).toBe(true);
    await sleep(20);
    expect(stopped).toBe(false);
    slow.resolve();
    await stopping;
    expect(finished).toBe(true);
    expect(scheduler.stats.fired).toBe(1);
  });

  it('a failing firing is logged and does not stop the schedule', async () => {
    const trigger = manualTrigger();
    let calls = 0;
    const scheduler = new Scheduler({
      trigger,
      logger: silentLogger(),
      fire: async () => {
        calls += 1;
        throw new Error('database down');
      },
    });
    scheduler.start();
    trigger.tick();
    await sleep(0);
    trigger.tick();
    await sleep(0);
    expect(calls).toBe(2);
    await scheduler.stop();
  });

  it('with node-cron every second: two firings, never overlapping a slow run', async () => {
    const starts: number[] = [];
    let active = 0;
    let maxActive = 0;
    const scheduler = new Scheduler({
      trigger: cronTrigger('* * * * * *', 'UTC'),
      logger: silentLogger(),
      fire: async () => {
        starts.push(Date.now());
        active += 1;
        maxActive = Math.max(maxActive, active);
        // The first run outlasts the next firing, which must be skipped.
        await sleep(starts.length === 1 ? 1_500 : 10);
        active -= 1;
      },
    });
    scheduler.start();
    const deadline = Date.now() + 8_000;
    while (starts.length < 2 && Date.now() < deadline) await sleep(50);
    await scheduler.stop();
    expect(starts.length).toBeGreaterThanOrEqual(2);
    expect(maxActive).toBe(1);
    expect(scheduler.stats.skipped).toBeGreaterThanOrEqual(1);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(1_500);
  }, 15_000);
});

describe('validateSchedule', () => {
  it('accepts the defaults and six-field crons', () => {
    expect(() => validateSchedule('0 2 * * *', 'UTC')).not.toThrow();
    expect(() => validateSchedule('*/5 * * * * *', 'Europe/Berlin')).not.toThrow();
  });
  it('names the key and the value of a bad cron or time zone', () => {
    expect(() => validateSchedule('every night', 'UTC')).toThrow(ConfigError);
    expect(() => validateSchedule('every night', 'UTC')).toThrow(/schedule\.cron.*"every night"/);
    expect(() => validateSchedule('0 2 * * *', 'Mars/Olympus')).toThrow(/schedule\.timezone.*"Mars\/Olympus"/);
  });
});

describe('signals', () => {
  it('first signal is graceful, second forceful', () => {
    const target = new EventEmitter() as unknown as SignalTarget & EventEmitter;
    const seen: string[] = [];
    const uninstall = installSignalHandlers({
      logger: silentLogger(),
      target,
      onGraceful: (s) => seen.push(`graceful ${s}`),
      onForceful: (s) => seen.push(`forceful ${s}`),
    });
    target.emit('SIGTERM', 'SIGTERM');
    target.emit('SIGINT', 'SIGINT');
    expect(seen).toEqual(['graceful SIGTERM', 'forceful SIGINT']);
    uninstall();
    expect(target.listenerCount('SIGTERM')).toBe(0);
  });
});

describe('runSchedule', () => {
  const config = loadConfig({
    env: {
      PARTNER_API_URL: 'http://127.0.0.1:9/p',
      PARTNER_PUBLIC_KEY: 'pk-123456',
      PARTNER_PRIVATE_KEY: 'sk-123456',
      EXCHANGE_API_URL: 'http://127.0.0.1:9/v3/exchange',
      EXCHANGE_API_TOKEN: 'tok-123456',
    },
  });
  const fakeStore = { close: async () => {} } as unknown as Store;

  it('SIGTERM during a run: no new firing, the run finishes, then it resolves', async () => {
    const trigger = manualTrigger();
    const target = new EventEmitter() as unknown as SignalTarget & EventEmitter;
    const slow = deferred();
    const events: string[] = [];
    const done = runSchedule(
      { group: groupOf(config), logger: silentLogger(), openStore: async () => fakeStore },
      {
        trigger,
        signalTarget: target,
        onForceful: () => events.push('forceful'),
        fire: async () => {
          events.push('run started');
          await slow.promise;
          events.push('run finished');
        },
      },
    );
    await sleep(10);
    trigger.tick();
    target.emit('SIGTERM', 'SIGTERM');
    trigger.tick(); // ignored: stopping
    let resolved = false;
    void done.then(() => (resolved = true));
    await sleep(30);
    expect(resolved).toBe(false);
    slow.resolve();
    await done;
    expect(events).toEqual(['run started', 'run finished']);
    expect(target.listenerCount('SIGTERM')).toBe(0);
  });

  it('refuses a bad cron at start-up (exit 2), before any firing', async () => {
    const bad = { ...config, schedule: { ...config.schedule, cron: 'nightly' } } as typeof config;
    await expect(
      runSchedule({ group: groupOf(bad), logger: silentLogger(), openStore: async () => fakeStore }),
    ).rejects.toBeInstanceOf(ConfigError);
  });
});
