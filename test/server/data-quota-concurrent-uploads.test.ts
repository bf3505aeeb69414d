import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataQuota } from '../../src/server/data-quota.ts';

/**
 * Uploads that start together were each given the whole room left: four
 * parallel uploads of the limit each stored four times the limit. The
 * bytes of every upload streaming now count against every other.
 */
let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('the data folder limit with uploads streaming at once', () => {
  it('refuses the bytes that, together with the other uploads, pass the limit', async () => {
    dir = await mkdtemp(join(tmpdir(), 'datalyst-quota-'));
    const limit = 1000;
    const quota = new DataQuota(dir, limit);
    const meters = await Promise.all([1, 2, 3, 4].map(() => quota.meterUpload()));
    let accepted = 0;
    let refused = 0;
    for (let chunk = 0; chunk < 10; chunk++) {
      for (const meter of meters) {
        try {
          meter.add(100);
          accepted += 100;
        } catch (error) {
          expect(error).toMatchObject({ status: 507, code: 'DATA_DIR_FULL' });
          refused += 1;
        }
      }
    }
    expect(refused).toBeGreaterThan(0);
    expect(accepted).toBeLessThanOrEqual(limit);
    for (const meter of meters) meter.done();
  });
});
