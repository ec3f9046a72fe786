import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EvidenceDigest, flatten, recordChanges, recordLine } from '../../src/domain/evidence.js';
import { parseJsonLossless } from '../../src/decimal/json.js';

describe('the canonical form of a close', () => {
  it('hashes per stream, one line per record, then the ruleset and the config', () => {
    const d = new EvidenceDigest();
    d.stream('fill');
    d.record('9', '{"qty": 0.00054}');
    d.record('10', '{"qty": 1}');
    const text = 'stream fill\n"9" {"qty": 0.00054}\n"10" {"qty": 1}\nruleset r1\nconfig c1\n';
    expect(d.finish({ rulesetVersion: 'r1', configHash: 'c1' })).toBe(createHash('sha256').update(text).digest('hex'));
    expect(d.records).toBe(2);
  });

  it('quotes an id, so no id can pass for another line', () => {
    expect(recordLine('a"\nb', '{}')).toBe('"a\\"\\nb" {}\n');
  });

  it('flattens a document to exact field texts, nested objects member by member', () => {
    const doc = parseJsonLossless(
      '{"qty": 0.000540, "raw": {"qty": "5.4E-4", "n": 123456789012345678901}, "tags": [1, 2], "x": null}',
    );
    expect(Object.fromEntries(flatten(doc))).toEqual({
      qty: '0.000540',
      'raw.qty': '5.4E-4',
      'raw.n': '123456789012345678901',
      tags: '[1,2]',
      x: null,
    });
  });

  it('lists each changed field, and a record added or gone as a whole', () => {
    expect(recordChanges('fill', '9', '{"qty": 1, "raw": {"a": 1}}', '{"qty": 2, "raw": {"a": 1, "b": 2}}')).toEqual([
      { stream: 'fill', id: '9', field: 'qty', before: '1', after: '2' },
      { stream: 'fill', id: '9', field: 'raw.b', before: null, after: '2' },
    ]);
    expect(recordChanges('deposit', 'd', null, '{}')).toEqual([
      { stream: 'deposit', id: 'd', field: '*', before: null, after: '{}' },
    ]);
    expect(recordChanges('deposit', 'd', '{}', '{}')).toEqual([]);
  });
});
