// The built CLI that kills itself with SIGKILL at one named point of `ramp-recon close` (RAMP_RECON_TEST_KILL_AT),
// for close-kill.test.ts. Nothing in src/ knows of it: the points are found from outside, on what the close does to
// the file system (node:fs/promises, rebound with syncBuiltinESMExports) and the SQL it sends (pg's Client and
// PGlite, the two drivers under Kysely). A point that is never reached leaves the close to finish: the test sees it.
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';

/** Where the close is killed, in the order it gets there (close-kill.test.ts runs each). */
const CLOSE_KILL_POINTS = [
  'workbook-written', // the signed workbook whole under its temporary name, before the close's transaction
  'close-inserted', // inside the transaction: the period_close row written, not committed
  'before-commit', // inside the transaction: every row and the audit row written, COMMIT not sent
  'committed', // after the commit, before the workbook is linked to its name
  'placed', // the workbook linked to its name, its temporary name not yet removed
];

const point = process.env.RAMP_RECON_TEST_KILL_AT;
const die = () => process.kill(process.pid, 'SIGKILL');
const signedTemp = (path) => /_signed_c[0-9TZ]+-[0-9a-f]+\.xlsx\.[A-Za-z0-9-]+\.partial$/.test(String(path));

/** Calls `original` and dies before it (`when` 'before') or once it resolved ('after'), if `hit`. */
function dieAround(original, hit, when) {
  return function (...args) {
    if (!hit(args)) return original.apply(this, args);
    if (when === 'before') die();
    return Promise.resolve(original.apply(this, args)).then((v) => (die(), v));
  };
}

/** Wraps the `query` of a driver's prototype: `hit` sees the SQL text and whether the close's row was inserted. */
function onQuery(proto, hit, when) {
  let inserted = false;
  const original = proto.query;
  proto.query = function (q, ...rest) {
    const text = typeof q === 'string' ? q : (q?.text ?? '');
    const wanted = hit(text, inserted);
    if (/^\s*insert into period_close\b/.test(text)) inserted = true;
    return dieAround(original, () => wanted, when).call(this, q, ...rest);
  };
}

const onSql = (hit, when) => {
  onQuery(pg.Client.prototype, hit, when);
  onQuery(PGlite.prototype, hit, when);
};

if (point === 'workbook-written') fsp.chmod = dieAround(fsp.chmod, ([p]) => signedTemp(p), 'after');
else if (point === 'close-inserted') onSql((text) => /^\s*insert into period_close\b/.test(text), 'after');
else if (point === 'before-commit') onSql((text, inserted) => inserted && /^\s*commit\s*$/i.test(text), 'before');
else if (point === 'committed') fsp.link = dieAround(fsp.link, ([from]) => signedTemp(from), 'before');
else if (point === 'placed') fsp.link = dieAround(fsp.link, ([from]) => signedTemp(from), 'after');
else if (point) throw new Error(`RAMP_RECON_TEST_KILL_AT: unknown point ${point} (${CLOSE_KILL_POINTS.join(', ')})`);
syncBuiltinESMExports();

await import('../../dist/src/cli/main.js');
