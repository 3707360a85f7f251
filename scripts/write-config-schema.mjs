// Writes schema/coffer-config.schema.json from the zod schema of the config file
// (run after `npm run build`; test/config-file.test.ts checks the committed file is current).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONFIG_SCHEMA_PATH, configFileJsonSchemaText } from '../dist/src/config-file/schema.js';
import { PROJECT_ROOT } from '../dist/src/paths.js';

const target = join(PROJECT_ROOT, CONFIG_SCHEMA_PATH);
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, configFileJsonSchemaText());
console.log(`wrote ${target}`);
