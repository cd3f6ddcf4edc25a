/**
 * One export in a process of its own, as `daybook export --full` runs it (bench/export.ts spawns
 * it): `node --import tsx bench/export-child.ts <database url> <folder> <format> [gzip]`. Prints
 * one JSON line: the seconds of `exportPackages` itself (Node's start and the imports not
 * counted), the package written, each table's seconds (from the progress lines) and the peak
 * RSS of this whole process (`process.resourceUsage().maxRSS`, read after the export).
 */
import { openDatabase } from '../src/db/connect.ts';
import { EXPORT_TABLES } from '../src/export/contract.ts';
import type { Format } from '../src/export/formats.ts';
import { exportPackages } from '../src/export/package.ts';
import { tableClock } from './support.ts';

const [url, to, format, gzip] = process.argv.slice(2);
if (!url || !to || !format) throw new Error('usage: export-child.ts <database url> <folder> <format> [gzip]');

const db = openDatabase(url, { max: 2, applicationName: 'daybook-bench-export-child' });
try {
  const { progress, tableSeconds } = tableClock(EXPORT_TABLES.map((x) => x.name));
  const start = performance.now();
  const [written] = await exportPackages(db.sql, {
    to,
    format: format as Format,
    ...(gzip === 'gzip' ? { gzip: true } : {}),
    full: true,
    progress,
  });
  const seconds = (performance.now() - start) / 1000;
  if (!written) throw new Error(`the ${format} export wrote no package`);
  process.stdout.write(
    `${JSON.stringify({
      seconds,
      dir: written.dir,
      rows: written.rows,
      bytes: written.bytes,
      tableSeconds,
      maxRssKiB: process.resourceUsage().maxRSS,
    })}\n`,
  );
} finally {
  await db.close();
}
