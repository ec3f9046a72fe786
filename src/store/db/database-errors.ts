/** Database failures in words: which database (never its password), what went wrong, and what to do. */
import { AppError, EXIT } from '../../errors.js';

/** The database could not be reached or refused us: names the part, the server tried and the fix. */
export class DatabaseUnavailableError extends AppError {
  constructor(message: string, cause: unknown) {
    super('DATABASE_UNAVAILABLE', message, EXIT.failed, { cause });
  }
}

/** Codes of a connection that never worked or went away (node's socket errors, Postgres' SQLSTATEs). */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused (no server listening there)',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name could not be resolved',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset by the server',
  EHOSTUNREACH: 'host unreachable',
  '28P01': 'password authentication failed',
  '28000': 'the server refused this user',
  '3D000': 'the database does not exist',
  '57P01': 'the server was shut down (terminated by an administrator)',
  '57P02': 'the server crashed',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'too many connections',
};

/** Where we tried: the URL without its password (host, port, database, user). */
export function databaseTarget(url: string | undefined, dataDir?: string): string {
  if (!url) return `the embedded database in ${dataDir ?? 'data'}`;
  try {
    const u = new URL(url);
    return `PostgreSQL at ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname && u.pathname !== '/' ? u.pathname : ''}${u.username ? ` as ${decodeURIComponent(u.username)}` : ''}`;
  } catch {
    return 'the PostgreSQL server of DATABASE_URL';
  }
}

/**
 * The error as a DatabaseUnavailableError when it is one of a connection (refused, unknown host,
 * authentication, missing database, server gone); null for any other error (a failing query says
 * enough on its own).
 */
export function asDatabaseUnavailable(err: unknown, target: string): DatabaseUnavailableError | null {
  if (err instanceof DatabaseUnavailableError) return err;
  const e = err as { code?: string; message?: string; errors?: unknown[] } | null;
  // AggregateError (node tries IPv4 and IPv6) carries the codes on its parts.
  const code = e?.code ?? (e?.errors?.[0] as { code?: string } | undefined)?.code;
  const terminated = /Connection terminated|connection is closed|Client has encountered a connection error/i.test(
    e?.message ?? '',
  );
  const reason = code && REASONS[code] ? REASONS[code] : terminated ? 'the connection was lost' : null;
  if (!reason) return null;
  return new DatabaseUnavailableError(
    `database: cannot use ${target}: ${reason}${e?.message && !reason.includes(e.message) ? ` (${e.message})` : ''}; check DATABASE_URL and that the server is running (\`ramp-recon doctor\` tries it)`,
    err,
  );
}

/** A statement refused for a duplicate key (SQLSTATE 23505), on a server or the embedded database. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '23505';
}
