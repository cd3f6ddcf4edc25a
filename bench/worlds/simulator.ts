/** The project's own simulator (src/sim/enterprises.ts): profile-driven rates, bursts, closures. */
import { EnterpriseWorld } from '../../src/sim/enterprises.ts';
import { addDays } from '../../src/time/cycles.ts';
import type { EnterpriseRecord } from '../../src/upstream/schemas.ts';
import type { RefreshWorld, WorldChange, WorldOptions } from './world.ts';

export const family = 'simulator';
export const about =
  "the simulator's world: profile-dependent lognormal rates, bursts after changes, firms that close";

export function createWorld(opts: WorldOptions): RefreshWorld {
  const world = new EnterpriseWorld({ seed: opts.seed, size: opts.firms, epoch: opts.epoch });
  const pids = world.all().map((e) => e.PID);
  const index = new Map(pids.map((p, i) => [p, i]));
  let rates: Map<string, number> | null = null;
  return {
    firms: pids.length,
    advance(day: number): WorldChange[] {
      const cycle = addDays(opts.epoch, day);
      world.at(cycle);
      rates = null;
      return world
        .changesIn(cycle)
        .map((c) => ({ firm: index.get(c.pid) as number, fields: c.fields, severity: c.severity }));
    },
    record(firm: number): EnterpriseRecord {
      return world.byPid(pids[firm] as string) as unknown as EnterpriseRecord;
    },
    trueRate(firm: number): number {
      // The simulator thinks in daily probabilities p: the day's, as its refresh drew the changes
      // (a firm's base times its burst after a recent change). The interface's rate is λ = −ln(1 − p).
      rates ??= world.drawnRates();
      return -Math.log1p(-(rates.get(pids[firm] as string) ?? 0));
    },
  };
}
