/** The pino logger: JSON lines on stderr (readable lines on a terminal), secrets redacted by path and by value. */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

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
 * written synchronously, so lines never interleave. Secret values known at
 * start-up are scrubbed from messages and error text before either format sees them.
 */
export function createLogger(
  options: {
    level?: string;
    secrets?: readonly string[];
    destination?: NodeJS.WritableStream;
    format?: LogFormat;
  } = {},
): Logger {
  const secrets = (options.secrets ?? []).filter((s) => s.length >= 4);
  const scrub = (text: string) => secrets.reduce((t, s) => t.split(s).join('********'), text);
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
              logMethod(args, method) {
                method.apply(
                  this,
                  args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as Parameters<typeof method>,
                );
              },
            },
          }
        : {}),
      serializers: {
        err: (err: Error) => {
          const s = pino.stdSerializers.err(err);
          if (secrets.length) {
            s.message = scrub(s.message);
            if (s.stack) s.stack = scrub(s.stack);
          }
          return s;
        },
      },
    },
    options.format === 'pretty'
      ? pretty({
          destination: (options.destination as NodeJS.WritableStream | undefined) ?? 2,
          sync: true,
          colorize: options.destination ? false : process.stderr.isTTY === true,
          translateTime: 'UTC:HH:MM:ss',
          ignore: 'pid,hostname,app',
          singleLine: true,
        })
      : ((options.destination as pino.DestinationStream | undefined) ?? pino.destination(2)),
  );
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
