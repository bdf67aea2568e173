// What starting the tool costs in CPU time: `emq-race --version` and `emq-race --help` beside
// `node -e 0`, the floor any Node program pays, on the same machine at the same moment. Each is
// run under /usr/bin/time (user + system seconds), the three in turn so that a busy machine slows
// all of them alike; the medians and each command's ratio to the floor are printed. The tool's
// start-up should stay within twice the floor. After `npm run build`:
//   node scripts/startup-cpu.mjs [runs]      (10 runs of each by default)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TIME = '/usr/bin/time';
const BIN = fileURLToPath(new URL('../bin/emq-race.js', import.meta.url));
const runs = Number(process.argv[2] ?? 10);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`startup-cpu: ${JSON.stringify(process.argv[2])} is not a number of runs; expected a whole number, 1 or more`);
  process.exit(2);
}
if (!existsSync(TIME)) {
  console.error(`startup-cpu: needs ${TIME} (GNU time) to read each run's CPU time`);
  process.exit(2);
}
if (!existsSync(fileURLToPath(new URL('../dist/src/cli/program.js', import.meta.url)))) {
  console.error('startup-cpu: run `npm run build` first');
  process.exit(2);
}

const COMMANDS = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'emq-race --version', args: [BIN, '--version'] },
  { name: 'emq-race --help', args: [BIN, '--help'] },
];

/** One run's user + system CPU seconds, as /usr/bin/time reports them on the last line of stderr. */
function cpuSeconds(args) {
  const result = spawnSync(TIME, ['-f', '%U %S', process.execPath, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const last = result.stderr.trim().split('\n').at(-1) ?? '';
  const [user, system] = last.split(' ').map(Number);
  if (result.status !== 0 || !Number.isFinite(user) || !Number.isFinite(system)) {
    throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr.trim()}`);
  }
  return user + system;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const samples = COMMANDS.map(() => []);
for (let run = 0; run < runs; run++) COMMANDS.forEach((command, i) => samples[i].push(cpuSeconds(command.args)));

const medians = samples.map(median);
const floor = medians[0];
console.log(`CPU time (user + system), median of ${runs} runs each, Node ${process.version}:`);
COMMANDS.forEach((command, i) => {
  const ratio = i === 0 ? '' : `  ${(medians[i] / floor).toFixed(2)} × node -e 0`;
  console.log(`  ${command.name.padEnd(20)} ${medians[i].toFixed(3)} s${ratio}`);
});
