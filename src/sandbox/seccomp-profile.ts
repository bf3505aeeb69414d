/**
 * The seccomp profile of a session container.
 *
 * Why our own profile: Docker 20.10's default profile allows io_uring (its
 * syscalls were a recurring source of kernel privilege escalations and were
 * only dropped from Docker's default in later releases). A profile replaces the
 * default as a whole, so this one is an allowlist of its own: every syscall of
 * the Linux x86_64/arm64 tables up to 6.x that a data-analysis kernel can use,
 * minus those that only widen the kernel's attack surface or need privileges a
 * session never has. Anything not listed fails: with ENOSYS where the engine
 * honours `defaultErrnoRet` (libc and Python then fall back as on an older
 * kernel), with EPERM where it does not (Docker 20.10 with runc 1.1 and
 * libseccomp 2.5.4, measured: syscalls that libseccomp does not know by name,
 * such as fchmodat2 and mseal, fail with EPERM; glibc only uses fchmodat2 for
 * `lchmod`, which Python does not offer on Linux).
 *
 * Refused on purpose (each fails with EPERM):
 * - io_uring_setup/enter/register: large attack surface, not needed by Python.
 * - bpf, perf_event_open, userfaultfd, keyctl/add_key/request_key: kernel
 *   attack surface with no use in a cell.
 * - unshare, setns, clone with any CLONE_NEW* flag, clone3 (ENOSYS, so glibc
 *   uses clone, whose flags seccomp can inspect): no new namespaces, in
 *   particular no unprivileged user namespace to regain capabilities in.
 * - mount and the new mount API, pivot_root, chroot, swap, reboot, kexec,
 *   modules, clock setting, quota, raw I/O ports, acct, syslog: need
 *   capabilities the container never has; refusing them earlier is cheaper.
 * - ptrace, process_vm_readv/writev, kcmp, pidfd_getfd, process_madvise: a
 *   cell must not inspect or alter the kernel supervisor that reports on it.
 * - name_to_handle_at/open_by_handle_at (the "shocker" container escape),
 *   fanotify_init, modify_ldt, personality, uselib, NUMA memory policy calls.
 * - socket(AF_VSOCK): the network namespace does not cover vsock, which can
 *   reach a VM host.
 */

const CLONE_NEW_NAMESPACE_FLAGS =
  0x0002_0000 | // CLONE_NEWNS
  0x0200_0000 | // CLONE_NEWCGROUP
  0x0400_0000 | // CLONE_NEWUTS
  0x0800_0000 | // CLONE_NEWIPC
  0x1000_0000 | // CLONE_NEWUSER
  0x2000_0000 | // CLONE_NEWPID
  0x4000_0000; // CLONE_NEWNET

const AF_VSOCK = 40;
const ENOSYS = 38;
const EPERM = 1;

/** Names separated by white space; `#` starts a comment that runs to the end of the line. */
function syscallList(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line) => (line.split('#')[0] ?? '').split(/\s+/))
    .filter((name) => name !== '');
}

