// The CLI as one file (and the chunks it loads on first use), written over tsc's dist/src/cli/main.js; the bench's
// pipeline child likewise over dist/bench/pipeline-child.js, so that the bench times the code `ramp-recon` runs.
//
// Why: Node 20 loads an ES module per file, with a resolution, a read and a compile each. Before its first stage a
// `ramp-recon run` loaded about 750 of them (kysely alone 262, undici 111, zod 95): 450 ms from process start on the
// bench machine, 265 ms as one bundle (docs/performance.md). The rest of dist/ stays tsc's output, one file per
// module: the demo, the sandbox and the bench import it, and the tests run the TypeScript sources.
//
// The bundle keeps the CLI's paths: it is written where main.js was, so what main.js finds relative to itself
// (package.json, sql/) is where it was. Left out, loaded from node_modules as before: PGlite (it reads its WebAssembly
// files next to its code), pg and pg-native (the server's driver stays the module the process shares: the kill tests
// of test/reliability/close-kill-cli.mjs hook its Client from outside; about 25 ms of start-up), and three loaded only on
// first use, which gain nothing from a bundle: exceljs (the report), pg-boss (the workers), pino-pretty (logs on a
// terminal). A dynamic import() stays a chunk loaded on first use (splitting).
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

const EXTERNAL = ['@electric-sql/pglite', 'exceljs', 'pg', 'pg-boss', 'pg-native', 'pino-pretty'];

/**
 * The simulator (dist/sandbox/), which `ramp-recon sandbox` imports on demand: never part of the bundle, so that the
 * production image, which copies dist/src alone, stays without it (the command then says so). esbuild keeps the path
 * as written; the chunk that imports it is in dist/src/cli/chunks/, as deep as dist/src/cli/commands/, so the path
 * still reaches dist/sandbox/ (test/e2e/production-layout.test.ts).
 */
const SANDBOX = '../../../sandbox/index.js';

/** CommonJS packages bundled into an ES module still call require() for Node's built-ins and the externals. */
const REQUIRE_SHIM =
  "import { createRequire as __rampReconRequire } from 'node:module'; const require = __rampReconRequire(import.meta.url);";

async function bundleInPlace(dir, entry) {
  // The input is tsc's output: a bundle cannot be bundled again, its chunks are replaced below.
  if (readFileSync(`${dir}/${entry}.js`, 'utf8').includes('__rampReconRequire')) {
    throw new Error(`${dir}/${entry}.js is a bundle already: run \`npm run build\` (tsc, then this script)`);
  }
  const chunks = `${dir}/chunks`;
  rmSync(chunks, { recursive: true, force: true });
  await build({
    entryPoints: { [entry]: `${dir}/${entry}.js` },
    outdir: dir,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunks/[name]-[hash]',
    external: [...EXTERNAL, SANDBOX],
    banner: { js: REQUIRE_SHIM },
    sourcemap: true,
    logLevel: 'warning',
  });
}

await bundleInPlace('dist/src/cli', 'main');
await bundleInPlace('dist/bench', 'pipeline-child');
