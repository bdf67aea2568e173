/**
 * Every failure the tool expects ends as one EmqError: a line for people and an exit code for
 * scripts. Anything else reaching the top is a bug and prints its stack.
 */

export const ExitCode = {
  ok: 0,
  expectationFailed: 1,
  usage: 2,
  server: 3,
  sigint: 130,
  sigterm: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class EmqError extends Error {
  readonly exitCode: ExitCode;

  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.name = 'EmqError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string): EmqError => new EmqError(message, ExitCode.usage);
export const serverError = (message: string): EmqError => new EmqError(message, ExitCode.server);

/** Raised when SIGINT/SIGTERM stops a run; the run cleans up before it surfaces. */
export class InterruptedError extends EmqError {
  readonly signal: NodeJS.Signals;

  constructor(signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`, signal === 'SIGTERM' ? ExitCode.sigterm : ExitCode.sigint);
    this.name = 'InterruptedError';
    this.signal = signal;
  }
}

/**
 * Turns what ioredis or the socket layer throws into one readable line. `where` is the redacted
 * server address, never a URL with a password in it.
 */
export function describeServerError(err: unknown, where: string): EmqError {
  if (err instanceof EmqError) return err;
  const e = err as { code?: string; message?: string };
  const message = String(e?.message ?? err);
  const code = e?.code ?? '';
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message)) {
    return serverError(`cannot reach the server at ${where}: connection refused`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return serverError(`cannot reach the server at ${where}: host not found`);
  }
  if (code === 'ETIMEDOUT' || /connect ETIMEDOUT|timed out/i.test(message)) {
    return serverError(`cannot reach the server at ${where}: timed out`);
  }
  if (code === 'ENOENT' && /connect/.test(message)) {
    return serverError(`cannot reach the server at ${where}: no such socket`);
  }
  if (/^WRONGPASS|invalid username-password/i.test(message)) {
    return serverError(`the server at ${where} refused the credentials (wrong user name or password)`);
  }
  if (/^NOAUTH/.test(message)) {
    return serverError(`the server at ${where} requires a password: put it in the URL (redis://:PASSWORD@host:port)`);
  }
  if (/^NOPERM/.test(message)) {
    return serverError(`permission denied on ${where}: ${stripErrorPrefix(message)}`);
  }
  if (/^READONLY/.test(message)) {
    return serverError(`the server at ${where} is a read-only replica: point --url at a primary`);
  }
  if (/^OOM/.test(message)) {
    return serverError(`the server at ${where} is out of memory (maxmemory reached): ${stripErrorPrefix(message)}`);
  }
  if (/Connection is closed|ECONNRESET|EPIPE|Stream isn't writeable/i.test(message)) {
    return serverError(`lost the connection to the server at ${where}`);
  }
  return serverError(`server error from ${where}: ${message.split('\n')[0]}`);
}

function stripErrorPrefix(message: string): string {
  return message.replace(/^[A-Z]+\s+/, '').split('\n')[0] ?? message;
}
