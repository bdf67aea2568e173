/**
 * The passwords the command was given, so that a server's words that repeat one are never passed
 * on: a server's error may echo AUTH's arguments (Redis 4 to 6's "unknown command `auth`, with args
 * beginning with: `user`, `password`,", or any other words), and such text is no URL for the
 * redactor to find. Only the server's words are scrubbed (describeServerError), never the tool's
 * own: a password that is a word of them ('server', 'clean') would hide that word and so show
 * the password by its absence.
 */

const SECRETS = new Set<string>();

/** The shortest password looked for: a shorter one would hide pieces of words rather than a password. */
const SECRET_MIN = 4;

/** A password the command was given (parseServerUrl reads each). */
export function rememberSecret(secret: string): void {
  if (secret.length >= SECRET_MIN) SECRETS.add(secret);
}

/** A server's `text` with every password the command was given hidden where it stands as a word of its own (between any characters but letters and digits). */
export function withoutSecrets(text: string): string {
  let out = text;
  for (const secret of SECRETS) {
    const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`, 'g'), '***');
  }
  return out;
}
