/**
 * `--export-test FILE`: the shrunk witness as a `node:test` file a user keeps beside their queue
 * code. It needs the `emq-race` command (the package's bin: `node_modules/.bin` under `npm test`,
 * or a global install) and a server (`REDIS_URL`; without it, emq-race starts its own). It replays
 * the witness through `emq-race explain --json` and asserts that the job came out clean, so it
 * fails while the strategy named on its first line races, and passes once that line names a
 * strategy that does not (`atomic`, the one Lua script). The text is made here, pure; the command
 * line writes it, refusing a file that exists.
 */
import type { ShrunkWitness } from '../shared/model.js';

/** The file's text for a witness explain replays (`witness.command` set); `made` says what made it. */
export function exportedTest(witness: ShrunkWitness, command: string, made: string): string {
  const quoted = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const { schedule, flags } = explainArgs(command);
  // A comment line ends at any line terminator JavaScript knows: one in a file name given to a flag
  // would end it early and leave the rest of the name as code. Each is shown escaped instead.
  const comment = made.replace(/[\r\n\u2028\u2029]/g, (end) => (end === '\r' ? '\\r' : end === '\n' ? '\\n' : `\\u${end.charCodeAt(0).toString(16)}`));
  return `const MODE = ${quoted(witness.mode)}; // the strategy under test: '${witness.mode}' races under the witness below; 'atomic' does not

// Made by ${comment}
// The witness: two sweeps on one job, ${witness.switches ?? 0} switches between them, ending ${witness.outcome}.
// Run: REDIS_URL=redis://host:port node --test <this file>  (the emq-race command on PATH, as
// npm test puts node_modules/.bin there). It fails while MODE races, and passes for a safe MODE.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';

const SCHEDULE = ${quoted(schedule)};
const FLAGS = [${flags.map(quoted).join(', ')}];

/** emq-race's one JSON object on stdout, whatever its exit code. */
function emqRace(args) {
  return new Promise((resolve, reject) => {
    execFile('emq-race', args, { env: process.env, shell: process.platform === 'win32' }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(\`emq-race \${args.join(' ')} printed no JSON: \${stderr}\`));
      }
    });
  });
}

test(\`\${MODE}: two sweeps of one expired job, in the order that broke '${witness.mode}', leave it clean\`, async () => {
  // explain orders the loop's steps; a one-call strategy's two calls have no steps to order.
  const args = ['explain', '--mode', MODE, ...FLAGS, '--json', ...(MODE === 'loop' ? ['--schedule', SCHEDULE] : [])];
  const json = await emqRace(args);
  assert.equal(json.error, undefined, json.error && json.error.message);
  for (const replay of json.replays) {
    const { recoverCount, pendingEntries, lostIncrements, overcountedStalls } = replay.readout;
    // Every way the job came out wrong, named at once.
    const wrong = [];
    if (recoverCount !== 1) wrong.push(\`the job was recovered \${recoverCount} times\`);
    if (!(pendingEntries <= 1)) wrong.push(\`the job stands \${pendingEntries} times in pending\`);
    if (lostIncrements !== 0) wrong.push(\`stall-counter increments lost: \${lostIncrements}\`);
    // Its one real stall (the expired lease) counted more than once: the counter above stalled-before + 1.
    if (overcountedStalls !== 0) wrong.push(\`stall counted twice: \${overcountedStalls} over-counted\`);
    assert.deepEqual(wrong, [], \`\${replay.mode}: \${wrong.join('; ')}; \${JSON.stringify(replay.readout)}\`);
  }
});
`;
}

/** An explain line's schedule, and its other flags but --mode (the file's first line names the mode). Pure. */
export function explainArgs(command: string): { schedule: string; flags: string[] } {
  const words = command.split(' ').slice(2);
  let schedule = '';
  const flags: string[] = [];
  for (let at = 0; at < words.length; at += 2) {
    const [flag, value] = [words[at] ?? '', words[at + 1] ?? ''];
    if (flag === '--schedule') schedule = value;
    else if (flag !== '--mode') flags.push(flag, value);
  }
  return { schedule, flags };
}
