/**
 * docker-compose.yml, .env.example and the configuration schema kept in step. The file is read
 * with a YAML parser (merge keys resolved as compose resolves them) and resolved by Debian's
 * docker-compose (`config` needs no Docker engine) for a few .env files: none, .env.example as
 * shipped, and one filled in for the real upstream. For each, the test looks at what every
 * container would get: every setting of .env reaches every daybook container, the sandbox profile
 * calls the bundled simulator whatever .env says, no admin server listens beyond loopback without
 * a token (the real `daybook serve` refuses, exit 2), and the published ports are the host's
 * loopback at ports .env can change. Every daybook container has the exports volume, which the
 * image's user can write, and docs/getting-started.md (where the README's compose notes moved)
 * names what the file needs and what it mounts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/program.ts';
import { ENV_SCHEMA, loadConfig, parseDotenv } from '../../src/config/config.ts';
import { LOOPBACK_HOSTS } from '../../src/runtime/admin.ts';
import { SANDBOX_KEY } from '../../src/sim/options.ts';
import { runDaybook } from '../support/cli.ts';
import { ensureDockerCompose } from '../support/debian.ts';

const ROOT = join(import.meta.dirname, '../..');
const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const exampleText = readFileSync(join(ROOT, '.env.example'), 'utf8');
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
/** The page that explains the compose file (the README's "With docker compose" moved there). */
const GUIDE = 'docs/getting-started.md';
const guide = readFileSync(join(ROOT, GUIDE), 'utf8');

interface Service {
  image?: string;
  build?: string;
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  env_file?: unknown;
  ports?: string[];
  [key: string]: unknown;
}
const model = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = model.services;
const names = Object.keys(services);
/** The services run from daybook's image (the ones built from the Dockerfile). */
const daybookServices = names.filter((n) => services[n]?.build !== undefined);
const schemaKeys = Object.keys(ENV_SCHEMA.shape);

/** The services `profiles` enables: those without profiles, and those with one of them. */
const enabled = (profiles: string[]) =>
  names.filter((n) => {
    const own = services[n]?.profiles ?? [];
    return own.length === 0 || own.some((p) => profiles.includes(p));
  });
const commandOf = (name: string) => services[name]?.command ?? [];
const isSandbox = (name: string) => (services[name]?.profiles ?? []).some((p) => p.startsWith('sandbox'));
/** The value of `--flag` in a command, or the option's default. */
const flagOf = (cmd: string[], flag: string) => {
  const at = cmd.indexOf(flag);
  if (at >= 0) return cmd[at + 1];
  const sub = buildProgram().commands.find((c) => c.name() === cmd[0]);
  return sub?.options.find((o) => o.long === flag)?.defaultValue as string | undefined;
};

/** .env.example with `values` set: its own lines replaced, the others added at the end. */
function exampleWith(values: Record<string, string>): string {
  const left = { ...values };
  const lines = exampleText.split('\n').map((line) => {
    const key = /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1];
    if (key === undefined || !(key in left)) return line;
    const value = left[key];
    delete left[key];
    return `${key}=${value}`;
  });
  return [...lines, ...Object.entries(left).map(([k, v]) => `${k}=${v}`)].join('\n');
}

const LIVE_TOKEN = 'live-admin-token-from-dotenv-0123456789';
/** A .env made from .env.example for the real upstream. */
const FILLED = exampleWith({
  DAYBOOK_API_BASE_URL: 'https://upstream.example.com',
  DAYBOOK_API_KEY: 'sk-live-from-dotenv',
  DAYBOOK_ADMIN_TOKEN: LIVE_TOKEN,
});
const SCENARIOS = { 'no .env': null, '.env.example': exampleText, 'a filled-in .env': FILLED } as const;

