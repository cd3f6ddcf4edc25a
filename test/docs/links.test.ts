/**
 * Every link of the README and docs/ (every folder) leads somewhere: a relative link names a path
 * in the repository, and its #anchor a heading of that page, as GitHub makes them (lower case,
 * punctuation dropped, spaces to -, letters of any script kept, a repeated heading -1, -2 …).
 * Nothing points outside the repository, and no file names a document that lives outside it.
 * No database needed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** README.md and every markdown file under docs/. */
const MARKDOWN = [
  'README.md',
  ...(readdirSync(join(ROOT, 'docs'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`)
    .sort(),
];

// ---- markdown as GitHub reads it ----------------------------------------------------------------

/** The lines of `md` outside fenced code blocks (``` or ~~~, as long a fence closes as opened it). */
function proseLines(md: string): string[] {
  let fence: string | null = null;
  return md.split('\n').map((line) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      const mark = m[1] as string;
      if (fence === null) fence = mark;
      else if (mark[0] === fence[0] && mark.length >= fence.length && line.trim() === mark) fence = null;
      return '';
    }
    return fence === null ? line : '';
  });
}

/** The text a heading shows: links to their text, HTML tags, code ticks and emphasis stars removed. */
function headingText(raw: string): string {
  return raw
    .replace(/\s+#+\s*$/, '') // closing hashes
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim();
}

/** The anchor GitHub gives a heading's text (github-slugger), before duplicates are numbered. */
function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: its headings (ATX and setext, duplicates numbered) and explicit ids. */
function anchorsOf(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const add = (base: string) => {
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  };
  const lines = proseLines(md);
  for (const [i, line] of lines.entries()) {
    const atx = /^ {0,3}#{1,6}(?:\s+(.*))?$/.exec(line);
    if (atx) {
      add(slug(headingText(atx[1] ?? '')));
      continue;
    }
    const prev = lines[i - 1] ?? '';
    if (/^ {0,3}(=+|-+)\s*$/.test(line) && prev.trim() !== '' && !/^\s*([|>-]|#|\d+\.\s)/.test(prev))
      add(slug(headingText(prev)));
  }
  for (const line of lines)
    for (const m of line.matchAll(/<a\s[^>]*\b(?:name|id)="([^"]+)"/gi)) out.add(m[1] as string);
  return out;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** Every link of a page outside code: inline links and images, reference definitions, HTML href/src. */
function linksOf(file: string, md: string): Link[] {
  const out: Link[] = [];
  for (const [i, raw] of proseLines(md).entries()) {
    // Code spans hold no links, unless the span is the text of one: [`docs/x.md`](docs/x.md).
    const line = raw.replace(/`[^`]*`/g, (code) => (code.includes('](') ? code : ''));
    const push = (target: string) => out.push({ file, line: i + 1, target });
    for (const m of line.matchAll(/\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g))
      push((m[1] as string).replace(/^<|>$/g, ''));
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
    if (definition) push((definition[1] as string).replace(/^<|>$/g, ''));
    for (const m of line.matchAll(/<(?:a|img)\s[^>]*\b(?:href|src)="([^"]+)"/gi)) push(m[1] as string);
  }
  return out;
}

/** What is wrong with a link, or null when it leads somewhere in the repository. */
function problemOf(link: Link): string | null {
  const { file, target } = link;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:
  const hash = target.indexOf('#');
  const pathPart = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const path = pathPart === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(pathPart));
  const inside = relative(ROOT, path);
  if (inside.startsWith('..') || isAbsolute(inside)) return `${target} points outside the repository`;
  if (!existsSync(path)) return `${target} does not exist`;
  if (anchor !== undefined && path.endsWith('.md') && statSync(path).isFile()) {
    if (!anchorsOf(readFileSync(path, 'utf8')).has(anchor)) return `${target} names no heading of ${inside}`;
  }
  return null;
}

describe('the slugs GitHub gives headings', () => {
  const anchors = (md: string) => [...anchorsOf(md)];

  it('lower-cases, drops punctuation and turns spaces into -', () => {
    expect(slug('What is kept, and for how long')).toBe('what-is-kept-and-for-how-long');
    expect(slug(headingText('Seeing why: `daybook plan explain`'))).toBe('seeing-why-daybook-plan-explain');
    expect(slug(headingText('Backtest: where the credits go (`npm run bench -- refresh`)'))).toBe(
      'backtest-where-the-credits-go-npm-run-bench----refresh',
    );
    expect(slug(headingText('`analytics.enterprise_current`'))).toBe('analyticsenterprise_current');
    expect(slug('Feishu (Lark)')).toBe('feishu-lark');
  });

  it('keeps letters of any script: Chinese headings', () => {
    expect(slug('WeCom (企业微信)')).toBe('wecom-企业微信');
    expect(slug('统一社会信用代码')).toBe('统一社会信用代码');
    expect(slug('注册资本（万元）')).toBe('注册资本万元');
  });

  it('numbers repeated headings -1, -2, and reads setext headings and explicit ids', () => {
    expect(anchors('# A\n\n## Events\n\n### Events\n\n## Events\n')).toEqual([
      'a',
      'events',
      'events-1',
      'events-2',
    ]);
    expect(anchors('Title\n=====\n\nPart two\n--------\n\n| a |\n|---|\n')).toEqual(['title', 'part-two']);
    expect(anchors('<a name="here"></a>\n## There\n')).toEqual(['there', 'here']);
  });

  it('ignores what looks like a heading inside a fence', () => {
    expect(anchors('## Real\n\n```sh\n# not a heading\n```\n\n~~~\n## neither\n~~~\n')).toEqual(['real']);
  });

  it('finds inline links, images, reference definitions and HTML links, but none in code', () => {
    const md = [
      'See [a](a.md#x), ![pic](img/p.png "title") and [`docs/b.md`](docs/b.md).',
      '[ref]: c.md#y',
      '<a href="d.md">d</a> and `[not](a link)`',
      '```',
      '[nor](this.md)',
      '```',
    ].join('\n');
    expect(linksOf('x.md', md).map((l) => l.target)).toEqual([
      'a.md#x',
      'img/p.png',
      'docs/b.md',
      'c.md#y',
      'd.md',
    ]);
  });
});

describe('the links of the README and docs/', () => {
  it('reads the README and every page of docs/', () => {
    expect(MARKDOWN).toEqual(
      expect.arrayContaining([
        'docs/getting-started.md',
        'docs/configuration.md',
        'docs/cli.md',
        'docs/channels.md',
        'docs/data-dictionary.md',
        'docs/operations.md',
      ]),
    );
  });

  it('resolves every relative link to a path in the repository, and every #anchor to a heading', () => {
    const problems: string[] = [];
    let relativeLinks = 0;
    for (const file of MARKDOWN)
      for (const link of linksOf(file, read(file))) {
        if (!/^[a-z][a-z0-9+.-]*:/i.test(link.target)) relativeLinks++;
        const problem = problemOf(link);
        if (problem) problems.push(`${link.file}:${link.line}: ${problem}`);
      }
    expect(relativeLinks).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });

  it('links the README to every page of docs/ (its table of contents)', () => {
    const linked = new Set(
      linksOf('README.md', read('README.md')).map((l) => l.target.split('#')[0] as string),
    );
    for (const page of MARKDOWN.filter((f) => f.startsWith('docs/')))
      expect(linked.has(page), `README.md links ${page}`).toBe(true);
  });

  it('has no file that names a document outside the repository', () => {
    const forbidden = [
      ['DESIGN', 'md'],
      ['DOMAIN', 'md'],
      ['upstream-api', 'md'],
    ]
      .map(([name, ext]) => `${name}.${ext}`)
      .concat([['..', 'shared'].join('/')]);
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
      .split('\0')
      .filter((f) => f !== '');
    expect(files.length).toBeGreaterThan(100);
    const hits: string[] = [];
    for (const file of new Set(files)) {
      const path = join(ROOT, file);
      if (!existsSync(path) || !statSync(path).isFile()) continue; // deleted in the work tree
      const text = readFileSync(path, 'utf8');
      for (const name of forbidden) if (text.includes(name)) hits.push(`${file}: ${name}`);
    }
    expect(hits).toEqual([]);
  });
});
