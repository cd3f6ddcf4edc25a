/**
 * A deadline on a promise that might never settle: a driver wedged on a connection the server
 * dropped, a peer that never answers. Past `ms` the returned promise rejects with an error naming
 * `what`; the original is left to settle (or not) on its own, its outcome ignored.
 */
export class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'DeadlineError';
  }
}

export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
  });
  // A late rejection of the abandoned work is not an unhandled one.
  work.catch(() => {});
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
