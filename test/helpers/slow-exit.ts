/**
 * Loaded into a spawned CLI with `--import` (NODE_OPTIONS): once the command is done and Node's
 * event loop has nothing left (`beforeExit`), the process stays for a few seconds more, as its end
 * does on a loaded machine (its sockets closing, its teardown). A test's signal then lands, every
 * time, in the moments between the command's end and the process's, which otherwise last a few
 * milliseconds.
 */
let held = false;
process.on('beforeExit', () => {
  if (held) return;
  held = true;
  setTimeout(() => {}, 3_000);
});
