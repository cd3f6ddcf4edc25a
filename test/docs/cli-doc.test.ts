/**
 * docs/cli.md (where the README's CLI table moved) keeps in step with the command tree of
 * src/cli/program.ts, and the commands' own words point at documentation that exists:
 *
 * - every command has a row, and every option of every command is in the synopsis of its row
 *   (a short flag such as `-c` anywhere in the row); no row names a command or an option that
 *   does not exist;
 * - the help of every command (`daybook <command> --help`, rendered by commander from the same
 *   program, descriptions and added text included) and every message of src/cli names only
 *   documentation that exists: a README section by its heading, a docs/ page, and a section of
 *   that page when it names one.
 *
 * No database needed.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.ts';
import { tables, withoutFences } from '../support/markdown.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const CLI_DOC = 'docs/cli.md';

// ---- the program ------------------------------------------------------------------------------

interface CommandInfo {
  path: string;
  command: Command;
}

/** Every command of the tree by its path (`watch add`), the groups (`watch`) included. */
function commandsOf(program: Command): CommandInfo[] {
  const out: CommandInfo[] = [];
  const walk = (c: Command, path: string[]) => {
    for (const sub of c.commands) {
      const p = [...path, sub.name()];
      out.push({ path: p.join(' '), command: sub });
      walk(sub, p);
    }
  };
  walk(program, []);
  return out;
}

/** A group only holds subcommands: no option and no action of its own (`daybook watch`). */
const isGroup = (c: Command) =>
  c.commands.length > 0 &&
  c.options.length === 0 &&
  !(c as unknown as { _actionHandler: unknown })._actionHandler;

/** What `daybook <path> --help` prints, rendered by commander, added help text included. */
function helpOf(command: Command): string {
  let out = '';
  command.configureOutput({
    writeOut: (s) => {
      out += s;
    },
    writeErr: (s) => {
      out += s;
    },
  });
  command.outputHelp();
  return out;
}

// ---- the page ---------------------------------------------------------------------------------

interface Row {
  /** The command paths of the row's synopses (`watch list`), as the program names them. */
  paths: string[];
  /** The long options its synopses name. */
  flags: Set<string>;
  /** The whole row. */
  text: string;
}

/** The rows of the page's `command | what it does` tables. */
function rowsOf(doc: string, known: string[]): Row[] {
  const rows: Row[] = [];
  // Longest first, so that `subscribe add` wins over `subscribe`.
  const byLength = [...known].sort((a, b) => b.length - a.length);
  for (const t of tables(withoutFences(doc))) {
    if (t.header[0] !== 'command' || t.header[1] !== 'what it does') continue;
    for (const r of t.rows) {
      const first = r[0] ?? '';
      const paths: string[] = [];
      const flags = new Set<string>();
      for (const m of first.matchAll(/`([^`]+)`/g)) {
        const span = (m[1] as string).replace(/^daybook\s+/, '');
        const words = span.split(/\s+/);
        // The command's words come first, before any argument or option.
        const lead = words.slice(0, words.findIndex((w) => /^[[<(-]|^"/.test(w)) >>> 0).join(' ');
        const path = byLength.find((k) => lead === k || lead.startsWith(`${k} `)) ?? lead;
        paths.push(path);
        for (const f of span.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)) flags.add(f[1] as string);
      }
      rows.push({ paths, flags, text: r.join(' | ') });
    }
  }
  return rows;
}

const program = buildProgram();
const all = commandsOf(program);
const documented = all.filter((c) => !isGroup(c.command));
const doc = read(CLI_DOC);
const rows = rowsOf(
  doc,
  all.map((c) => c.path),
);
const rowsFor = (path: string) => rows.filter((r) => r.paths.includes(path));

describe('docs/cli.md', () => {
  it('has its tables, and the commands of the program', () => {
    expect(rows.length).toBeGreaterThan(30);
    expect(documented.length).toBeGreaterThan(30);
  });

  it('has a row for every command', () => {
    const missing = documented.map((c) => c.path).filter((p) => rowsFor(p).length === 0);
    expect(missing).toEqual([]);
  });

  it('names every option of every command in the synopsis of its row', () => {
    const missing: string[] = [];
    for (const { path, command } of documented) {
      const mine = rowsFor(path);
      for (const o of command.options) {
        if (o.long && !mine.some((r) => r.flags.has(o.long as string))) missing.push(`${path} ${o.long}`);
        if (o.short && !mine.some((r) => r.text.includes(`\`${o.short}\``)))
          missing.push(`${path} ${o.short}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents the options the README’s table lacked', () => {
    for (const [path, flag] of [
      ['changes', '--limit'],
      ['status', '--no-queues'],
      ['enqueue', '--no-plan'],
      ['demo', '--keep'],
    ] as const)
      expect(
        rowsFor(path).some((r) => r.flags.has(flag)),
        `${path} ${flag}`,
      ).toBe(true);
  });

  it('names no command or option that does not exist', () => {
    const known = new Map(all.map((c) => [c.path, c.command]));
    const stale: string[] = [];
    for (const r of rows)
      for (const path of r.paths) {
        const command = known.get(path);
        if (!command) {
          stale.push(`daybook ${path}`);
        }
      }
    // An option in a row is one of the commands the row names.
    for (const r of rows) {
      const options = new Set(
        r.paths.flatMap((p) => known.get(p)?.options.map((o) => o.long as string) ?? []),
      );
      for (const f of r.flags) if (!options.has(f)) stale.push(`${r.paths.join(' / ')} ${f}`);
    }
    expect(stale).toEqual([]);
  });
});

// ---- what the commands say about the documentation ----------------------------------------------

/** The headings of a markdown file, as written (inline code ticks removed). */
function headingsOf(md: string): string[] {
  return withoutFences(md)
    .split('\n')
    .map((l) => /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l)?.[1])
    .filter((h): h is string => h !== undefined)
    .map((h) => h.replaceAll('`', ''));
}

