/** Test harness: a simulator on a free loopback port, and a client for it. */

import {
  defaultSimOptions,
  type RunningSimulator,
  type SimOptions,
  startSimulator,
} from '../../src/sim/server.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';

export const TEST_KEY = 'sk-test-4f9c2a';

/** Simulator rate limits loose enough that a test never waits on them. */
export const UNTHROTTLED: SimOptions['rateLimits'] = { 'enterprise-search': 6000, 'product-listing': 6000 };

/** Starts a simulator with a small world; options override the defaults. */
export async function startTestSim(overrides: Partial<SimOptions> = {}): Promise<RunningSimulator> {
  return startSimulator({
    ...defaultSimOptions(),
    enterprises: 300,
    keys: new Map([[TEST_KEY, 1_000_000]]),
    startAt: new Date('2026-11-20T04:00:00Z'),
    ...overrides,
  });
}

export function clientFor(sim: RunningSimulator, apiKey = TEST_KEY, timeoutMs = 5_000): UpstreamClient {
  return new UpstreamClient({ baseUrl: sim.url, apiKey, timeoutMs });
}

/** Raw GET against the simulator, for tests of the HTTP surface itself. */
export async function rawGet(
  sim: RunningSimulator,
  path: string,
  apiKey: string | null = TEST_KEY,
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const res = await fetch(`${sim.url}${path}`, {
    headers: apiKey === null ? {} : { Authorization: `Bearer ${apiKey}` },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function balanceOf(sim: RunningSimulator, apiKey = TEST_KEY): Promise<number> {
  const res = await fetch(`${sim.url}/_sim/balance`, { headers: { Authorization: `Bearer ${apiKey}` } });
  return ((await res.json()) as { credits: number }).credits;
}
