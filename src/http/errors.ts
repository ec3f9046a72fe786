/** HTTP failures as named errors: auth refused, an error status, a timeout, the network, a body that is not JSON. */
import { AppError } from '../errors.js';
import { listText, plural } from '../util/words.js';

import type { ApiName } from '../domain/index.js';

export type { ApiName } from '../domain/index.js';

export const API_LABEL: Record<ApiName, string> = { partner: 'Partner API', exchange: 'Exchange API' };

/** An auth header a client sends and the environment variable that holds its value (its name only, never the value). */
export interface AuthHeader {
  header: string;
  variable: string;
}

/**
 * " after 1 attempt", " after 3 attempts": how often the request was tried (once when retries are off, as in
 * doctor).
 */
function afterAttempts(attempts: number): string {
  return ` after ${plural(attempts, 'attempt')}`;
}

/** " at http://host:port": the server tried (scheme, host and port only: never a path, query or credential). */
function at(origin: string | undefined): string {
  return origin ? ` at ${origin}` : '';
}

/** 401/403: the credentials are wrong; retrying cannot help, so the run stops. Never carries the key. */
export class HttpAuthError extends AppError {
  readonly headerNames: string[];
  /**
   * What to do, naming the variables of the refused headers as the account reads them: "check
   * BETA_EXCHANGE_API_TOKEN".
   */
  readonly hint: string;
  constructor(
    readonly api: ApiName,
    readonly status: number,
    readonly method: string,
    readonly path: string,
    refused: readonly AuthHeader[],
  ) {
    const headerNames = refused.map((h) => h.header);
    const names = headerNames.length ? headerNames.join(' / ') : 'authentication';
    const hint = refused.length
      ? `check ${listText(refused.map((h) => h.variable))}`
      : 'check the key in the environment';
    const headers = `the ${names} header${headerNames.length > 1 ? 's' : ''}`;
    super('HTTP_AUTH', `${API_LABEL[api]} rejected ${headers} (${status}) on ${method} ${path}; ${hint}`);
    this.headerNames = headerNames;
    this.hint = hint;
  }
}

/** A status we do not accept: another 4xx, or a 429/5xx that outlived the retries. */
export class HttpStatusError extends AppError {
  constructor(
    readonly api: ApiName,
    readonly status: number,
    readonly method: string,
    readonly path: string,
    /** First 500 characters of the error body (exchange: {timestamp,status,error,message,path}). */
    readonly bodyExcerpt: string,
    readonly attempts: number,
  ) {
    const tried = attempts > 1 ? afterAttempts(attempts) : '';
    const body = bodyExcerpt ? `: ${bodyExcerpt.slice(0, 200)}` : '';
    super('HTTP_STATUS', `${API_LABEL[api]} answered ${status} on ${method} ${path}${tried}${body}`);
  }
}

/**
 * A request that got no answer: its API, method and path, the attempts made, the last failure, the environment variable
 * that says where the API is (as the account reads it), the server.
 */
type Unanswered = [
  api: ApiName,
  method: string,
  path: string,
  attempts: number,
  cause: unknown,
  urlVariable: string,
  origin?: string,
];

/** A request that got no answer (a timeout or another network failure) after the retries. */
export abstract class HttpUnansweredError extends AppError {
  /** What to do: "check BETA_EXCHANGE_API_URL and the network". */
  readonly hint: string;
  constructor(
    code: string,
    /** What happened to the request, given as "METHOD path". */
    failed: (request: string) => string,
    readonly api: ApiName,
    readonly method: string,
    readonly path: string,
    readonly attempts: number,
    cause: unknown,
    urlVariable: string,
    readonly origin?: string,
  ) {
    const hint = `check ${urlVariable} and the network`;
    const what = `${API_LABEL[api]}${at(origin)} ${failed(`${method} ${path}`)}${afterAttempts(attempts)}`;
    const why = (cause as Error)?.message ?? cause;
    super(code, `${what}: ${why}; ${hint} (\`ramp-recon doctor\` tries it)`, 1, { cause });
    this.hint = hint;
  }
}

/** Connect or body timeout (or another network failure) that outlived the retries. */
export class HttpTimeoutError extends HttpUnansweredError {
  constructor(...request: Unanswered) {
    super('HTTP_TIMEOUT', (r) => `did not answer ${r} in time`, ...request);
  }
}

/** A network failure other than a timeout (connection refused or reset) that outlived the retries. */
export class HttpNetworkError extends HttpUnansweredError {
  constructor(...request: Unanswered) {
    super('HTTP_NETWORK', (r) => `unreachable on ${r}`, ...request);
  }
}

/** A 2xx whose body is not JSON (truncated, HTML from a proxy): retried as a transport fault, then this. */
export class InvalidBodyError extends AppError {
  constructor(
    readonly api: ApiName,
    readonly method: string,
    readonly path: string,
    readonly bodyExcerpt: string,
    readonly attempts: number,
  ) {
    const where = `on ${method} ${path}${afterAttempts(attempts)}`;
    super('HTTP_INVALID_BODY', `${API_LABEL[api]} sent a body that is not JSON ${where}: ${bodyExcerpt.slice(0, 120)}`);
  }
}

/** A response body over `http.maxResponseBytes`: never read whole (it could take the process's memory), not retried. */
export class ResponseTooLargeError extends AppError {
  constructor(
    readonly api: ApiName,
    readonly method: string,
    readonly path: string,
    readonly limit: number,
  ) {
    super(
      'HTTP_RESPONSE_TOO_LARGE',
      `${API_LABEL[api]} sent a response larger than http.maxResponseBytes (${limit} bytes) on ${method} ${path}; ` +
        'it was not read (raise http.maxResponseBytes if such a page is expected)',
    );
  }
}

export type HttpError =
  HttpAuthError | HttpStatusError | HttpTimeoutError | HttpNetworkError | InvalidBodyError | ResponseTooLargeError;

export function isHttpError(err: unknown): err is HttpError {
  return (
    err instanceof HttpAuthError ||
    err instanceof HttpStatusError ||
    err instanceof HttpTimeoutError ||
    err instanceof HttpNetworkError ||
    err instanceof InvalidBodyError
  );
}
