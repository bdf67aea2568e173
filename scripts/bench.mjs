// `npm run bench`: builds quietly, then measures (see src/bench/main.ts). Arguments after `--`
// pass through: --sizes 10000,100000 --batch 1000 --json.
import { execFileSync } from 'node:child_process';

execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 2, 2] });
const { main } = await import('../dist/src/bench/main.js');
process.exitCode = await main(process.argv.slice(2));
