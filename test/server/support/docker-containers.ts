import Docker from 'dockerode';
import { containerLabels } from '../../../src/sandbox/index.ts';

/** Session containers (running or not) whose owner is the process with this PID. */
export async function containersOwnedBy(pid: number): Promise<string[]> {
  const docker = new Docker();
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${containerLabels.ownerPid}=${pid}`] },
  });
  return containers.map((container) => container.Id);
}
