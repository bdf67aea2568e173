// Compiles the TypeScript and ships the Lua scripts beside the compiled code that loads them.
// The everyday build is incremental: tsc keeps what it knows in dist/.tsbuildinfo and rewrites only
// what changed, and anything in dist/ whose source is gone is removed, so a moved or deleted test
// never runs from a stale copy. `--pack` builds what the npm package ships from a clean dist/: src
// only, and no source maps (the .ts they would point at is not in the package; see
// docs/packaging.md).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const BUILD_INFO = 'dist/.tsbuildinfo';

/** Every file under `dir` (relative to it), or none if it does not exist. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(dir.length + 1));
}

/** The source a compiled file (or a copied script) in dist/ came from. */
function sourceOf(built) {
  if (built.endsWith('.lua')) return built;
  return built.replace(/\.js(\.map)?$/, '.ts');
}

if (process.argv.includes('--pack')) {
  rmSync('dist', { recursive: true, force: true });
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.pack.json'], { stdio: 'inherit' });
} else {
  // tsc trusts its build info, not dist/: were a compiled file deleted by hand, it would not come
  // back. Then the build info goes, and this build compiles everything.
  const sources = [...filesUnder('src').map((f) => join('src', f)), ...filesUnder('test').map((f) => join('test', f))].filter((f) => f.endsWith('.ts'));
  if (sources.some((source) => !existsSync(join('dist', source.replace(/\.ts$/, '.js'))))) rmSync(BUILD_INFO, { force: true });
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', BUILD_INFO], { stdio: 'inherit' });
  for (const top of ['src', 'test']) {
    for (const built of filesUnder(join('dist', top))) {
      if (!existsSync(join(top, sourceOf(built)))) rmSync(join('dist', top, built));
    }
  }
}
// Only the .lua files: the TypeScript that shares src/lua/ with them is compiled by tsc, and its
// sources have no place in dist/ (nor in the package).
cpSync('src/lua', 'dist/src/lua', { recursive: true, filter: (source) => source.endsWith('.lua') || statSync(source).isDirectory() });
