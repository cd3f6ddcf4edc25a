/**
 * Creates (once per migration set) a migrated template database; each test file clones it with
 * CREATE DATABASE … TEMPLATE, which takes milliseconds, and drops its clone afterwards.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { MIGRATIONS_DIR, migrateDatabase } from '../../src/db/migrate.ts';
import { adminUrl, databaseUrl } from './pg-url.ts';

function migrationsHash(): string {
  const h = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR, { recursive: true }).map(String).sort()) {
    if (f.endsWith('.sql') || f.endsWith('.json')) h.update(f).update(readFileSync(join(MIGRATIONS_DIR, f)));
  }
  return h.digest('hex').slice(0, 12);
}

export default async function setup(project: TestProject): Promise<void> {
  const template = `daybook_tmpl_${migrationsHash()}`;
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${template}`;
    if (!exists) {
      const building = `${template}_build_${process.pid}`;
      await admin.unsafe(`create database "${building}"`);
      await migrateDatabase(databaseUrl(building));
      await admin.unsafe(`alter database "${building}" rename to "${template}"`).catch(async () => {
        await admin.unsafe(`drop database if exists "${building}"`);
      });
    }
    // Leftover clones of crashed runs (older than an hour) are removed.
    const stale = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like 'daybook_t\\_%'
        and (pg_stat_file('base/' || oid || '/PG_VERSION', true)).modification < now() - interval '1 hour'`;
    for (const { datname } of stale)
      await admin.unsafe(`drop database if exists "${datname}" with (force)`).catch(() => {});
  } finally {
    await admin.end();
  }
  project.provide('templateDb', template);
}

declare module 'vitest' {
  export interface ProvidedContext {
    templateDb: string;
  }
}
