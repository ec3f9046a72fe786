// npm links the bins of dependencies into node_modules/.bin, never the project's own. So the CLI
// is linked there by `prepare` (after the build), and package.json has no "bin": with one, `npx
// ramp-recon` in the checkout installs the checkout into npm's cache and runs `prepare` (the whole
// TypeScript build, rewriting dist/) before every first start (17 to 38 s). Without it, npx finds
// this link in node_modules/.bin and starts the built CLI at once. (The Docker image links the
// CLI onto PATH itself.)
import { mkdirSync, rmSync, symlinkSync, chmodSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const target = join(root, 'dist', 'src', 'cli', 'main.js');
const binDir = join(root, 'node_modules', '.bin');
mkdirSync(binDir, { recursive: true });
const link = join(binDir, 'ramp-recon');
rmSync(link, { force: true });
symlinkSync(relative(binDir, target), link);
chmodSync(target, 0o755);
