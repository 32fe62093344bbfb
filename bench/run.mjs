#!/usr/bin/env node
// Runs one benchmark by name: `npm run bench -- <name>`. Each benchmark prints, as its
// last line, `<name>: key=value key=value …`; figures are recorded in bench/RESULTS.md.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const names = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''))
  .sort();
const [name, ...rest] = process.argv.slice(2);
if (!name || !names.includes(name)) {
  console.error(`usage: npm run bench -- <name> [args]\navailable: ${names.join(', ')}`);
  process.exit(2);
}
process.argv = [process.argv[0], path.join(here, `${name}.bench.mjs`), ...rest];
await import(pathToFileURL(path.join(here, `${name}.bench.mjs`)).href);
