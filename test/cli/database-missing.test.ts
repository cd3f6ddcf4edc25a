/**
 * A DATABASE_URL naming a database that does not exist (SQLSTATE 3D000) gets a message saying so
 * and how to create it, exit 1, no stack trace, never the password.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { databaseProblem } from '../../src/cli/database-errors.ts';
import { runDaybook } from '../support/cli.ts';
import { databaseUrl } from '../support/pg-url.ts';

const STACK = /\n\s+at .+:\d+:\d+/;

describe('databaseProblem', () => {
  const missing = (name: string) =>
    Object.assign(new Error(`database "${name}" does not exist`), { code: '3D000' });

  it('names the database and the server, with createdb and CREATE DATABASE, never the password', () => {
    const message = databaseProblem(
      missing('daybook'),
      'postgres://daybook:s3cret-pw@db.internal:6543/daybook?sslmode=require',
    );
    expect(message).toContain('database "daybook" does not exist on the Postgres server at db.internal:6543');
    expect(message).toContain('createdb -h db.internal -p 6543 -U daybook daybook');
    expect(message).toContain('CREATE DATABASE "daybook";');
    expect(message).not.toContain('s3cret-pw');
  });

  it('quotes names a shell or SQL would misread, and defaults the port', () => {
    const message = databaseProblem(missing(`it's "x"`), 'postgresql://me@localhost/ignored') ?? '';
    expect(message).toContain(`createdb -h localhost -p 5432 -U me 'it'\\''s "x"'`);
    expect(message).toContain('CREATE DATABASE "it\'s ""x""";');
  });

  it('leaves every other error alone', () => {
    expect(databaseProblem(Object.assign(new Error('x'), { code: '28P01' }), 'postgres://a@b/c')).toBeNull();
    expect(databaseProblem(new Error('connect ECONNREFUSED 127.0.0.1:1'), 'postgres://a@b/c')).toBeNull();
    expect(databaseProblem('3D000', undefined)).toBeNull();
  });
});

describe('a DATABASE_URL naming a database that does not exist', { timeout: 120_000 }, () => {
  const name = `daybook_missing_${randomBytes(4).toString('hex')}`;
  const url = new URL(databaseUrl(name));
  // A password to look for in the output (trust authentication ignores it); one of the server's own is kept.
  if (!url.password) url.password = 'pw-must-not-show-9f3a';
  const password = decodeURIComponent(url.password);
  const env = {
    DATABASE_URL: url.toString(),
    DAYBOOK_API_BASE_URL: 'http://127.0.0.1:9',
    DAYBOOK_API_KEY: 'sk-unused',
    LOG_LEVEL: 'warn',
  };
  const createdb = `createdb -h ${url.hostname} -p ${url.port || '5432'} -U ${decodeURIComponent(url.username)} ${name}`;

  for (const args of [
    ['migrate'],
    ['watch', 'list'],
    ['sql', 'select 1'],
    ['products', 'get', '--date', '2026-01-05'],
  ]) {
    it(`daybook ${args[0]}: says so and how to create it, exit 1, no stack trace, no password`, async () => {
      const r = await runDaybook(args, env);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`daybook: database "${name}" does not exist on the Postgres server at`);
      expect(r.stderr).toContain(createdb);
      expect(r.stderr).toContain(`CREATE DATABASE "${name}";`);
      expect(r.stderr).not.toMatch(STACK);
      expect(`${r.stdout}${r.stderr}`).not.toContain(password);
    });
  }
});
