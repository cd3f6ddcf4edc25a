/**
 * A database daybook cannot use, said so that a person knows what to do: the one place where a
 * Postgres error is turned into advice (main.ts calls it for every error a command ends with).
 * The messages never hold DATABASE_URL's password: they are built from its host, port, user and
 * database name only. Pure.
 */

/** `value` as one shell word: as it is when it is plainly safe, else in single quotes. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_.,:/@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `name` as an SQL identifier in double quotes. */
function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

interface Target {
  host: string | null;
  port: string;
  user: string | null;
  database: string | null;
}

/** Where DATABASE_URL points, without its password; null when it does not parse. */
function targetOf(databaseUrl: string): Target | null {
  let u: URL;
  try {
    u = new URL(databaseUrl);
  } catch {
    return null;
  }
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  // A socket directory may come as ?host=/var/run/postgresql, with no host in the authority.
  const host = u.searchParams.get('host') || u.hostname.replace(/^\[(.*)\]$/, '$1') || null;
  return {
    host,
    port: u.searchParams.get('port') || u.port || '5432',
    user: u.username ? decode(u.username) : null,
    database: u.pathname.length > 1 ? decode(u.pathname.slice(1)) : null,
  };
}

/**
 * The message for an error that says the configured database cannot be used, or null when `err`
 * is not one. Handled: SQLSTATE 3D000 (invalid_catalog_name), a database that does not exist.
 */
export function databaseProblem(err: unknown, databaseUrl: string | undefined): string | null {
  if (!err || typeof err !== 'object') return null;
  if ((err as { code?: unknown }).code !== '3D000') return null;
  const target = databaseUrl ? targetOf(databaseUrl) : null;
  // The server names the database it did not find; the URL's path says the same.
  const named = /database "(.+)" does not exist/.exec(String((err as { message?: unknown }).message ?? ''));
  const database = named?.[1] ?? target?.database ?? null;
  if (database === null) return null;
  const where = target?.host ? ` on the Postgres server at ${target.host}:${target.port}` : '';
  const createdb = [
    'createdb',
    ...(target?.host ? ['-h', shellWord(target.host), '-p', shellWord(target.port)] : []),
    ...(target?.user ? ['-U', shellWord(target.user)] : []),
    shellWord(database),
  ].join(' ');
  return [
    `database "${database}" does not exist${where} (the database DATABASE_URL names). Create it, then run the command again:`,
    `  ${createdb}`,
    `or, in psql as a user allowed to create databases:`,
    `  CREATE DATABASE ${sqlIdentifier(database)};`,
  ].join('\n');
}
