/**
 * Another application's BullMQ queue on the race's server, made with BullMQ itself under its
 * default prefix `bull`: jobs waiting, and five taken into `active` under locks that outlive the
 * test. The tool must not touch a byte of it (useForeignQueue digests it).
 */
import { Queue, Worker } from 'bullmq';

export async function foreignBullmq(url: string): Promise<void> {
  const { port, hostname } = new URL(url);
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
  const queue = new Queue('payments', { connection, prefix: 'bull' });
  await queue.addBulk(Array.from({ length: 20 }, (_, i) => ({ name: 'charge', data: { i } })));
  await queue.close();
  const worker = new Worker('payments', null, { connection, prefix: 'bull', autorun: false, lockDuration: 600_000 });
  for (let i = 0; i < 5; i++) await worker.getNextJob(`foreign-${i}`, { block: false });
  // Closed at once: the five jobs stay active under locks that outlive the test.
  await worker.close(true);
}
