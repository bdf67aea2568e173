/** The page's failover section: the jobs run twice, from the workers' own records, where the run had workers, and nothing of them where it had none. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { racePage } from '../../src/html/page.js';
import { reportJson } from '../../src/report/json.js';
import { NO_CONSEQUENCES, type FailoverFigures } from '../../src/shared/model.js';
import { SERVER, failoverFigures, runResult } from '../helpers/run-result.js';

const PAGE = { command: 'emq-race', generatedAt: '2026-01-01T00:00:00.000Z', version: '0.0.0' };

const section = (over: Partial<FailoverFigures>): string => {
  const run = runResult({
    consequences: { ...NO_CONSEQUENCES, faults: ['failover'], workers: over.jobsRunTwice === null ? 0 : 2 },
    faultCounts: { crashes: 0, lostReplies: 0, reconnects: 0, scriptFlushes: 0, clientKills: 0 },
    failover: failoverFigures(over),
  });
  const page = racePage(JSON.parse(JSON.stringify(reportJson({ server: SERVER, runs: [run] }))), PAGE);
  const start = page.indexOf('<section id="failover">');
  assert.ok(start >= 0, 'the page has its failover section');
  return page.slice(start, page.indexOf('</section>', start));
};

test("the failover section gives the jobs run twice by the workers' own records, and says nothing of them without workers", () => {
  assert.match(
    section({ jobsRunTwice: 20 }),
    /By the workers' own records: <span data-field="jobsRunTwice">20<\/span> jobs run twice, taken before the failover and again after it\./,
  );
  assert.doesNotMatch(section({ jobsRunTwice: null }), /jobsRunTwice|run twice/);
});
