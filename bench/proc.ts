import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** Kernel clock ticks per second (USER_HZ); 100 on every Linux this runs on. */
export const CLK_TCK = 100;

interface Stat {
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(rest[1]), utime: Number(rest[11]), stime: Number(rest[12]), cutime: Number(rest[13]), cstime: Number(rest[14]) };
  } catch {
    return undefined;
  }
}

/** CPU ticks of a process (own time only). */
export function processTicks(pid: number): number {
  const s = readStat(pid);
  return s ? s.utime + s.stime : 0;
}

/**
 * CPU ticks of a process tree: the root, its live children, and the reaped children already
 * folded into the root's cutime/cstime (Postgres backends that exit during a run still count).
 */
export function treeTicks(root: number): number {
  const rootStat = readStat(root);
  if (!rootStat) return 0;
  let total = rootStat.utime + rootStat.stime + rootStat.cutime + rootStat.cstime;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s && s.ppid === root) total += s.utime + s.stime + s.cutime + s.cstime;
  }
  return total;
}

/**
 * Ticks the host's CPUs spent idle with disk I/O outstanding (/proc/stat iowait, summed over
 * the CPUs): time the machine could have computed but waited on storage instead.
 */
export function hostIowaitTicks(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    return Number(cpu[5] ?? 0);
  } catch {
    return 0;
  }
}

/** Peak resident set size (VmHWM) in MB. */
export function peakRssMb(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export function rssMb(pid: number): number | undefined {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface Measured {
  stdout: string;
  stderr: string;
  code: number;
  /** CPU seconds of the command itself (user + system), from its parent shell's cutime/cstime. */
  cpuSeconds: number;
}

/**
 * Runs a load generator and measures its own CPU: a shell waits for it, then prints its own
 * /proc stat, whose cutime/cstime now include the reaped command.
 */
export function runMeasured(command: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<Measured> {
  const quoted = [command, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const script = `${quoted}; code=$?; echo "CPU_STAT $(cat /proc/$$/stat)" >&2; exit $code`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = /CPU_STAT (.*)/.exec(stderr)?.[1] ?? '';
      const rest = line.slice(line.lastIndexOf(')') + 2).split(' ');
      const cpuSeconds = (Number(rest[13] ?? 0) + Number(rest[14] ?? 0)) / CLK_TCK;
      resolve({ stdout, stderr: stderr.replace(/CPU_STAT .*\n?/, ''), code: code ?? 1, cpuSeconds });
    });
  });
}
