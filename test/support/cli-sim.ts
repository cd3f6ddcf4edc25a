/** A database and a simulator of a test file's own, and the environment the CLI needs for them. */
import type { RunningSimulator, SimOptions } from '../../src/sim/server.ts';
import { freshDatabase, type TestDatabase } from './db.ts';
import { startTestSim, TEST_KEY } from './sim.ts';

export interface CliSim {
  t: TestDatabase;
  sim: RunningSimulator;
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A small world (10 enterprises), product calls unthrottled. */
const SMALL_WORLD: Partial<SimOptions> = {
  enterprises: 10,
  rateLimits: { 'enterprise-search': 100, 'product-listing': 6000 },
};

/** The database, then the simulator: by default a small world; `simOptions` replace that. */
export async function cliAgainstSim(simOptions: Partial<SimOptions> = SMALL_WORLD): Promise<CliSim> {
  const t = await freshDatabase();
  const sim = await startTestSim(simOptions);
  return {
    t,
    sim,
    env: {
      DATABASE_URL: t.url,
      DAYBOOK_API_BASE_URL: sim.url,
      DAYBOOK_API_KEY: TEST_KEY,
      DAYBOOK_PRODUCT_RATE: '6000',
      LOG_LEVEL: 'warn',
    },
    close: async () => {
      await sim.close();
      await t.drop();
    },
  };
}
