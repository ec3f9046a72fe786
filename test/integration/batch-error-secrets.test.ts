/** A batch row's errors are shown by `runs`, `--json` and the group e-mail: stored with every secret of the group masked. */
import { expect, it } from 'vitest';
import { loadGroup } from '../../src/config/load.js';
import { recordAccountOutcome } from '../../src/pipeline/batch.js';
import { loadBatch, planBatch, recordBatchDelivery, retryBatchAccount } from '../../src/store/runs/batches.js';
import { describeEachStore } from '../helpers/db.js';
import { writeConfig } from '../helpers/config.js';

const group = loadGroup({
  env: {
    DATABASE_URL: 'postgres://recon:db-pass-1111@127.0.0.1:5432/recon?sslpassword=ssl-pass-2222',
    SMTP_URL: 'smtps://mailer:smtp-pass-3333@mail.example.test:465',
    ACME_PARTNER_API_URL: 'https://partner.example.test',
    ACME_PARTNER_PUBLIC_KEY: 'pk-acme-4444',
    ACME_PARTNER_PRIVATE_KEY: 'sk-acme-5555',
    GLOBEX_EXCHANGE_API_URL: 'https://exchange.example.test',
    GLOBEX_EXCHANGE_API_TOKEN: 'xt-globex-6666',
  },
  configPath: writeConfig({
    accounts: [{ name: 'acme' }, { name: 'globex' }],
    email: { from: 'recon@example.test', to: ['group@example.test'] },
  }),
});

describeEachStore('batch errors stored without secrets', (ctx) => {
  it('masks every account’s keys, URL passwords and credential parameters in account and delivery errors', async () => {
    const db = ctx.store.db;
    const { id } = await planBatch(db, {
      trigger: 'enqueue',
      period: { from: '2026-11-20', to: '2026-11-21' },
      accounts: ['acme', 'globex'],
    });
    // acme's run never started, its error quoting globex's token and the database URL (another password too)
    await recordAccountOutcome(
      ctx.store,
      id,
      {
        account: 'acme',
        result: null,
        error:
          'could not connect to postgres://recon:db-pass-1111@127.0.0.1:5432/recon?sslpassword=ssl-pass-2222 ' +
          'nor postgres://x:other-pass-9@h/db?password=other-pass-10; token xt-globex-6666, key sk-acme-5555',
      },
      group.secrets,
    );
    await retryBatchAccount(db, id, 'globex', { error: 'exchange refused pk-acme-4444' }, group.secrets);
    await recordBatchDelivery(db, id, { delivered: false, error: 'AUTH failed for smtp-pass-3333' }, group.secrets);
    const batch = await loadBatch(db, id);
    const errors = Object.fromEntries(batch.accounts.map((a) => [a.account, a.error]));
    expect(errors).toEqual({
      acme:
        'could not connect to postgres://recon:********@127.0.0.1:5432/recon?sslpassword=******** ' +
        'nor postgres://x:********@h/db?password=********; token ********, key ********',
      globex: 'exchange refused ********',
    });
    expect(batch.deliveryError).toBe('AUTH failed for ********');
  });
});
