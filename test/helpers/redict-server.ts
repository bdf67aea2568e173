/**
 * Redict for the tests that race it: a real redict-server started on a free loopback port, with no
 * persistence, through the tool's own embedded-server module, and stopped when the suite ends. It
 * is not one of SERVER_KINDS, which every server suite races; the suites that need Redict ask for
 * it here. Where the binary is missing, the suite is skipped with the command that installs it, and
 * in CI (CI set, as .ci/run sets it) it fails instead, since CI installs it.
 */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { serverForSuite, type ServerHandle } from './servers.js';

export const REDICT_BIN = 'redict-server';

const INSTALL = 'scripts/install-servers.sh --redict';

/** Whether this run is CI's, where every server the tests name must be there. */
function inCi(): boolean {
  const ci = process.env.CI ?? '';
  return ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** Declares `body` inside a describe that starts a redict-server before it and stops it after. */
export function withRedict(title: string, body: (handle: ServerHandle) => void): void {
  const missing = which(REDICT_BIN) === undefined;
  const skip = missing && !inCi() ? `${REDICT_BIN} is not installed (run ${INSTALL})` : false;
  describe(`${title} [redict]`, { skip }, () => {
    const handle = serverForSuite(REDICT_BIN, [], () => {
      assert.ok(!missing, `${REDICT_BIN} is not on PATH, and CI must race Redict: install it with ${INSTALL}`);
    });
    body(handle);
  });
}
