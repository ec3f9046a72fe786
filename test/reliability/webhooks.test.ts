import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { parseJsonLossless } from '../../src/decimal/json.js';
import { describeEachStore } from '../helpers/db.js';
import { malformedCorpus } from '../helpers/webhook-corpus.js';
import { postBytes, quarantinedBody, receiverConfig, storedEventBytes } from '../helpers/webhook-post.js';
import { recordFigure } from './figures.js';

// The webhook half of issue 17's malformed corpus: every body is answered 4xx (quarantined) or
// 2xx (stored, or quarantined with the database's reason), never 5xx, and none is lost: each one
// is found afterwards, byte for byte, as a stored event or a quarantine entry.
describeEachStore('malformed webhook corpus', (ctx) => {
  let server: WebhookServer;
  beforeAll(async () => {
    // A megabyte: the 100,000-deep body (400 kB) reaches the depth check instead of the size limit.
    server = await startWebhookServer({
      store: ctx.store,
      config: receiverConfig(1024 * 1024),
      logger: silentLogger(),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const corpus = malformedCorpus();
  it('holds at least 30 bodies', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
  });

  for (const c of corpus) {
    it(`${c.name}: 4xx or 2xx, never 5xx, and kept`, async () => {
      const res = await postBytes(server.url, c.bytes);
      expect(res.status, res.text).toBeLessThan(500);
      let lost = 0;
      const q = await quarantinedBody(ctx.store, c.bytes);
      // Too deep: refused before it is parsed, quarantined as sent (issue 43).
      if (c.deep) expect(res.status, res.text).toBe(400);
      if (res.status >= 400) {
        expect(res.status).toBe(400);
        if (!q?.rawBytes?.equals(c.bytes)) lost = 1;
        if (c.field) expect(q?.reason).toContain(c.field);
      } else if (JSON.parse(res.text).status === 'quarantined') {
        if (!q?.rawBytes?.equals(c.bytes)) lost = 1;
      } else {
        const eventId = (parseJsonLossless(c.bytes.toString('utf8')) as { eventId: string }).eventId;
        const stored = await storedEventBytes(ctx.store, eventId);
        if (!stored?.equals(c.bytes)) lost = 1;
      }
      expect(lost).toBe(0);
      recordFigure({ kind: 'badInput', name: `webhook: ${c.name}`, db: ctx.kind, lost });
    });
  }
});
