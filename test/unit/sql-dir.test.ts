/** The migrations folder is found from the store's own folder, wherever that sits under src/ (or dist/src/). */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSqlDir } from '../../src/store/db/migrate.js';

describe('defaultSqlDir', () => {
  it('is the package root sql/ folder', () => {
    expect(defaultSqlDir()).toBe(resolve('sql'));
  });
});
