/** Request budgets shared by the accounts of one process: the operator's limits are per organisation (partner private
 * calls), per login (exchange) and per IP address (partner public calls), not per account of ours.
 */
import { createRateLimiter, type RateLimiter } from './client.js';

const limiters = new Map<string, { perSecond: number; limiter: RateLimiter }>();

/**
 * The limiter of a budget, made on first use and shared by every client that names it afterwards. A budget asked
 * again at another rate takes the lower one: two accounts of one organisation configured apart never add up past
 * the stricter.
 */
export function sharedLimiter(budget: string, perSecond: number): RateLimiter {
  const known = limiters.get(budget);
  if (known && known.perSecond <= perSecond) return known.limiter;
  const made = { perSecond, limiter: createRateLimiter(perSecond) };
  limiters.set(budget, made);
  return made.limiter;
}

/** The budget keys of an account's calls: its rate group's for private and exchange calls, the process's for public. */
export function rateBudgets(rateGroup: string): { partnerPublic: string; partnerPrivate: string; exchange: string } {
  return {
    // per IP address: every account this process runs shares it
    partnerPublic: 'partner-public',
    partnerPrivate: `${rateGroup}:partner-private`,
    exchange: `${rateGroup}:exchange`,
  };
}
