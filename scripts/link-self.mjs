// npm links the bins of dependencies into node_modules/.bin, never the project's own, so
// `npx ramp-recon` in a checkout would look in the npm cache. Link our bin next to the others.
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