const work = mkdtempSync(join(tmpdir(), 'daybook-compose-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let runs = 0;

/**
 * `docker-compose config` of docker-compose.yml with `dotenv` as .env (null: none): every service
 * as compose resolves it, env_file read into environment. Compose v1 predates the long form of
 * env_file, so the copy it reads names the file in the short form (or has none when there is no
 * .env, as `required: false` does), with the build context as an absolute path.
 */
function resolved(dotenv: string | null): Record<string, Service> {
  const dir = join(work, String(runs++));
  mkdirSync(dir);
  const copy = structuredClone(model);
  for (const service of Object.values(copy.services)) {
    if (service.build !== undefined) service.build = ROOT;
    if (service.env_file === undefined) continue;
    if (dotenv === null) delete service.env_file;
    else service.env_file = [join(dir, '.env')];
  }
  writeFileSync(join(dir, 'docker-compose.yml'), JSON.stringify(copy));
  if (dotenv !== null) writeFileSync(join(dir, '.env'), dotenv);
  const out = execFileSync(
    ensureDockerCompose(),
    ['--project-directory', dir, '-f', join(dir, 'docker-compose.yml'), 'config'],
    {
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    },
  );
  const all = (parse(out) as { services: Record<string, Service> }).services;
  for (const service of Object.values(all))
    service.environment = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]),
    );
  return all;
}
const cache = new Map<string | null, Record<string, Service>>();
const resolvedOnce = (dotenv: string | null): Record<string, Service> => {
  if (!cache.has(dotenv)) cache.set(dotenv, resolved(dotenv));
  return cache.get(dotenv) ?? {};
};
const container = (dotenv: string | null, name: string): Record<string, string> =>
  resolvedOnce(dotenv)[name]?.environment ?? {};
/** The configuration daybook loads in that container (its working directory has no .env). */
const configIn = (dotenv: string | null, name: string) =>
  loadConfig(container(dotenv, name), '/nonexistent/.env');

