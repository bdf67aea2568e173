/**
 * Loaded into a spawned CLI with `--import` (NODE_OPTIONS): a bug of the tool's thrown from a
 * callback no caller awaits, once the command's report is on stdout. EMQ_RACE_TEST_LATE_BUG says
 * when: `closing`, as soon as the report is written (the command then closes its session), or
 * `after`, once the command has returned and Node's event loop has nothing left (`beforeExit`).
 */
const when = process.env.EMQ_RACE_TEST_LATE_BUG;

const throwLater = (message: string): void => {
  setImmediate(() => {
    throw new TypeError(message);
  });
};

if (when === 'closing') {
  const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
  let armed = true;
  process.stdout.write = ((...args: unknown[]): boolean => {
    if (armed) {
      armed = false;
      throwLater('a late bug while the session closes');
    }
    return write(...args);
  }) as typeof process.stdout.write;
}

if (when === 'after') {
  let thrown = false;
  process.on('beforeExit', () => {
    if (thrown) return;
    thrown = true;
    throwLater('a late bug after the command returned');
  });
}
