// Measures what a queue library's run holds on the server, the figures the memory guard weighs a
// library run by (`memory` of each library in src/libraries/table.ts). Each mode runs with --keep
// on a fresh private server of each kind (no maxmemory), eight callers, at a small and a large
// size; for each run it reads INFO memory before it and used_memory_peak after it, INFO clients
// while it runs (the most connections at once), MEMORY USAGE of every key the run kept, the
// scripts' memory and the commands INFO latencystats lists. A job's bytes are the rise of the peak
// from the small run to the large one, per job added; a duplicate's, a racing mode's rise over the
// guarded port's, per other caller. After `npm run build`, from the project's folder (whose
// node_modules holds the libraries):
//   node scripts/measure-library-memory.mjs [bullmq|node-resque|bee-queue …]
import { startEmbeddedServer, which } from '../dist/src/server/embedded-server.js';
import { connect, parseServerUrl } from '../dist/src/server/connection.js';
import { runCli } from '../dist/test/helpers/cli.js';

const SWEEPERS = 8;
const PLANS = {
  bullmq: { sizes: [200, 2000], modes: ['bullmq', 'bullmq-naive', 'bullmq-guarded'] },
  'bullmq --fault lapsed-lock': { sizes: [200, 1000], modes: ['bullmq', 'bullmq-naive'], extra: ['--fault', 'lapsed-lock'] },
  'node-resque': { sizes: [100, 400], modes: ['node-resque', 'node-resque-naive', 'node-resque-guarded'] },
  'bee-queue': { sizes: [200, 2000], modes: ['bee-queue', 'bee-queue-naive', 'bee-queue-guarded'] },
};
const field = (info, name) => Number(new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1] ?? 0);

async function measure(bin, mode, jobs, extra) {
  const server = await startEmbeddedServer({ bin });
  const redis = await connect(parseServerUrl(server.url));
  try {
    const base = field(await redis.info('memory'), 'used_memory');
    let clients = 0;
    let running = true;
    const watching = (async () => {
      while (running) {
        clients = Math.max(clients, field(await redis.info('clients'), 'connected_clients'));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const args = [
      '--url',
      server.url,
      '--mode',
      mode,
      '--lib-from',
      '.',
      '--sweepers',
      String(SWEEPERS),
      '--jobs',
      String(jobs),
      '--loop-jobs',
      String(jobs),
      '--keep',
      '--json',
      ...extra,
    ];
    const result = await runCli(args);
    running = false;
    await watching;
    if (result.code !== 0) throw new Error(`${mode} on ${jobs} jobs: exit ${result.code}: ${result.stderr}`);
    const memory = await redis.info('memory');
    const commands = [...(await redis.info('latencystats')).matchAll(/^latency_percentiles_usec_([^:]+):/gm)].map((m) => m[1]);
    let kept = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', 'emq:*', 'COUNT', 1000);
      cursor = next;
      for (const key of keys) kept += Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    } while (cursor !== '0');
    // The connections counted here include this script's own and the session's.
    return {
      peak: field(memory, 'used_memory_peak') - base,
      kept,
      clients,
      scripts: field(memory, 'used_memory_scripts_eval') || field(memory, 'used_memory_scripts'),
      commands,
    };
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

const asked = process.argv.slice(2);
for (const [name, plan] of Object.entries(PLANS)) {
  if (asked.length > 0 && !asked.some((a) => name.startsWith(a))) continue;
  for (const bin of ['redis-server', 'valkey-server']) {
    if (!which(bin)) continue;
    const rise = {};
    for (const mode of plan.modes) {
      const runs = [];
      for (const jobs of plan.sizes) runs.push(await measure(bin, mode, jobs, plan.extra ?? []));
      const [a, b] = runs;
      const [n1, n2] = plan.sizes;
      rise[mode] = (b.peak - a.peak) / (n2 - n1);
      console.log(
        `${bin} ${name}: ${mode}: peak rise ${rise[mode].toFixed(0)} bytes a job; kept ${(b.kept / n2).toFixed(0)} bytes a job; ` +
          `${b.clients} connections at most; scripts ${b.scripts} bytes; ${b.commands.length} commands (${b.commands.sort().join(' ')})`,
      );
    }
    // A duplicate: the naive port's rise over the mode that recovers each job once (the guarded port, else the library's own).
    const [own, naive, guarded] = plan.modes;
    const once = guarded ?? own;
    console.log(`${bin} ${name}: a duplicate, ${naive} over ${once}: ${((rise[naive] - rise[once]) / (SWEEPERS - 1)).toFixed(0)} bytes`);
  }
}
