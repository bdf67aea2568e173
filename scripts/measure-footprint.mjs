// Measures what one seeded job costs the server: INFO memory's used_memory before and right after
// seeding N jobs on a private server of each kind. Seeding is the peak of a run (every job is in
// `active` and has its hash; the sweeps only move ids from `active` to `pending` or `dead`).
// A cross-check of what the memory guard (src/queue/memory-guard.ts) measures per job with MEMORY
// USAGE, from used_memory instead. After `npm run build`:
//   node scripts/measure-footprint.mjs [jobs]
import { connect, parseServerUrl } from '../dist/src/server/connection.js';
import { startEmbeddedServer, which } from '../dist/src/server/embedded-server.js';
import { queueKeys } from '../dist/src/queue/keys.js';
import { usedMemory } from '../dist/src/server/memory-check.js';
import { seedJobs } from '../dist/src/queue/seed.js';
import { serverTimeMs } from '../dist/src/server/clock.js';

const jobs = Number(process.argv[2] ?? 100_000);

for (const bin of ['redis-server', 'valkey-server']) {
  if (!which(bin)) continue;
  const server = await startEmbeddedServer({ bin });
  try {
    const redis = await connect(parseServerUrl(server.url));
    const before = await usedMemory(redis);
    // A run id as long as a real one: every job hash carries it.
    await seedJobs(redis, queueKeys('measure'), { jobs, runId: '0123456789abcdef', stalledBefore: 0, serverNowMs: await serverTimeMs(redis) });
    const after = await usedMemory(redis);
    console.log(`${bin} (${server.url}): ${jobs} jobs seeded: ${after - before} bytes, ${((after - before) / jobs).toFixed(1)} bytes/job`);
    redis.disconnect();
  } finally {
    await server.stop();
  }
}
