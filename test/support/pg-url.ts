/** Where the tests find Postgres: DAYBOOK_TEST_PG (a server URL) or the local trust-auth default. */
const BASE = process.env.DAYBOOK_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function adminUrl(): string {
  return BASE;
}

export function databaseUrl(name: string): string {
  const u = new URL(BASE);
  u.pathname = `/${name}`;
  return u.toString();
}
