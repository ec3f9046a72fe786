/** Simulator: fault injection profiles (429, 5xx, slow and truncated answers). */
/** Fault injection profile: probabilities per request (deterministic from the seed). */
export interface FaultProfile {
  /** 429 with Retry-After. */
  rateLimited: number;
  /** Seconds in the Retry-After header. */
  retryAfterSeconds: number;
  serverError500: number;
  serverError503: number;
  /** Probability of a response delayed by slowMs (longer than a client timeout). */
  slow: number;
  slowMs: number;
  /** Probability of a body cut in the middle (connection closed). */
  truncated: number;
  /** Serve one REJECTED deposit malformed inside its page (listed as S_QUARANTINE). */
  malformedRecord: boolean;
  /** Partner public-key calls per second and client IP before 429 (the documented 10/s); 0 = no limit. */
  publicRateLimitPerSecond: number;
}

export const DEFAULT_FAULTS: FaultProfile = {
  rateLimited: 0.03,
  retryAfterSeconds: 1,
  serverError500: 0.02,
  serverError503: 0.02,
  slow: 0.01,
  slowMs: 15_000,
  truncated: 0.01,
  malformedRecord: true,
  publicRateLimitPerSecond: 10,
};

export const NO_FAULTS: FaultProfile = {
  rateLimited: 0,
  retryAfterSeconds: 1,
  serverError500: 0,
  serverError503: 0,
  slow: 0,
  slowMs: 0,
  truncated: 0,
  malformedRecord: false,
  publicRateLimitPerSecond: 0,
};

export function resolveFaults(f: 'none' | 'default' | FaultProfile): FaultProfile {
  if (f === 'none') return NO_FAULTS;
  if (f === 'default') return DEFAULT_FAULTS;
  return { ...NO_FAULTS, ...f };
}
