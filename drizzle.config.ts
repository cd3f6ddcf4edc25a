import { defineConfig } from 'drizzle-kit';

// drizzle-kit reads DATABASE_URL only for `drizzle-kit migrate/studio`; `generate` needs no database.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './migrations',
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/daybook' },
});
