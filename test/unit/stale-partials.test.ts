import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { partialPath, removeStalePartials, STALE_AFTER_MS, type Writer } from '../../src/report/partials.js';
import { writeWorkbook } from '../../src/report/write-workbook.js';
import type { Row, SheetSpec } from '../../src/report/cells.js';

/**
 * Issue 42 item 6: workers sharing one reports folder (in containers each is process 1) never remove each other's
 * half-written workbooks; only what a killed writer left, untouched for a day, is cleaned.
 */
const spec: SheetSpec = {
  name: 'Fills',
  columns: [
    { header: 'Id', kind: 'text' },
    { header: 'Qty', kind: 'int' },
  ],
};
const ROWS = 2_000;

/** A sheet's rows that stop half-way until `resume` is called: the writer's partial file is then on disk. */
function pausedRows(name: string): { rows: AsyncIterable<Row>; resume: () => void } {
  let resume = () => {};
  const gate = new Promise<void>((r) => (resume = r));
  async function* rows(): AsyncGenerator<Row> {
    for (let i = 1; i <= ROWS; i++) {
      if (i === ROWS / 2) await gate;
      yield { cells: [`${name}-${i}`, i] };
    }
  }
  return { rows: rows(), resume };
}

async function until(what: string, check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check(); await new Promise((r) => setTimeout(r, 20)))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
}

async function dataRows(path: string): Promise<string[]> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(path);
  const ids: string[] = [];
  book.getWorksheet('Fills')!.eachRow((row, n) => {
    if (n > 1) ids.push(String(row.getCell(1).value));
  });
  return ids;
}

describe('partial workbooks of concurrent writers', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('two writers (each process 1 on its own host) write into one folder at once; cleaning in between removes neither', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-partials-'));
    const writers: Writer[] = [
      { host: 'worker-a', pid: 1 },
      { host: 'worker-b', pid: 1 },
    ];
    const partials = () => readdirSync(dir).filter((n) => n.endsWith('.partial'));
    const runs = writers.map((writer) => {
      const source = pausedRows(writer.host);
      return {
        source,
        done: writeWorkbook(join(dir, `${writer.host}.xlsx`), [{ spec, rows: source.rows }], { writer }),
      };
    });
    await until('both partial workbooks on disk', () => partials().length === 2);
    expect(partials().sort()).toEqual([
      expect.stringMatching(/^worker-a\.xlsx\.worker-a-1-[0-9a-f]{8}\.partial$/),
      expect.stringMatching(/^worker-b\.xlsx\.worker-b-1-[0-9a-f]{8}\.partial$/),
    ]);
    // What a report stage does before it writes: each writer's half-written file is fresh, so neither is removed.
    expect(await removeStalePartials(dir)).toEqual([]);
    for (const run of runs) run.source.resume();
    const counts = await Promise.all(runs.map((r) => r.done));
    expect(counts).toEqual([{ Fills: ROWS }, { Fills: ROWS }]);
    expect(readdirSync(dir).sort()).toEqual(['worker-a.xlsx', 'worker-b.xlsx']);
    for (const writer of writers) {
      const ids = await dataRows(join(dir, `${writer.host}.xlsx`));
      expect([ids.length, ids[0], ids[ROWS - 1]]).toEqual([ROWS, `${writer.host}-1`, `${writer.host}-${ROWS}`]);
    }
  });

  it("a writer whose write fails removes its own partial file, never another's", async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-partials-'));
    const other = partialPath(join(dir, 'other.xlsx'), { host: hostname(), pid: process.pid });
    writeFileSync(other, 'half a workbook');
    async function* failing(): AsyncGenerator<Row> {
      yield { cells: ['x-1', 1] };
      throw new Error('the database went away');
    }
    await expect(writeWorkbook(join(dir, 'mine.xlsx'), [{ spec, rows: failing() }])).rejects.toThrow(
      'the database went away',
    );
    expect(readdirSync(dir)).toEqual([other.slice(dir.length + 1)]);
  });
});

describe('removeStalePartials', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('removes partial workbooks and detail folders untouched for a day, whoever wrote them; leaves fresher ones alone', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-partials-'));
    const now = Date.now();
    const day = STALE_AFTER_MS;
    const age = (path: string, ms: number) => utimesSync(path, new Date(now - ms), new Date(now - ms));
    const file = (name: string, ms: number) => {
      writeFileSync(join(dir, name), 'x');
      age(join(dir, name), ms);
    };
    const folder = (name: string, folderMs: number, fileMs: number) => {
      mkdirSync(join(dir, name));
      file(join(name, 'fills.csv.gz'), fileMs);
      age(join(dir, name), folderMs);
    };
    file('a.xlsx.worker-a-1-0123abcd.partial', day + 60_000); // a killed writer's, a day ago
    file('b.xlsx.worker-b-1-89abcdef.partial', 5_000); // another worker is writing it
    const mine = basename(partialPath(join(dir, 'c.xlsx'))); // this very host and pid, another writer
    file(mine, 60_000);
    file(`d.xlsx.${process.pid}.partial`, 2 * 3600_000); // an older version's name, fresh: left alone too
    file('e.xlsx.partial', day + 1_000); // the oldest naming, a day old
    folder('v_detail.worker-a-1-aaaaaaaa.partial', day + 60_000, day + 60_000); // a killed writer's detail
    folder('w_detail.worker-b-1-bbbbbbbb.partial', day + 60_000, 1_000); // its files still being written
    file('f.xlsx', 3 * day); // finished workbooks and CSV files are not partials
    file('g.csv.partial', 3 * day);
    const removed = (await removeStalePartials(dir, now)).map((p) => p.slice(dir.length + 1)).sort();
    expect(removed).toEqual([
      'a.xlsx.worker-a-1-0123abcd.partial',
      'e.xlsx.partial',
      'v_detail.worker-a-1-aaaaaaaa.partial',
    ]);
    expect(readdirSync(dir).sort()).toEqual([
      'b.xlsx.worker-b-1-89abcdef.partial',
      mine,
      `d.xlsx.${process.pid}.partial`,
      'f.xlsx',
      'g.csv.partial',
      'w_detail.worker-b-1-bbbbbbbb.partial',
    ]);
  });

  it('a missing folder has nothing to remove; a temporary name carries the host, the pid and a random part', async () => {
    expect(await removeStalePartials(join(tmpdir(), 'rr-no-such-folder-42'))).toEqual([]);
    const writer = { host: 'recon.internal_1', pid: 1 };
    const [one, two] = [partialPath('/r/x.xlsx', writer), partialPath('/r/x.xlsx', writer)];
    expect(one).toMatch(/^\/r\/x\.xlsx\.recon-internal-1-1-[0-9a-f]{8}\.partial$/);
    expect(two).not.toBe(one);
    expect(partialPath('/r/x.xlsx')).toMatch(
      new RegExp(`^/r/x\\.xlsx\\.${hostname().replace(/[^A-Za-z0-9-]/g, '-')}-${process.pid}-[0-9a-f]{8}\\.partial$`),
    );
  });
});
