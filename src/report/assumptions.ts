/** The assumptions the report states where the contracts are silent. */
import type { Config } from '../config/load.js';

/**
 * What the report assumes where the contracts are silent (the Summary states the
 * assumption used: docs/reports.md), as label/value pairs for the Summary.
 */
export function assumptions(config: Config): Array<[string, string]> {
  const t = config.tolerances;
  const s = config.staleAfterHours;
  const p = config.partner.params;
  return [
    [
      'Fill fee currency',
      config.exchange.feeCurrency === 'base'
        ? 'base currency of the symbol (exchange.feeCurrency = base)'
        : 'counter currency of the symbol (exchange.feeCurrency = counter, default)',
    ],
    ['Withdrawal states that debit the balance', `${config.exchange.withdrawalDebitStates.join(', ')} (amount + fee)`],
    [
      'Deposits and withdrawals in the roll-forward',
      'counted in the pair of balance snapshots where their state change was first observed (a withdrawal leaving ' +
        'the debit states is credited back there); one first seen already final by its timestamp',
    ],
    ['Exchange account', config.exchange.account],
    ['Tolerance, USD amounts', t.usd],
    ['Tolerance, exchange fee', t.exchangeFee ?? "half a unit of the fee currency's scale (default)"],
    ['Tolerance, balance roll-forward', t.balance],
    ['Tolerance, balance local value', t.balanceLocal],
    ['Stale after (h): order / deposit / withdrawal', `${s.partnerOrder} / ${s.deposit} / ${s.withdrawal}`],
    ['Partner fee rate', config.partner.feeRate ?? 'not configured (P_PARTNER_FEE_RATE not checked)'],
    [
      'Partner wire parameter names',
      `offset=${p.offset}, from=${p.from}, to=${p.to}, outputCurrency=${p.outputCurrency}`,
    ],
    [
      'Our wallets (configured)',
      config.partner.wallets.length
        ? config.partner.wallets.join(', ')
        : 'none configured (exchange deposit addresses only)',
    ],
    ['Webhooks', config.webhooks ? 'configured (P_WEBHOOK_GAP checked)' : 'not configured (P_WEBHOOK_GAP not checked)'],
    ['Balance USD value', "balance x rate of the latest snapshot (the exchange's local currency, assumed USD)"],
  ];
}
