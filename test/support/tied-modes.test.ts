import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { differenceBeyondTiedModes } from './tied-modes.ts';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tied-modes-'));
  await writeFile(
    path.join(dir, 'people.csv'),
    'name,city\nann,rome\nbob,rome\nann,oslo\nbob,oslo\ncy,rome\n',
  );
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const describeOutput = (top: string) =>
  `        name  city\ncount      5     5\nunique     3     2\ntop   ${top}  rome\nfreq       2     3`;

describe('outputs compared up to a tied mode', () => {
  it('accepts another of the most frequent values as describe()’s top', () => {
    expect(differenceBeyondTiedModes(describeOutput('bob'), describeOutput('ann'), dir)).toBeNull();
  });

  it('refuses a top that is not a most frequent value, and any other difference', () => {
    expect(differenceBeyondTiedModes(describeOutput(' cy'), describeOutput('ann'), dir)).toMatch(
      /cy and ann are not most frequent values/,
    );
    expect(
      differenceBeyondTiedModes(describeOutput('ann').replace('5', '6'), describeOutput('ann'), dir),
    ).toMatch(/^line 2 is/);
    expect(differenceBeyondTiedModes('a\nb', 'a', dir)).toBe('2 lines where 1 were expected');
  });
});
