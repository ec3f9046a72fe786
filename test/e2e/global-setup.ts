import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const BUNDLE_SCRIPT = join(root, 'scripts', 'bundle.mjs');

/**
 * The end-to-end tests run the built CLI (dist/) as a child process, while `npm test` runs
 * vitest on the sources: rebuild dist once per test session when any source is newer than it,
 * so the tests never exercise stale code. The build is `npm run build`'s: tsc, then the bundle of
 * the CLI (scripts/bundle.mjs), the file the tests run.
 */
export default function setup(): void {
  const built = mtime(CLI);
  const newest = Math.max(
    newestUnder(join(root, 'src')),
    newestUnder(join(root, 'sandbox')),
    // the children's clock (test/e2e/clock-preload.mjs) is dist/bench/clock.js
    newestUnder(join(root, 'bench')),
    mtime(join(root, 'tsconfig.json')),
    mtime(join(root, 'package.json')),
    mtime(BUNDLE_SCRIPT),
  );
  if (built !== 0 && built >= newest) return;
  try {
    execFileSync(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json')],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
  } catch (err) {
    // tsc still emits on type errors; the tests then show what is broken. No output at all is fatal.
    if (mtime(CLI) === 0) throw err;
    const out = String((err as { stdout?: Buffer }).stdout ?? '');
    process.stderr.write(
      `e2e global setup: tsc reported type errors (dist was still emitted):\n${out.split('\n').slice(0, 20).join('\n')}\n`,
    );
  }
  execFileSync(process.execPath, [BUNDLE_SCRIPT], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : entry.name.endsWith('.ts') ? mtime(path) : 0);
  }
  return newest;
}
