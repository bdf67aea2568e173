#!/usr/bin/env node
// The version alone is answered from package.json, before the program and its modules load: the
// same line commander prints for it, in a fraction of the start-up.
const args = process.argv.slice(2);

/**
 * Until the command watches signals itself (src/shared/interrupt.ts takes these listeners off as it
 * starts), a signal that comes while its modules load ends it as a later one would: with the
 * signal's exit code and one line, or under --json the one error object. Nothing has been written
 * by then. The two small modules the line needs load first; the program loads them anyway. A
 * terminal that closed is left alone on that way out too (src/shared/closed-terminal.ts): Node 20 would
 * abort putting it back, or crash.
 */
async function endEarlyOnSignals() {
  const { leaveClosedTerminalAlone } = await import('../dist/src/shared/closed-terminal.js');
  leaveClosedTerminalAlone();
  const { InterruptedError } = await import('../dist/src/shared/errors.js');
  const { errorJson } = await import('../dist/src/report/json-header.js');
  const early = (signal) => {
    // A terminal that hung up fails the write (EIO): that must not end the process with its own
    // error (exit 1) before it exits with the signal's code.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
    const stop = new InterruptedError(signal);
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(errorJson(stop.exitCode, stop.message))}\n`);
    else process.stderr.write(`emq-race: ${stop.message}\n`);
    process.exit(stop.exitCode);
  };
  early[Symbol.for('emq-race.early-signals')] = true;
  for (const signal of ['SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGHUP']) process.on(signal, early);
}

/**
 * ioredis's debug lines (DEBUG=ioredis:*, DEBUG=*) show every command with its arguments, AUTH's
 * password among them, and the tool never prints a password: they stay off, in this process and
 * in the sweeper processes it starts, which take its environment. Said once when DEBUG asked for
 * them; the other namespaces DEBUG names are left as they are.
 */
function quietClientDebug() {
  quietNodeRedisDebug();
  const asked = process.env.DEBUG;
  if (!asked?.trim()) return;
  process.env.DEBUG = `${asked},-ioredis:*`;
  const patterns = asked.split(/[\s,]+/).filter((p) => p && !p.startsWith('-'));
  const matches = (pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`).test('ioredis:redis');
  if (patterns.some(matches)) process.stderr.write("emq-race: DEBUG: ioredis's lines stay off (they would show the AUTH command's password)\n");
}

/**
 * The `redis` client Bee-Queue talks through (its own copy, version 3) prints every command it
 * sends, AUTH's password among them, when NODE_DEBUG names `redis` as a word: that name is taken
 * out of NODE_DEBUG, in this process and so in those it starts, and said once. Node's own
 * debug sections (net, tls, …) stay as asked.
 */
function quietNodeRedisDebug() {
  const asked = process.env.NODE_DEBUG;
  if (!asked || !/\bredis\b/i.test(asked)) return;
  // Node splits its sections on commas only: a part that names redis goes whole, the rest as it was.
  process.env.NODE_DEBUG = asked
    .split(',')
    .filter((part) => !/\bredis\b/i.test(part))
    .join(',');
  process.stderr.write("emq-race: NODE_DEBUG: the redis client's lines stay off (they would show the AUTH command's password)\n");
}

/**
 * The version and the help print without the modules that watch stdout for a run
 * (src/cli/process-io.ts), so they watch it here the same way: what stdout lost to a full disk
 * (ENOSPC, say), once the last write has gone out; a reader that went away (`| head -c0`) is no
 * loss. Listening from the start: a failed write's error event comes a tick after it.
 */
function watchStdout() {
  let lost;
  process.stdout.on('error', (err) => {
    const code = err?.code ?? 'an error';
    if (!['EPIPE', 'EIO', 'ECONNRESET'].includes(code)) lost ??= code;
  });
  return () =>
    new Promise((resolve) => {
      process.stdout.write('', () => setImmediate(() => resolve(lost)));
    });
}

/** Exit code 4 and its one line, as for a run (docs/ci.md): what a script reads is lost. */
function sayLost(lost, code) {
  if (!lost) return;
  process.stderr.write(`emq-race: stdout could not take the output (${lost}): what the command printed there is lost\n`);
  // A failure keeps its own code, one met after the command's end too; a success whose output is lost is none.
  if (code === 0 && !process.exitCode) process.exitCode = 4;
}

quietClientDebug();

if (args.length === 1 && ['--version', '-V', '-v'].includes(args[0])) {
  const lostSoFar = watchStdout();
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  sayLost(await lostSoFar(), 0);
} else {
  // A request for help and nothing else (`--help`, `-h`, `help`, `help WORD`, `WORD --help`,
  // `WORD -h`; pageAsked in src/cli/help-render.ts says which): where WORD is a command (or absent),
  // its page, which the build made from the command line's own definition, fitted to the terminal
  // with nothing else loaded. A word that is no command loads the program as one bundled file
  // (scripts/build.mjs), the same code as the modules, and commander refuses the word without
  // running an action. Anything else, however close, loads the modules, whose actions load what
  // they run from beside them.
  const { pageAsked, helpFromPages } = await import('../dist/src/cli/help-render.js');
  const help = pageAsked(args) !== undefined;
  const lostSoFar = help ? watchStdout() : undefined;
  const page = help ? helpFromPages(args, await terminalWidth()) : undefined;
  if (page !== undefined) {
    process.stdout.write(page);
    sayLost(await lostSoFar(), 0);
  } else await runCommand(help, lostSoFar);
}

/** The width the command line fits stdout to (src/shared/text.ts), as the process's own Io gives it. */
async function terminalWidth() {
  const { outputWidth } = await import('../dist/src/shared/text.js');
  return outputWidth({ env: process.env, ...(process.stdout.isTTY ? { stdoutColumns: process.stdout.columns } : {}) });
}

/** The command line itself: the help bundle for a help request no page answers, else the program. */
async function runCommand(help, lostSoFar) {
  if (!help) await endEarlyOnSignals();
  const { run, reportFailuresAfterCommand } = help ? await import('../dist/src/cli/help-bundle.js') : await import('../dist/src/cli/program.js');
  // An exception that reaches the top once the command has returned is still the tool's to say,
  // with its own exit code, not Node's stack and exit 1 (an --expect failed, to a CI job).
  reportFailuresAfterCommand();
  const code = await run(process.argv);
  process.exitCode = code;
  // What the run printed for a script to read, lost to a full disk: the run's own end is not its
  // caller's to trust (docs/ci.md, exit code 4). A reader that went away is no such loss.
  if (code <= 128) {
    if (lostSoFar) sayLost(await lostSoFar(), code);
    else sayLost(await (await import('../dist/src/cli/process-io.js')).lostOutput(), code);
  }
  // A run a signal stopped (its code 128 + the signal's number, as shells report one) leaves as
  // soon as its last lines are out. Left to end by itself, Node closes its signal listeners early
  // in its teardown, and a closed terminal's second hang-up (the shell's, after the kernel's)
  // landing there would kill it by the signal instead of letting it exit with its code.
  if (code > 128) {
    const flushed = (stream) => new Promise((resolve) => stream.write('', () => resolve()));
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    process.exit(code);
  }
}
