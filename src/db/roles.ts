/**
 * The read-only analytics role: SELECT on the `analytics` views and nothing else. The views run
 * with their owner's rights, so the role reads them without any right on the tables behind
 * them (the raw landing included).
 */
import type { Sql } from './connect.ts';

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class RoleNameError extends Error {
  override readonly name = 'RoleNameError';
}

/** Creates (or updates) `role` as a login role that can read the analytics schema only. */
export async function grantAnalyticsRole(sql: Sql, role: string, password: string | null): Promise<void> {
  if (!ROLE_NAME.test(role)) {
    throw new RoleNameError(
      `role name "${role}" must be lower-case letters, digits and _ (at most 63), starting with a letter`,
    );
  }
  const [exists] = await sql`select 1 from pg_roles where rolname = ${role}`;
  if (!exists) await sql.unsafe(`create role ${role} login nosuperuser nocreatedb nocreaterole noinherit`);
  if (password !== null) await sql.unsafe(`alter role ${role} with login password ${literal(password)}`);
  const [{ db } = { db: '' }] = await sql<{ db: string }[]>`select current_database() as db`;
  await sql.unsafe(`grant connect on database "${db.replace(/"/g, '""')}" to ${role}`);
  await sql.unsafe(`revoke all on all tables in schema public from ${role}`);
  await sql.unsafe(`grant usage on schema analytics to ${role}`);
  await sql.unsafe(`grant select on all tables in schema analytics to ${role}`);
  await sql.unsafe(`alter default privileges in schema analytics grant select on tables to ${role}`);
}

function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}
