import { link, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataQuota } from '../../src/server/data-quota.ts';

/**
 * Every upload and every new turn walked the whole data folder (one lstat per
 * file, all at once). A walk is now reused for a few seconds, with the
 * server's own stored uploads added to it, and walked again after a
 * deletion or a turn (`invalidate`).
 */
let dir = '';
afterEach(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('the data folder measure', () => {
  it('reuses a walk within reuseMs, adds stored uploads to it, and walks again when stale or invalidated', async () => {
    dir = await mkdtemp(join(tmpdir(), 'datalyst-quota-reuse-'));
    await writeFile(join(dir, 'a.bin'), Buffer.alloc(100));
    const time = clock();
    const quota = new DataQuota(dir, 10_000, { reuseMs: 3000, now: time.now });
    expect(await quota.usedBytes()).toBe(100);

    // Written behind the quota's back: not seen while the walk is reused.
    await writeFile(join(dir, 'b.bin'), Buffer.alloc(50));
    time.advance(1000);
    expect(await quota.usedBytes()).toBe(100);

    // An upload the server stored counts at once, without a walk.
    const meter = await quota.meterUpload();
    meter.add(200);
    await writeFile(join(dir, 'upload.bin'), Buffer.alloc(200));
    meter.done(true);
    expect(await quota.usedBytes()).toBe(300);

    // Past reuseMs the folder is walked again: the stored upload is not counted twice.
    time.advance(2500);
    expect(await quota.usedBytes()).toBe(350);

    // A deletion invalidates the walk at once.
    await rm(join(dir, 'upload.bin'));
    expect(await quota.usedBytes()).toBe(350);
    quota.invalidate();
    expect(await quota.usedBytes()).toBe(150);
  });

  it.each([
    ['synchronous calls', undefined],
    ['thread-pool calls', 0],
  ])(
    'walks only a thread folder named to remeasure, a hard link counted once (by the uploads): %s',
    async (_, syncWalkMs) => {
      dir = await mkdtemp(join(tmpdir(), 'datalyst-quota-reuse-'));
      const thread = join(dir, 'threads', 'thread-1');
      await mkdir(join(thread, 'workspace'), { recursive: true });
      await mkdir(join(dir, 'files'));
      await writeFile(join(dir, 'files', 'upload.csv'), Buffer.alloc(100));
      await link(join(dir, 'files', 'upload.csv'), join(thread, 'workspace', 'upload.csv'));
      await writeFile(join(thread, 'trace.jsonl'), Buffer.alloc(10));
      const time = clock();
      const quota = new DataQuota(dir, 10_000, {
        reuseMs: 3000,
        now: time.now,
        areasUnder: join(dir, 'threads'),
        ...(syncWalkMs === undefined ? {} : { syncWalkMs }),
      });
      expect(await quota.usedBytes()).toBe(110);

      // A turn wrote into the thread's folder; something else wrote outside it, behind the quota's back.
      await writeFile(join(thread, 'report.html'), Buffer.alloc(40));
      await writeFile(join(dir, 'elsewhere.bin'), Buffer.alloc(1000));
      quota.remeasure(thread);
      expect(await quota.usedBytes()).toBe(150);
      // Measured again (the hard-linked upload still once), still without walking the rest.
      await writeFile(join(thread, 'trace.jsonl'), Buffer.alloc(30));
      quota.remeasure(thread);
      expect(await quota.usedBytes()).toBe(170);

      // Past reuseMs everything is walked: what was written elsewhere counts now.
      time.advance(3500);
      expect(await quota.usedBytes()).toBe(1170);
      // A folder that is gone counts nothing (its hard-linked upload still counts once, in files/).
      await rm(thread, { recursive: true });
      quota.remeasure(thread);
      expect(await quota.usedBytes()).toBe(1100);
    },
  );

  it('an upload refused or abandoned (done without stored) adds nothing', async () => {
    dir = await mkdtemp(join(tmpdir(), 'datalyst-quota-reuse-'));
    const quota = new DataQuota(dir, 10_000, { now: clock().now });
    const meter = await quota.meterUpload();
    meter.add(500);
    meter.done();
    expect(await quota.usedBytes()).toBe(0);
  });

  it.each([
    ['synchronous calls', undefined],
    ['thread-pool calls', 0],
  ])(
    'measures a folder of many files and folders (the bounded walk finishes), hard links once: %s',
    async (_, syncWalkMs) => {
      dir = await mkdtemp(join(tmpdir(), 'datalyst-quota-reuse-'));
      let expected = 0;
      for (let folder = 0; folder < 12; folder++) {
        const sub = join(dir, `d${folder}`, 'inner');
        await mkdir(sub, { recursive: true });
        for (let file = 0; file < 25; file++) {
          await writeFile(join(sub, `f${file}.bin`), Buffer.alloc(folder + file + 1));
          expected += folder + file + 1;
        }
      }
      await link(join(dir, 'd0', 'inner', 'f0.bin'), join(dir, 'linked.bin'));
      const quota = new DataQuota(dir, 1_000_000, {
        reuseMs: 0,
        ...(syncWalkMs === undefined ? {} : { syncWalkMs }),
      });
      expect(await quota.usedBytes()).toBe(expected);
    },
  );
});
