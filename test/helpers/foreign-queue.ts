/**
 * A server that also holds another application's queue of the library a test races: made by
 * `seed` before the suite, its keys (those starting with `prefix`) digested, so that each test can
 * find them byte-identical after its runs and `clean`. Also the run's own keys (`emq:…`).
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Redis } from 'ioredis';
import { LIBRARIES } from '../../src/libraries/table.js';
import type { LibraryName } from '../../src/shared/model.js';
import { runCli } from './cli.js';
import { allKeys, keyspaceDigest } from './keyspace.js';
import type { ServerHandle } from './servers.js';
import { tempDir } from './temp-dir.js';

export interface ForeignQueue {
  /** A connection of the test's own, once the suite's `before` ran. */
  readonly admin: Redis;
  /** The foreign keys as they were before any run: `what` says what should have left them so. */
  assertUntouched(what: string): Promise<void>;
  /** The keys of emq-race's own runs still on the server. */
  ourKeys(): Promise<string[]>;
  /**
   * Runs a test that keeps its run's keys (`--keep`), then deletes whatever of emq-race's keys it
   * left, so that a failed assertion costs that test alone rather than the "no keys of ours"
   * checks of every test after it.
   */
  keeping(body: () => Promise<void>): Promise<void>;
}

export function useForeignQueue(handle: ServerHandle, prefix: string, seed: (url: string) => Promise<void>, atLeast: number): ForeignQueue {
  let admin: Redis | undefined;
  let foreign: Map<string, string>;
  const connection = (): Redis => {
    if (!admin) throw new Error('the suite has not started');
    return admin;
  };
  const ourKeys = async (): Promise<string[]> => (await allKeys(connection())).filter((key) => key.startsWith('emq:'));
  const foreignNow = async (): Promise<Map<string, string>> => new Map([...(await keyspaceDigest(connection()))].filter(([key]) => key.startsWith(prefix)));
  before(async () => {
    admin = new Redis(handle.url);
    await seed(handle.url);
    foreign = await foreignNow();
    assert.ok(foreign.size > atLeast, 'the foreign queue is there');
  });
  after(async () => {
    await admin?.quit();
  });
  return {
    get admin() {
      return connection();
    },
    async assertUntouched(what) {
      assert.deepEqual(await foreignNow(), foreign, what);
    },
    ourKeys,
    async keeping(body) {
      try {
        await body();
      } finally {
        const left = await ourKeys();
        if (left.length > 0) await connection().del(...left);
      }
    },
  };
}

/** `clean --all` removes every key of the kept runs, the library's namespace included, and leaves the other application's queue as it was. */
export async function assertCleanAllSparesForeign(foreign: ForeignQueue, url: string, library: string): Promise<void> {
  const cleaned = await runCli(['clean', '--url', url, '--all', '--yes']);
  assert.equal(cleaned.code, 0, cleaned.stderr);
  assert.deepEqual(await foreign.ourKeys(), [], `clean removed every key of the kept runs, ${library}'s namespace included`);
  await foreign.assertUntouched(`the other application's ${library} keys are untouched`);
}

/**
 * `--lib NAME --lib-from` a folder without the package: exit 2, one line saying how to install it
 * with the clients npm leaves out with it (a user who follows it is not refused next for those),
 * nothing written. Asked for by `--mode` with one of its modes, the line names that flag instead.
 */
export async function assertNotInstalledRefused(foreign: ForeignQueue, url: string, lib: LibraryName): Promise<void> {
  const empty = tempDir('emq-race-nolib-');
  const result = await runCli(['--url', url, '--lib', lib, '--lib-from', empty]);
  assert.equal(result.code, 2);
  const install = ['npm install', lib, ...LIBRARIES[lib].installWith].join(' ');
  assert.match(result.stderr, new RegExp(`${lib} is not installed in .*: install it there with ${install} \\(`));
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`^emq-race: --lib ${lib}: `), 'the refusal names the flag given');
  // Asked for by one of its modes, not by --lib: the refusal names that --mode, the flag the user gave.
  const mode = LIBRARIES[lib].modes[0]?.mode ?? '';
  const byMode = await runCli(['--url', url, '--mode', mode, '--lib-from', empty]);
  assert.equal(byMode.code, 2);
  assert.match(byMode.stderr, new RegExp(`^emq-race: --mode ${mode}: ${lib} is not installed in `), byMode.stderr);
  assert.deepEqual(await foreign.ourKeys(), []);
}

/** A kept list's entries per job id, as a test counts them from the keys a `--keep` run left. */
export interface ListEntries {
  readonly perJob: Map<string, number>;
  /** Entries beyond one per job. */
  readonly duplicates: number;
  /** The most entries any one job has. */
  readonly most: number;
}

/** Reads the list at `key` and counts its entries per job id; `idOf` reads an entry's job id (the entry itself unless given). */
export async function listEntries(admin: Redis, key: string, idOf: (entry: string) => string = (entry) => entry): Promise<ListEntries> {
  const perJob = new Map<string, number>();
  for (const entry of await admin.lrange(key, 0, -1)) {
    const id = idOf(entry);
    perJob.set(id, (perJob.get(id) ?? 0) + 1);
  }
  let duplicates = 0;
  let most = 0;
  for (const count of perJob.values()) {
    duplicates += count - 1;
    most = Math.max(most, count);
  }
  return { perJob, duplicates, most };
}
