/**
 * Roles that read daybook's database without being able to harm it.
 *
 * The analytics role (`daybook analytics-role`): SELECT on the `analytics` views and nothing
 * else, and a statement timeout (60 s unless told otherwise). The views run with their owner's
 * rights, so the role reads them without any right on the tables behind them (the raw landing
 * included).
 *
 * The sql reader: the login role `daybook sql` runs a person's text as (src/cli/sql.ts says why).
 * Migration 0007 makes it, with `daybook_sql_reader_ensure()`, and keeps its name and password in
 * the owner-only table `sql_reader`.
 *
 * Postgres grants PUBLIC (every role) CONNECT and TEMPORARY on each new database and EXECUTE on
 * lo_create, lo_creat and lo_from_bytea, and a role cannot be refused what PUBLIC holds: a
 * privilege comes off a role only when it comes off PUBLIC.
 */
import type { Sql } from './connect.ts';

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class RoleNameError extends Error {
  override readonly name = 'RoleNameError';
}

/**
 * The predefined roles whose members may run programs on the server, read or write its files, or
 * signal any backend: a reader must hold none of them, directly or through another role.
 */
export const DANGEROUS_ROLES = [
  'pg_execute_server_program',
  'pg_read_server_files',
  'pg_write_server_files',
  'pg_signal_backend',
] as const;

/** The functions that create a large object. lo_import needs superuser rights already. */
const LO_CREATORS = ['lo_create(oid)', 'lo_creat(integer)', 'lo_from_bytea(oid, bytea)'];

/** The statement timeout the analytics role gets unless told otherwise: 60 s. */
export const ANALYTICS_STATEMENT_TIMEOUT_MS = 60_000;

// The rows below are computed shapes: each is what a query of the system catalogs computes.

/** The name of this database (`current_database()`). */
interface CurrentDatabase {
  db: string;
}

/** Whether a role may create temporary tables here (has_database_privilege … 'TEMPORARY'). */
interface TemporaryRight {
  can: boolean;
}

/** A large-object function a role may still execute (of LO_CREATORS, by has_function_privilege). */
interface LargeObjectCreator {
  fn: string;
}

/** Another database a role may connect to (`pg_database.datname`, by has_database_privilege). */
interface OpenDatabase {
  datname: string;
}

/** Whether the user may make the sql reader (ensure) and read `sql_reader` (read). */
interface ReaderAccess {
  ensure: boolean;
  read: boolean;
}

/** A role's dangerous attributes and the roles it is a member of (pg_roles, pg_auth_members). */
interface RoleStanding {
  attrs: string[];
  member_of: string[];
}

/** The session user, whether it is a superuser, and the DANGEROUS_ROLES it is a member of. */
interface SessionUser {
  user: string;
  superuser: boolean;
  dangerous: string[];
}

/** Whether a role may run set_config, and the inline languages it may use (pg_language). */
interface RoleEscapes {
  set_config: boolean;
  languages: string[];
}

/**
 * Creates (or updates) `role` as a login role that can read the analytics schema only, whose
 * statements are cancelled after `statementTimeoutMs` (its own statement_timeout, which a session
 * may still change for itself), and takes from PUBLIC, in this database, TEMPORARY and the
 * creation of large objects (see the README).
 * Returns what Postgres still lets the role do, one sentence each: CONNECT to the other databases
 * open to PUBLIC always, and TEMPORARY or large objects when the user running this may not revoke
 * them (TEMPORARY takes the database's owner; the large-object functions, a superuser).
 */