describe('docker-compose.yml keeps in step with the CLI and the configuration', { timeout: 360_000 }, () => {
  it('is a valid compose file with each .env it is tried with (env_file in the short form)', () => {
    for (const dotenv of Object.values(SCENARIOS)) {
      const all = resolvedOnce(dotenv);
      for (const service of ['postgres', 'redis', 'migrate', 'scheduler', 'worker', 'admin', 'sim'])
        expect(all[service], service).toBeDefined();
    }
    expect(composeText).toMatch(/appendonly/);
    expect(services.admin?.healthcheck).toBeDefined();
  });

  it('every service command is a daybook command with options it knows', () => {
    const program = buildProgram();
    const daybook = names.filter(
      (n) => commandOf(n)[0] !== 'redis-server' && services[n]?.image !== 'postgres:16',
    );
    expect(daybook).toEqual(daybookServices);
    expect(daybook.length).toBeGreaterThanOrEqual(9);
    for (const name of daybook) {
      const [cmdName, ...args] = commandOf(name);
      const cmd = program.commands.find((c) => c.name() === cmdName);
      expect(cmd, `${name} runs "daybook ${cmdName}"`).toBeDefined();
      for (const flag of args.filter((a) => a.startsWith('--')))
        expect(
          cmd?.options.some((o) => o.long === flag),
          `${name}: daybook ${cmdName} ${flag}`,
        ).toBe(true);
    }
  });

  it('each profile runs one pipeline: the sandbox the simulator and its own services, the upstream none of them', () => {
    const roles = (profiles: string[]) =>
      enabled(profiles)
        .filter((n) => daybookServices.includes(n))
        .map((n) => `${n}:${commandOf(n)[0]}`)
        .sort();
    expect(roles(['sandbox'])).toEqual([
      'migrate:migrate',
      'sandbox-admin:serve',
      'sandbox-scheduler:scheduler',
      'sandbox-worker:worker',
      'sim:sim',
    ]);
    // .env.example makes the upstream the profile of a plain `docker compose up`; a --profile on
    // the command line replaces it.
    expect(parseDotenv(exampleText).COMPOSE_PROFILES).toBe('upstream');
    expect(roles(['upstream'])).toEqual([
      'admin:serve',
      'migrate:migrate',
      'scheduler:scheduler',
      'worker:worker',
    ]);
    expect(enabled(['tools'])).toContain('cli');
    expect(enabled(['sandbox-tools'])).toContain('sandbox-cli');
  });

  it('the sandbox services call the bundled simulator with its key, whatever .env says', () => {
    const sim = commandOf('sim');
    expect(flagOf(sim, '--host')).toBe('0.0.0.0');
    const simUrl = `http://sim:${flagOf(sim, '--port')}`;
    const sandbox = daybookServices.filter((n) => isSandbox(n) && n !== 'sim');
    expect(sandbox).toEqual(['sandbox-scheduler', 'sandbox-worker', 'sandbox-admin', 'sandbox-cli']);
    for (const [scenario, dotenv] of Object.entries(SCENARIOS))
      for (const name of sandbox) {
        const config = configIn(dotenv, name);
        expect(config.DAYBOOK_API_BASE_URL, `${name} with ${scenario}`).toBe(simUrl);
        expect(config.DAYBOOK_API_KEY, `${name} with ${scenario}`).toBe(SANDBOX_KEY);
        expect(config.DATABASE_URL, `${name} with ${scenario}`).toBe(
          'postgres://daybook:daybook@postgres:5432/daybook',
        );
      }
    // The upstream's services take the upstream from .env, and never fall back to the simulator.
    for (const name of ['scheduler', 'worker', 'admin', 'cli']) {
      expect(configIn(FILLED, name).DAYBOOK_API_BASE_URL, name).toBe('https://upstream.example.com');
      expect(configIn(FILLED, name).DAYBOOK_API_KEY, name).toBe('sk-live-from-dotenv');
      expect(configIn(null, name).DAYBOOK_API_BASE_URL, name).toBeUndefined();
      expect(configIn(exampleText, name).DAYBOOK_API_BASE_URL, name).toBeUndefined();
    }
  });

  it('every daybook container reads .env, and every variable daybook reads reaches it from there', () => {
    for (const name of daybookServices)
      expect(services[name]?.env_file, name).toEqual([{ path: '.env', required: false }]);
    // A .env that sets every variable of the schema: each reaches each container, but for the
    // ones compose sets itself, which .env.example names.
    const every = exampleWith(Object.fromEntries(schemaKeys.map((k) => [k, `from-dotenv-${k}`])));
    const composeOwn = ['DATABASE_URL', 'REDIS_URL', 'REDIS_CLUSTER_NODES'];
    const sandboxOwn = ['DAYBOOK_API_BASE_URL', 'DAYBOOK_API_KEY'];
    for (const name of daybookServices) {
      const env = container(every, name);
      const own = isSandbox(name) && name !== 'sim' ? [...composeOwn, ...sandboxOwn] : composeOwn;
      for (const key of schemaKeys)
        expect(env[key], `${key} in ${name}`).toBe(
          own.includes(key) ? services[name]?.environment?.[key] : `from-dotenv-${key}`,
        );
    }
    for (const key of [...composeOwn, ...sandboxOwn]) expect(exampleText, key).toContain(key);
  });

  it('sets only variables daybook reads, and .env.example holds only settings someone reads', () => {
    for (const name of daybookServices)
      for (const key of Object.keys(services[name]?.environment ?? {}))
        expect(schemaKeys, `${name}: ${key}`).toContain(key);
    const interpolated = new Set(
      [...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string),
    );
    const inExample = [...exampleText.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1] as string);
    expect(inExample.length).toBeGreaterThan(8);
    for (const key of inExample)
      expect(
        schemaKeys.includes(key) || interpolated.has(key) || key === 'COMPOSE_PROFILES',
        `${key} in .env.example is read by daybook or by docker-compose.yml`,
      ).toBe(true);
    for (const key of interpolated)
      expect(inExample, `${key} (docker-compose.yml) in .env.example`).toContain(key);
  });

  it('no admin server listens beyond loopback without a token: the real daybook serve refuses', async () => {
    const admins = daybookServices.filter((n) => commandOf(n)[0] === 'serve');
    expect(admins).toEqual(['admin', 'sandbox-admin']);
    const seen: string[] = [];
    for (const [scenario, dotenv] of Object.entries(SCENARIOS))
      for (const name of admins) {
        const host = flagOf(commandOf(name), '--host') ?? '';
        if (LOOPBACK_HOSTS.has(host)) continue;
        const token = configIn(dotenv, name).DAYBOOK_ADMIN_TOKEN;
        seen.push(`${name} with ${scenario}: ${token === undefined ? 'refused' : token}`);
        if (token !== undefined) continue;
        const r = await runDaybook(commandOf(name), container(dotenv, name));
        expect(r.code, `${name} with ${scenario}`).toBe(2);
        expect(r.stderr).toMatch(
          /binding the admin server to 0\.0\.0\.0 exposes it beyond this machine: set a token in DAYBOOK_ADMIN_TOKEN/,
        );
      }
    // The upstream's admin server has the token of .env or none (no default one); the sandbox's
    // has the token of .env, or the sandbox-only one.
    expect(seen).toEqual([
      'admin with no .env: refused',
      'sandbox-admin with no .env: sandbox-admin-token',
      'admin with .env.example: refused',
      'sandbox-admin with .env.example: sandbox-admin-token',
      `admin with a filled-in .env: ${LIVE_TOKEN}`,
      `sandbox-admin with a filled-in .env: ${LIVE_TOKEN}`,
    ]);
  });

  it('publishes ports on the host loopback only, at ports .env sets, off a local Postgres and Redis', () => {
    const example = parseDotenv(exampleText);
    const published = names.flatMap((n) => (services[n]?.ports ?? []).map((p) => [n, p] as const));
    expect(published.map(([n]) => n).sort()).toEqual(['admin', 'postgres', 'redis', 'sandbox-admin']);
    for (const [name, port] of published) {
      const m = /^127\.0\.0\.1:\$\{(DAYBOOK_[A-Z]+_HOST_PORT):-(\d+)\}:(\d+)$/.exec(port);
      expect(m, `${name}: ${port}`).not.toBeNull();
      const [, variable = '', fallback = ''] = m ?? [];
      expect(['5432', '6379'], `${name}'s default host port`).not.toContain(fallback);
      expect(example[variable], `${variable} in .env.example`).toBe(fallback);
      expect(guide.includes(variable), `${variable} in ${GUIDE}`).toBe(true);
    }
    const moved = exampleWith({
      DAYBOOK_PG_HOST_PORT: '25432',
      DAYBOOK_REDIS_HOST_PORT: '26379',
      DAYBOOK_ADMIN_HOST_PORT: '29464',
    });
    const all = resolved(moved);
    expect(all.postgres?.ports).toEqual(['127.0.0.1:25432:5432/tcp']);
    expect(all.redis?.ports).toEqual(['127.0.0.1:26379:6379/tcp']);
    expect(all.admin?.ports).toEqual(['127.0.0.1:29464:9464/tcp']);
    expect(resolvedOnce(null).postgres?.ports).toEqual(['127.0.0.1:15432:5432/tcp']);
  });

  it('gives every daybook container the exports volume at /exports, which the image makes its user’s', () => {
    expect(Object.keys((model as { volumes?: Record<string, unknown> }).volumes ?? {})).toContain('exports');
    for (const name of daybookServices) expect(services[name]?.volumes, name).toContain('exports:/exports');
    // The cli containers see the repository read-only at /data, besides.
    for (const name of ['cli', 'sandbox-cli']) expect(services[name]?.volumes, name).toContain('./:/data:ro');
    // A new named volume takes the owner of the image's folder: /exports is the user's before USER.
    const lines = dockerfile.split('\n');
    const made = lines.findIndex((l) =>
      /^RUN .*mkdir (-p )?\/exports\b.*chown node:node \/exports\b/.test(l),
    );
    const user = lines.findIndex((l) => /^USER node\b/.test(l));
    expect(made, 'the Dockerfile makes /exports and gives it to node').toBeGreaterThanOrEqual(0);
    expect(made).toBeLessThan(user);
  });

  it(`${GUIDE} says what the file needs and what it mounts`, () => {
    // env_file's long form (path:, required:) needs Docker Compose 2.24.
    expect(services.worker?.env_file).toEqual([{ path: '.env', required: false }]);
    expect(guide).toMatch(/Docker\s+Compose\s+2\.24 or newer/);
    expect(guide).toMatch(/read-only at\s+`\/data`/);
    expect(guide).toContain('docker compose run --rm cli export --to /exports');
  });
});
