/** Reading the external references of a CSV file for `sync --references-csv`. */
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { ConfigError } from '../../errors.js';

/**
 * External references from a CSV file: the `externalReference` column when the first row is a
 * header naming it, else the first column of every row (a file without a header: any first row
 * could be a reference, so none is dropped). Blank cells are ignored, duplicates removed, order kept.
 */
export function parseReferencesCsv(text: string): string[] {
  const rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true }) as string[][];
  if (rows.length === 0) return [];
  const header = rows[0] ?? [];
  const column = header.findIndex(
    (h) => h.toLowerCase() === 'externalreference' || h.toLowerCase() === 'external_reference',
  );
  const body = column >= 0 ? rows.slice(1) : rows;
  const index = column >= 0 ? column : 0;
  const seen = new Set<string>();
  for (const row of body) {
    const value = row[index]?.trim();
    if (value) seen.add(value);
  }
  return [...seen];
}

export async function readReferencesCsv(path: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError([
      `--references-csv ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message}`,
    ]);
  }
  try {
    return parseReferencesCsv(text);
  } catch (err) {
    throw new ConfigError([`--references-csv ${path}: not a readable CSV file: ${(err as Error).message}`]);
  }
}
