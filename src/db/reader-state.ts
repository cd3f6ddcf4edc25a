/**
 * Whether the sql reader (the role `daybook sql` runs a person's text as; src/db/roles.ts) is in
 * place, read without making it or reading its password.
 */
import type { Sql } from './connect.ts';
import { recordedReaderRole, sqlReaderProblem } from './roles.ts';

/** A computed shape: whether `sql_reader` exists and may be read (to_regclass, has_table_privilege). */
interface ReaderTable {
  exists: boolean;
  readable: boolean;
}

/** A computed shape: what the recorded role may do (has_database_privilege, has_schema_privilege). */
interface ReaderRights {
  connect: boolean;
  analytics: boolean;
}

export type ReaderState =
  /** The table `sql_reader` is missing: the database is not migrated that far. */
  | { kind: 'no-table' }
  /** The user of `sql` may not read which role it is (only the table's owner and superusers may). */
  | { kind: 'unreadable' }
  /** No role is recorded yet. */
  | { kind: 'none' }
  /** The role recorded, and why it cannot be trusted or used (null when it can). */
  | { kind: 'role'; role: string; problem: string | null; canConnect: boolean; readsAnalytics: boolean };

export async function readerState(sql: Sql): Promise<ReaderState> {
  const [t] = await sql<ReaderTable[]>`
    select to_regclass('public.sql_reader') is not null as exists,
      coalesce(has_table_privilege(to_regclass('public.sql_reader'), 'SELECT'), false) as readable`;
  if (!t?.exists) return { kind: 'no-table' };
  if (!t.readable) return { kind: 'unreadable' };
  const role = await recordedReaderRole(sql);
  if (role === null) return { kind: 'none' };
  const problem = await sqlReaderProblem(sql, role);
  if (problem) return { kind: 'role', role, problem, canConnect: false, readsAnalytics: false };
  const [can] = await sql<ReaderRights[]>`
    select has_database_privilege(${role}, current_database(), 'CONNECT') as connect,
      coalesce(has_schema_privilege(${role}, to_regnamespace('analytics')::oid, 'USAGE'), false) as analytics`;
  return {
    kind: 'role',
    role,
    problem: null,
    canConnect: can?.connect ?? false,
    readsAnalytics: can?.analytics ?? false,
  };
}
