import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { ENV_SCHEMA } from '../../src/config/config.ts';

const compose = readFileSync(join(import.meta.dirname, '../../docker-compose.yml'), 'utf8');

describe('docker-compose.yml keeps in step with the CLI', () => {
  it('every service command is a daybook command with options it knows', () => {
    const program = buildProgram();
    const commands = [...compose.matchAll(/command: \[(.+)\]/g)].map(
      (m) => JSON.parse(`[${m[1]}]`) as string[],
    );
    const daybook = commands.filter((c) => !c[0]?.startsWith('redis-server'));
    expect(daybook.length).toBeGreaterThanOrEqual(5);
    for (const [name, ...args] of daybook) {
      const cmd = program.commands.find((c) => c.name() === name);
      expect(cmd, `compose runs "daybook ${name}"`).toBeDefined();
      for (const flag of args.filter((a) => a.startsWith('--'))) {
        expect(
          cmd?.options.some((o) => o.long === flag),
          `daybook ${name} ${flag}`,
        ).toBe(true);
      }
    }
  });

  it('every variable compose sets is one daybook reads', () => {
    const known = new Set(Object.keys(ENV_SCHEMA.shape));
    const set = [...compose.matchAll(/^ {4}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1] as string);
    const daybookVars = set.filter((v) => !v.startsWith('POSTGRES_'));
    expect(daybookVars.length).toBeGreaterThan(3);
    for (const v of daybookVars) expect(known.has(v), v).toBe(true);
  });
});
