/**
 * The bench's sandbox in a process of its own, so that serving pages does not share the sync's
 * event loop (a local API, as in production). Options come as JSON in argv[2], plus
 * `clockOffsetMs` (this process's clock runs that far from the real one: a simulated calendar),
 * and `accounts` (names): several accounts behind one server (startSandboxAccounts), each with the
 * options (its own seed and keys), their env variables under each account's prefix.
 * The first IPC message is `{ env, clock, counts, accounts? }`; then it answers `{ id, cmd }`
 * messages (see Command) with `{ id, result }`. It lives until the parent disconnects.
 */
import { setClockOffset } from './clock.js';
import type { ExpectedBreak, Sandbox, SandboxOptions } from '../sandbox/index.js';

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
  /** Requests served since the last `requests`, by endpoint (every account's); the count starts again at zero. */
  | { cmd: 'requests' }
  /** The same, by account name, then by endpoint. */
  | { cmd: 'accountRequests' }
  /** Every account's records together (clock: the latest). */
  | { cmd: 'counts' }
  /** Each account's records, by account name. */
  | { cmd: 'accountCounts' }
  /** The sandbox's clock (epoch ms; every account's, see the start): what a run's clock is set to. */
  | { cmd: 'clock' }
  /** Moves the clock `ms` ahead at `rates` (each account's): the live sandbox generates that span spread over its whole length. */
  | { cmd: 'elapse'; ms: number; rates: Rates }
  /** The Exchange API listings served since the last `pageUrls` (path and query): what the bare client replays. */
  | { cmd: 'pageUrls' }
  /** Each account's planted discrepancies (option `discrepancies`), by account name: the breaks a run must find. */
  | { cmd: 'expectedBreaks' }
  /** The CPU this process has spent since it started (user + system, ms): what serving a run cost the machine. */
  | { cmd: 'cpu' };

const raw = JSON.parse(process.argv[2] ?? '{}') as Partial<SandboxOptions> & {
  now?: string;
  clockOffsetMs?: number;
  accounts?: string[];
};
const { clockOffsetMs = 0, accounts: names, ...options } = raw;
let offset = clockOffsetMs;
setClockOffset(offset);
// Loaded after the clock is set: the sandbox's world anchors its clock at construction.
const { startSandbox, startSandboxAccounts } = await import('../sandbox/index.js');
const now = options.now ? new Date(options.now) : undefined;
const group = names ? await startSandboxAccounts({ ...options, now, accounts: names.map((name) => ({ name })) }) : null;
// Each account's world starts its clock when it is built, one after another: the last would lag the first by every
// other account's generation (100 accounts: over a minute), and a run's clock can be only one of them. Each is brought
// to the latest, so every account, and the runs, read one calendar.
if (group) {
  const latest = Math.max(...group.names.map((name) => group.accounts[name]!.data.clock()));
  for (const name of group.names) group.accounts[name]!.elapse(latest - group.accounts[name]!.data.clock());
}
/** Each account's sandbox by name (one account: the name ""). */
const sandboxes = new Map<string, Sandbox>(
  group ? group.names.map((name) => [name, group.accounts[name]!]) : [['', await startSandbox({ ...options, now })]],
);

let requests = new Map<string, Map<string, number>>();
/** The listing pages (fills, trades, orders) the exchange sync asked for, in order: the floor's requests. */
let pageUrls: string[] = [];
const LISTINGS = new Set(['/fills', '/trades', '/orders']);
for (const [name, sb] of sandboxes)
  sb.onRequest(({ api, method, path, query }) => {
    if (api === 'exchange' && method === 'GET' && LISTINGS.has(path)) pageUrls.push(`${path}?${query.toString()}`);
    const key = endpointKey(api, method, path, query);
    const of = requests.get(name) ?? requests.set(name, new Map()).get(name)!;
    of.set(key, (of.get(key) ?? 0) + 1);
  });

function counts(sb: Sandbox): SandboxCounts {
  const c = sb.data.counts();
  // A plain decimal with a non-zero digit: the order has a fill.
  const trades = sb.data.exchangeOrders().filter((o) => /[1-9]/.test(o.cumQty)).length;
  return { clock: sb.data.clock(), ...c, trades };
}

function accountCounts(): Record<string, SandboxCounts> {
  return Object.fromEntries([...sandboxes].map(([name, sb]) => [name, counts(sb)]));
}

/** Every account's counts added up; the clock is the latest. */
function allCounts(): SandboxCounts {
  const each = Object.values(accountCounts());
  const sum = (k: keyof SandboxCounts): number => each.reduce((n, c) => n + c[k], 0);
  return {
    clock: Math.max(...each.map((c) => c.clock)),
    fills: sum('fills'),
    exchangeOrders: sum('exchangeOrders'),
    trades: sum('trades'),
    partnerOrders: sum('partnerOrders'),
    deposits: sum('deposits'),
    withdrawals: sum('withdrawals'),
  };
}

async function elapse(ms: number, rates: Rates): Promise<SandboxCounts> {
  for (const sb of sandboxes.values())
    for (const [name, value] of Object.entries(rates)) sb.setOption(name as keyof Rates, value);
  offset += ms;
  setClockOffset(offset);
  // Any API request brings a live sandbox up to its clock (each account: a request with its own
  // token); the parent discards the count.
  for (const sb of sandboxes.values())
    await fetch(`${sb.env.EXCHANGE_API_URL}/fees`, { headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! } }).then(
      (r) => r.text(),
    );
  return allCounts();
}

function takeRequests(): Map<string, Map<string, number>> {
  const taken = requests;
  requests = new Map();
  return taken;
}

async function answer(m: Command): Promise<unknown> {
  if (m.cmd === 'requests') {
    const out: Record<string, number> = {};
    for (const of of takeRequests().values()) for (const [key, n] of of) out[key] = (out[key] ?? 0) + n;
    return out;
  }
  if (m.cmd === 'accountRequests')
    return Object.fromEntries([...takeRequests()].map(([name, of]) => [name, Object.fromEntries(of)]));
  if (m.cmd === 'counts') return allCounts();
  if (m.cmd === 'pageUrls') {
    const taken = pageUrls;
    pageUrls = [];
    return taken;
  }
  if (m.cmd === 'accountCounts') return accountCounts();
  if (m.cmd === 'clock') return Math.max(...[...sandboxes.values()].map((sb) => sb.data.clock()));
  if (m.cmd === 'cpu') {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  }
  if (m.cmd === 'expectedBreaks')
    return Object.fromEntries(
      [...sandboxes].map(([name, sb]): [string, ExpectedBreak[]] => [name, sb.expectedBreaks()]),
    );
  return elapse(m.ms, m.rates);
}

process.on('message', (m: Command & { id: number }) => {
  void answer(m).then((result) => process.send?.({ id: m.id, result }));
});
const ready = allCounts();
process.send?.({
  env: group ? group.env : sandboxes.get('')!.env,
  clock: ready.clock,
  counts: ready,
  ...(group ? { accounts: accountCounts() } : {}),
});
const sandbox = group ?? sandboxes.get('')!;
process.on('disconnect', () => void sandbox.close().then(() => process.exit(0)));

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
