/** The zod schema of the JSON config file and its defaults. */
import { z } from 'zod';
import cron from 'node-cron';
import { isDecimalText } from '../decimal/decimal.js';
import { parseIpRange } from '../util/ip-address.js';

/** Wire names and the contract's five webhook sender addresses (docs/apis.md "Partner webhooks"). */
export const WEBHOOK_SENDER_IPS = ['34.76.54.194', '34.77.167.89', '35.187.43.203', '35.241.153.74', '35.241.224.80'];

const decimalString = z
  .string({
    // A JSON number may already have lost digits when it was read: amounts are written in quotes.
    error: (issue) =>
      typeof issue.input === 'number'
        ? `must be a decimal string in quotes, such as "${String(issue.input)}" (a JSON number can lose digits)`
        : issue.input === undefined
          ? undefined
          : 'must be a decimal string such as "0.01"',
  })
  .refine((v) => isDecimalText(v), { message: 'must be a decimal string such as "0.01"' });
const nonNegativeDecimal = decimalString.refine((v) => !v.trim().startsWith('-'), { message: 'must not be negative' });
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');

const quoteSample = z
  .object({
    quoteCurrencyCode: z.string().min(1),
    baseCurrencyCode: z.string().min(1),
    quoteCurrencyAmount: nonNegativeDecimal,
    paymentMethod: z.string().min(1).optional(),
    countryCode: z.string().length(2).optional(),
  })
  .strict();

const partnerSection = z
  .object({
    feeRate: nonNegativeDecimal.optional(),
    wallets: z.array(z.string().min(1)).default([]),
    params: z
      .object({
        offset: z.string().min(1).default('offset'),
        from: z.string().min(1).default('from'),
        to: z.string().min(1).default('to'),
        outputCurrency: z.string().min(1).default('outputCurrency'),
      })
      .strict()
      .prefault({}),
    quotes: z.array(quoteSample).default([]),
    /**
     * Days before the period whose order listings a nightly run (`run`, `schedule`) reads again when
     * no earlier listing read them completely (the Partner API has no change feed). Default 3 (the
     * webhook retry window); `schedule.lookbackDays`, its older name, is still read.
     */
    lookbackDays: z.number().int().min(0).max(60).optional(),
    /** Public-key calls (reference data, quotes): the operator publishes 10 requests/s per IP address. */
    publicRateLimitPerSecond: z.number().positive().max(1000).default(10),
    /** Private calls (/orders, /orders/{id}): the operator publishes 100 requests/s per organisation. */
    privateRateLimitPerSecond: z.number().positive().max(1000).default(100),
  })
  .strict()
  .prefault({});

const withdrawalState = z.enum(['REJECTED', 'PENDING', 'REFUNDED', 'FAILED', 'COMPLETED']);

const exchangeSection = z
  .object({
    feeCurrency: z.enum(['counter', 'base']).default('counter'),
    withdrawalDebitStates: z.array(withdrawalState).default(['PENDING', 'COMPLETED']),
    account: z.string().min(1).default('primary'),
    rateLimitPerSecond: z.number().positive().max(1000).default(20),
    /** Where a full history sync starts when no cursor exists yet. */
    historyStart: day.default('2020-01-01'),
  })
  .strict()
  .prefault({});

const tolerancesSection = z
  .object({
    /** P_FEE_USD and P_AMOUNT_USD on non-USD orders: absolute USD difference accepted. */
    usd: nonNegativeDecimal.default('0.01'),
    /** E_FEE_RATE: absolute difference in the fee currency; default: half a unit of that currency's scale. */
    exchangeFee: nonNegativeDecimal.optional(),
    /** E_BALANCE_ROLL: absolute residual accepted per currency. */
    balance: nonNegativeDecimal.default('0'),
    /** E_BALANCE_SANITY: balance_local vs balance x rate, in the local currency. */
    balanceLocal: nonNegativeDecimal.default('0.01'),
  })
  .strict()
  .prefault({});

const staleSection = z
  .object({
    partnerOrder: z.number().positive().default(24),
    deposit: z.number().positive().default(24),
    withdrawal: z.number().positive().default(24),
  })
  .strict()
  .prefault({});

