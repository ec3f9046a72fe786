/**
 * Issue 45 point 7: a sync reports each stream's progress through its date range. The reporter is made to speak at
 * once (no quiet time, no interval, log lines): every stream's fraction only grows, ends read whole, with a time left.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import type { StageContext } from '../../src/stages/context.js';
import { syncExchange } from '../helpers/sync.js';
import {
  FAKE_NOW,
  makeData,
  startFakeExchange,
  type FakeExchange,
  fakeExchangeConfigFile,
} from './exchange-fake-api.js';

vi.mock('../../src/util/progress.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/util/progress.js')>();
  return {
    ...real,
    createProgress: (o: Parameters<typeof real.createProgress>[0]) =>
      real.createProgress({ ...o, line: null, quietMs: 0, intervalMs: 0 }),
  };
});

type Line = { msg: string; progress?: { span: { name: string; fraction: number } | null; etaSeconds: number | null } };
const configPath = fakeExchangeConfigFile('rr-exchange-progress-');

for (const fillsOrder of ['newest-first', 'oldest-first'] as const) {
  describeEachStore(`exchange sync progress through the date range (fills ${fillsOrder})`, (ctx) => {
    let api: FakeExchange;
    beforeAll(async () => {
      api = await startFakeExchange(makeData(2_600, 700), { fillsOrder });
    });
    afterAll(() => api.close());

    it('says of each stream the part of its range read, growing to the whole, with the time left', async () => {
      const lines: Line[] = [];
      const logger = pino(
        { level: 'info' },
        new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c)) as Line), cb()) }),
      );
      const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
      const stage: StageContext = { store: ctx.store, config, logger, runId: null, now: FAKE_NOW };
      await syncExchange(stage, { progress: 'log' });
      const byStream = new Map<string, number[]>();
      for (const l of lines) {
        const span = l.progress?.span;
        if (span && l.msg.startsWith('exchange sync: ') && !l.msg.includes(': done'))
          byStream.set(span.name, [...(byStream.get(span.name) ?? []), span.fraction]);
      }
      expect(byStream.has('fills')).toBe(true);
      expect([...byStream.keys()].some((name) => name.startsWith('orders.'))).toBe(true);
      for (const [, fractions] of byStream) {
        expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
        expect(fractions.every((f) => f >= 0 && f <= 1)).toBe(true);
      }
      // The walk's last page says the whole range is read, whichever order the pages come in.
      expect(byStream.get('fills')!.at(-1)).toBe(1);
      expect(lines.some((l) => l.progress?.span && l.progress.etaSeconds !== null)).toBe(true);
    });
  });
}
