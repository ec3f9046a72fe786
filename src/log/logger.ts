/** The pino logger: JSON lines on stderr (readable lines on a terminal), secrets redacted by path and by value. */
import { createRequire } from 'node:module';
import pino, { type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { Writable } from 'node:stream';
import { attachTerminalStatusLine, type StatusLine } from './status-line.js';

export type { Logger };

/** Paths pino masks in every log line, whatever module logs them. */
const REDACT = [
  'token',
  'apiKey',
  'publicKey',
  'privateKey',
  'password',
  'smtpUrl',
  '*.token',
  '*.apiKey',
  '*.publicKey',
  '*.privateKey',
  '*.password',
  '*.smtpUrl',
  'headers["x-api-token"]',
  'headers["x-public-api-key"]',
  'headers["x-private-api-key"]',
  '*.headers["x-api-token"]',
  '*.headers["x-public-api-key"]',
  '*.headers["x-private-api-key"]',
];

export type LogFormat = 'json' | 'pretty';

/** pretty on a terminal, JSON lines otherwise (a log file, a collector, a pipe). */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stderr): LogFormat {
  return stream.isTTY ? 'pretty' : 'json';
}

/**
 * The one root logger, on stderr so stdout stays free for --json output: JSON lines, or with
 * format 'pretty' one readable line per entry ("[03:12:01] INFO: exchange sync: done ... {fields}")
 * written synchronously, so lines never interleave. Secret values known at start-up (every account's keys, URL
 * passwords and credential parameters: `group.secrets`) are scrubbed from the message, every field at any depth
 * (bounded), errors, and last from the line as written, before either format sees them.
 */
export function createLogger(
  options: {
    level?: string;
    secrets?: readonly string[];
    destination?: NodeJS.WritableStream;
    format?: LogFormat;
  } = {},
): Logger {
  // The longest first: a secret that contains another is masked whole.
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const scrub = (text: string) => secrets.reduce((t, s) => t.split(s).join('********'), text);
  // In a JSON line a secret's quotes and backslashes are escaped.
  const escaped = [...new Set([...secrets, ...secrets.map((s) => JSON.stringify(s).slice(1, -1))])];
  const scrubLine = (line: string) => escaped.reduce((t, s) => t.split(s).join('********'), line);
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACT, censor: '********' },
      base: { app: 'ramp-recon' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      ...(secrets.length
        ? {
            hooks: {
              // The line as written, last: what no field hook sees (a child logger's bindings) is scrubbed too.
              streamWrite: (line: string) => scrubLine(line),
              logMethod(args, method) {
                method.apply(this, args.map((a) => scrubFields(a, scrub)) as Parameters<typeof method>);
              },
            },
          }
        : {}),
      serializers: {
        err: (err: Error) => {
          const s = pino.stdSerializers.err(err);
          // Every field of it: a driver's error carries its query, parameters or URL besides the message.
          return secrets.length ? scrubFields({ ...s }, scrub) : s;
        },
      },
    },
    options.format === 'pretty'
      ? loadPretty()({
          destination: (options.destination as NodeJS.WritableStream | undefined) ?? prettyStderr(),
          sync: true,
          colorize: options.destination ? false : process.stderr.isTTY === true,
          translateTime: 'UTC:HH:MM:ss',
          ignore: 'pid,hostname,app',
          singleLine: true,
        })
      : ((options.destination as pino.DestinationStream | undefined) ?? pino.destination(2)),
  );
}

/**
 * pino-pretty (31 modules), loaded only for readable lines: a nightly run writes JSON lines and should not pay it at
 * start-up (about 20 ms). A CommonJS package, so required synchronously: createLogger stays synchronous.
 */
function loadPretty(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

/**
 * Where readable lines go without a destination: stderr, through its status line on a terminal (the line of a long
 * sync's progress is cleared before each log line and drawn again after it), else file descriptor 2.
 */
function prettyStderr(): NodeJS.WritableStream | 2 {
  return process.stderr.isTTY === true ? linesAbove(attachTerminalStatusLine()) : 2;
}

/** A destination for readable lines that writes each one above the status line. */
export function linesAbove(status: StatusLine): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      status.above(String(chunk));
      done();
    },
  });
}

/** How deep and how many values of a log line's fields are scrubbed; past that a value is left out, not logged. */
const MAX_DEPTH = 6;
const MAX_VALUES = 2_000;

/**
 * A log call's argument with every string scrubbed, at any depth (plain objects and arrays are copied, never changed
 * in place). Errors keep their place for pino's serializer (which scrubs them) at the top, and are reduced to their
 * scrubbed type and message deeper; anything past the bounds is replaced by a note, so nothing goes out unscrubbed.
 */
export function scrubFields(value: unknown, scrub: (text: string) => string): unknown {
  // log.error(err) and { err }: pino's err serializer scrubs these.
  if (value instanceof Error) return value;
  let budget = MAX_VALUES;
  const walk = (v: unknown, depth: number, key?: string): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (v === null || typeof v !== 'object') return v;
    if (--budget < 0 || depth > MAX_DEPTH) return '[left out: too deep or too many values to scrub]';
    if (v instanceof Error) return depth === 1 && key === 'err' ? v : { type: v.name, message: scrub(v.message) };
    if (v instanceof URL) return scrub(v.href);
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const proto = Object.getPrototypeOf(v) as unknown;
    // A class instance (Decimal, Date, Buffer) is logged as its own JSON form, which holds no config secret.
    if (proto !== Object.prototype && proto !== null) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, depth + 1, k)]));
  };
  return walk(value, 0);
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