const scheduleSection = z
  .object({
    cron: z.string().min(1).default('0 2 * * *'),
    timezone: z.string().min(1).default('UTC'),
    /** Older name of partner.lookbackDays (the look-back is a sync setting: docs/rules.md "What a run judges"). */
    lookbackDays: z.number().int().min(0).max(60).optional(),
    /** Workers (pg-boss): the group report goes out this long after the batch was planned, whatever is still running. */
    deadlineMinutes: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 60)
      .default(240),
  })
  .strict()
  // The same check `schedule` makes at start-up, so `config check` never approves what `schedule` refuses.
  .superRefine((s, ctx) => {
    const detail = cron.validateDetailed(s.cron);
    if (!detail.valid)
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: `not a valid cron expression (minute hour day-of-month month day-of-week)${detail.errors.length ? `: ${detail.errors.map((e) => `${e.field} ${e.message}`).join('; ')}` : ''}`,
      });
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: s.timezone });
    } catch {
      ctx.addIssue({
        code: 'custom',
        path: ['timezone'],
        message: 'not an IANA time zone such as "UTC" or "Europe/Berlin"',
      });
    }
  })
  .prefault({});

const emailSection = z
  .object({
    from: z.string().min(3).optional(),
    to: z.array(z.string().min(3)).default([]),
    // What common relays accept (Postfix's default limit is 10,240,000 bytes): a message over it goes without the
    // workbook instead of bouncing. The whole message counts, base64 attachment and both bodies.
    maxMessageBytes: z.number().int().min(10_000).max(1_000_000_000).default(10_000_000),
  })
  .strict()
  .prefault({});

/** An IP address or CIDR range (webhooks.allowedIps, webhooks.trustedProxies). */
const ipRange = z.string().superRefine((v, ctx) => {
  const r = parseIpRange(v);
  if (typeof r === 'string') ctx.addIssue({ code: 'custom', message: r });
});

const webhooksSection = z
  .object({
    port: z.number().int().min(0).max(65535).default(8080),
    host: z.string().min(1).default('0.0.0.0'),
    allowedIps: z.array(ipRange).default(WEBHOOK_SENDER_IPS),
    // The proxies in front of the receiver: X-Forwarded-For is read only from a connection of one of them.
    trustedProxies: z.array(ipRange).default([]),
    // Removed: it believed any client's X-Forwarded-For. Refused with what to write instead.
    trustProxy: z
      .never({
        error:
          'removed: it believed X-Forwarded-For from any client; list the addresses or CIDR ranges of your proxies in webhooks.trustedProxies instead, such as "trustedProxies": ["10.0.0.5"]',
      })
      .optional(),
    // An event dated further ahead of the receiver's clock than this is quarantined, never applied (issue 43).
    maxClockSkewSeconds: z.number().int().min(0).max(86_400).default(600),
    tlsCertFile: z.string().min(1).optional(),
    tlsKeyFile: z.string().min(1).optional(),
    bodyLimitBytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024),
  })
  .strict();

/** An account's name: it prefixes its environment variables (ACME_EU_PARTNER_API_URL) and names it everywhere. */
const accountName = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
    'must be 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit',
  );

/** A group's rate budget: accounts that share a partner organisation or an exchange login share one request budget. */
const rateGroup = z.string().min(1).max(100);

/**
 * One account of a multi-account config: the keys a single account has (each section falls back, key by key, to the
 * top-level section of the same name), its rate group and its own recipients besides the group's.
 */
export const accountEntrySchema = z
  .object({
    name: accountName,
    partner: partnerSection,
    exchange: exchangeSection,
    tolerances: tolerancesSection,
    staleAfterHours: staleSection,
    /** Accounts with the same rateGroup share one request budget per API (default: the account's own). */
    rateGroup: rateGroup.optional(),
    /** Recipients of this account's own report, besides the group e-mail (default: none). */
    email: z
      .object({ to: z.array(z.string().min(3)).default([]) })
      .strict()
      .prefault({}),
  })
  .strict();

/** The sections an account entry inherits from the top level, key by key. */
export const ACCOUNT_SECTIONS = ['partner', 'exchange', 'tolerances', 'staleAfterHours'] as const;

