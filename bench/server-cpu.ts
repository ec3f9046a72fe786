/**
 * The CPU a Postgres server spent on a run, read off the server's own process: a backend's CPU is added to its
 * parent's (the postmaster's) reaped-children times when it exits, and a run's pooled sessions exit when it closes
 * its store. So the postmaster's cutime + cstime before and after a run, once the run's sessions are gone, is what
 * the run's backends (and any autovacuum worker that finished meanwhile) spent; the long-lived background processes
 * (checkpointer, WAL writer) are not in it. On this 2-core machine wall time swings by tens of seconds between rounds
 * of the same build; CPU seconds swing less, so they tell more of a change. Only a server on this machine whose /proc
 * we may read has such figures: elsewhere `null`.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import type pg from 'pg';

export interface ServerCpu {
  /** Starts a measurement: the counter and the client sessions now on the server. */
  begin(): Promise<{ end(): Promise<number> }>;
}

/** cutime + cstime of a process (fields 16 and 17 of /proc/<pid>/stat, 1-based): its reaped children's CPU, in ticks. */
function childTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): cutime is field 16, cstime field 17.
  return Number(fields[13]) + Number(fields[14]);
}

function ppidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The server's CPU counter, through `client`'s backend; null when the server's processes cannot be read here. */
export async function serverCpu(client: pg.Client): Promise<ServerCpu | null> {
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const postmaster = ppidOf(rows[0]!.pid);
    const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    childTicks(postmaster);
    if (!(ticksPerSecond > 0)) return null;
    const sessions = async (): Promise<number> => {
      const { rows: n } = await client.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend'",
      );
      return n[0]!.n;
    };
    const ms = (): number => (childTicks(postmaster) * 1000) / ticksPerSecond;
    return {
      begin: async () => {
        const before = { ms: ms(), sessions: await sessions() };
        return {
          // The CPU spent since begin(), once the sessions opened since have exited (at most 10 s of waiting).
          end: async () => {
            for (let i = 0; i < 200 && (await sessions()) > before.sessions; i++)
              await new Promise((resolve) => setTimeout(resolve, 50));
            return ms() - before.ms;
          },
        };
      },
    };
  } catch {
    return null;
  }
}
