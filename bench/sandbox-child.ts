/**
 * The bench's sandbox in a process of its own, so that serving pages does not share the sync's
 * event loop (a local API, as in production). Options come as JSON in argv[2], plus
 * `clockOffsetMs` (this process's clock runs that far from the real one: a simulated calendar).
 * The first IPC message is `{ env, clock, counts }`; then it answers `{ id, cmd }` messages (see
 * Command) with `{ id, result }`. It lives until the parent disconnects.
 */
import { setClockOffset } from './clock.js';
import type { SandboxOptions } from '../sandbox/index.js';

export interface SandboxCounts {
  clock: number;
  fills: number;
  exchangeOrders: number;
  /** Exchange orders with at least one fill: what /trades lists. */
  trades: number;
  partnerOrders: number;
  deposits: number;
  withdrawals: number;
}

/** Per-day volumes of the activity generated from now on (live spans read them). */
export type Rates = Pick<
  SandboxOptions,
  'exchangeOrdersPerDay' | 'ordersPerDay' | 'depositsPerDay' | 'withdrawalsPerDay'
>;

export type Command =
  /** Requests served since the last `requests`, by endpoint; the count starts again at zero. */
  | { cmd: 'requests' }
  | { cmd: 'counts' }
  /** Moves the clock `ms` ahead at `rates`: the live sandbox generates that span spread over its whole length. */
  | { cmd: 'elapse'; ms: number; rates: Rates };

const raw = JSON.parse(process.argv[2] ?? '{}') as Partial<SandboxOptions> & { now?: string; clockOffsetMs?: number };
const { clockOffsetMs = 0, ...options } = raw;
let offset = clockOffsetMs;
setClockOffset(offset);
// Loaded after the clock is set: the sandbox's world anchors its clock at construction.
const { startSandbox } = await import('../sandbox/index.js');
const sb = await startSandbox({ ...options, now: options.now ? new Date(options.now) : undefined });

let requests = new Map<string, number>();
sb.onRequest(({ api, method, path, query }) => {
  const key = endpointKey(api, method, path, query);
  requests.set(key, (requests.get(key) ?? 0) + 1);
});

function counts(): SandboxCounts {
  const c = sb.data.counts();
  // A plain decimal with a non-zero digit: the order has a fill.
  const trades = sb.data.exchangeOrders().filter((o) => /[1-9]/.test(o.cumQty)).length;
  return { clock: sb.data.clock(), ...c, trades };
}

async function elapse(ms: number, rates: Rates): Promise<SandboxCounts> {
  for (const [name, value] of Object.entries(rates)) sb.setOption(name as keyof Rates, value);
  offset += ms;
  setClockOffset(offset);
  // Any API request brings a live sandbox up to its clock; the parent discards the count.
  await fetch(`${sb.env.EXCHANGE_API_URL}/fees`, { headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! } }).then((r) =>
    r.text(),
  );
  return counts();
}

async function answer(m: Command): Promise<unknown> {
  if (m.cmd === 'requests') {
    const out = Object.fromEntries(requests);
    requests = new Map();
    return out;
  }
  if (m.cmd === 'counts') return counts();
  return elapse(m.ms, m.rates);
}

process.on('message', (m: Command & { id: number }) => {
  void answer(m).then((result) => process.send?.({ id: m.id, result }));
});
process.send?.({ env: sb.env, clock: sb.data.clock(), counts: counts() });
process.on('disconnect', () => void sb.close().then(() => process.exit(0)));

/**
 * "partner GET /orders/{id}": path segments holding a digit are ids. The list endpoints that
 * stand for several listings carry the parameter that selects one: the exchange order status,
 * and whether partner orders are listed by wallet.
 */
function endpointKey(api: string, method: string, path: string, query: URLSearchParams): string {
  const template = path
    .split('/')
    .map((s) => (/\d/.test(s) ? '{id}' : s))
    .join('/');
  const status = api === 'exchange' && template === '/orders' ? query.get('status') : null;
  const wallet = api === 'partner' && template === '/orders' && query.has('walletAddress');
  return `${api} ${method} ${template}${status ? `?status=${status}` : ''}${wallet ? '?walletAddress' : ''}`;
}