/** Syscalls allowed without conditions. */
export const ALLOWED_SYSCALLS: readonly string[] = syscallList(`
  # files and descriptors
  read write open close stat fstat lstat poll lseek pread64 pwrite64
  readv writev preadv pwritev preadv2 pwritev2 access faccessat faccessat2
  pipe pipe2 select pselect6 ppoll dup dup2 dup3 fcntl flock fsync
  fdatasync sync syncfs sync_file_range truncate ftruncate fallocate fadvise64
  readahead getdents getdents64 getcwd chdir fchdir rename renameat renameat2
  mkdir mkdirat rmdir creat link linkat unlink unlinkat symlink symlinkat
  readlink readlinkat chmod fchmod fchmodat fchmodat2 chown fchown lchown
  fchownat umask mknod mknodat openat openat2 newfstatat statx statfs
  fstatfs utime utimes utimensat futimesat setxattr lsetxattr fsetxattr
  getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr removexattr
  lremovexattr fremovexattr setxattrat getxattrat listxattrat removexattrat
  sendfile splice tee vmsplice copy_file_range close_range memfd_create
  inotify_init inotify_init1 inotify_add_watch inotify_rm_watch fanotify_mark
  ioctl cachestat statmount listmount
  # asynchronous I/O (the old AIO interface, used by some libraries; not io_uring)
  io_setup io_destroy io_getevents io_pgetevents io_submit io_cancel
  # polling and events
  epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
  eventfd eventfd2 signalfd signalfd4 timerfd_create timerfd_settime
  timerfd_gettime
  # memory
  mmap mprotect munmap brk mremap msync mincore madvise mlock mlock2
  munlock mlockall munlockall remap_file_pages pkey_mprotect pkey_alloc pkey_free
  membarrier memfd_secret map_shadow_stack mseal
  # System V and POSIX IPC (multiprocessing, joblib)
  shmget shmat shmctl shmdt semget semop semctl semtimedop msgget msgsnd
  msgrcv msgctl mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify
  mq_getsetattr
  # signals
  rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait
  rt_sigqueueinfo rt_tgsigqueueinfo rt_sigsuspend sigaltstack kill tkill tgkill
  pause pidfd_open pidfd_send_signal restart_syscall
  # time
  nanosleep clock_nanosleep getitimer setitimer alarm gettimeofday time
  clock_gettime clock_getres timer_create timer_settime timer_gettime timer_getoverrun
  timer_delete times
  # processes and threads
  fork vfork execve execveat exit exit_group wait4 waitid getpid getppid
  gettid getpgrp getpgid setpgid getsid setsid set_tid_address set_robust_list
  get_robust_list futex futex_waitv futex_wake futex_wait futex_requeue rseq
  arch_prctl prctl seccomp set_thread_area get_thread_area sched_yield
  sched_setaffinity sched_getaffinity sched_setparam sched_getparam sched_setscheduler
  sched_getscheduler sched_get_priority_max sched_get_priority_min sched_rr_get_interval
  sched_setattr sched_getattr getpriority setpriority ioprio_set ioprio_get
  getrlimit setrlimit prlimit64 getrusage getcpu process_mrelease
  landlock_create_ruleset landlock_add_rule landlock_restrict_self uretprobe
  # identity (changing it fails without capabilities; asking is harmless)
  getuid geteuid getgid getegid getresuid getresgid getgroups setuid setgid
  setreuid setregid setresuid setresgid setgroups setfsuid setfsgid capget
  capset lsm_get_self_attr lsm_set_self_attr lsm_list_modules
  # system information
  uname sysinfo getrandom
  # sockets (the container has no network; Unix sockets and socketpair serve multiprocessing)
  connect accept accept4 sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg
  shutdown bind listen getsockname getpeername socketpair setsockopt getsockopt
`);

/** Syscalls that fail with EPERM; listed so that the refusal is explicit and tested. */
export const REFUSED_SYSCALLS: readonly string[] = syscallList(`
  io_uring_setup io_uring_enter io_uring_register
  bpf perf_event_open userfaultfd keyctl add_key request_key
  unshare setns
  mount umount2 pivot_root chroot open_tree move_mount fsopen fsconfig
  fsmount fspick mount_setattr swapon swapoff reboot kexec_load
  kexec_file_load init_module finit_module delete_module settimeofday clock_settime
  clock_adjtime adjtimex sethostname setdomainname iopl ioperm quotactl
  quotactl_fd acct syslog vhangup lookup_dcookie sysfs ustat _sysctl
  ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd process_madvise
  name_to_handle_at open_by_handle_at fanotify_init modify_ldt personality uselib
  mbind set_mempolicy get_mempolicy migrate_pages move_pages set_mempolicy_home_node
`);

interface SeccompArgument {
  index: number;
  value: number;
  valueTwo: number;
  op: 'SCMP_CMP_NE' | 'SCMP_CMP_MASKED_EQ';
}

interface SeccompRule {
  names: string[];
  action: 'SCMP_ACT_ALLOW' | 'SCMP_ACT_ERRNO';
  errnoRet?: number;
  args?: SeccompArgument[];
}

/** The subset of Docker's seccomp profile format that this profile uses. */
export interface SeccompProfile {
  defaultAction: 'SCMP_ACT_ERRNO';
  defaultErrnoRet: number;
  syscalls: SeccompRule[];
}

export function buildSeccompProfile(): SeccompProfile {
  return {
    defaultAction: 'SCMP_ACT_ERRNO',
    defaultErrnoRet: ENOSYS,
    syscalls: [
      { names: [...ALLOWED_SYSCALLS], action: 'SCMP_ACT_ALLOW' },
      {
        names: ['clone'],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: 0, value: CLONE_NEW_NAMESPACE_FLAGS, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }],
      },
      { names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: ENOSYS },
      {
        names: ['socket'],
        action: 'SCMP_ACT_ALLOW',
        args: [{ index: 0, value: AF_VSOCK, valueTwo: 0, op: 'SCMP_CMP_NE' }],
      },
      { names: [...REFUSED_SYSCALLS], action: 'SCMP_ACT_ERRNO', errnoRet: EPERM },
    ],
  };
}

/**
 * The value for HostConfig.SecurityOpt. The Docker API takes the profile's
 * JSON inline (the CLI reads a file and does the same), so no file has to
 * exist on the engine's machine.
 */
export function seccompSecurityOption(): string {
  return `seccomp=${JSON.stringify(buildSeccompProfile())}`;
}
