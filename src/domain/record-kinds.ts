/** The kinds of record ramp-recon stores and judges, each with its table, key, day, data sheet and coverage streams. */

/**
 * What a break's key can name. A record kind says where its records live and what places one on a
 * day; the store builds its queries from this (a break's day, the lifecycle's scope, the changes of
 * sql/0017, the Breaks sheet's links), the report its words and links, so a new rule names a kind
 * and needs nothing else.
 */
export type RecordKindName =
  'partnerOrder' | 'exchangeOrder' | 'fill' | 'deposit' | 'withdrawal' | 'balance' | 'coverage' | 'quarantine';

/** The workbook's data sheets a record kind's rows are on. */
export type DataSheet =
  'partnerOrders' | 'ordersVsFills' | 'fills' | 'deposits' | 'withdrawals' | 'balances' | 'coverage';

export interface RecordKind {
  name: RecordKindName;
  /** The record in words, for a sentence: "order", "exchange order", "fill". */
  noun: string;
  /** Its table and natural key (unique within an account); null for a kind that is not one stored row per key. */
  table: string | null;
  key: string | null;
  keyType: 'text' | 'bigint';
  /**
   * The columns whose first non-null value places a record on a UTC day, or null: a break of such a kind carries its
   * own day (a roll-forward's divergent day, a coverage row's day), or none.
   */
  time: readonly string[] | null;
  /** Records of another table that also place it on their days: an exchange order belongs to each day it was filled. */
  alsoOnDaysOf?: { table: string; foreignKey: string; time: string };
  /** The data sheet its rows are on (the Breaks sheet links a key there); null: none. */
  sheet: DataSheet | null;
  /** The coverage streams its records are listed under (source:stream). */
  streams: readonly string[];
  /** Its rows record the transaction that last changed them (sql/0017): a change is judged whatever its day. */
  tracked: boolean;
  /**
   * A break of this kind carries its own day, and one before the period is judged again only because late data
   * reached it (a roll-forward pair whose flows changed): its events then say what late data changed.
   */
  ownDayJudgedForChanges?: boolean;
}

export const RECORD_KINDS: Readonly<Record<RecordKindName, RecordKind>> = {
  partnerOrder: {
    name: 'partnerOrder',
    noun: 'order',
    table: 'partner_order',
    key: 'order_id',
    keyType: 'text',
    time: ['created_at'],
    sheet: 'partnerOrders',
    streams: ['partner:orders'],
    tracked: true,
  },
  exchangeOrder: {
    name: 'exchangeOrder',
    noun: 'exchange order',
    table: 'exchange_order',
    key: 'ex_ord_id',
    keyType: 'bigint',
    time: ['timestamp'],
    alsoOnDaysOf: { table: 'exchange_fill', foreignKey: 'ex_ord_id', time: 'timestamp' },
    sheet: 'ordersVsFills',
    streams: ['exchange:orders', 'exchange:trades'],
    tracked: true,
  },
  fill: {
    name: 'fill',
    noun: 'fill',
    table: 'exchange_fill',
    key: 'exec_id',
    keyType: 'bigint',
    time: ['timestamp'],
    sheet: 'fills',
    streams: ['exchange:fills'],
    tracked: true,
  },
  deposit: {
    name: 'deposit',
    noun: 'deposit',
    table: 'exchange_deposit',
    key: 'deposit_id',
    keyType: 'text',
    // A record without a timestamp is placed where staleness ages it from: when it was first stored.
    time: ['timestamp', 'first_seen_at'],
    sheet: 'deposits',
    streams: ['exchange:deposits'],
    tracked: true,
  },
  withdrawal: {
    name: 'withdrawal',
    noun: 'withdrawal',
    table: 'exchange_withdrawal',
    key: 'withdrawal_id',
    keyType: 'text',
    time: ['timestamp', 'first_seen_at'],
    sheet: 'withdrawals',
    streams: ['exchange:withdrawals'],
    tracked: true,
  },
  balance: {
    name: 'balance',
    noun: 'balance',
    table: null,
    key: null,
    keyType: 'text',
    time: null,
    sheet: 'balances',
    streams: [],
    tracked: false,
    ownDayJudgedForChanges: true,
  },
  coverage: {
    name: 'coverage',
    noun: 'coverage',
    table: null,
    key: null,
    keyType: 'text',
    time: null,
    sheet: 'coverage',
    streams: [],
    tracked: false,
  },
  quarantine: {
    name: 'quarantine',
    noun: 'record',
    table: 'quarantine',
    key: 'record_key',
    keyType: 'text',
    time: null,
    sheet: null,
    streams: [],
    tracked: false,
  },
};

/** The record kinds with a table and a time of their own: those a break's day is read from. */
export const DATED_KINDS: readonly RecordKind[] = Object.values(RECORD_KINDS).filter((k) => k.table && k.key && k.time);
