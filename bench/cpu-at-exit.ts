/**
 * Loaded with `node --import` into a benchmarked process: as the process exits, its own CPU accounting (user +
 * system, every thread's: `process.cpuUsage()` is the process's) and its peak RSS go to the file `BENCH_CPU_FILE`.
 */
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_CPU_FILE;
if (isMainThread && file)
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const rssMb = process.resourceUsage().maxRSS / 1024;
    writeFileSync(file, JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, maxRssMb: rssMb }));
  });
