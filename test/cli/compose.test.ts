import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { ENV_SCHEMA } from '../../src/config/config.ts';
import { ensureDockerCompose } from '../support/debian.ts';

const composeFile = join(import.meta.dirname, '../../docker-compose.yml');
const compose = readFileSync(composeFile, 'utf8');

describe('docker-compose.yml keeps in step with the CLI', { timeout: 360_000 }, () => {
  it('is a valid compose file (docker-compose config, without a Docker engine)', () => {
    const dc = ensureDockerCompose();
    const env = { ...process.env, DAYBOOK_API_KEY: 'sk-compose-check' };
    const resolved = execFileSync(dc, ['-f', composeFile, 'config'], { env, encoding: 'utf8' });
    for (const service of ['postgres', 'redis', 'migrate', 'scheduler', 'worker', 'admin'])
      expect(resolved, service).toMatch(new RegExp(`^  ${service}:`, 'm'));
    expect(resolved).toMatch(/appendonly/);
    expect(resolved).toMatch(/healthcheck/);
  });

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
