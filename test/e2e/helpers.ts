import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clocked } from '../helpers/clock.js';
import { createTestStore, type StoreKind, type TestStore } from '../helpers/db.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The child's environment: only what the test gives it (and PATH/HOME), so a developer's
 * DATABASE_URL or RAMP_RECON_CONFIG never leaks into a test.
 */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TZ: 'UTC' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

export interface RunningCli {
  child: ChildProcess;
  done: Promise<CliResult>;
  /** Everything written to stderr so far (JSON log lines). */
  stderr(): string;
  stdout(): string;
}

/** `script`: the CLI by default (test/e2e/clocked-cli.mjs is the same CLI); run on the test's clock (clocked()). */
export function startCli(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT, script = CLI): RunningCli {
  const run = clocked(script, env);
  const child = spawn(process.execPath, [...run.argv, ...args], {
    env: run.env,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr, stdout: () => stdout };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT, script = CLI): Promise<CliResult> {
  return startCli(args, env, cwd, script).done;
}

export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A child's stderr for an assertion message: plain lines, and the message and error of warn/error log lines, not whole payloads. */
export function brief(stderr: string): string {
  return stderr
    .split('\n')
    .map((line) => {
      if (!line.startsWith('{')) return line;
      try {
        const l = JSON.parse(line) as {
          level?: string;
          msg?: string;
          err?: { message?: string };
          failedStage?: string;
        };
        if (l.level !== 'warn' && l.level !== 'error' && l.level !== 'fatal') return '';
        return `[${l.level}] ${l.msg ?? ''}${l.failedStage ? ` (${l.failedStage})` : ''}${l.err?.message ? `: ${l.err.message.slice(0, 500)}` : ''}`;
      } catch {
        return line.slice(0, 300);
      }
    })
    .filter(Boolean)
    .join('\n')
    .slice(-4000);
}

/** Parsed JSON log lines (pino) of a child's stderr. */
export function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
}

/**
 * An HTTP proxy in front of the sandbox whose gate the test opens and closes: with the gate
 * closed, a run blocks at its first API request, so "a run in progress" lasts exactly as long
 * as the test needs, without timing guesses.
 */
export interface GateProxy {
  url: string;
  /** Rewrites a sandbox URL (same path) to go through the proxy. */
  via(url: string): string;
  close(): void;
  open(): void;
  /** Requests that arrived (waiting or passed). */
  readonly requests: number;
  stop(): Promise<void>;
}

export async function startGateProxy(target: string): Promise<GateProxy> {
  const targetUrl = new URL(target);
  let gateOpen = true;
  let waiters: Array<() => void> = [];
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests += 1;
    const forward = () => {
      const upstream = request(
        {
          host: targetUrl.hostname,
          port: targetUrl.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: targetUrl.host },
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    };
    if (gateOpen) forward();
    else waiters.push(forward);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    via(u: string) {
      const parsed = new URL(u);
      if (parsed.host !== targetUrl.host) return u;
      parsed.host = `127.0.0.1:${port}`;
      return parsed.toString().replace(/\/$/, '');
    },
    close() {
      gateOpen = false;
    },
    open() {
      gateOpen = true;
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
    get requests() {
      return requests;
    },
    stop() {
      return new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
    },
  };
}

/** One gate proxy per distinct API origin of the sandbox's environment, opened and closed together. */
export interface Gates {
  env: Record<string, string>;
  open(): void;
  close(): void;
  readonly requests: number;
  stop(): Promise<void>;
}

export async function gateSandboxEnv(sandboxEnv: Record<string, string>): Promise<Gates> {
  const proxies = new Map<string, GateProxy>();
  const env: Record<string, string> = { ...sandboxEnv };
  for (const name of ['PARTNER_API_URL', 'EXCHANGE_API_URL']) {
    const value = sandboxEnv[name];
    if (!value) continue;
    const origin = new URL(value).origin;
    let proxy = proxies.get(origin);
    if (!proxy) {
      proxy = await startGateProxy(origin);
      proxies.set(origin, proxy);
    }
    env[name] = proxy.via(value);
  }
  const all = [...proxies.values()];
  return {
    env,
    open: () => all.forEach((p) => p.open()),
    close: () => all.forEach((p) => p.close()),
    get requests() {
      return all.reduce((n, p) => n + p.requests, 0);
    },
    stop: async () => {
      await Promise.all(all.map((p) => p.stop()));
    },
  };
}

/**
 * What every CLI end-to-end suite sets up around a running sandbox: a gated proxy to it, a temp
 * folder with the config file, a fresh Postgres schema for the postgres kind, and the child's env.
 */
export interface CliWorld {
  gates: Gates;
  pg: TestStore | undefined;
  dir: string;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function openCliWorld(
  kind: StoreKind,
  name: string,
  sandboxEnv: Record<string, string>,
  config: unknown,
): Promise<CliWorld> {
  const gates = await gateSandboxEnv(sandboxEnv);
  const dir = mkdtempSync(join(tmpdir(), `rr-e2e-${name}-${kind}-`));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  const pg = kind === 'postgres' ? await createTestStore('postgres') : undefined;
  const env = childEnv({
    ...gates.env,
    RAMP_RECON_DATA_DIR: join(dir, 'data'),
    REPORTS_DIR: join(dir, 'reports'),
    RAMP_RECON_CONFIG: join(dir, 'config.json'),
    DATABASE_URL: pg?.url,
    LOG_LEVEL: 'info',
  });
  return {
    gates,
    pg,
    dir,
    env,
    async close() {
      gates.open();
      await gates.stop();
      await pg?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port nothing listens on (yet): a server starts there later in the test. */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}
