/** A database of its own for a test file, cloned from the migrated template. */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { type Database, openDatabase } from '../../src/db/connect.ts';
import { adminUrl, databaseUrl } from './pg-url.ts';

export interface TestDatabase extends Database {
  url: string;
  name: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  const name = `daybook_t_${randomBytes(5).toString('hex')}`;
  const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${inject('templateDb')}"`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(name);
  const database = openDatabase(url);
  return {
    ...database,
    url,
    name,
    async drop() {
      await database.close();
      const a = postgres(adminUrl(), { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}
