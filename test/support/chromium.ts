/** Debian's Chromium for browser checks, installed by the test setup when missing. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['install', '-y', '-q', 'chromium'], { env, stdio: 'ignore', timeout: 300_000 });
  } catch {
    execFileSync('apt-get', ['update', '-q'], { env, stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '-q', 'chromium'], { env, stdio: 'ignore', timeout: 300_000 });
  }
  if (!existsSync(CHROMIUM)) throw new Error('could not install Debian chromium (apt-get install chromium)');
  return CHROMIUM;
}

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
