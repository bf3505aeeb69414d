import { release } from 'node:os';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import {
  containerLabels,
  createSandbox,
  readSandboxEnvironment,
  type SandboxRuntimeName,
} from '../../src/sandbox/index.ts';

/**
 * The runtime a session asks for is the one its container runs under: the
 * engine's own record of the container says so, and so does the kernel the
 * cell sees (gVisor answers with a kernel of its own, not the host's). Runs in
 * the docker project (runc) and again in the runsc project (DATALYST_RUNTIME=runsc).
 */

const docker = new Docker();
const expected: SandboxRuntimeName = readSandboxEnvironment().runtime ?? 'runc';

async function containerRuntimeOf(sessionId: string): Promise<string | undefined> {
  const [container] = await docker.listContainers({
    filters: { label: [`${containerLabels.session}=${sessionId}`] },
  });
  if (container === undefined) return undefined;
  const inspected = await docker.getContainer(container.Id).inspect();
  return inspected.HostConfig.Runtime;
}

describe(`sessions under ${expected}`, () => {
  it('run under the runtime DATALYST_RUNTIME names, and say so', async () => {
    await using session = await createSandbox();
    expect(session.runtime).toBe(expected);
    expect(await containerRuntimeOf(session.id)).toBe(expected);
    const result = await session.execute('import os\nos.uname().release');
    expect(result.status).toBe('ok');
    const cellKernel = JSON.parse(result.value?.replace(/'/g, '"') ?? '""') as string;
    if (expected === 'runsc') expect(cellKernel).not.toBe(release());
    else expect(cellKernel).toBe(release());
  });

  it('an explicit runtime option wins over the environment', async () => {
    const other: SandboxRuntimeName = expected === 'runc' ? 'runsc' : 'runc';
    await using session = await createSandbox({ runtime: other });
    expect(session.runtime).toBe(other);
    expect(await containerRuntimeOf(session.id)).toBe(other);
    expect((await session.execute('1 + 1')).value).toBe('2');
  });
});
