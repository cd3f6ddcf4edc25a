#!/usr/bin/env node
// The CLI is TypeScript, and `npx daybook` works right after `npm ci` with no build step: the
// first run bundles src/cli/main.ts with esbuild (the one tsx brings) into
// node_modules/.cache/daybook/, and every later run imports that JavaScript for as long as each
// source it was built from is unchanged (path, size, mtime). Running compiled JavaScript spares
// every daybook process tsx's loader thread, a second V8 isolate of about 30 MiB. Where the cache
// cannot be built or written (a read-only install), tsx compiles at run time, as it always did.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = 'src/cli/main.ts';
// Inside node_modules, so the bundle's external imports (bullmq, postgres…) resolve as the sources' do.
const CACHE = join(ROOT, 'node_modules', '.cache', 'daybook');
const CURRENT = join(CACHE, 'current.json');
/** Bump when the build options below change, so older bundles are not reused. */
const BUILD = 1;

/** `[size, mtime]` of each input, as recorded by the build. */
function stamp(file) {
  const s = statSync(join(ROOT, file));
  return [s.size, s.mtimeMs];
}

/** The bundle's entry file when the cache holds one built from the sources as they are now. */
function freshBundle() {
  let current;
  try {
    current = JSON.parse(readFileSync(CURRENT, 'utf8'));
  } catch {
    return null;
  }
  if (current.build !== BUILD || !current.inputs) return null;
  for (const [file, [size, mtime]] of Object.entries(current.inputs)) {
    let now;
    try {
      now = stamp(file);
    } catch {
      return null;
    }
    if (now[0] !== size || now[1] !== mtime) return null;
  }
  const main = join(CACHE, current.dir, 'main.js');
  try {
    statSync(main);
  } catch {
    return null;
  }
  return main;
}

/**
 * A module's `import.meta.url` (and dirname, filename) stays its source file's, so paths relative
 * to it (the migrations folder, createRequire) resolve as they do when the source runs.
 */
const keepImportMeta = {
  name: 'daybook-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.[mc]?[tj]s$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta')) return undefined;
      const meta = {
        url: pathToFileURL(args.path).href,
        dirname: dirname(args.path),
        filename: args.path,
      };
      return {
        contents: source.replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_, k) => JSON.stringify(meta[k])),
        loader: /\.[mc]?ts$/.test(args.path) ? 'ts' : 'js',
      };
    });
  },
};

async function buildBundle() {
  // tsx's own esbuild: a dependency of a dependency, present wherever tsx is (production images too).
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/esm/api'))('esbuild');
  mkdirSync(CACHE, { recursive: true });
  const tmp = join(CACHE, `tmp-${process.pid}-${Date.now()}`);
  try {
    const result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { main: ENTRY },
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      keepNames: true,
      sourcemap: 'linked',
      chunkNames: 'chunks/[name]-[hash]',
      metafile: true,
      logLevel: 'silent',
      plugins: [keepImportMeta],
    });
    const inputs = {};
    for (const file of Object.keys(result.metafile.inputs).sort()) inputs[file] = stamp(file);
    const dir = `b${BUILD}-${createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16)}`;
    try {
      renameSync(tmp, join(CACHE, dir));
    } catch {
      // Another process built the same sources first: use its bundle.
    }
    writeFileSync(`${CURRENT}.${process.pid}`, JSON.stringify({ build: BUILD, dir, inputs }));
    renameSync(`${CURRENT}.${process.pid}`, CURRENT);
    removeStaleBuilds(dir);
    return join(CACHE, dir, 'main.js');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await esbuild.stop?.();
  }
}

/** Bundles of other sources older than a day (a process still running one loads its chunks lazily). */
function removeStaleBuilds(keep) {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(CACHE)) {
    if (name === keep || name === 'current.json') continue;
    const path = join(CACHE, name);
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

let bundle = null;
try {
  bundle = freshBundle() ?? (await buildBundle());
} catch {
  bundle = null;
}
if (bundle) {
  // Stack traces name the TypeScript sources only when asked for (source maps cost memory).
  if (process.env.DAYBOOK_DEBUG) process.setSourceMapsEnabled(true);
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
