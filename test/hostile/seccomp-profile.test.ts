import { describe, expect, it } from 'vitest';
import {
  ALLOWED_SYSCALLS,
  REFUSED_SYSCALLS,
  buildSeccompProfile,
  seccompSecurityOption,
} from '../../src/sandbox/seccomp-profile.ts';

describe('seccomp profile', () => {
  it('never lists a syscall as both allowed and refused', () => {
    const refused = new Set(REFUSED_SYSCALLS);
    expect(ALLOWED_SYSCALLS.filter((name) => refused.has(name))).toEqual([]);
    expect(new Set(ALLOWED_SYSCALLS).size).toBe(ALLOWED_SYSCALLS.length);
  });

  it('refuses io_uring, new namespaces and kernel attack surface explicitly', () => {
    for (const name of ['io_uring_setup', 'io_uring_enter', 'io_uring_register', 'unshare', 'setns', 'bpf']) {
      expect(REFUSED_SYSCALLS).toContain(name);
    }
    for (const name of ['keyctl', 'perf_event_open', 'userfaultfd', 'ptrace', 'mount', 'open_by_handle_at']) {
      expect(REFUSED_SYSCALLS).toContain(name);
    }
  });

  it('allows clone only without namespace flags and sends clone3 to ENOSYS', () => {
    const profile = buildSeccompProfile();
    const clone = profile.syscalls.find((rule) => rule.names.includes('clone'));
    expect(clone?.args).toEqual([{ index: 0, value: 0x7e020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }]);
    const clone3 = profile.syscalls.find((rule) => rule.names.includes('clone3'));
    expect(clone3).toMatchObject({ action: 'SCMP_ACT_ERRNO', errnoRet: 38 });
    expect(ALLOWED_SYSCALLS).not.toContain('clone');
    expect(ALLOWED_SYSCALLS).not.toContain('clone3');
  });

  it('is passed inline, as the Docker API expects', () => {
    const option = seccompSecurityOption();
    expect(option.startsWith('seccomp={')).toBe(true);
    expect(JSON.parse(option.slice('seccomp='.length))).toEqual(buildSeccompProfile());
  });
});
