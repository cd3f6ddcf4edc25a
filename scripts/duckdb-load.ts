/**
 * `npm run duckdb-load -- <export folder> [database file]`: loads daybook export packages
 * (Parquet) into a DuckDB database with docs/recipes/duckdb-load.sql, as the DuckDB CLI would,
 * and prints how many rows each table and view holds. Without a database file, in memory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const [folder, file] = process.argv.slice(2).filter((a) => a !== '--');
if (!folder || !existsSync(folder)) {
  process.stderr.write(
    `duckdb-load: ${folder ? `${folder} does not exist` : 'give the export folder'}; usage: npm run duckdb-load -- <export folder> [database file]\n`,
  );
  process.exit(2);
}
const recipe = readFileSync(new URL('../docs/recipes/duckdb-load.sql', import.meta.url), 'utf8');
const instance = await DuckDBInstance.create(file ?? ':memory:');
const db = await instance.connect();
try {
  await db.run(`SET VARIABLE export_dir = '${resolve(folder).replaceAll("'", "''")}'`);
  await db.run(recipe);
  const packages = (await db.runAndReadAll('select count(*)::int as n from daybook_live')).getRowObjectsJson()[0];
  process.stdout.write(`loaded ${packages?.n} packages from ${folder}${file ? ` into ${file}` : ''}\n`);
  for (const name of [
    'enterprise_current',
    'enterprise_history',
    'enterprise_changes',
    'events',
    'product_current',
    'product_trending',
    'credit_usage',
  ]) {
    const [row] = (await db.runAndReadAll(`select count(*)::int as n from ${name}`)).getRowObjectsJson();
    process.stdout.write(`  ${name.padEnd(20)} ${row?.n} rows\n`);
  }
} catch (err) {
  process.stderr.write(`duckdb-load: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  db.closeSync();
  instance.closeSync();
}
