/**
 * The help bundle (dist/src/cli/help-bundle.js, which bin/emq-race.js loads for a help request alone)
 * against the compiled modules: every help request the bin sends to it, for the main command and
 * every subcommand, prints the same text with the same exit code whatever the width, the terminal
 * or the colour setting. Both run in this process, through the Io seam.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Io } from '../../src/shared/model.js';
import { type Entry, runInProcess } from '../helpers/in-process.js';

const BUNDLE = new URL('../../src/cli/help-bundle.js', import.meta.url).href;

/** What a person may run the help on: a pipe (80 columns, or $COLUMNS), a terminal of its own width, colour forced. */
const SETTINGS: readonly { readonly name: string; readonly io: Partial<Io> }[] = [
  { name: 'a pipe', io: { env: { NO_COLOR: '1' } } },
  { name: 'a pipe, COLUMNS=132', io: { env: { NO_COLOR: '1', COLUMNS: '132' } } },
  { name: 'a terminal of 52 columns', io: { env: {}, stdoutIsTty: true, stdoutColumns: 52, stderrIsTty: true, stderrColumns: 52 } },
  { name: 'colour forced', io: { env: { FORCE_COLOR: '1' } } },
];

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

  // Every shape bin/emq-race.js sends to the bundle: `--help`, `-h`, `help`, `help WORD`,
  // `WORD --help`, `WORD -h`; WORD also a word that is no command.
  const requests = (): string[][] => [
    ['--help'],
    ['-h'],
    ['help'],
    ['help', 'no-such-command'],
    ['no-such-command', '--help'],
    ...commands.flatMap((command) => [
      ['help', command],
      [command, '--help'],
      [command, '-h'],
    ]),
  ];
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
