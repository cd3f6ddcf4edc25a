/**
 * When a cron schedule fires next, from a matcher of its minutes (node-cron's `task.match`, which
 * knows the expression and its time zone). Pure: it takes the instant to start from and never
 * reads the clock.
 */

/** How far ahead `nextFires` looks by default: 31 days of minutes. */
export const CRON_LOOKAHEAD_MINUTES = 31 * 24 * 60;

/**
 * The first `count` instants strictly after `after` at which a schedule fires. `matches` says
 * whether the schedule fires at an instant; it is asked once per minute, at the minute's first
 * second of `seconds` (the seconds field of a six-field expression, [0] for a five-field one), and
 * a matching minute fires at each of `seconds`. At most `maxMinutes` minutes are looked at: a
 * schedule that fires more rarely gives fewer instants (none at all for one that never fires).
 */
export function nextFires(
  matches: (instant: Date) => boolean,
  after: Date,
  count: number,
  options: { seconds?: readonly number[]; maxMinutes?: number } = {},
): Date[] {
  const seconds = [...(options.seconds ?? [0])].filter((s) => s >= 0 && s < 60).sort((a, b) => a - b);
  const first = seconds[0];
  const maxMinutes = options.maxMinutes ?? CRON_LOOKAHEAD_MINUTES;
  const fires: Date[] = [];
  if (first === undefined || count <= 0) return fires;
  const start = Math.floor(after.getTime() / 60_000) * 60_000;
  for (let i = 0; i <= maxMinutes && fires.length < count; i++) {
    const minute = start + i * 60_000;
    if (!matches(new Date(minute + first * 1000))) continue;
    for (const s of seconds) {
      const at = minute + s * 1000;
      if (at > after.getTime() && fires.length < count) fires.push(new Date(at));
    }
  }
  return fires;
}
