/** Simulator: one account's world, its request handlers and its Sandbox handle, apart from listening. */
import { MAKER_RATE, TAKER_RATE } from './catalog.js';
import { onAccounts, plantDiscrepancies, plantDueWebhookGap, type Fixes } from './discrepancies.js';
import { handleExchange } from './exchange-routes.js';
import { onAccountsStateChanges, plantStateChanges } from './state-changes.js';
import { plantHostileText } from './hostile-text.js';
import { isLateEvent, LATE_EVENTS, plantLateEvents, releaseLateEvent, type LateCases } from './late-events.js';
import { resolveFaults } from './faults.js';
import { generateHistory, generateLive } from './generate/span.js';
import { makePartnerOrder } from './generate/partner.js';
import { fillRestingOrder } from './generate/exchange.js';
import { json, type Req, type Res } from './http.js';
import type { Json } from './wire.js';
import type { DepositRecord, ExchangeOrderRecord, FillRecord, PartnerOrderView } from './model.js';
import { DEFAULT_OPTIONS, type SandboxOptions } from './options.js';
import { handlePartner } from './partner-routes.js';
import { createRng } from './prng.js';
import { createFaultState, type ServerHandlers } from './server.js';
import { HOUR_MS } from './time.js';
import { World } from './world.js';
import { startWebhooks, type WebhookRunner } from './webhooks.js';
import type { Sandbox, SandboxData } from './handle.js';

/** The options a world is built from: the defaults overridden by the given ones (undefined ones ignored). */
export function resolveOptions(options: Partial<SandboxOptions>): SandboxOptions {
  const opts: SandboxOptions = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  if (opts.discrepancies && opts.days < 2)
    throw new Error('sandbox: --discrepancies needs --days 2 or more (planted cases sit in past days)');
  return opts;
}

/** One account's simulated world, built and ready to serve, before any server listens. */
export interface AccountSandbox {
  readonly opts: SandboxOptions;
  /** Serves this account's requests (a server of one account mounts them as they are). */
  readonly handlers: ServerHandlers;
  /**
   * Called once the server listens at `url`: sets the account's env, starts its webhooks and its
   * live timer, and returns its Sandbox handle, whose close() is `close`.
   */
  start(url: string, close: () => Promise<void>): Sandbox;
  /** Stops the webhooks and the live timer (the server is closed by its owner). */
  stop(): Promise<void>;
}

/**
 * Builds one account: its world (history, planted cases, late events, faults) and the handlers
 * that serve it. Nothing listens and nothing runs in the background until start().
 */