/** Account jobs worked by `ramp-recon worker` processes (pg-boss, on Postgres): docs/workers.md. */
const workersSection = z
  .object({
    /** Account jobs one worker process runs at once. */
    concurrency: z.number().int().min(1).max(32).default(1),
    /** Attempts after the first before an account's job fails for good. */
    retryLimit: z.number().int().min(0).max(20).default(2),
    /** The first retry's delay; each next one doubles (with jitter). */
    retryDelaySeconds: z.number().int().min(1).max(3600).default(30),
    /** A worker heard from less often than this is taken as dead and its job retried elsewhere (pg-boss: at least 10). */
    heartbeatSeconds: z.number().int().min(10).max(600).default(30),
  })
  .strict()
  .prefault({});

/** The files reports are written as, and the limits of a returned workbook read back (`breaks import`). */
const reportsSection = z
  .object({
    /** Octal permissions of every report file written (workbooks, detail, CSV): they hold personal data. */
    fileMode: z
      .string()
      .regex(/^0?[0-7]{3}$/, 'must be an octal file mode in quotes, such as "0640"')
      .default('0640'),
    /** A returned workbook larger than this is refused before it is read. */
    maxImportBytes: z
      .number()
      .int()
      .min(1024)
      .default(50 * 1024 * 1024),
    /** ... and one whose entries unzip to more than this in all (a zip bomb), before it is loaded. */
    maxImportUnzippedBytes: z
      .number()
      .int()
      .min(1024)
      .default(500 * 1024 * 1024),
  })
  .strict()
  .prefault({});

/** The JSON config file. Every key is optional; unknown keys are errors. */
export const fileConfigSchema = z
  .object({
    account: z.string().min(1).default('default'),
    /** Several accounts in one database: `run` runs them as one batch with one group report (docs/accounts.md). */
    accounts: z.array(accountEntrySchema).min(1).optional(),
    partner: partnerSection,
    exchange: exchangeSection,
    tolerances: tolerancesSection,
    staleAfterHours: staleSection,
    schedule: scheduleSection,
    email: emailSection,
    webhooks: webhooksSection.optional(),
    workers: workersSection,
    reports: reportsSection,
    /** Plain http:// API URLs and clear-text SMTP to remote hosts: refused unless this is true (a test setup only). */
    allowInsecureHttp: z.boolean().default(false),
    http: z
      .object({
        connectTimeoutMs: z.number().int().positive().default(10_000),
        bodyTimeoutMs: z.number().int().positive().default(30_000),
        maxRetries: z.number().int().min(0).max(20).default(5),
        retryBaseMs: z.number().int().positive().default(500),
        retryMaxMs: z.number().int().positive().default(30_000),
        /** A response body over this is an error naming the endpoint, never read whole (far above the largest page). */
        maxResponseBytes: z
          .number()
          .int()
          .min(1024)
          .default(64 * 1024 * 1024),
      })
      .strict()
      .prefault({}),
  })
  .strict();

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const optionalEnv = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema.optional());

/** Environment variables (docs/apis.md "Environment"). */
export const envSchema = z.object({
  PARTNER_API_URL: optionalEnv(httpUrl),
  PARTNER_PUBLIC_KEY: optionalEnv(z.string()),
  PARTNER_PRIVATE_KEY: optionalEnv(z.string()),
  EXCHANGE_API_URL: optionalEnv(httpUrl),
  EXCHANGE_API_TOKEN: optionalEnv(z.string()),
  DATABASE_URL: optionalEnv(z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' })),
  RAMP_RECON_DATA_DIR: optionalEnv(z.string()),
  REPORTS_DIR: optionalEnv(z.string()),
  SMTP_URL: optionalEnv(z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' })),
  RAMP_RECON_CONFIG: optionalEnv(z.string()),
  LOG_LEVEL: optionalEnv(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
export type EnvConfig = z.infer<typeof envSchema>;
/** Names of environment variables whose values never appear in logs, errors or reports. */
export const SECRET_ENV = ['PARTNER_PUBLIC_KEY', 'PARTNER_PRIVATE_KEY', 'EXCHANGE_API_TOKEN'] as const;
