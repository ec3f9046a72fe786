/** The pino logger: JSON lines on stderr, secrets redacted by path and by value. */
import pino, { type Logger } from 'pino';

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

/**
 * The one root logger: JSON lines to stderr so stdout stays free for --json output.
 * Secret values known at start-up are also scrubbed from messages and error text.
 */
export function createLogger(options: { level?: string; secrets?: string[]; destination?: NodeJS.WritableStream } = {}): Logger {
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
                method.apply(this, args.map((a) => (typeof a === 'string' ? scrub(a) : a)) as Parameters<typeof method>);
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
    (options.destination as pino.DestinationStream | undefined) ?? pino.destination(2),
  );
}

/** A logger that drops everything, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
