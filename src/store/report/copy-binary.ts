/** Rows of one text column out of a `COPY ... TO STDOUT (FORMAT binary)` stream. The binary format sends each value's
 * bytes as they are (no escaping, unlike the text and CSV formats), so a column that already holds a CSV line with its
 * CRLF arrives byte for byte: https://www.postgresql.org/docs/15/sql-copy.html#id-1.9.3.55.9.4
 */

/** "PGCOPY\n\377\r\n\0": the first 11 bytes of every binary COPY stream. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** The signature, the flags field and the header extension's length. */
const HEADER_BYTES = SIGNATURE.length + 8;
/** Text handed on at once once this many bytes of rows are read: a chunk of the stream is about 64 KiB. */
const PAGE_BYTES = 256 * 1024;

export class CopyFormatError extends Error {}

/**
 * The values of a one-column binary COPY stream, concatenated: pages of whole rows (`rows`: how many) as UTF-8 text,
 * about PAGE_BYTES each. A NULL value is refused, as are a stream that does not start as binary COPY, a row of more
 * than one column and a stream cut before its trailer (a lost connection mid-stream must not end a file early).
 */
export async function* binaryCopyTexts(chunks: AsyncIterable<Buffer>): AsyncGenerator<{ text: string; rows: number }> {
  let rest: Buffer | null = null;
  let headerRead = false;
  let ended = false;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let rows = 0;
  const page = () => {
    const out = { text: Buffer.concat(parts, partBytes).toString('utf8'), rows };
    parts = [];
    partBytes = 0;
    rows = 0;
    return out;
  };
  for await (const chunk of chunks) {
    if (ended) {
      if (chunk.length) throw new CopyFormatError('binary COPY: bytes after the trailer');
      continue;
    }
    const buf: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    let at = 0;
    if (!headerRead) {
      if (buf.length < HEADER_BYTES) {
        rest = buf;
        continue;
      }
      if (!buf.subarray(0, SIGNATURE.length).equals(SIGNATURE))
        throw new CopyFormatError('binary COPY: the stream does not start with the PGCOPY signature');
      const extension = buf.readInt32BE(SIGNATURE.length + 4);
      if (buf.length < HEADER_BYTES + extension) {
        rest = buf;
        continue;
      }
      at = HEADER_BYTES + extension;
      headerRead = true;
    }
    while (at + 2 <= buf.length) {
      const fields = buf.readInt16BE(at);
      if (fields === -1) {
        ended = true;
        at += 2;
        break;
      }
      if (fields !== 1) throw new CopyFormatError(`binary COPY: a row of ${fields} columns, expected 1`);
      if (at + 6 > buf.length) break;
      const length = buf.readInt32BE(at + 2);
      if (length < 0) throw new CopyFormatError('binary COPY: a NULL value');
      if (at + 6 + length > buf.length) break;
      parts.push(buf.subarray(at + 6, at + 6 + length));
      partBytes += length;
      rows += 1;
      at += 6 + length;
    }
    if (ended && at < buf.length) throw new CopyFormatError('binary COPY: bytes after the trailer');
    // The unread tail is copied out of the chunk only when it is short; a row's bytes keep their chunk alive until
    // the page is handed on.
    rest = at < buf.length ? buf.subarray(at) : null;
    if (partBytes >= PAGE_BYTES) yield page();
  }
  if (!ended) throw new CopyFormatError('binary COPY: the stream ended before its trailer');
  if (rows) yield page();
}
