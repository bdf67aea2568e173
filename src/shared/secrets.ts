/**
 * The passwords the command was given, so that a server's words that repeat one are never passed
 * on: a server's error may echo AUTH's arguments (Redis 4 to 6's "unknown command `auth`, with args
 * beginning with: `user`, `password`,", or any other words), and such text is no URL for the
 * redactor to find. The server's words are scrubbed (describeServerError), not the tool's own: a
 * password that is a word of them ('server', 'clean') would hide that word and so show the
 * password by its absence. The one exception is a bug's report (program.ts), whose text the tool
 * did not write either (a library's error, a stack trace): there any password goes, at the cost
 * that one which is also a word of it (`dist` in a path) leaves a gap that names it.
 */

const SECRETS = new Set<string>();
/** Passwords shorter than SECRET_MIN: hidden only where a server quotes them (see withoutSecrets). */
const SHORT_SECRETS = new Set<string>();

/**
 * The shortest password looked for as a word: a shorter one would hide pieces of words (an `a`, a
 * `to`, a `cmd`) rather than a password, and so name it by where the gaps fall.
 */
const SECRET_MIN = 4;

/** A password the command was given (parseServerUrl reads each). */
export function rememberSecret(secret: string): void {
  if (secret.length >= SECRET_MIN) SECRETS.add(secret);
  else if (secret.length > 0) SHORT_SECRETS.add(secret);
}

/** The quotes a server puts around an argument it repeats (Redis's `arg`, 'arg' or "arg"). */
const QUOTES = ['`', "'", '"'];

/** A letter or digit of ASCII: what a password must not touch on either side to be one word. */
const WORD_CHAR = /[A-Za-z0-9]/;

/**
 * A server's `text` with every password the command was given hidden where it stands as a word of
 * its own (between any characters but letters and digits); one under SECRET_MIN characters only
 * where it stands quoted. Searched for as plain text, not as a
 * pattern made of it: V8 refuses a regular expression past some tens of thousands of characters,
 * and a password that long would then end the command with an error that repeats it.
 */
export function withoutSecrets(text: string): string {
  let out = text;
  // A short password is hidden only as a quoted argument, the form in which a server repeats what
  // it was sent: there it is no piece of a word of the server's own.
  for (const secret of SHORT_SECRETS) {
    for (const quote of QUOTES) out = out.split(`${quote}${secret}${quote}`).join(`${quote}***${quote}`);
  }
  for (const secret of SECRETS) {
    let kept = '';
    let from = 0;
    for (let at = out.indexOf(secret); at >= 0; at = out.indexOf(secret, at + 1)) {
      if (at < from) continue;
      const end = at + secret.length;
      if (WORD_CHAR.test(out[at - 1] ?? '') || WORD_CHAR.test(out[end] ?? '')) continue;
      kept += `${out.slice(from, at)}***`;
      from = end;
    }
    out = kept + out.slice(from);
  }
  return out;
}

/**
 * The environment a child process of the tool's gets (a sweeper of --processes, a server's
 * keeper): the tool's own, but for REDIS_URL, which no child reads (each is handed what it needs)
 * and Node prints, every variable of it, for each child started under NODE_DEBUG=child_process.
 */
export function childEnvironment(): NodeJS.ProcessEnv {
  const { REDIS_URL: _left, ...env } = process.env;
  return env;
}
