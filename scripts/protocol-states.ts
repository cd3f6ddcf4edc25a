/**
 * `npm run docs:states [-- --check]`: draws the states of a buy, from the table of
 * src/purchase/states.ts, into docs/architecture.md between its markers,
 *
 *     <!-- protocol-states:begin -->…<!-- protocol-states:end -->
 *
 * and leaves the rest of the page as it is. `--check` changes nothing: it says whether the
 * drawing in the page is the table's, and exits 1 when it is not.
 * test/docs/protocol-states.test.ts checks it on every test run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stateDiagram } from '../src/purchase/states.ts';

/** docs/architecture.md, the page that holds the drawing. */
export const ARCHITECTURE_PATH = fileURLToPath(new URL('../docs/architecture.md', import.meta.url));
export const BEGIN = '<!-- protocol-states:begin -->';
export const END = '<!-- protocol-states:end -->';
/** The command that redraws it. */
export const REDRAW = 'npm run docs:states';

/** What goes between the markers: the table drawn as a Mermaid block. */
export function statesBlock(): string {
  return `\n\`\`\`mermaid\n${stateDiagram()}\n\`\`\`\n`;
}

/** The text between the markers of `text`; throws unless each marker is there once, in order. */
export function readBlock(text: string): string {
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (begin < 0 || end < begin || text.indexOf(BEGIN, begin + 1) >= 0 || text.indexOf(END, end + 1) >= 0)
    throw new Error(`docs/architecture.md must hold ${BEGIN} and then ${END}, once each`);
  return text.slice(begin + BEGIN.length, end);
}

/** `text` with the table's drawing between its markers. */
export function writeBlock(text: string): string {
  const old = readBlock(text);
  const at = text.indexOf(BEGIN) + BEGIN.length;
  return `${text.slice(0, at)}${statesBlock()}${text.slice(at + old.length)}`;
}

function main(argv: string[]): number {
  const check = argv.includes('--check');
  const text = readFileSync(ARCHITECTURE_PATH, 'utf8');
  const current = readBlock(text) === statesBlock();
  if (check) {
    if (current) process.stdout.write('docs/architecture.md: the states of a buy are up to date\n');
    else process.stderr.write(`docs/architecture.md: the states of a buy differ from the table; run ${REDRAW}\n`);
    return current ? 0 : 1;
  }
  if (!current) writeFileSync(ARCHITECTURE_PATH, writeBlock(text));
  process.stdout.write(
    current
      ? 'docs/architecture.md: the states of a buy are up to date\n'
      : 'docs/architecture.md: redrew the states of a buy\n',
  );
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`docs:states: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
