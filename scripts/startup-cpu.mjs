// What starting the tool costs in CPU time: `emq-race --version` and `emq-race --help` beside
// `node -e 0`, the floor any Node program pays, on the same machine at the same moment. Each is
// run from bash, whose `times` gives its children's user + system seconds to the millisecond, the
// three in turn so that a busy machine slows all of them alike; the medians and each command's
// ratio to the floor are printed (docs/architecture.md says what they came to). After
// `npm run build`:
//   node scripts/startup-cpu.mjs [runs]      (10 runs of each by default)
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/emq-race.js', import.meta.url));
const runs = Number(process.argv[2] ?? 10);
if (!Number.isInteger(runs) || runs < 1) {
  console.error(`startup-cpu: ${JSON.stringify(process.argv[2])} is not a number of runs; expected a whole number, 1 or more`);
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

/**
 * The environment each command runs in: this process's, less NODE_EXTRA_CA_CERTS, which makes
 * Node 20 read a certificate file as it starts (about 35 ms of CPU on one machine), the floor's
 * start included: a ratio to so heavy a floor would hide what the tool itself costs.
 */
const ENV = { ...process.env, NO_COLOR: '1' };
delete ENV.NODE_EXTRA_CA_CERTS;

/**
 * One run's user + system CPU seconds, as bash's `times` reports its children's (getrusage, to the
 * millisecond; /usr/bin/time rounds to 10 ms, as much as the tool's own share of a start).
 */
function cpuSeconds(args) {
  const result = spawnSync('bash', ['-c', '"$@" >/dev/null 2>&1; code=$?; times; exit $code', 'startup-cpu', process.execPath, ...args], {
    encoding: 'utf8',
    env: ENV,
  });
  // The second line of `times` holds the children's user and system time, as 0m0.041s 0m0.008s.
  const children = result.stdout.trim().split('\n').at(-1) ?? '';
  const [user, system] = children.split(' ').map((field) => {
    const [, minutes, secs] = /^(\d+)m([\d.]+)s$/.exec(field) ?? [];
    return Number(minutes) * 60 + Number(secs);
  });
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
