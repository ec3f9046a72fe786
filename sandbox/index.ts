/** Simulator: startSandbox() and startSandboxAccounts(), the entry points of the CLI, the demo, the tests and the bench. */
import { buildAccountSandbox, resolveOptions } from './build.js';
import type { Sandbox } from './handle.js';
import { DEFAULT_OPTIONS, type SandboxOptions } from './options.js';
import { closeServer, createSandboxServer, listen } from './server.js';

// The Sandbox handle lives in handle.ts, so that build.ts and accounts.ts, which make it, need not import this file.
export type { Sandbox, SandboxData } from './handle.js';
export type { FaultProfile } from './faults.js';
export type {
  BalanceView,
  DepositView,
  ExchangeOrderRecord,
  ExpectedBreak,
  FillRecord,
  PartnerOrderRecord,
  PartnerOrderView,
  WhitelistEntry,
  WithdrawalView,
} from './model.js';
export type { SandboxOptions };
export type { WebhookDelivery } from './webhooks.js';
export { LATE_EVENTS, type LateEvent, type LateRelease } from './late-events.js';
export { DEFAULT_OPTIONS };
export { DEFAULT_FAULTS, NO_FAULTS } from './faults.js';
export {
  envPrefix,
  accountNameProblems,
  accountWebhookUrl,
  startSandboxAccounts,
  type SandboxAccount,
  type SandboxAccounts,
  type SandboxAccountsOptions,
} from './accounts.js';

export async function startSandbox(
  options: Partial<SandboxOptions> & { port?: number; host?: string } = {},
): Promise<Sandbox> {
  const { port = 0, host = '127.0.0.1', ...rest } = options;
  const account = buildAccountSandbox(resolveOptions(rest));
  const server = createSandboxServer(account.handlers);
  const url = await listen(server, port, host);
  return account.start(url, async () => {
    await account.stop();
    await closeServer(server);
  });
}
