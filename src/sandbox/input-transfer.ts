import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import type { InputTransfer } from './sandbox-limits.ts';
import type { InputWorkspace } from './kernel-process.ts';
import { isSafeWorkspacePath } from './workspace-files.ts';

/** The sandbox user (docker/python-runner/Dockerfile), whose rights a bind mount keeps. */
const SANDBOX_UID = 1000;
const SANDBOX_GID = 1000;

const infoSchema = z.object({ SecurityOptions: z.array(z.string()).nullish() });
const engineNotes = new WeakMap<Docker, Promise<string | null>>();

/**
 * Why this engine cannot bind-mount a folder of this host as the sandbox user
 * would read it, or null when it can: a remote engine (tcp, ssh) sees another
 * machine's files; rootless and user-namespace engines map uid 1000 to another
 * user; SELinux refuses unlabelled binds (and relabelling would change the
 * user's files).
 */
export function bindUnavailableReason(docker: Docker): Promise<string | null> {
  let note = engineNotes.get(docker);
  if (!note) {
    note = (async () => {
      // docker-modem sets socketPath for a unix socket or a Windows pipe (a
      // function that finds the default socket when DOCKER_HOST is unset), host for tcp and ssh.
      const modem = docker.modem as { socketPath?: unknown; host?: unknown };
      const socket = typeof modem.socketPath === 'string' || typeof modem.socketPath === 'function';
      if (!socket || modem.host) return 'the Docker engine is remote';
      const info = infoSchema.parse(await docker.info());
      const options = (info.SecurityOptions ?? []).join(' ');
      if (/name=rootless/.test(options)) return 'the Docker engine is rootless';
      if (/name=userns/.test(options)) return 'the Docker engine remaps users';
      if (/name=selinux/.test(options)) return 'the Docker engine enforces SELinux labels';
      return null;
    })();
    note.catch(() => engineNotes.delete(docker));
    engineNotes.set(docker, note);
  }
  return note;
}

/** Whether uid 1000 (without supplementary groups) has `bit` (4 read, 1 search) on a file of this mode. */
function allows(info: { mode: number; uid: number; gid: number }, bit: number): boolean {
  if (info.uid === SANDBOX_UID) return (info.mode & (bit << 6)) !== 0;
  if (info.gid === SANDBOX_GID) return (info.mode & (bit << 3)) !== 0;
  return (info.mode & bit) !== 0;
}

/** True when the sandbox user can read every listed file through a bind mount of the folder. */
export async function readableBySandboxUser(workspace: InputWorkspace): Promise<boolean> {
  const folders = new Set<string>(['']);
  for (const file of workspace.files) {
    const parts = file.path.split('/');
    for (let depth = 1; depth < parts.length; depth += 1) folders.add(parts.slice(0, depth).join('/'));
  }
  const join = (relative: string) => (relative === '' ? workspace.dir : `${workspace.dir}/${relative}`);
  const checks = [
    ...[...folders].map(async (folder) => allows(await lstat(join(folder)), 1)),
    ...workspace.files.map(async (file) => allows(await lstat(file.absolutePath), 4)),
  ];
  try {
    return (await Promise.all(checks)).every(Boolean);
  } catch {
    return false;
  }
}

export type ChosenTransfer = { type: 'bind'; source: string; hidden: string[] } | { type: 'volume' };

/**
 * The left-out folders a bind of `source` must hide (see `BindInputs`): each
 * that is a real folder of it, outermost only. `unsure` is set when one may
 * show through the bind all the same: it is not there yet (made later, it
 * would), it could not be examined, or its name is no workspace path (the
 * listing compares names; a mount could not be placed by it). A link or a
 * file hides nothing (the listing never follows links, and leaves out only
 * what lies below a folder).
 */
async function foldersToHide(
  source: string,
  excludeDirs: readonly string[],
): Promise<{ hidden: string[]; unsure: boolean }> {
  const given = [...new Set(excludeDirs)];
  const safe = given.filter(isSafeWorkspacePath).sort();
  let unsure = safe.length < given.length;
  const outermost = safe.filter((dir) => !safe.some((other) => other !== dir && dir.startsWith(`${other}/`)));
  const hidden: string[] = [];
  for (const dir of outermost) {
    const folder = path.join(source, ...dir.split('/'));
    try {
      // No link on the way (its target, not this folder, is what the container would see there).
      if ((await lstat(folder)).isDirectory() && (await realpath(folder)) === folder) hidden.push(dir);
    } catch {
      unsure = true;
    }
  }
  return { hidden, unsure };
}

/**
 * `bind` where the engine can mount the host folder and the sandbox user can
 * read every file through it, the left-out folders hidden; else `volume`
 * (which holds the listed files only). `auto` also copies when a left-out
 * folder may show through the bind (not there yet, unreadable, an odd name); an
 * explicit `bind` hides the ones that are there. A pooled start (`later`)
 * has no folder yet: always `volume`.
 */
export async function chooseInputTransfer(
  docker: Docker,
  workspace: InputWorkspace | 'later',
  wanted: InputTransfer,
): Promise<ChosenTransfer> {
  if (workspace === 'later' || wanted === 'volume') return { type: 'volume' };
  const source = await realpath(workspace.dir);
  const { hidden, unsure } = await foldersToHide(source, workspace.excludeDirs ?? []);
  if (wanted === 'bind') return { type: 'bind', source, hidden };
  if (unsure || (await bindUnavailableReason(docker)) !== null) return { type: 'volume' };
  return (await readableBySandboxUser(workspace)) ? { type: 'bind', source, hidden } : { type: 'volume' };
}