/**
 * The documentation a text names, and what is wrong with each mention: `README` followed by a
 * section (`README, Events`, `README (Events)`, `the README's Events`) must name a heading of
 * README.md; `docs/<page>.md` must exist, and a section after it (`docs/x.md, Events`,
 * `docs/x.md (Events)`) must be one of its headings.
 */
function wrongReferences(text: string): string[] {
  const out: string[] = [];
  const flat = text.replace(/\s+/g, ' ');
  const readme = headingsOf(read('README.md'));
  for (const m of flat.matchAll(/\bREADME(?:\.md)?(?:'s)?\b(?:,? \(?"?([A-Z][\w' -]*[\w])"?)?/g)) {
    const section = m[1];
    if (!section) out.push(`"${m[0]}": names the README without a section it has`);
    else if (!readme.includes(section)) out.push(`"${m[0]}": the README has no section "${section}"`);
  }
  for (const m of flat.matchAll(/\bdocs\/([\w/-]+\.md)(?:(?:, | \()"?([A-Z][\w' -]*[\w])"?)?/g)) {
    const page = `docs/${m[1]}`;
    if (!existsSync(join(ROOT, page))) {
      out.push(`"${m[0]}": ${page} does not exist`);
      continue;
    }
    const section = m[2];
    if (section && !headingsOf(read(page)).includes(section))
      out.push(`"${m[0]}": ${page} has no section "${section}"`);
  }
  return out;
}

describe('what the commands say about the documentation', () => {
  it('finds the mentions it looks for, and the wrong ones', () => {
    expect(wrongReferences('see docs/channels.md (Events) and docs/planner.md')).toEqual([]);
    expect(wrongReferences('(README, The planner)')).toEqual([
      '"README, The planner": the README has no section "The planner"',
    ]);
    expect(wrongReferences('in docs/nothing.md')).toEqual([
      '"docs/nothing.md": docs/nothing.md does not exist',
    ]);
    expect(wrongReferences('see docs/channels.md, Nowhere')).toEqual([
      '"docs/channels.md, Nowhere": docs/channels.md has no section "Nowhere"',
    ]);
  });

  it('names only documentation that exists in the help of every command', () => {
    const wrong: string[] = [];
    let mentions = 0;
    for (const { path, command } of [{ path: '', command: program }, ...all]) {
      const help = helpOf(command);
      mentions += help.match(/\bREADME\b|\bdocs\/[\w/-]+\.md/g)?.length ?? 0;
      for (const w of wrongReferences(help)) wrong.push(`daybook ${path} --help: ${w}`.replace('  ', ' '));
    }
    expect(mentions).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });

  it('names only documentation that exists in the messages of src/cli (comments aside)', () => {
    const wrong: string[] = [];
    const dir = join(ROOT, 'src/cli');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const code = readFileSync(join(dir, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((l) => !/^\s*\/\//.test(l))
        .join('\n');
      // The text of the string literals: '…', "…" and `…`.
      for (const m of code.matchAll(/'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g))
        for (const w of wrongReferences(m[0].slice(1, -1))) wrong.push(`src/cli/${file}: ${w}`);
    }
    expect(wrong).toEqual([]);
  });
});
