/**
 * A server whose configuration renamed a command away (`rename-command X ""`): the command is
 * named in one line (exit 3) however the tool sent it: inside a transaction, where the server's
 * refusal of MULTI is followed by "EXEC without MULTI", or inside one of the tool's scripts, where
 * the server names only the script and its line. Nothing of the run is left on the server.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer } from '../helpers/servers.js';

/** The suite's admin connection, opened and closed around its tests. */
function adminOf(url: () => string): () => Redis {
  let admin: Redis | undefined;
  before(() => {
    admin = new Redis(url());
  });
  after(async () => {
    await admin?.quit();
  });
  return () => {
    if (admin === undefined) throw new Error('the admin connection opens before the tests');
    return admin;
  };
}

const unknownLine = (command: string, calledBy = ''): RegExp =>
  new RegExp(
    `^emq-race: the server at redis://127\\.0\\.0\\.1:\\d+ does not know the command ${command} \\(${calledBy}renamed or disabled in its configuration`,
  );

const SEED_LINE = 'called by seed-jobs\\.lua line \\d+; ';

for (const { command, title, args, calledBy, notSaid } of [
  {
    command: 'MULTI',
    title: '--mode watch: one line naming MULTI, not the EXEC that followed it, exit 3, nothing left',
    args: ['--mode', 'watch', '--jobs', '50', '--sweepers', '2'],
    calledBy: '',
    notSaid: /EXEC without MULTI/,
  },
  {
    command: 'HSET',
    title: "the seeding script's HSET: named with the script and its line, exit 3, nothing left",
    args: ['--mode', 'atomic', '--jobs', '50'],
    calledBy: SEED_LINE,
    notSaid: /Unknown (Redis )?command called from script|@user_script/,
  },
  {
    command: 'ZADD',
    title: "--mode all: the seeding script's ZADD named with the script and its line, exit 3, nothing left",
    args: ['--mode', 'all', '--jobs', '50', '--sweepers', '2'],
    calledBy: SEED_LINE,
    notSaid: undefined,
  },
  {
    // Met at the claim, before anything is written: the clean-up deletes with UNLINK, and a run
    // that raced first would leave every key it wrote.
    command: 'UNLINK',
    title: 'UNLINK: named at the claim, exit 3, nothing written and nothing left',
    args: ['--mode', 'atomic', '--jobs', '50', '--queue', 'race-unlinkless'],
    calledBy: '',
    notSaid: /remove them with|seed/,
  },
]) {
  forEachServer(
    `${command} renamed away`,
    (handle) => {
      const admin = adminOf(() => handle.url);
      test(title, async () => {
        const result = await runCli(['--url', handle.url, ...args]);
        assert.equal(result.code, 3, result.stderr);
        const line = oneErrorLine(result.stderr) ?? '';
        assert.match(line, unknownLine(command, calledBy), result.stderr);
        if (notSaid) assert.doesNotMatch(line, notSaid);
        assert.deepEqual(await allKeys(admin()), []);
      });
    },
    ['--rename-command', command, ''],
  );
}
