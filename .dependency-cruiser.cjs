/**
 * The layers of docs/architecture.md, checked on every import of src/, jobs/ and bin/ (type-only
 * imports included: a type is a dependency too). A folder imports from its own layer or below,
 * never upward, so no two folders of different layers can form a cycle; the domain's folders have
 * an inner order of their own, and `no-folder-cycle` catches the rest (two folders of one layer
 * importing each other). test/, bench/ and scripts/ may import anything and are not cruised.
 *
 * Run with `npm run lint:deps` (part of `npm run lint`).
 */

/** Every folder of the layout, by rank: a module may import a folder of its own rank or below. */
const FOLDERS = [
  // L0 leaves
  ['src/time', 0],
  ['src/terms', 0],
  ['src/retry', 0],
  ['src/log', 0],
  // L1 contract
  ['src/config', 1],
  ['src/upstream', 1],
  ['src/normalize', 1],
  ['src/sim', 1],
  // L2 storage infrastructure
  ['src/db', 2],
  // L3 domain, in its inner order (delivery and export share a rank and must not import each other)
  ['src/events', 3.0],
  ['src/watch', 3.1],
  ['src/landing', 3.2],
  ['src/purchase', 3.3],
  ['src/plan', 3.4],
  ['src/history', 3.5],
  ['src/delivery', 3.6],
  ['src/export', 3.6],
  // L4 the job processors, and the web console (reads views only; neither imports the other)
  ['jobs', 4],
  ['src/console', 4],
  // L5 the runtime that runs them
  ['src/runtime', 5],
  // L6 the command line, and bin/ on top
  ['src/cli', 6],
  ['bin', 7],
];

/** Folders with a rule of their own below, left out of the rank rules so an import is reported once. */
const OWN_RULES = new Set(['src/sim', 'jobs', 'src/runtime', 'src/cli', 'bin']);

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const under = (folders) => `^(${folders.map(escape).join('|')})/`;

const rankRules = FOLDERS.filter(([folder]) => !OWN_RULES.has(folder)).flatMap(([folder, rank]) => {
  const above = FOLDERS.filter(([f, r]) => r > rank && !OWN_RULES.has(f)).map(([f]) => f);
  if (above.length === 0) return [];
  return [
    {
      name: `layer-${folder.replace(/^src\//, '')}`,
      comment: `${folder} is below ${above.join(', ')}: it must not import them (docs/architecture.md).`,
      severity: 'error',
      from: { path: under([folder]) },
      to: { path: under(above) },
    },
  ];
});

/** A rule that `from` never imports `to` (both lists of folders), with the reason a reader is given. */
function forbid(name, comment, from, to) {
  return { name, comment, severity: 'error', from: { path: under(from) }, to: { path: under(to) } };
}

const DOMAIN_AND_BELOW = FOLDERS.filter(([, rank]) => rank < 4).map(([folder]) => folder);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module reaches itself through its imports: break the cycle (a shared lower module).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'Two folders import each other (directly or around a loop): one of them must be the lower.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src/[^/]+|jobs|bin)$' },
      to: { path: '^(src/[^/]+|jobs|bin)$', circular: true },
    },
    ...rankRules,
    {
      name: 'delivery-export-apart',
      comment:
        'src/delivery and src/export are siblings at the top of the domain: neither imports the other.',
      severity: 'error',
      from: { path: '^src/(delivery|export)/' },
      to: { path: '^src/(delivery|export)/', pathNot: '^src/$1/' },
    },
    forbid(
      'domain-not-jobs-or-runtime',
      'The domain and everything below it never import jobs/ or src/runtime (src/cli: see cli-only-from-cli-and-bin).',
      DOMAIN_AND_BELOW,
      ['jobs', 'src/runtime'],
    ),
    {
      name: 'console-reads-only',
      comment:
        'src/console reads the views through the sql reader: it imports no job, no runtime and no domain module that writes (only src/db and the leaves).',
      severity: 'error',
      from: { path: under(['src/console']) },
      to: { path: '^(jobs|src/runtime|src/events|src/watch|src/landing|src/purchase|src/plan|src/history|src/delivery|src/export|src/upstream|src/normalize|src/sim)/' },
    },
    forbid(
      'jobs-not-runtime',
      'jobs/ are wired by src/runtime, never the other way round (src/cli: see cli-only-from-cli-and-bin).',
      ['jobs'],
      ['src/runtime'],
    ),
    forbid(
      'jobs-not-console',
      'jobs/ and src/console share a layer and neither imports the other (docs/architecture.md).',
      ['jobs'],
      ['src/console'],
    ),
    forbid(
      'cli-asks-the-runtime',
      'src/cli never imports jobs/: it asks src/runtime to run a job, and the runtime alone builds its dependencies.',
      ['src/cli', 'bin'],
      ['jobs'],
    ),
    {
      name: 'sim-imports-leaves-and-contract',
      comment:
        'src/sim keeps its own world in memory: it imports only the leaves (L0) and the contract (src/upstream, src/config), never storage or the domain.',
      severity: 'error',
      from: { path: under(['src/sim']) },
      to: {
        path: '^(src|jobs|bin)/',
        pathNot: under(['src/sim', 'src/time', 'src/terms', 'src/retry', 'src/log', 'src/upstream', 'src/config']),
      },
    },
    {
      name: 'cli-only-from-cli-and-bin',
      comment: 'src/cli is the top: only src/cli itself and bin/ import it.',
      severity: 'error',
      from: { pathNot: under(['src/cli', 'bin']) },
      to: { path: under(['src/cli']) },
    },
    {
      name: 'sim-only-from-cli',
      comment: 'src/sim is the upstream simulator: only src/cli (and test code) start it.',
      severity: 'error',
      from: { pathNot: under(['src/sim', 'src/cli', 'bin']) },
      to: { path: under(['src/sim']) },
    },
    {
      name: 'bin-only-from-nothing',
      comment: 'bin/ is the entry point: nothing imports it.',
      severity: 'error',
      from: { pathNot: under(['bin']) },
      to: { path: under(['bin']) },
    },
    {
      name: 'layout-folders-only',
      comment: 'Every module lives in a folder of docs/architecture.md: this one is in none.',
      severity: 'error',
      from: {},
      to: { path: '^(src|jobs|bin)/', pathNot: under(FOLDERS.map(([folder]) => folder)) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(test|bench|scripts)/' },
    // Type-only imports are dependencies too: read the TypeScript before it is compiled.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
