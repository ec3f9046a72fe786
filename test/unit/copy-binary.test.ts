import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binaryCopyTexts, CopyFormatError } from '../../src/store/report/copy-binary.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A binary COPY stream of one text column, as Postgres writes it (an optional header extension). */
function stream(values: string[], extension = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(0, 0);
  head.writeInt32BE(extension.length, 4);
  const rows = values.map((v) => {
    const bytes = Buffer.from(v, 'utf8');
    const frame = Buffer.alloc(6);
    frame.writeInt16BE(1, 0);
    frame.writeInt32BE(bytes.length, 2);
    return Buffer.concat([frame, bytes]);
  });
  return Buffer.concat([SIGNATURE, head, extension, ...rows, Buffer.from([0xff, 0xff])]);
}

/** The stream cut into chunks at the given offsets. */
async function* chunked(buf: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    if (cut <= at || cut >= buf.length) continue;
    yield buf.subarray(at, cut);
    at = cut;
  }
  yield buf.subarray(at);
}

async function read(chunks: AsyncIterable<Buffer>): Promise<{ text: string; rows: number; pages: number }> {
  let text = '';
  let rows = 0;
  let pages = 0;
  for await (const p of binaryCopyTexts(chunks)) {
    text += p.text;
    rows += p.rows;
    pages += 1;
  }
  return { text, rows, pages };
}

describe('binaryCopyTexts', () => {
  it('gives every value byte for byte, whatever the chunks (multi-byte characters, CR LF, quotes, backslashes)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 30 }),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 12 }),
        fc.uint8Array({ maxLength: 5 }),
        async (values, cuts, extension) => {
          const buf = stream(values, Buffer.from(extension));
          const got = await read(chunked(buf, cuts));
          expect(got.text).toBe(values.join(''));
          expect(got.rows).toBe(values.length);
        },
      ),
    );
  });

  it('hands the rows on in pages of about 256 KiB, each of whole rows', async () => {
    const line = `${'é'.repeat(50)},"a ""b"" \\ c"\r\n`;
    const values = Array.from({ length: 20_000 }, () => line);
    const buf = stream(values);
    const pages: { text: string; rows: number }[] = [];
    for await (const p of binaryCopyTexts(
      chunked(
        buf,
        Array.from({ length: 100 }, (_, i) => i * 65_536 + 7),
      ),
    ))
      pages.push(p);
    expect(pages.length).toBeGreaterThan(4);
    for (const p of pages) expect(p.text).toBe(line.repeat(p.rows));
    expect(pages.reduce((n, p) => n + p.rows, 0)).toBe(20_000);
  });

  it('gives nothing for a stream of no rows', async () => {
    expect(await read(chunked(stream([]), [3, 15]))).toEqual({ text: '', rows: 0, pages: 0 });
  });

  it('refuses a stream cut before its trailer, a NULL, a row of two columns and what is not binary COPY', async () => {
    const whole = stream(['a\r\n', 'b\r\n']);
    await expect(read(chunked(whole.subarray(0, whole.length - 2), []))).rejects.toThrow(/ended before its trailer/);
    await expect(read(chunked(whole.subarray(0, 10), []))).rejects.toThrow(CopyFormatError);

    const withNull = Buffer.concat([whole.subarray(0, 19), Buffer.from([0, 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]);
    await expect(read(chunked(withNull, []))).rejects.toThrow(/NULL/);

    const twoColumns = Buffer.concat([whole.subarray(0, 19), Buffer.from([0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])]);
    await expect(read(chunked(twoColumns, []))).rejects.toThrow(/2 columns/);

    await expect(read(chunked(Buffer.from('a,b\n'.repeat(10)), []))).rejects.toThrow(/PGCOPY signature/);
    await expect(read(chunked(Buffer.concat([whole, Buffer.from('x')]), []))).rejects.toThrow(/after the trailer/);
  });
});
