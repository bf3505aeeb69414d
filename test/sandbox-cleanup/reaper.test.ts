import { describe, expect, it } from 'vitest';
import { containerLabels, processStartedMs } from '../../src/sandbox/container-labels.ts';
import { isOwnerProcessAlive, reapReason } from '../../src/sandbox/reaper.ts';

const nowMs = 1_700_000_000_000;
const alive = new Set([100]);
const context = { nowMs, hostName: 'here', isOwnerAlive: ({ pid }: { pid: number }) => alive.has(pid) };

function labels(values: { pid?: string; host?: string; deadline?: string; started?: string }) {
  return {
    [containerLabels.session]: 'abc',
    ...(values.pid === undefined ? {} : { [containerLabels.ownerPid]: values.pid }),
    ...(values.host === undefined ? {} : { [containerLabels.ownerHost]: values.host }),
    ...(values.deadline === undefined ? {} : { [containerLabels.deadline]: values.deadline }),
    ...(values.started === undefined ? {} : { [containerLabels.ownerStarted]: values.started }),
  };
}

describe('reapReason', () => {
  it('reaps a container whose owner on this host is gone', () => {
    expect(reapReason(labels({ pid: '200', host: 'here', deadline: String(nowMs + 1) }), context)).toBe(
      'owner-gone',
    );
  });

  it('keeps a live owner’s container until its deadline, then reaps it whatever the owner', () => {
    expect(reapReason(labels({ pid: '100', host: 'here', deadline: String(nowMs + 1) }), context)).toBeNull();
    expect(reapReason(labels({ pid: '100', host: 'here', deadline: String(nowMs) }), context)).toBe(
      'deadline-passed',
    );
  });

  it('judges another host’s container by its deadline only (a PID means nothing there)', () => {
    expect(
      reapReason(labels({ pid: '200', host: 'there', deadline: String(nowMs + 1) }), context),
    ).toBeNull();
    expect(reapReason(labels({ pid: '200', host: 'there', deadline: String(nowMs - 1) }), context)).toBe(
      'deadline-passed',
    );
  });

  it('leaves containers it cannot judge: no session label, or malformed owner labels', () => {
    expect(reapReason({}, context)).toBeNull();
    expect(reapReason(labels({ pid: 'abc', host: 'here', deadline: 'soon' }), context)).toBeNull();
  });
});

describe('isOwnerProcessAlive', () => {
  it('knows this process, with and without its start time, and tells a reused PID by its start', () => {
    expect(isOwnerProcessAlive({ pid: process.pid, startedMs: undefined })).toBe(true);
    expect(isOwnerProcessAlive({ pid: process.pid, startedMs: processStartedMs() })).toBe(true);
    expect(isOwnerProcessAlive({ pid: process.pid, startedMs: processStartedMs() - 3_600_000 })).toBe(false);
  });

  it('finds no process at a PID above the kernel maximum', () => {
    expect(isOwnerProcessAlive({ pid: 4_194_304, startedMs: undefined })).toBe(false);
  });
});