export async function grantAnalyticsRole(
  sql: Sql,
  role: string,
  password: string | null,
  statementTimeoutMs = ANALYTICS_STATEMENT_TIMEOUT_MS,
): Promise<string[]> {
  if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 1 || statementTimeoutMs > 2_147_483_647) {
    throw new RangeError(
      `statement timeout ${statementTimeoutMs} ms must be a whole number from 1 to 2147483647`,
    );
  }
  if (!ROLE_NAME.test(role)) {
    throw new RoleNameError(
      `role name "${role}" must be lower-case letters, digits and _ (at most 63), starting with a letter`,
    );
  }
  const [exists] = await sql`select 1 from pg_roles where rolname = ${role}`;
  if (!exists) await sql.unsafe(`create role ${role} login nosuperuser nocreatedb nocreaterole noinherit`);
  if (password !== null) await sql.unsafe(`alter role ${role} with login password ${literal(password)}`);
  const timeout =
    statementTimeoutMs % 1000 === 0 ? `${statementTimeoutMs / 1000}s` : `${statementTimeoutMs}ms`;
  await sql.unsafe(`alter role ${role} set statement_timeout = '${timeout}'`);
  const [{ db } = { db: '' }] = await sql<CurrentDatabase[]>`select current_database() as db`;
  const database = ident(db);
  await sql.unsafe(`grant connect on database ${database} to ${role}`);
  await sql.unsafe(`revoke all on all tables in schema public from ${role}`);
  await sql.unsafe(`grant usage on schema analytics to ${role}`);
  await sql.unsafe(`grant select on all tables in schema analytics to ${role}`);
  await sql.unsafe(`alter default privileges in schema analytics grant select on tables to ${role}`);
  // Without the rights to, these warn and change nothing: what they leave is checked below.
  await sql.unsafe(`revoke temporary on database ${database} from public, ${role}`);
  await sql.unsafe(
    `revoke execute on function ${LO_CREATORS.map((f) => `pg_catalog.${f}`).join(', ')} from public, ${role}`,
  );

  const left: string[] = [];
  const [temp] = await sql<TemporaryRight[]>`
    select has_database_privilege(${role}, current_database(), 'TEMPORARY') as can`;
  if (temp?.can) {
    left.push(
      `role ${role} can still create temporary tables in this database: only its owner may revoke TEMPORARY from PUBLIC`,
    );
  }
  const lo = await sql<LargeObjectCreator[]>`
    select f as fn from unnest(${LO_CREATORS}::text[]) f
    where has_function_privilege(${role}, to_regprocedure('pg_catalog.' || f), 'EXECUTE')`;
  if (lo.length > 0) {
    left.push(
      `role ${role} can still create large objects (${lo.map((r) => r.fn.replace(/\(.*/, '')).join(', ')}): only a superuser may revoke EXECUTE on them from PUBLIC`,
    );
  }
  const others = await sql<OpenDatabase[]>`
    select datname from pg_database
    where datallowconn and datname <> current_database()
      and has_database_privilege(${role}, oid, 'CONNECT')
    order by datname`;
  if (others.length > 0) {
    const names = others.map((r) => r.datname);
    const shown =
      names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
    left.push(
      `role ${role} can still connect to ${names.length === 1 ? 'database' : `${names.length} other databases:`} ${shown} (where it reads only what PUBLIC may): Postgres grants CONNECT on each new database to PUBLIC; pg_hba.conf is where a role is confined to one database`,
    );
  }
  return left;
}

/** The login role `daybook sql` runs text as, as kept in `sql_reader`. */
export interface SqlReader {
  role: string;
  password: string;
}

/** The role the sql reader is recorded as (none yet: null), read without its password. */
export async function recordedReaderRole(sql: Sql): Promise<string | null> {
  const [row] = await sql<Pick<SqlReader, 'role'>[]>`select role from public.sql_reader`;
  return row?.role ?? null;
}

/**
 * The sql reader of this database: made (or its grants completed) first when the user of `sql`
 * may, then read. Null when there is none; 'unreadable' when this user may not read it (only the
 * owner of `sql_reader` and superusers may).
 */
export async function ensureSqlReader(sql: Sql): Promise<SqlReader | 'unreadable' | null> {
  const [can] = await sql<ReaderAccess[]>`
    select
      coalesce(has_function_privilege(to_regprocedure('public.daybook_sql_reader_ensure()'), 'EXECUTE'), false) as ensure,
      coalesce(has_table_privilege(to_regclass('public.sql_reader'), 'SELECT'), false) as read`;
  // It takes a transaction-scoped advisory lock: concurrent runs wait for each other.
  if (can?.ensure) await sql`select public.daybook_sql_reader_ensure()`;
  if (!can?.read) return 'unreadable';
  const [row] = await sql<SqlReader[]>`select role, password from public.sql_reader`;
  return row ?? null;
}

