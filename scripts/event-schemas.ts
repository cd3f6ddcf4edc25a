/**
 * `npm run schemas`: writes schemas/events/<type>.json, one JSON Schema per event type, from the
 * catalogue (src/events/catalogue.ts). A test checks that the committed files equal these.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eventJsonSchemas } from '../src/events/catalogue.ts';

const DIR = fileURLToPath(new URL('../schemas/events/', import.meta.url));
mkdirSync(DIR, { recursive: true });
const schemas = eventJsonSchemas();
for (const f of readdirSync(DIR)) if (!(f.replace(/\.json$/, '') in schemas)) rmSync(`${DIR}${f}`);
for (const [type, schema] of Object.entries(schemas)) {
  writeFileSync(`${DIR}${type}.json`, `${JSON.stringify(schema, null, 2)}\n`);
}
process.stdout.write(`wrote ${Object.keys(schemas).length} schemas to schemas/events/\n`);
