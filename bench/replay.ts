/**
 * `npm run bench:replay -- <schema> [<build> ...]`: a kept bench schema's nightly reconcile (or report) replayed with
 * each build in turn, round after round, so that a change is measured back to back on the same data
 * (docs/performance.md "Replaying a night"). The schema comes from `BENCH_KEEP_SCHEMA=1 npm run bench`; a build is a
 * copy of dist/ (default: this one). Before each replay the account's judgement watermark is put back to where the
 * nightly run found it, so every replay judges the night's changed set; the CLI runs on the nightly run's clock
 * (clock-preload.ts). Printed per replay: wall, the Postgres server's CPU (server-cpu.ts) and the reconcile's phases.
 * `REPLAY_COMMAND` (reconcile, the default, or report), `REPLAY_ROUNDS` (3), `BENCH_DATABASE_URL` (the local test
 * server). Each replay adds a run row to the schema, as a real re-run does.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { serverCpu } from './server-cpu.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const command = process.env.REPLAY_COMMAND ?? 'reconcile';
const rounds = Number(process.env.REPLAY_ROUNDS ?? 3);
const [schema, ...buildArgs] = process.argv.slice(2);

/** The nightly run a replay repeats: its period, the clock it ran on, and the watermark it found. */
interface Night {
  runId: string;
  from: string;
  to: string;
  clock: Date;
  since: string;
}

async function main(): Promise<void> {
  if (!schema || !/^[a-z_][a-z0-9_]*$/.test(schema))
    throw new Error(`usage: npm run bench:replay -- <schema> [<build> ...] (got schema ${JSON.stringify(schema)})`);
  if (command !== 'reconcile' && command !== 'report')
    throw new Error(`REPLAY_COMMAND must be reconcile or report (got ${JSON.stringify(command)})`);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20)
    throw new Error(
      `REPLAY_ROUNDS must be a whole number from 1 to 20 (got ${JSON.stringify(process.env.REPLAY_ROUNDS)})`,
    );
  const builds = (buildArgs.length ? buildArgs : [fileURLToPath(new URL('..', import.meta.url))]).map((b) =>
    resolve(b),
  );
  for (const b of builds)
    if (!existsSync(join(b, 'src/cli/main.js'))) throw new Error(`${b} is not a build: no src/cli/main.js in it`);
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  const work = mkdtempSync(join(tmpdir(), 'rr-replay-'));
  try {
    const night = await nightOf(client);
    const config = join(work, 'config.json');
    writeFileSync(config, JSON.stringify(replayConfig(night)));
    const cpu = await serverCpu(client);
    console.log(`replaying ${command} of run ${night.runId} (period ${night.from} .. ${night.to}) in ${schema}`);
    for (let round = 1; round <= rounds; round++)
      for (const build of builds) {
        // Where the nightly run found it: each reconcile judges the night's changed set again (a report reads it too).
        await client.query(`update ${schema}.reconcile_watermark set judged_snapshot = $1::pg_snapshot`, [night.since]);
        const measure = await cpu?.begin();
        const started = performance.now();
        const out = await runCli(build, night, config, work);
        const wall = performance.now() - started;
        const pgMs = measure ? await measure.end() : null;
        console.log(
          [
            `round ${round} ${build}: wall ${Math.round(wall)} ms`,
            `Postgres CPU ${pgMs === null ? 'n/a' : `${Math.round(pgMs)} ms`}`,
            phasesOf(out),
          ]
            .filter((part) => part !== null)
            .join(', '),
        );
      }
  } finally {
    await client.end();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The schema's last nightly run (`run`, as the bench's nightly child runs it) and where its reconcile started from. */
async function nightOf(client: pg.Client): Promise<Night> {
  const { rows } = await client.query<{
    id: string;
    from: string;
    to: string;
    clock: string | null;
    since: string | null;
  }>(
    `select id, period_from::text as from, period_to::text as to, stages->'reconcile'->>'startedAt' as clock,
       stages->'reconcile'->'detail'->'judged'->>'since' as since
     from ${schema}.run where command = 'run' and stages ? 'reconcile' order by started_at desc limit 1`,
  );
  const r = rows[0];
  if (!r) throw new Error(`${schema} holds no run with a reconcile stage: keep a bench round's schema first`);
  if (!r.since || !r.clock)
    throw new Error(`run ${r.id} judged every record (no watermark before it): nothing to replay`);
  return { runId: r.id, from: r.from, to: r.to, clock: new Date(r.clock), since: r.since };
}

/** The bench's config: the sandbox's rate limits lifted (no request is made; the reconcile reads the store only). */
function replayConfig(night: Night): unknown {
  return {
    partner: { feeRate: '0.01', publicRateLimitPerSecond: 1000, privateRateLimitPerSecond: 1000 },
    exchange: { rateLimitPerSecond: 1000, historyStart: night.from },
  };
}

/** One CLI process on the night's clock; resolves to its output, rejects when it fails. */
function runCli(build: string, night: Night, config: string, work: string): Promise<string> {
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const args = [
    '--import',
    `file://${join(build, 'bench/clock-preload.js')}`,
    join(build, 'src/cli/main.js'),
    // The report of the nightly run itself; the reconcile of its period.
    ...(command === 'report' ? ['report', night.runId] : ['reconcile', '--from', night.from, '--to', night.to]),
  ];
  const env = {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: url.toString(),
    RAMP_RECON_CONFIG: config,
    REPORTS_DIR: join(work, 'reports'),
    LOG_LEVEL: 'info',
    BENCH_CLOCK_OFFSET_MS: String(night.clock.getTime() - Date.now()),
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolvePromise(out) : reject(new Error(`${command} exited with ${code}:\n${out.slice(-2000)}`)),
    );
  });
}

/** The reconcile's phases as its log line gives them ("phases":{...}), or null. */
function phasesOf(out: string): string | null {
  const m = /"phases":(\{[^}]*\})/.exec(out);
  if (!m) return null;
  const phases = JSON.parse(m[1]!) as Record<string, number>;
  return Object.entries(phases)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
