/**
 * What bin/emq-race.js prints for a help request alone against the compiled modules: the help
 * pages the build wrote (dist/src/cli/help-pages.json, printed by help-render.ts) and the help
 * bundle (dist/src/cli/help-bundle.js, for a word that is no command) print, for the main command
 * and every subcommand, the same text with the same exit code whatever the width, the terminal or
 * the colour setting. All run in this process, through the Io seam.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { helpPages } from '../../src/cli/help-pages.js';
import { helpFromPages, pageAsked, type HelpPages } from '../../src/cli/help-render.js';
import { assembleProgram } from '../../src/cli/program.js';
import type { Io } from '../../src/shared/model.js';
import { outputWidth } from '../../src/shared/text.js';
import { type Entry, runInProcess } from '../helpers/in-process.js';

const BUNDLE = new URL('../../src/cli/help-bundle.js', import.meta.url).href;

/** What a person may run the help on: a pipe (80 columns, or $COLUMNS), a terminal of its own width, colour forced. */
const SETTINGS: readonly { readonly name: string; readonly io: Partial<Io> }[] = [
  { name: 'a pipe', io: { env: { NO_COLOR: '1' } } },
  { name: 'a pipe, COLUMNS=132', io: { env: { NO_COLOR: '1', COLUMNS: '132' } } },
  { name: 'a terminal of 52 columns', io: { env: {}, stdoutIsTty: true, stdoutColumns: 52, stderrIsTty: true, stderrColumns: 52 } },
  { name: 'colour forced', io: { env: { FORCE_COLOR: '1' } } },
];

/** Every help request a page answers: the main command's, and each of `commands`' in each shape. */
function pageRequests(commands: readonly string[]): string[][] {
  return [
    ['--help'],
    ['-h'],
    ['help'],
    ['help', 'help'],
    ...commands.flatMap((command) => [
      ['help', command],
      [command, '--help'],
      [command, '-h'],
    ]),
  ];
}

/** The subcommands, as the main help lists them under "Commands:". */
function commandsOf(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1]?.split(/\n\n/)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1] ?? '');
}

describe('the help bundle prints what the modules print', async () => {
  const bundled = ((await import(BUNDLE)) as { run: Entry }).run;
  const commands = commandsOf((await runInProcess(['--help'])).stdout);

  test('the main help lists the subcommands', () => {
    assert.ok(commands.includes('help') && commands.includes('grid') && commands.length >= 5, `commands found: ${commands.join(', ')}`);
  });

  // Every shape of a help request: `--help`, `-h`, `help`, `help WORD`, `WORD --help`, `WORD -h`;
  // WORD also a word that is no command.
  const requests = (): string[][] => [...pageRequests(commands), ['help', 'no-such-command'], ['no-such-command', '--help']];
  for (const setting of SETTINGS) {
    test(`every help request, on ${setting.name}`, async () => {
      for (const args of requests()) {
        const fromModules = await runInProcess(args, setting.io);
        const fromBundle = await runInProcess(args, setting.io, bundled);
        assert.deepEqual(fromBundle, fromModules, `emq-race ${args.join(' ')}`);
        assert.ok(fromModules.stdout.length + fromModules.stderr.length > 0, `emq-race ${args.join(' ')} printed nothing`);
      }
    });
  }

  test('a word that is no command: the same refusal and exit code', async () => {
    const fromBundle = await runInProcess(['help', 'no-such-command'], {}, bundled);
    assert.equal(fromBundle.code, 2);
    assert.match(fromBundle.stderr, /^emq-race: help: that word \(not shown: it may be a password\) is not a command/);
    const nearMiss = await runInProcess(['help', 'explian'], {}, bundled);
    assert.equal(nearMiss.code, 2);
    assert.match(nearMiss.stderr, /^emq-race: help: "explian" is not a command/);
  });
});

describe('the help pages print what the modules print', async () => {
  const shipped = JSON.parse(readFileSync(new URL('../../src/cli/help-pages.json', import.meta.url), 'utf8')) as HelpPages;
  const commands = commandsOf((await runInProcess(['--help'])).stdout).filter((command) => command !== 'help');

  test('the pages the build wrote are those of the command line as it is now, one per command', () => {
    const io: Io = { out: () => undefined, err: () => undefined, env: {}, stdoutIsTty: false };
    assert.deepEqual(shipped, JSON.parse(JSON.stringify(helpPages(assembleProgram(io, { code: 0 }, ['node', 'emq-race'])))));
    assert.deepEqual(Object.keys(shipped).sort(), ['', ...commands].sort());
  });

  test('which request a page answers: help alone, for the main command or a command; nothing else', () => {
    for (const words of [['--help'], ['-h'], ['help'], ['help', 'help']]) assert.equal(pageAsked(words), '', words.join(' '));
    for (const words of [
      ['help', 'grid'],
      ['grid', '--help'],
      ['grid', '-h'],
    ])
      assert.equal(pageAsked(words), 'grid', words.join(' '));
    for (const words of [['--json', '--help'], ['help', '--json'], ['help', ''], ['', '--help'], ['grid'], ['help', 'grid', 'x'], []])
      assert.equal(pageAsked(words), undefined, words.join(' '));
    // A word no page has, or one every object has, leaves the answer to the command line; so does
    // the help of `help` itself.
    for (const words of [...['no-such-command', 'constructor', '__proto__', 'toString'].map((word) => ['help', word]), ['help', '--help']])
      assert.equal(helpFromPages(words, 80, shipped), undefined, words.join(' '));
  });

  const requests = (): string[][] => pageRequests(commands);
  for (const setting of SETTINGS) {
    test(`every request a page answers, on ${setting.name}`, async () => {
      for (const args of requests()) {
        const fromModules = await runInProcess(args, setting.io);
        assert.equal(fromModules.code, 0, `emq-race ${args.join(' ')}: ${fromModules.stderr}`);
        assert.equal(fromModules.stderr, '', `emq-race ${args.join(' ')}`);
        const width = outputWidth({
          env: { NO_COLOR: '1', ...setting.io.env },
          ...(setting.io.stdoutColumns ? { stdoutColumns: setting.io.stdoutColumns } : {}),
        });
        assert.equal(helpFromPages(args, width, shipped), fromModules.stdout, `emq-race ${args.join(' ')}`);
      }
    });
  }

  test('every page at every terminal width from 40 to 160 columns, and wider ones up to 240', async () => {
    const widths = [...Array.from({ length: 121 }, (_, i) => 40 + i), ...Array.from({ length: 12 }, (_, i) => 167 + 7 * i)];
    for (const width of widths) {
      for (const page of ['', ...commands]) {
        const args = page === '' ? ['--help'] : ['help', page];
        const fromModules = await runInProcess(args, { env: {}, stdoutIsTty: true, stdoutColumns: width });
        assert.equal(helpFromPages(args, width, shipped), fromModules.stdout, `emq-race ${args.join(' ')} at ${width} columns`);
        // Fitted to the width: past it only an example's command, printed whole to be copied, and
        // a word longer than the room left (a URL's form).
        const over = fromModules.stdout.split('\n').filter((line) => line.length > width && !/^ {2}emq-race /.test(line) && /\S\s+\S/.test(line.trim()));
        assert.deepEqual(over, [], `emq-race ${args.join(' ')} at ${width} columns`);
      }
    }
  });
});
