/**
 * Claims on a unit of work, as Postgres advisory locks held on a connection of their own. A
 * claim lives exactly as long as its holder's connection: a worker that dies lets go at once, and
 * a worker that lives keeps it however starved it is. That is what a queue's lease (BullMQ's job
 * lock, renewed by a timer) cannot promise, and why two workers never buy one answer twice.
 *
 * Each claim opens its own connection and closes it on release: a pooled, reserved connection
 * whose backend died would stay dead in the driver (porsager/postgres#1208), and a claim costs a
 * few milliseconds against an upstream call that costs far more.
 */
import postgres from 'postgres';

export interface Claim {
  /** Lets go of the claim; never throws (a lost connection has let go already). */
  release(): Promise<void>;
}

export interface Claims {
  /** Takes the claim on (`scope`, `id`), or null when another holder has it. */
  take(scope: string, id: number): Promise<Claim | null>;
  /** Lets go of every claim still held. */
  close(): Promise<void>;
}

/** Claims on the database at `url`. */
export function openClaims(url: string): Claims {
  const open = new Set<postgres.Sql>();
  const end = async (conn: postgres.Sql) => {
    open.delete(conn);
    await conn.end({ timeout: 2 }).catch(() => {});
  };
  return {
    async take(scope, id) {
      const conn = postgres(url, {
        max: 1,
        idle_timeout: 0,
        onnotice: () => {},
        connection: { application_name: 'daybook-claims' },
      });
      open.add(conn);
      try {
        const [row] = await conn<
          { ok: boolean }[]
        >`select pg_try_advisory_lock(hashtext(${scope}), ${id}) as ok`;
        if (!row?.ok) {
          await end(conn);
          return null;
        }
      } catch (err) {
        await end(conn);
        throw err;
      }
      // Closing the session is what lets go of a session-level advisory lock.
      return { release: () => end(conn) };
    },
    close: async () => {
      await Promise.all([...open].map(end));
    },
  };
}
