/**
 * Loaded into each test file's process by scripts/test.mjs when the run is under coverage: from
 * here on, the processes this one starts run without it.
 *
 * Coverage is counted where the tests run the tool, in the test files' own processes: the command
 * line runs there in-process through its `Io` seam, every stage of a run with it. Counting it also
 * in each process a test starts (the CLI spawned, the sweepers of --processes, a helper) cost the
 * suite about a sixth of its time for under a point of lines (docs/architecture.md, "The checks"):
 * V8 counts every block each of those processes runs and writes it all out as it exits.
 *
 * Set empty, not removed: Node hands its own NODE_V8_COVERAGE on to a child whose environment
 * lacks the name. NODE_OPTIONS, which brought this file here, goes back to what the runner was
 * given, so that the processes below see the environment they would without this file.
 */
process.env.NODE_V8_COVERAGE = '';
const outer = process.env.EMQ_RACE_OUTER_NODE_OPTIONS;
delete process.env.EMQ_RACE_OUTER_NODE_OPTIONS;
if (outer) process.env.NODE_OPTIONS = outer;
else delete process.env.NODE_OPTIONS;
