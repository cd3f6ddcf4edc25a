/**
 * The row is the lease, as graphile-worker and pg-boss claim jobs: a table whose rows are work
 * to claim keeps, on each row, who holds it (`holder`) and until when (`lease_until`); tables
 * whose holders must be told apart across take-overs keep a `fence` too. Nothing here holds a
 * session-level lock, so it works through PgBouncer in transaction mode. The owner of a table
 * writes its rows in its own statements; this module gives them the one rule they follow:
 *
 * - A lease is live while `lease_until` is in the future (by the database's clock, `now()`); a
 *   row without one is not held. Taking or renewing a lease sets `lease_until` to `now()` plus
 *   the lease's length, in whole milliseconds and at least one.
 * - A row may be taken when nobody holds it or its lease lapsed (its holder died or starved).
 *   A live lease of another holder is respected, except where the owner says so: a holder may
 *   take its own claim again (`reentrant`: a job's retry under the same job id), and a holder
 *   whose process ran on this machine and runs no more may be taken over before its lease lapses
 *   (`probeProcess`).
 * - Taking a row raises its fence, when it has one. Before it acts (writes its result, calls out),
 *   a holder checks that the row still names it, and its fence: one that lost the row does not act.
 * - Letting go clears holder and lease: the row may be taken at once.
 *
 * Holders are `host:pid:tag` (the tag tells a reused pid apart), with `/job` for a job's claim.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Sql } from './connect.ts';

/** A holder name of its own, for this process: `host:pid:tag`, with a new random tag. */
export function newHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** The name this process claims work under. */
export const PROCESS_HOLDER = newHolder();

/** The holder of one job's claim: this process, and the job. */
export function holderOf(jobId: string): string {
  return `${PROCESS_HOLDER}/${jobId}`.slice(0, 200);
}

/** The job a job's claim was taken for (`holderOf`), or null for a holder of no job. */
export function jobOfHolder(holder: string): string | null {
  const slash = holder.indexOf('/');
  return slash < 0 ? null : holder.slice(slash + 1);
}

/** Whether process `pid` of this machine is known gone (no such process). */
export function localProcessGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Whether the process a holder names is known gone: none holds (null), or it ran on this machine
 * and runs no more. A holder of another machine is never known gone.
 */
export function holderGone(holder: string | null): boolean {
  if (!holder) return true;
  const [host, pid] = holder.split(':');
  if (host !== hostname()) return false;
  return localProcessGone(Number(pid));
}

/** A lease's length as the database takes it: whole milliseconds, at least one. */
export function leaseLength(leaseMs: number): number {
  return Math.max(1, Math.round(leaseMs));
}

/** When a lease taken now for `leaseMs` lapses (SQL). */
export function leaseUntil(sql: Sql, leaseMs: number) {
  return sql`now() + ${leaseLength(leaseMs)} * interval '1 millisecond'`;
}

/** Whether the lease on a row is live (SQL boolean); `column` names its lease_until, qualified if need be. */
export function leaseLive(sql: Sql, column = 'lease_until') {
  return sql`coalesce(${sql(column)} > now(), false)`;
}

/** Who holds a row, and whether their lease is live (`leaseLive`), as read under the row's lock. */
export interface LeaseState {
  holder: string | null;
  live: boolean;
}

/** Where a table's owner allows more than the rule's default (see the module comment). */
export interface TakeoverRule {
  /** A holder may take its own live claim again. */
  reentrant?: boolean;
  /** A live claim whose holder's process is known gone (`holderGone`) may be taken over. */
  probeProcess?: boolean;
}

/** Whether `me` may take a row whose lease is `lease`: the one take-over rule. */
export function mayTake(lease: LeaseState, me: string, rule: TakeoverRule = {}): boolean {
  if (lease.holder === null || !lease.live) return true;
  if (rule.reentrant === true && lease.holder === me) return true;
  return rule.probeProcess === true && holderGone(lease.holder);
}

/**
 * The SET list that makes `holder` take a row for `leaseMs`; `fence`: the row's fence is raised,
 * so whoever held it before no longer matches.
 */
export function take(sql: Sql, holder: string, leaseMs: number, o: { fence?: boolean } = {}) {
  const lease = sql`holder = ${holder}, lease_until = ${leaseUntil(sql, leaseMs)}`;
  return o.fence ? sql`${lease}, fence = fence + 1` : lease;
}

/** The SET item that extends a lease by `leaseMs` from now. */
export function renew(sql: Sql, leaseMs: number) {
  return sql`lease_until = ${leaseUntil(sql, leaseMs)}`;
}

/** The SET list that lets a row go: nobody holds it, it may be taken at once. */
export function letGo(sql: Sql) {
  return sql`holder = null, lease_until = null`;
}

/** A claim as its holder knows it: its name, and the fence it took the row at (tables with one). */
export interface Held {
  holder: string;
  fence?: number;
}

/** The condition that the row is still held by `claim`: the check a holder makes before it acts. */
export function stillHeld(sql: Sql, claim: Held) {
  return claim.fence === undefined
    ? sql`holder = ${claim.holder}`
    : sql`holder = ${claim.holder} and fence = ${claim.fence}`;
}
