/**
 * No function of src/ or jobs/ is longer than 120 lines, counted from its first line to the line of
 * its closing brace (its doc comment left out): a longer one is split into named steps. Every
 * function-like node with a body counts (declarations, methods, accessors, constructors, function
 * expressions and arrow functions), nested ones on their own as well as inside their parent.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAX_LINES = 120;

/** The `.ts` files of a folder of the repository, recursively, as repository paths. */
function sourcesUnder(folder: string): string[] {
  return (readdirSync(join(ROOT, folder), { recursive: true }) as string[])
    .map((f) => `${folder}/${String(f).split('\\').join('/')}`)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .sort();
}

/** A readable name for a function-like node: its own, or the variable or property it is assigned to. */
function nameOf(node: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (
    node.name &&
    (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))
  )
    return node.name.text;
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text;
  return '(anonymous)';
}

interface FunctionLength {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** Every function-like node with a body in a source, with its length in lines. */
function functionsIn(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: FunctionLength[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition((node.body as ts.Node).getEnd()).line;
      out.push({ file, line: first + 1, name: nameOf(node), lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe('function length', () => {
  it('measures a function from its first line to its closing brace', () => {
    const text = [
      '/** A doc comment is not counted. */',
      'export async function two(a: number) {',
      '  const inner = (b: number) =>',
      '    b + 1;',
      '  return inner(a);',
      '}',
      'class C {',
      '  method() {',
      '    return 1;',
      '  }',
      '}',
    ].join('\n');
    expect(functionsIn('x.ts', text).map((f) => `${f.name}@${f.line}:${f.lines}`)).toEqual([
      'two@2:5',
      'inner@3:2',
      'method@8:3',
    ]);
  });

  it(`has no function in src/ or jobs/ longer than ${MAX_LINES} lines`, () => {
    const files = [...sourcesUnder('src'), ...sourcesUnder('jobs')];
    const all = files.flatMap((file) => functionsIn(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(all.length).toBeGreaterThan(100);
    const long = all
      .filter((f) => f.lines > MAX_LINES)
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(long, `functions longer than ${MAX_LINES} lines`).toEqual([]);
  });
});
