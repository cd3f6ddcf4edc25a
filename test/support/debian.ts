/** Debian tools some tests need (Chromium, docker-compose), installed by the test setup when missing. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const APT_LOCK = join(tmpdir(), 'daybook-apt.lock');

/** Returns `binary`, installing Debian's `pkg` first when it is not on the machine. */
export function ensureDebianTool(binary: string, pkg: string): string {
  if (existsSync(binary)) return binary;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // One apt-get at a time on the machine (CI runs the suite on two Node versions at once, and
  // both may want the same package): flock waits for the other to finish, then apt finds it
  // installed.
  const apt = (...args: string[]) =>
    execFileSync('flock', ['-w', '600', APT_LOCK, 'apt-get', ...args], {
      env,
      stdio: 'ignore',
      timeout: 660_000,
    });
  try {
    apt('install', '-y', '-q', pkg);
  } catch {
    apt('update', '-q');
    apt('install', '-y', '-q', pkg);
  }
  if (!existsSync(binary)) throw new Error(`could not install Debian ${pkg} (apt-get install ${pkg})`);
  return binary;
}

export const ensureChromium = (): string => ensureDebianTool('/usr/bin/chromium', 'chromium');

/** Compose v1 from Debian: no Docker engine runs here, but `config` validates a file without one. */
export const ensureDockerCompose = (): string =>
  ensureDebianTool('/usr/bin/docker-compose', 'docker-compose');

/** The flags this workplace's closed network needs (no background connections). */
export const HEADLESS_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
