// Compiles the TypeScript and ships the Lua scripts beside the compiled code that loads them.
// `--pack` builds what the npm package ships: src only, and no source maps (the .ts they would
// point at is not in the package; see docs/packaging.md).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const project = process.argv.includes('--pack') ? 'tsconfig.pack.json' : 'tsconfig.json';
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', project], { stdio: 'inherit' });
// Only the .lua files: the TypeScript that shares src/lua/ with them is compiled by tsc, and its
// sources have no place in dist/ (nor in the package).
cpSync('src/lua', 'dist/src/lua', { recursive: true, filter: (source) => source.endsWith('.lua') || statSync(source).isDirectory() });
