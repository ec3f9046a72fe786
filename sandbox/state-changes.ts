/** Simulator: the stateChanges option, a deposit and a withdrawal whose states change between two balance snapshots. */
import { Decimal } from '../src/decimal/decimal.js';
import type { DepositRecord, WithdrawalRecord } from './model.js';
import { createRng } from './prng.js';
import type { World } from './world.js';

/**
 * Lists, at the sandbox's `now`, a BTC deposit UNCONFIRMED (not credited: the running balance
 * skips a deposit without a COMPLETED step) and a USD withdrawal PENDING (debited amount + fee when
 * the balance pointer passes it). Their states change on the second GET /accounts (onAccountsStateChanges).
 */
export function plantStateChanges(w: World): void {
  const rng = createRng(w.opts.seed, 'state-changes');
  const ts = Math.max(w.now0, w.generatedUntil);
  const deposit: DepositRecord = {
    depositId: `D${w.seq.deposit++}`,
    amount: '0.04200000',
    currency: 'BTC',
    address: w.addresses.BTC!,
    txHash: rng.hex(64),
    timestamp: ts,
    timeline: [{ state: 'UNCONFIRMED', atMs: ts }],
  };
  const beneficiary = w.whitelist.find((e) => e.currency === 'USD')!.whitelistId;
  const withdrawal: WithdrawalRecord = {
    withdrawalId: `W${w.seq.withdrawal++}`,
    amount: '1500.00',
    fee: w.withdrawalFee('USD'),
    currency: 'USD',
    beneficiary,
    timestamp: ts,
    timeline: [{ state: 'PENDING', atMs: ts }],
  };
  w.addDeposit(deposit);
  w.addWithdrawal(withdrawal);
  w.stateChanges = { deposit, withdrawal, accountsSeen: 0 };
}

/**
 * Called on every GET /accounts before the balances are computed: on the second one, the deposit
 * turns COMPLETED and is credited, the withdrawal turns REFUNDED and amount + fee are credited
 * back, as an exchange does when the state changes. The first snapshot saw them UNCONFIRMED /
 * PENDING, the second sees them final: the roll-forward must place both changes in that pair.
 */
export function onAccountsStateChanges(w: World): void {
  const s = w.stateChanges;
  if (!s) return;
  s.accountsSeen++;
  if (s.accountsSeen !== 2) return;
  // Every flow up to now applied first: the deposit passed uncredited, the withdrawal debited.
  w.balances();
  const at = Math.max(w.clock(), s.deposit.timestamp);
  s.deposit.timeline.push({ state: 'COMPLETED', atMs: at });
  w.add(s.deposit.currency, new Decimal(s.deposit.amount));
  s.withdrawal.timeline.push({ state: 'REFUNDED', atMs: at });
  w.add(s.withdrawal.currency, new Decimal(s.withdrawal.amount).plus(s.withdrawal.fee));
}
