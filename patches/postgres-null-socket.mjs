// Run by `npm install`/`npm ci` (postinstall). postgres 3.4.9 can crash the whole process when a
// connection closes while a small write is queued: `nextWrite` runs from setImmediate after
// `closed()` has set the socket to null, and throws "Cannot read properties of null (reading
// 'write')" where no caller can catch it (porsager/postgres#1066, #1154, #1208; the fix of
// PR #1209 is not released). daybook's fault tests hit it by terminating backends mid-job
// (test/faults/postgres-outage.test.ts): a worker process died instead of retrying its job.
// This applies that fix: with no socket, the queued write is dropped and the waiting queries
// are rejected with CONNECTION_CLOSED, as when the close is seen first. Idempotent; when the
// driver's code differs (a fixed release), it says so and changes nothing.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres');
const MARK = 'daybook patch: porsager/postgres#1208';
const BEFORE = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const AFTER = `  function nextWrite(fn) {
    if (!socket) { // ${MARK}
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)`;

for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js']) {
  const path = join(root, file);
  if (!existsSync(path)) continue;
  const text = readFileSync(path, 'utf8');
  if (text.includes(MARK)) continue;
  if (!text.includes(BEFORE)) {
    console.warn(`daybook: postgres/${file} is not the code this patch knows; left as it is`);
    continue;
  }
  writeFileSync(path, text.replace(BEFORE, AFTER));
}
