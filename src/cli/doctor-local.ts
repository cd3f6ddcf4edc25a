/**
 * `daybook doctor`'s checks of this machine alone: the configuration (every bad value at once),
 * the cron schedules (their time zone and next fire times) and the free space of the folders
 * daybook writes to.
 */
import { constants } from 'node:fs';
import { access, stat, statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { createTask, parse } from 'node-cron';
import { type Config, ConfigError, loadConfig } from '../config/config.ts';
import { nextFires } from '../time/cron.ts';
import { type CheckResult, fail, inWords, pass, skip } from './doctor-result.ts';

/** A folder with less free space than this fails its check. */
export const MIN_FREE_BYTES = 1024 ** 3;

/** The configuration, or a failed check for each bad value (all of them, not just the first). */
export function configCheck(): { config: Config | null; results: CheckResult[] } {
  try {
    return { config: loadConfig(), results: [pass('configuration', 'every variable is valid')] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return {
      config: null,
      results: err.problems.map((problem) => {
        const variable = /^[A-Z][A-Z0-9_]*/.exec(problem)?.[0];
        return fail(
          'configuration',
          problem,
          variable
            ? `correct ${variable} where it is set (the environment or .env), or unset it`
            : 'correct that variable where it is set (the environment or .env)',
        );
      }),
    };
  }
}

/** "Sat 28 Nov 03:30", in `timeZone`. */
function fireTime(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    ...(at.getUTCSeconds() === 0 ? {} : { second: '2-digit' }),
    hourCycle: 'h23',
  })
    .format(at)
    .replace(',', '');
}

/** The next three fire times of one schedule, in its time zone. */
async function scheduleCheck(
  name: string,
  variable: string,
  expression: string,
  timeZone: string,
  now: Date,
) {
  const task = createTask(expression, () => {}, { timezone: timeZone });
  try {
    const fires = nextFires((d) => task.match(d), now, 3, { seconds: parse(expression).second });
    const check = `${name} schedule`;
    if (fires.length === 0)
      return fail(
        check,
        `${expression} (${variable}) does not fire within 31 days`,
        `check ${variable}: minute hour day-of-month month day-of-week`,
      );
    const more = fires.length < 3 ? '; no more within 31 days' : '';
    return pass(
      check,
      `${expression} in ${timeZone}: ${fires.map((f) => fireTime(f, timeZone)).join(', ')}${more}`,
    );
  } finally {
    await task.destroy();
  }
}

/** The scheduler's two schedules (DAYBOOK_ENTERPRISE_CRON, DAYBOOK_PRODUCTS_CRON in DAYBOOK_CRON_TZ). */
export async function scheduleChecks(config: Config, now: Date): Promise<CheckResult[]> {
  const tz = config.DAYBOOK_CRON_TZ;
  return [
    await scheduleCheck('enterprise', 'DAYBOOK_ENTERPRISE_CRON', config.DAYBOOK_ENTERPRISE_CRON, tz, now),
    await scheduleCheck('products', 'DAYBOOK_PRODUCTS_CRON', config.DAYBOOK_PRODUCTS_CRON, tz, now),
  ];
}

/** "12.3 GB". */
function size(bytes: number): string {
  const gb = bytes / 1e9;
  return gb >= 10
    ? `${Math.round(gb)} GB`
    : gb >= 1
      ? `${gb.toFixed(1)} GB`
      : `${Math.round(bytes / 1e6)} MB`;
}

/** A folder daybook writes to: writable (or makable), with MIN_FREE_BYTES free on its disk. */
async function folderCheck(check: string, variable: string, folder: string): Promise<CheckResult> {
  const path = resolve(folder);
  let existing = path;
  for (;;) {
    const s = await stat(existing).catch(() => null);
    if (s) {
      if (!s.isDirectory())
        return fail(check, `${existing} is a file, not a folder`, `point ${variable} at a folder`);
      break;
    }
    const up = dirname(existing);
    if (up === existing) break;
    existing = up;
  }
  const made = existing === path ? '' : ' (made when first needed)';
  try {
    await access(existing, constants.W_OK);
  } catch {
    return fail(
      check,
      `${existing} is not writable by this user${made ? `, so ${path} cannot be made` : ''}`,
      `let this user write there, or point ${variable} at another folder`,
    );
  }
  const fs = await statfs(existing);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < MIN_FREE_BYTES)
    return fail(
      check,
      `${path}: only ${size(free)} free on its disk`,
      `free some space there, or point ${variable} at a larger disk`,
    );
  return pass(check, `${path}: ${size(free)} free${made}`);
}

/** The data folder (the embedded database) and the export folder, when daybook uses them. */
export async function diskChecks(config: Config): Promise<CheckResult[]> {
  const guard = (check: string, work: Promise<CheckResult>) =>
    work.catch((err: unknown) =>
      fail(check, `cannot be read: ${inWords(err)}`, 'check the folder and its disk'),
    );
  return [
    config.DATABASE_URL
      ? skip('data folder', 'DATABASE_URL is set: the data folder (the embedded database) is unused')
      : await guard('data folder', folderCheck('data folder', 'DAYBOOK_DATA_DIR', config.DAYBOOK_DATA_DIR)),
    config.DAYBOOK_EXPORT_DIR
      ? await guard(
          'export folder',
          folderCheck('export folder', 'DAYBOOK_EXPORT_DIR', config.DAYBOOK_EXPORT_DIR),
        )
      : skip('export folder', 'DAYBOOK_EXPORT_DIR is not set: no export after each cycle'),
  ];
}
