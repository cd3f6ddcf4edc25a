/**
 * The alert rules of ops/prometheus/ pass promtool's checks and their unit tests (Debian's
 * `prometheus` package brings promtool; installed when missing).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureDebianTool } from '../support/debian.ts';

const run = promisify(execFile);
const DIR = join(import.meta.dirname, '../../ops/prometheus');

describe('the Prometheus rules', { timeout: 120_000 }, () => {
  let promtool: string;
  beforeAll(() => {
    promtool = ensureDebianTool('/usr/bin/promtool', 'prometheus');
  }, 700_000);

  it('pass promtool check rules', async () => {
    const { stdout } = await run(promtool, ['check', 'rules', 'daybook.rules.yml'], { cwd: DIR });
    expect(stdout).toMatch(/SUCCESS: 12 rules found/);
  });

  it('pass their unit tests (promtool test rules)', async () => {
    const { stdout } = await run(promtool, ['test', 'rules', 'daybook.rules.test.yml'], { cwd: DIR });
    expect(stdout).toMatch(/SUCCESS/);
    expect(stdout).not.toMatch(/FAILED/);
  });

  it('come with an example configuration promtool accepts, scraping daybook as job "daybook"', async () => {
    const { stdout } = await run(promtool, ['check', 'config', 'prometheus.yml'], { cwd: DIR });
    expect(stdout).toMatch(/is valid prometheus config file syntax/);
    expect(stdout).toMatch(/SUCCESS: 12 rules found/);
  });
});
