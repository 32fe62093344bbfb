/** Where things are in the checkout, for cross-package tests. */
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const venvBin = path.join(repoRoot, '.venv', 'bin');
export const artifactsDir = path.join(repoRoot, 'test', 'artifacts');
