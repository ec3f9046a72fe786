import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { partialPath, removeStalePartials } from '../../src/report/write-workbook.js';

/** Issue 17 item 5: which `.partial` workbooks the next report removes, and which it leaves alone. */
describe('removeStalePartials', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("removes those of dead processes, old-style ones from before this process, and any idle for an hour; keeps a live writer's", async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-partials-'));
    const now = Date.now();
    const file = (name: string, ageMs = 0) => {
      const p = join(dir, name);
      writeFileSync(p, 'x');
      const t = new Date(now - ageMs);
      utimesSync(p, t, t);
    };
    const deadPid = 2 ** 22 + 12345; // above Linux's pid_max default: no such process
    file(`a.xlsx.${deadPid}.partial`); // killed writer
    file(`b.xlsx.${process.ppid}.partial`); // a live process is writing it
    file(`c.xlsx.${process.ppid}.partial`, 2 * 3600_000); // "live" pid but untouched for 2 hours
    file('d.xlsx.partial', process.uptime() * 1000 + 60_000); // old naming, before this process started
    file('e.xlsx'); // a finished workbook
    file('f.csv.partial'); // not a workbook (CSV exports finish or abort their own)
    file(`g.xlsx.${process.pid}.partial`); // this process, not writing it
    const removed = (await removeStalePartials(dir, now)).map((p) => p.slice(dir.length + 1)).sort();
    expect(removed).toEqual([
      `a.xlsx.${deadPid}.partial`,
      `c.xlsx.${process.ppid}.partial`,
      'd.xlsx.partial',
      `g.xlsx.${process.pid}.partial`,
    ]);
    expect(readdirSync(dir).sort()).toEqual([`b.xlsx.${process.ppid}.partial`, 'e.xlsx', 'f.csv.partial']);
  });

  it("removes a killed report's half-written detail folder, keeps a live writer's and finished ones", async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-partials-'));
    const deadPid = 2 ** 22 + 12346;
    const folder = (name: string) => {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'fills.csv.gz'), 'x');
    };
    folder(`w_detail.${deadPid}.partial`); // killed while writing the detail
    folder(`v_detail.${process.ppid}.partial`); // a live process is writing it
    folder('w_detail'); // a finished detail
    const removed = (await removeStalePartials(dir)).map((p) => p.slice(dir.length + 1));
    expect(removed).toEqual([`w_detail.${deadPid}.partial`]);
    expect(readdirSync(dir).sort()).toEqual([`v_detail.${process.ppid}.partial`, 'w_detail']);
  });

  it('a missing folder has nothing to remove; the temporary name carries the pid', async () => {
    expect(await removeStalePartials(join(tmpdir(), 'rr-no-such-folder-17'))).toEqual([]);
    expect(partialPath('/r/x.xlsx')).toBe(`/r/x.xlsx.${process.pid}.partial`);
  });
});
