#!/usr/bin/env node
// The version alone is answered from package.json, before the program and its modules load: the
// same line commander prints for it, in a fraction of the start-up.
const args = process.argv.slice(2);
if (args.length === 1 && ['--version', '-V', '-v'].includes(args[0])) {
  const { readFileSync } = await import('node:fs');
  // A reader that went away (`| head -c0`) is no error, as for every other output.
  process.stdout.on('error', () => {});
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  const { run } = await import('../dist/src/cli/program.js');
  process.exitCode = await run(process.argv);
}
