/**
 * The npm package as a user gets it. A copy of the project as a fresh clone has it (no dist/, so
 * `prepack` has to build) is packed with `npm pack`, the tarball is installed into a temporary
 * prefix the way `npm install -g` installs it, and the installed `emq-race` runs from there, on the
 * Node that runs this file (.ci/run runs it on Node 22 and 24 too). The copy keeps the build away from this
 * checkout's dist/, which the other test files are running from.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { runCli, runProcess, unwrapped, type CliResult } from '../helpers/cli.js';

const ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
/** What a fresh clone does not have: the .gitignore'd outputs and installs. */
const NOT_IN_A_CLONE = new Set(['.git', 'node_modules', 'dist', '.node22', '.node24', 'bench-results']);

/**
 * The environment a user's shell would give npm and the installed bin: this Node first on PATH (so
 * `npm` and the bin's `#!/usr/bin/env node` run on it), and none of the npm_* variables that an
 * enclosing `npm test` sets, which a child npm would read as its own configuration. Nor the
 * suite's coverage: the installed copy lies outside what it counts, so npm, the package's build
 * (tsc) and the installed bin would only run slower under it and write some forty files of it
 * per run for c8 to read and drop.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name)) env[name] = value;
  }
  // Set empty rather than left out: Node hands its own value on to a child whose env lacks the name.
  env.NODE_V8_COVERAGE = '';
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  env.REDIS_URL = '';
  env.NO_COLOR = '1';
  return env;
}

function succeeded(what: string, result: CliResult): CliResult {
  assert.equal(result.code, 0, `${what} exited ${result.code}:\n${result.stderr}`);
  return result;
}

describe('the packed package, installed', () => {
  let work = '';
  let shipped: string[] = [];
  let installed = '';
  let bin = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'emq-race-pack-'));
    const clone = join(work, 'clone');
    cpSync(ROOT, clone, {
      recursive: true,
      filter: (source) => !(dirname(source) === ROOT && (NOT_IN_A_CLONE.has(basename(source)) || source.endsWith('.tgz'))),
    });
    // The build's own tools (tsc) come from this checkout's `npm ci`.
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');

    const packed = succeeded('npm pack', await runProcess('npm', ['pack', '--json', '--pack-destination', work], { env: userEnv(), cwd: clone }));
    const [report] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(report, 'npm pack --json reported no package');
    shipped = report.files.map((file) => file.path);

    // --prefer-offline: the dependencies are in npm's cache after `npm ci`; the registry is asked only
    // for what is missing there.
    const prefix = join(work, 'prefix');
    succeeded(
      'npm install',
      await runProcess('npm', ['install', '--global', '--prefix', prefix, join(work, report.filename), '--prefer-offline', '--no-audit', '--no-fund'], {
        env: userEnv(),
        cwd: work,
      }),
    );
    installed = join(prefix, 'lib', 'node_modules', PKG.name);
    bin = join(prefix, 'bin', 'emq-race');
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the tarball holds the built code, the Lua, the embedded server's keeper, the JSON schema, the docs and the install script; no tests, sources or maps", () => {
    for (const path of [
      'package.json',
      'README.md',
      'LICENSE',
      'bin/emq-race.js',
      'dist/src/cli/program.js',
      'dist/src/cli/help-bundle.js',
      'dist/src/cli/help-pages.json',
      'dist/src/lua/sweep-stalled.lua',
      'dist/src/lua/instruments/seed-jobs.lua',
      'dist/src/server/server-keeper.sh',
      'schema/emq-race.schema.json',
      'scripts/install-servers.sh',
    ]) {
      assert.ok(shipped.includes(path), `${path} is not in the package`);
    }
    assert.deepEqual(
      shipped.filter((path) => /\.map$|\.ts$|^dist\/test\/|^src\/|^test\//.test(path)),
      [],
    );
    const compiled = readdirSync(join(installed, 'dist'), { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.js'));
    assert.ok(compiled.length > 0);
    const pointing = compiled.filter((path) => readFileSync(join(installed, 'dist', path), 'utf8').includes('sourceMappingURL'));
    assert.deepEqual(pointing, [], 'compiled files point at source maps that are not shipped');
    // The help, the readouts and the pages send the reader to docs/*.md: each is in the package.
    const named = new Set(
      [...compiled.map((path) => readFileSync(join(installed, 'dist', path), 'utf8')), readFileSync(join(installed, 'README.md'), 'utf8')].flatMap((text) =>
        [...text.matchAll(/\bdocs\/[a-z-]+\.md\b/g)].map((match) => match[0]),
      ),
    );
    assert.ok(named.size > 5, `only ${[...named].join(', ')} named`);
    assert.deepEqual(
      [...named].filter((path) => !shipped.includes(path)),
      [],
      'pages the tool names are not in the package',
    );
  });

  test('the installed emq-race --version prints the package version', async () => {
    assert.equal(which('node', userEnv().PATH), process.execPath, "the bin's #!/usr/bin/env node would not find the Node running this test");
    const result = succeeded('emq-race --version', await runProcess(bin, ['--version'], { env: userEnv() }));
    assert.equal(result.stdout.trim(), PKG.version);
  });

  const server = which('redis-server') ?? which('valkey-server');
  test('the installed emq-race --mode atomic --expect clean passes on its own embedded server', {
    skip: server ? false : 'neither redis-server nor valkey-server is installed (run scripts/install-servers.sh)',
  }, async () => {
    const result = succeeded('emq-race --mode atomic --expect clean', await runProcess(bin, ['--mode', 'atomic', '--expect', 'clean'], { env: userEnv() }));
    assert.match(result.stdout, /^server: (redis|valkey) [\d.]+ \(embedded, now stopped\)$/im);
    // The readout wraps at the width; its continuation lines are indented by two.
    assert.match(
      unwrapped(result.stdout),
      /^atomic \([\d,]+ sweepers, [\d,]+ jobs\): every expired lease was reclaimed exactly once and every stall was counted \(([\d,]+) recoveries, 0 anomalies\)\.$/m,
    );
    assert.equal(result.stderr, 'emq-race: expectation met: atomic=clean\n');
  });

  test('the installed emq-race --help prints the help the modules print, from the help bundle alone', async () => {
    const env = { ...userEnv(), COLUMNS: '100' };
    const result = succeeded('emq-race --help', await runProcess(bin, ['--help'], { env }));
    const inProcess = await runCli(['--help'], { COLUMNS: '100' });
    assert.equal(result.stdout, inProcess.stdout);
    assert.equal(result.stderr, '');
  });

  test('the installed bin loads the help bundle for a help request alone, the modules for anything else', async () => {
    // Every file the process resolves, written down by a resolve hook registered before the bin runs.
    const hooks = join(work, 'log-resolves.mjs');
    writeFileSync(
      hooks,
      [
        "import { appendFileSync } from 'node:fs';",
        'export async function resolve(specifier, context, next) {',
        '  const found = await next(specifier, context);',
        "  if (found.url.startsWith('file:')) appendFileSync(process.env.EMQ_RESOLVE_LOG, found.url + '\\n');",
        '  return found;',
        '}',
      ].join('\n'),
    );
    const register = join(work, 'register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    const loaded = async (args: readonly string[]): Promise<string[]> => {
      const log = join(work, `resolved-${args.join('_')}.log`);
      await runProcess(process.execPath, ['--import', register, join(installed, 'bin', 'emq-race.js'), ...args], {
        env: { ...userEnv(), EMQ_RESOLVE_LOG: log },
      });
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter((url) => url.includes('/dist/src/'))
        .map((url) => url.slice(url.indexOf('/dist/src/') + '/dist/src/'.length));
    };
    // One of each shape bin/emq-race.js answers from the help pages, one it sends on to the bundle
    // (test/server/help-bundle.test.ts holds both to the modules' output), and two that are not help alone.
    const pageModules = ['cli/help-render.js', 'cli/help-text.js', 'shared/text.js'];
    for (const args of [['-h'], ['help'], ['explain', '--help']]) {
      assert.deepEqual([...new Set(await loaded(args))].sort(), pageModules, `emq-race ${args.join(' ')}`);
    }
    assert.deepEqual([...new Set(await loaded(['help', 'no-such-command']))].sort(), ['cli/help-bundle.js', ...pageModules], 'emq-race help no-such-command');
    for (const args of [
      ['--sweepers', '0'],
      ['--json', '--help'],
    ]) {
      const files = await loaded(args);
      assert.ok(files.includes('cli/program.js') && !files.includes('cli/help-bundle.js'), `emq-race ${args.join(' ')} loaded ${files.join(', ')}`);
    }
  });

  test('exports closes the package: package.json resolves, the internals do not', async () => {
    const probe = [
      `const { default: pkg } = await import('${PKG.name}/package.json', { with: { type: 'json' } });`,
      'console.log(pkg.version);',
      `for (const path of ['${PKG.name}', '${PKG.name}/dist/src/cli/program.js']) {`,
      '  try { await import(path); console.log(path, "imported"); } catch (error) { console.log(error.code); }',
      '}',
    ].join('\n');
    // Resolved from the folder the package is installed in, as another package there would.
    const result = succeeded(
      'import probe',
      await runProcess(process.execPath, ['--input-type=module', '-e', probe], { env: userEnv(), cwd: dirname(dirname(installed)) }),
    );
    assert.deepEqual(result.stdout.trim().split('\n'), [PKG.version, 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'ERR_PACKAGE_PATH_NOT_EXPORTED']);
  });
});
