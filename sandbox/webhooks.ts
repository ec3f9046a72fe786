/** Simulator: sends partner webhooks for order state changes, with the sender's retries. */
import { Agent } from 'undici';
import { hash53 } from './prng.js';
import { orderJson } from './partner-routes.js';
import type { PartnerOrderRecord } from './model.js';
import { writeJson, type Json } from './wire.js';
import { partnerViewAt, type World } from './world.js';

export interface WebhookDelivery {
  eventId: string;
  orderId: string;
  orderState: string;
  attempt: number;
  at: number;
  /** HTTP status, or 0 for a network error / timeout. */
  status: number;
  ok: boolean;
  duplicate: boolean;
}

export interface WebhookRunner {
  poke(): void;
  deliveries(): readonly WebhookDelivery[];
  idle(): Promise<void>;
  stop(): Promise<void>;
}

interface Pending {
  eventId: string;
  orderId: string;
  state: string;
  body: string;
  attempt: number;
  nextAt: number;
  duplicate: boolean;
  /** Held back until the order's last event is acknowledged: the "late earlier state". */
  heldFor?: string;
}

const ACK_TIMEOUT_MS = 5_000;
const MAX_ATTEMPTS = 8;
const BACKOFF_BASE_MS = 250;
const CONCURRENCY = 8;
/** One of the five documented sender addresses, for receivers behind a trusted proxy. */
const SENDER_IP = '34.76.54.194';

/**
 * Delivers order state-change events as the partner contract describes: one POST per state
 * change, 2xx within 5 s or it is retried with exponential back-off (compressed to ms for the
 * sandbox), some events delivered twice, and on some orders the first state arrives after the
 * last. Planted P_WEBHOOK_GAP states are never sent.
 */
export function startWebhooks(w: World, url: string): WebhookRunner {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 1000 });
  const queued = new Map<string, number>(); // orderId -> steps already queued
  const queue: Pending[] = [];
  const log: WebhookDelivery[] = [];
  const acked = new Set<string>();
  let inFlight = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let idleWaiters: Array<() => void> = [];

  const eventFor = (o: PartnerOrderRecord, i: number): Pending => {
    const step = o.timeline[i]!;
    const eventId = `evt_${hash53(`${o.orderId}:${step.state}:${step.at}`).toString(16)}`;
    const view = partnerViewAt(o, step);
    const body = {
      eventId,
      ...(orderJson(view) as Record<string, Json>),
      createdAt: step.at,
      userCountry: o.userCountry,
      userState: o.userState,
    };
    const late = o.timeline.length > 2 && i === 0 && hash53(o.orderId, 21) % 10 === 0;
    const pending: Pending = {
      eventId,
      orderId: o.orderId,
      state: step.state,
      body: writeJson(body),
      attempt: 0,
      nextAt: Date.now(),
      duplicate: hash53(eventId, 22) % 20 === 0,
    };
    const finalState = o.timeline[o.timeline.length - 1]!.state;
    if (late && !o.undeliveredStates?.includes(finalState)) pending.heldFor = `${o.orderId}:${o.timeline.length - 1}`;
    return pending;
  };

  const collect = (): void => {
    const clock = w.clock();
    for (const o of w.partnerOrders) {
      const done = queued.get(o.orderId) ?? 0;
      if (done >= o.timeline.length || o.createdAtMs > clock) continue;
      let i = done;
      for (; i < o.timeline.length && o.timeline[i]!.atMs <= clock; i++) {
        if (o.undeliveredStates?.includes(o.timeline[i]!.state)) continue;
        const ev = eventFor(o, i);
        (ev as Pending & { key: string }).key = `${o.orderId}:${i}`;
        queue.push(ev);
      }
      queued.set(o.orderId, i);
    }
  };

  const pump = (): void => {
    if (stopped) return;
    const now = Date.now();
    queue.sort((a, b) => a.nextAt - b.nextAt);
    for (let k = 0; k < queue.length && inFlight < CONCURRENCY;) {
      const p = queue[k]!;
      if (p.nextAt > now) break;
      if (p.heldFor && !acked.has(p.heldFor)) {
        k++;
        continue;
      }
      queue.splice(k, 1);
      void send(p);
    }
    schedule();
    if (inFlight === 0 && queue.every((p) => p.heldFor !== undefined && !acked.has(p.heldFor))) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  const schedule = (): void => {
    if (timer || stopped) return;
    const next = queue
      .filter((p) => !p.heldFor || acked.has(p.heldFor))
      .reduce((m, p) => Math.min(m, p.nextAt), Number.POSITIVE_INFINITY);
    if (!Number.isFinite(next)) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        pump();
      },
      Math.max(0, next - Date.now()),
    );
    timer.unref();
  };

  const send = async (p: Pending): Promise<void> => {
    inFlight++;
    p.attempt++;
    let status: number;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': SENDER_IP },
        body: p.body,
        signal: AbortSignal.timeout(ACK_TIMEOUT_MS),
        // @ts-expect-error undici dispatcher option of Node's fetch
        dispatcher,
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch {
      status = 0;
    }
    inFlight--;
    const ok = status >= 200 && status < 300;
    log.push({
      eventId: p.eventId,
      orderId: p.orderId,
      orderState: p.state,
      attempt: p.attempt,
      at: Date.now(),
      status,
      ok,
      duplicate: (p as Pending & { key?: string }).key === undefined,
    });
    const key = (p as Pending & { key?: string }).key;
    if (ok) {
      if (key) acked.add(key);
      if (p.duplicate) {
        // The same event again, as when a receiver's acknowledgement was lost.
        p.duplicate = false;
        const copy = { ...p, attempt: 0, nextAt: Date.now() + 50 };
        delete (copy as Pending & { key?: string }).key;
        queue.push(copy);
      }
    } else if (p.attempt < MAX_ATTEMPTS) {
      p.nextAt = Date.now() + BACKOFF_BASE_MS * 2 ** (p.attempt - 1);
      queue.push(p);
    } else if (key) acked.add(key); // given up: do not hold a late earlier state forever
    pump();
  };

  const poke = (): void => {
    collect();
    pump();
  };
  poke();
  return {
    poke,
    deliveries: () => log,
    idle: () => {
      poke();
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        pump();
      });
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await dispatcher.close().catch(() => undefined);
    },
  };
}