/**
 * Why `role` cannot be trusted to run a person's text as, or null when it can: it must exist, not
 * be a superuser, have none of CREATEDB, CREATEROLE, REPLICATION, BYPASSRLS, and be a member of no
 * role at all (so of none of DANGEROUS_ROLES, through any path).
 */
export async function sqlReaderProblem(sql: Sql, role: string): Promise<string | null> {
  const [r] = await sql<RoleStanding[]>`
    select
      array_remove(array[
        case when rolsuper then 'SUPERUSER' end, case when rolcreatedb then 'CREATEDB' end,
        case when rolcreaterole then 'CREATEROLE' end, case when rolreplication then 'REPLICATION' end,
        case when rolbypassrls then 'BYPASSRLS' end], null) as attrs,
      array(select g.rolname::text from pg_auth_members m join pg_roles g on g.oid = m.roleid
            where m.member = r.oid order by 1) as member_of
    from pg_roles r where rolname = ${role}`;
  if (!r) return `role ${role} does not exist on this server`;
  if (r.attrs.length > 0) return `role ${role} has ${r.attrs.join(', ')}`;
  if (r.member_of.length > 0) return `role ${role} is a member of ${r.member_of.join(', ')}`;
  return null;
}

/**
 * Why the session user of `sql` is not safe to run a person's text as itself (in a read-only
 * transaction that is rolled back), or null when it is: not a superuser, and no privileges of
 * DANGEROUS_ROLES, even through SET ROLE. It may still signal the backends of its own role.
 */
export async function sessionUserProblem(sql: Sql): Promise<{ user: string; problem: string | null }> {
  const [r] = await sql<SessionUser[]>`
    select session_user::text as user, rolsuper as superuser,
      array(select d from unnest(${[...DANGEROUS_ROLES]}::text[]) d
            where pg_has_role(session_user, d, 'MEMBER') order by 1) as dangerous
    from pg_roles where rolname = session_user`;
  if (!r) return { user: '?', problem: 'the session user is not in pg_roles' };
  if (r.superuser) return { user: r.user, problem: `${r.user} is a superuser` };
  if (r.dangerous.length > 0)
    return { user: r.user, problem: `${r.user} is a member of ${r.dangerous.join(', ')}` };
  return { user: r.user, problem: null };
}

/**
 * For the embedded database only, where every session is the superuser and the reader is entered
 * with SET ROLE: takes from PUBLIC the two ways one statement could leave that role again,
 * set_config('role', …) and a DO block (RESET ROLE inside it), and says what is still left (null
 * when nothing is). On a shared server this would take set_config from every other role too, which
 * pg_dump needs: there the reader logs in instead.
 */
export async function closeRoleEscapes(sql: Sql, role: string): Promise<string | null> {
  const open = async () => {
    const [r] = await sql<RoleEscapes[]>`
      select
        has_function_privilege(${role}, 'pg_catalog.set_config(text, text, boolean)', 'EXECUTE') as set_config,
        array(select lanname::text from pg_language
              where laninline <> 0 and has_language_privilege(${role}, oid, 'USAGE') order by 1) as languages`;
    return r ?? { set_config: true, languages: [] };
  };
  let r = await open();
  if (r.set_config || r.languages.length > 0) {
    if (r.set_config) {
      await sql.unsafe(
        `revoke execute on function pg_catalog.set_config(text, text, boolean) from public, ${ident(role)}`,
      );
    }
    for (const l of r.languages)
      await sql.unsafe(`revoke usage on language ${ident(l)} from public, ${ident(role)}`);
    r = await open();
  }
  const left = [...(r.set_config ? ['set_config()'] : []), ...r.languages.map((l) => `DO blocks in ${l}`)];
  return left.length > 0 ? `role ${role} can still use ${left.join(' and ')}` : null;
}

/** A quoted SQL identifier. */
export function ident(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}
