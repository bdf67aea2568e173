// Compiles the TypeScript and ships the Lua scripts beside the compiled code that loads them.
// The everyday build is incremental: tsc keeps what it knows in dist/.tsbuildinfo and rewrites only
// what changed, and anything in dist/ whose source is gone is removed, so a moved or deleted test
// never runs from a stale copy. `--pack` builds what the npm package ships from a clean dist/: src
// only, and no source maps (the .ts they would point at is not in the package; see
// docs/packaging.md).
//
// Both then bundle the command line's definition into one file, HELP_BUNDLE, which
// bin/emq-race.js loads for a help request alone: Node spends most of `--help`'s start-up finding,
// reading and linking some thirty small modules, and one file does away with that. The bundle holds
// only our code (the packages stay imports, so no third-party code or licence is copied into it),
// and every `await import()` in it stays an import of the compiled module beside it: what a command
// runs is never in the bundle, and a help request runs none of it.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const BUILD_INFO = 'dist/.tsbuildinfo';
// Two folders down, as the compiled modules are, so that the paths the bundled modules take from
// import.meta.url (shared/model.ts's `../../../package.json`) lead where they lead from them.
const HELP_BUNDLE = 'dist/src/cli/help-bundle.js';
// Written after the compiled modules, from them: see below.
const HELP_PAGES = 'dist/src/cli/help-pages.json';
// The files of src/ that run as they are, beside the compiled modules that load them: the Lua
// scripts and the embedded server's keeper (a shell script).
const SHIPPED_AS_IS = ['.lua', '.sh'];

/** Every file under `dir` (relative to it), or none if it does not exist. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(dir.length + 1));
}

/** The source a compiled file (or a copied script) in dist/ came from. */
function sourceOf(built) {
  if (SHIPPED_AS_IS.some((ending) => built.endsWith(ending))) return built;
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
      // The help bundle and pages have no source of their own; they are written again below.
      if (![HELP_BUNDLE, HELP_PAGES].includes(join('dist', top, built)) && !existsSync(join(top, sourceOf(built)))) rmSync(join('dist', top, built));
    }
  }
}
await build({
  entryPoints: ['dist/src/cli/program.js'],
  outfile: HELP_BUNDLE,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  plugins: [
    {
      name: 'dynamic imports stay modules',
      setup(bundler) {
        bundler.onResolve({ filter: /^\./ }, (found) => {
          if (found.kind !== 'dynamic-import') return undefined;
          const target = relative(dirname(HELP_BUNDLE), resolve(found.resolveDir, found.path));
          return { path: `./${target}`, external: true };
        });
      },
    },
  ],
});

// Only those: the TypeScript beside them is compiled by tsc, and its sources have no place in dist/
// (nor in the package).
cpSync('src', 'dist/src', {
  recursive: true,
  filter: (source) => SHIPPED_AS_IS.some((ending) => source.endsWith(ending)) || statSync(source).isDirectory(),
});

// The help pages, made from the command line's definition just compiled: what bin/emq-race.js
// prints for a help request without loading that definition (src/cli/help-render.ts).
const { writeHelpPages } = await import(pathToFileURL(resolve('dist/src/cli/help-pages.js')).href);
writeHelpPages(HELP_PAGES);