export function buildAccountSandbox(opts: SandboxOptions): AccountSandbox {
  const w = new World(opts);
  generateHistory(w);
  let fixes: Fixes = new Map();
  if (opts.discrepancies) fixes = plantDiscrepancies(w);
  if (opts.stateChanges) plantStateChanges(w);
  if (opts.webhookGapDueInMs !== undefined) plantDueWebhookGap(w, opts.webhookGapDueInMs);
  if (opts.hostileText?.length) plantHostileText(w, opts.hostileText);
  // After the discrepancies: a late event never lands on a record a planted case uses.
  const late: LateCases = opts.lateEvents ? plantLateEvents(w, opts.lateEventsAgeDays) : new Map();
  let faults = resolveFaults(opts.faults);
  if (faults.malformedRecord) plantMalformed(w);

  const pageHooks = new Set<(info: { query: URLSearchParams; count: number; page: number }) => void>();
  const requestHooks = new Set<
    (info: { api: 'partner' | 'exchange'; method: string; path: string; query: URLSearchParams }) => void
  >();
  let pageNo = 0;
  let webhooks: WebhookRunner | undefined;
  let timer: NodeJS.Timeout | undefined;
  let env: Record<string, string> = {};

  const catchUp = (): void => {
    if (opts.live) generateLive(w, w.clock());
  };
  const elapse = (ms: number): void => {
    if (!(ms > 0)) return;
    w.shiftClock(ms);
    generateLive(w, w.clock());
    webhooks?.poke();
  };
  const advance = (ms: number): void => {
    if (!(ms > 0)) return;
    // Activity is stamped strictly after the last balance snapshot, so a pair of snapshots
    // around an advance sees every flow inside it (clients stamp snapshots by the wall clock).
    // The span also needs a few milliseconds so an order's states fit strictly inside it.
    const spinUntil = Math.max(w.lastAccountsAt + 2, w.generatedUntil + 6 - w.now0 + w.wallStart);
    while (Date.now() < spinUntil) {
      /* a few milliseconds at most */
    }
    const end = Math.max(w.generatedUntil + 1, w.now0 + (Date.now() - w.wallStart), w.clock());
    w.frozenClock = Math.max(w.frozenClock, end);
    generateLive(w, end, ms);
    webhooks?.poke();
  };

  const control = async (req: Req): Promise<Res> => {
    if (req.method === 'GET' && req.path === '/expected-breaks')
      return json(
        200,
        w.expected.map((b) => ({ ...b })),
      );
    if (req.method === 'POST' && req.path === '/advance') {
      const ms = Number(req.query.get('ms') ?? HOUR_MS);
      if (!Number.isFinite(ms) || ms <= 0) return json(400, { error: 'ms must be a positive number' });
      advance(ms);
      return json(200, { clock: w.clock(), generatedUntil: w.generatedUntil });
    }
    if (req.method === 'POST' && req.path === '/fix') {
      const code = req.query.get('code') ?? '';
      if (!fixes.has(code)) return json(404, { error: `no planted case for ${code}` });
      fix(code);
      return json(200, { fixed: code });
    }
    if (req.method === 'POST' && req.path === '/fill') {
      const id = req.query.get('exOrdId') ?? '';
      const o = w.exOrderById.get(id);
      if (!o || o.hidden) return json(404, { error: `no exchange order ${id}` });
      if (o.ordStatus !== 'OPEN' && o.ordStatus !== 'PART_FILLED')
        return json(409, { error: `order ${id} is ${o.ordStatus}, not resting` });
      const execId = fillLater(id);
      return json(200, { exOrdId: id, execId });
    }
    if (req.method === 'POST' && req.path === '/elapse') {
      const ms = Number(req.query.get('ms') ?? '');
      if (!Number.isFinite(ms) || ms <= 0) return json(400, { error: 'ms must be a positive number of milliseconds' });
      elapse(ms);
      return json(200, { clock: w.clock() });
    }
    if (req.method === 'GET' && req.path === '/late')
      return json(200, { planted: [...late.keys()], events: [...LATE_EVENTS] });
    if (req.method === 'POST' && req.path === '/late') {
      const event = req.query.get('event') ?? '';
      if (!isLateEvent(event)) return json(400, { error: `event must be one of ${LATE_EVENTS.join(', ')}` });
      const released = releaseLateEvent(late, event);
      if (!released)
        return json(404, { error: `late event ${event} was not planted (option lateEvents) or was released already` });
      webhooks?.poke();
      return json(200, JSON.parse(JSON.stringify(released)) as Json);
    }
    if (req.method === 'GET' && req.path === '/env') return json(200, env);
    return json(404, { error: `no sandbox control ${req.method} ${req.path}` });
  };

  const fillLater = (exOrdId: string): string => {
    const o = w.exOrderById.get(exOrdId);
    if (!o || o.hidden) throw new Error(`sandbox: no exchange order ${exOrdId}`);
    const execId = fillRestingOrder(w, o);
    webhooks?.poke();
    return execId;
  };

  const fix = (code: string): void => {
    for (const f of fixes.get(code) ?? []) f();
    fixes.delete(code);
    for (let i = w.expected.length - 1; i >= 0; i--) if (w.expected[i]!.code === code) w.expected.splice(i, 1);
  };

  const faultState = createFaultState(opts.seed);
  const handlers: ServerHandlers = {
    partner: (req) =>
      handlePartner(w, req, {
        onOrdersPage: (info) => {
          pageNo++;
          for (const cb of pageHooks) cb({ ...info, page: pageNo });
        },
      }),
    exchange: (req) =>
      handleExchange(w, req, {
        onAccounts: () => {
          onAccounts(w);
          onAccountsStateChanges(w);
        },
        onChange: () => webhooks?.poke(),
      }),
    control,
    beforeRequest: catchUp,
    faults: () => faults,
    faultState: () => faultState,
    onRequest: (req) => {
      const api = req.fullPath.startsWith('/v3/') ? 'exchange' : 'partner';
      for (const cb of requestHooks) cb({ api, method: req.method, path: req.path, query: req.query });
    },
  };

  let fillsCache: { version: number; list: FillRecord[] } = { version: -1, list: [] };
  const data: SandboxData = {
    partnerOrders: () => {
      const c = w.clock();
      return w.partnerOrders.filter((o) => o.createdAtMs <= c).map((o) => w.partnerView(o, c));
    },
    partnerOrderRecords: () => w.partnerOrders,
    exchangeOrders: () => w.exOrders.filter((o) => !o.hidden).map(stripInternal),
    fills: () => {
      if (fillsCache.version !== w.fills.version) {
        const list: FillRecord[] = [];
        for (let i = 0; i < w.fills.length; i++) if (w.fills.served(i)) list.push(w.fills.at(i));
        fillsCache = { version: w.fills.version, list };
      }
      return fillsCache.list;
    },
    fillCount: () => w.fills.length,
    counts: () => ({
      fills: w.fills.length,
      exchangeOrders: w.exOrders.length,
      partnerOrders: w.partnerOrders.length,
      deposits: w.deposits.length,
      withdrawals: w.withdrawals.length,
    }),
    deposits: () => w.deposits.filter((d) => !d.hidden && !d.unlisted).map((d) => w.depositView(d)),
    withdrawals: () => w.withdrawals.map((x) => w.withdrawalView(x)),
    balances: () => w.balanceViews(),
    openingBalances: () => Object.fromEntries([...w.opening].map(([c, v]) => [c, v.toString()])),
    whitelist: () => w.whitelist.map((e) => ({ ...e })),
    symbols: () => w.symbols,
    currencies: () => w.partnerCurrencies,
    fees: () => ({ makerRate: MAKER_RATE, takerRate: TAKER_RATE }),
    depositAddresses: () => ({ ...w.addresses }),
    clock: () => w.clock(),
  };

  let addSeq = 0;
  const stop = async (): Promise<void> => {
    if (timer) clearInterval(timer);
    await webhooks?.stop();
  };
  const start = (url: string, close: () => Promise<void>): Sandbox => {
    env = {
      PARTNER_API_URL: url,
      PARTNER_PUBLIC_KEY: opts.partnerPublicKey,
      PARTNER_PRIVATE_KEY: opts.partnerPrivateKey,
      EXCHANGE_API_URL: `${url}/v3/exchange`,
      EXCHANGE_API_TOKEN: opts.exchangeToken,
    };
    if (opts.webhookUrl) webhooks = startWebhooks(w, opts.webhookUrl);
    timer = opts.live
      ? setInterval(() => {
          catchUp();
          webhooks?.poke();
        }, opts.liveTickMs)
      : undefined;
    timer?.unref();
    return {
      url,
      env,
      options: opts,
      partnerFeeRate: opts.partnerFeeRate,
      expectedBreaks: () => w.expected.map((b) => ({ ...b })),
      advance,
      data,
      setOption: (name, value) => {
        (opts as unknown as Record<string, unknown>)[name] = value;
        if (name === 'faults') faults = resolveFaults(value as SandboxOptions['faults']);
      },
      addPartnerOrders: (count, at) => {
        const rng = createRng(opts.seed, `added:${addSeq++}`);
        const out: PartnerOrderView[] = [];
        for (let i = 0; i < count; i++) {
          const ms = at ? at.getTime() : w.clock();
          const { order, deposit } = makePartnerOrder(w, rng, ms, {
            recentFrom: w.now0 - 20 * HOUR_MS,
            compressEnd: ms + 3,
            external: true,
          });
          w.addPartnerOrder(order);
          if (deposit) w.scheduled.push(deposit);
          out.push(w.partnerView(order, Math.max(ms, w.clock())));
        }
        return out;
      },
      onPartnerOrdersPage: (cb) => {
        pageHooks.add(cb);
        return () => pageHooks.delete(cb);
      },
      onRequest: (cb) => {
        requestHooks.add(cb);
        return () => requestHooks.delete(cb);
      },
      fillOrder: (exOrdId) => fillLater(exOrdId),
      fixDiscrepancy: (code) => fix(code),
      releaseLate: (event) => {
        const released = releaseLateEvent(late, event);
        webhooks?.poke();
        return released;
      },
      elapse,
      webhookDeliveries: () => webhooks?.deliveries() ?? [],
      webhooksIdle: () => webhooks?.idle() ?? Promise.resolve(),
      close,
    };
  };

  return { opts, handlers, start, stop };
}

function stripInternal(
  o: ExchangeOrderRecord & { fillFrom?: number; fillCount?: number; lateFills?: number[] },
): ExchangeOrderRecord {
  const { fillFrom: _a, fillCount: _b, lateFills: _c, ...rest } = o;
  return rest;
}

export function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * With faults, one REJECTED deposit of the first history day is served malformed (its amount
 * is not a number) inside an otherwise good page: a REJECTED deposit moves no balance and
 * matches no partner order, so losing it to quarantine changes no other rule's outcome.
 */
function plantMalformed(w: World): void {
  const ts = w.historyStart + 3 * HOUR_MS + 17;
  const d: DepositRecord = {
    depositId: `D${w.seq.deposit++}`,
    amount: '0.25000000',
    currency: 'BTC',
    address: w.addresses.BTC!,
    txHash: 'f'.repeat(64),
    timestamp: ts,
    timeline: [{ state: 'REJECTED', atMs: ts }],
    malformed: true,
  };
  w.addDeposit(d);
  w.expected.push({ code: 'S_QUARANTINE', key: d.depositId });
}
