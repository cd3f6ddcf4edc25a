/** Debian tools some tests need (Chromium, docker-compose), installed by the test setup when missing. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Returns `binary`, installing Debian's `pkg` first when it is not on the machine. */
export function ensureDebianTool(binary: string, pkg: string): string {
  if (existsSync(binary)) return binary;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '-q', pkg], { env, stdio: 'ignore', timeout: 300_000 });
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update', '-q'], { env, stdio: 'ignore', timeout: 300_000 });
    install();
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
