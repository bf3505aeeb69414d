// node --import ./bench/cpu-profile-on-signal.mjs …: SIGUSR2 starts a CPU profile of this process, the next
// SIGUSR2 writes it to $BENCH_CPU_PROFILE_DIR/<pid>-<n>.cpuprofile (bench:server-cpu with BENCH_CPU_PROFILE_DIR
// profiles the server over its measured turns only, not its start and warm-up).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR ?? '.';
const session = new Session();
session.connect();
const post = (method, params = {}) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
let running = false;
let count = 0;
process.on('SIGUSR2', () => {
  void (async () => {
    if (!running) {
      running = true;
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', {
        interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 500),
      });
      await post('Profiler.start');
      return;
    }
    running = false;
    const { profile } = await post('Profiler.stop');
    count += 1;
    writeFileSync(path.join(dir, `${process.pid}-${count}.cpuprofile`), JSON.stringify(profile));
  })();
});
