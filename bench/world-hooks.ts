/**
 * Module hooks (node:module `register`) that load a world module of the user's as an ES module
 * wherever it lies: a .ts, .tsx, .js or .jsx file outside any package that says its type (no
 * package.json, or one without "type"), which tsx would compile as CommonJS, is given the format
 * "module", so it may use top-level await and `import`. Files whose package.json says "type": "commonjs", and
 * everything under node_modules, load as before. bench/refresh.ts registers these hooks once per
 * process, after tsx's, before it imports a world module.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ResolveResult {
  url: string;
  format?: string | null;
  [key: string]: unknown;
}
type NextResolve = (specifier: string, context: unknown) => Promise<ResolveResult>;

/** Sources whose format the package decides (.mts/.mjs are ES modules, .cts/.cjs CommonJS, by name). */
const UNDECIDED = /\.(ts|tsx|js|jsx)$/;
const typeOf = new Map<string, string | null>();

/** The "type" of the package.json nearest above `dir` ("module", "commonjs"), or null when none says. */
function packageType(dir: string): string | null {
  const known = typeOf.get(dir);
  if (known !== undefined) return known;
  let type: string | null = null;
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: unknown };
    type = typeof pkg.type === 'string' ? pkg.type : null;
  } catch {
    const parent = dirname(dir);
    type = parent === dir ? null : packageType(parent);
  }
  typeOf.set(dir, type);
  return type;
}

export async function resolve(
  specifier: string,
  context: unknown,
  nextResolve: NextResolve,
): Promise<ResolveResult> {
  const r = await nextResolve(specifier, context);
  if (!r.url.startsWith('file:') || r.format === 'module') return r;
  const path = fileURLToPath(r.url.split('?')[0] as string);
  if (!UNDECIDED.test(path) || path.includes('/node_modules/')) return r;
  if (packageType(dirname(path)) !== null) return r;
  return { ...r, format: 'module' };
}
