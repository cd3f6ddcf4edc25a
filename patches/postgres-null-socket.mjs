// Run by `npm install`/`npm ci` (postinstall). Two fixes to postgres 3.4.9 that are not released:
//
// 1. A closed socket and a queued write (porsager/postgres#1066, #1154, #1208; PR #1209).
//    `nextWrite` runs from setImmediate after `closed()` has set the socket to null, and throws
//    "Cannot read properties of null (reading 'write')" where no caller can catch it: a worker
//    process died instead of retrying its job. With no socket, the queued write is dropped and
//    the waiting queries are rejected with CONNECTION_CLOSED, as when the close is seen first.
//
// 2. A query that never settles while the database refuses connections (porsager/postgres#1193,
//    #1223; PRs #1188, #1214). A connection closed mid-query keeps a reference to that query.
//    When the connection is next opened for another query and the server refuses the startup
//    (`ALTER DATABASE … ALLOW_CONNECTIONS false`, "the database system is starting up", too many
//    clients), the refusal is taken for an answer to the stale query, the socket closes, and
//    the driver reconnects at once, forever: the new query never settles and the server sees
//    a connection attempt every few milliseconds. The fix forgets the stale query and its
//    error when the socket closes, and bounds the reconnects of a startup that the server
//    keeps closing without a word: after 5 in a row, with a growing delay, the query is
//    rejected with CONNECTION_CLOSED.
//
// Idempotent; when the driver's code differs (a fixed release), it says so and changes nothing.
// daybook's fault tests (test/faults/postgres-outage.test.ts) hit both.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres');

const FIXES = [
  {
    mark: 'daybook patch: porsager/postgres#1208',
    edits: [
      [
        `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`,
        `  function nextWrite(fn) {
    if (!socket) { // daybook patch: porsager/postgres#1208
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)`,
      ],
    ],
  },
  {
    mark: 'daybook patch: porsager/postgres#1193',
    edits: [
      [
        `    socket.removeAllListeners()
    socket = null

    if (initial)
      return reconnect()

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
`,
        `    socket.removeAllListeners()
    socket = null

    if (initial) { // daybook patch: porsager/postgres#1193
      query = errorResponse = null
      if (++startupCloses > 5) {
        startupCloses = 0
        const q = initial
        initial = null
        queryError(q, Errors.connection('CONNECTION_CLOSED', options, socket))
      } else {
        closedTime = performance.now()
        delay = 100 * 2 ** startupCloses
        return reconnect()
      }
    }

    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))
    query = errorResponse = null
`,
      ],
      [`      options.shared.retries = retries = 0\n`, `      options.shared.retries = retries = startupCloses = 0\n`],
      [`    , retries = 0\n`, `    , retries = 0\n    , startupCloses = 0\n`],
    ],
  },
];

for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  let text = readFileSync(path, 'utf8');
  for (const fix of FIXES) {
    if (text.includes(fix.mark)) continue;
    if (!fix.edits.every(([before]) => text.split(before).length === 2)) {
      console.warn(`daybook: postgres/${file} is not the code the patch "${fix.mark}" knows; left as it is`);
      continue;
    }
    for (const [before, after] of fix.edits) text = text.replace(before, after);
  }
  writeFileSync(path, text);
}
