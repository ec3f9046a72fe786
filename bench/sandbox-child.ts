/**
 * The bench's sandbox in a process of its own, so that serving pages does not share the sync's
 * event loop (a local API, as in production). Options come as JSON in argv[2]; the API's env is
 * sent to the parent over IPC; the process lives until the parent kills it.
 */
import { startSandbox, type SandboxOptions } from '../src/sandbox/index.js';

const raw = JSON.parse(process.argv[2] ?? '{}') as Partial<SandboxOptions> & { now?: string };
const sb = await startSandbox({ ...raw, now: raw.now ? new Date(raw.now) : undefined });
process.send?.({ env: sb.env, clock: sb.data.clock(), fills: sb.data.fills().length });
process.on('disconnect', () => void sb.close().then(() => process.exit(0)));
