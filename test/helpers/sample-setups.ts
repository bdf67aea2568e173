/**
 * What a sample needs beyond its command line (test/helpers/docs-samples.ts names the markers):
 * a server of its own with an ACL user or a foreign queue on it, and its JSON read through `jq`.
 * Shared by `npm run samples` (scripts/samples.mjs) and test/server/docs-samples.test.ts, so that
 * the docs' samples and the test that checks them are made alike.
 */
import { spawnSync } from 'node:child_process';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { startEmbeddedServer, which } from '../../src/server/embedded-server.js';
import { readmeAclRules, userUrl } from './acl.js';
import type { Sample } from './docs-samples.js';

/** A sample's arguments made runnable, and what undoes what was set up for it. */
export interface PreparedSample {
  readonly args: readonly string[];
  stop(): Promise<void>;
}

// The password of a sample's ACL user: the tool prints `***` in its place, so it never shows.
const PASSWORD = 'sample-password';

/**
 * Starts what `sample.setup` asks for (nothing for most samples): with a server, one of `bin`'s kind
 * on a free loopback port whose URL replaces `$URL` in the arguments; with `acl`, a user made there
 * from the documented ACL line (less one command with `acl=-CMD`), the URL carrying its name and
 * password; with `foreign=QUEUE`, a key of somebody else's in that queue's namespace.
 */
export async function prepareSample(sample: Pick<Sample, 'args' | 'setup'>, bin?: string): Promise<PreparedSample> {
  const { setup } = sample;
  if (!setup.server) return { args: sample.args, stop: async () => {} };
  const server = await startEmbeddedServer(bin ? { bin } : {});
  try {
    let url = server.url;
    const admin = await connect(parseServerUrl(server.url));
    try {
      if (setup.acl !== undefined) {
        const without = setup.acl.replace(/^-/, '');
        const user = without ? `emq-race-no${without.replace('|', '-')}` : 'emq-race';
        const rules = readmeAclRules(PASSWORD).filter((rule) => rule !== `+${without}`);
        await admin.call('ACL', 'SETUSER', user, 'reset', ...rules);
        url = userUrl(server.url, user, PASSWORD);
      }
      if (setup.foreign) await admin.hset(`emq:{${setup.foreign}}:job:1`, 'payload', 'not emq-race');
    } finally {
      admin.disconnect();
    }
    return { args: sample.args.map((a) => a.replaceAll('$URL', url)), stop: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** Whether `jq` is on the PATH: a sample piped through it is made and checked only where it is. */
export const hasJq = (): boolean => which('jq') !== undefined;

/** The run's stdout through `jq ARGS`, as the sample's pipe does it: jq's exit code is the pipe's. */
export function throughJq(jqArgs: readonly string[], stdout: string): { code: number; output: string } {
  const jq = spawnSync('jq', jqArgs, { input: stdout, encoding: 'utf8' });
  if (jq.error) throw jq.error;
  return { code: jq.status ?? 1, output: `${jq.stdout}${jq.stderr}` };
}
