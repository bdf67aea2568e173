/**
 * TLS for rediss:// servers: the flags, their checks, and the Node TLS options they become.
 * Certificate checks stay on unless --tls-insecure says otherwise, explicitly.
 */
import { Option, type Command } from 'commander';
import { readInputFile } from '../shared/input-file.js';
import { createRequire } from 'node:module';
import { usageError } from '../shared/errors.js';

// node:tls is required only to try the files a --tls-* flag names: the flags themselves are part
// of every command's --help, which should not load TLS.
const require = createRequire(import.meta.url);

export interface TlsFlags {
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsInsecure?: boolean;
}

export interface TlsSettings {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
  /**
   * The host the server's certificate must name when the socket goes somewhere else first (the
   * latency proxy, on loopback): the --url's host. Absent when the socket goes to the --url itself.
   */
  readonly serverName?: string;
}

export function addTlsOptions(command: Command): Command {
  return command
    .addOption(new Option('--tls-ca <file>', 'rediss:// only: PEM file of the CA that signed the server certificate (default: the system CAs)'))
    .addOption(new Option('--tls-cert <file>', 'rediss:// only: PEM client certificate, for servers that require one (with --tls-key)'))
    .addOption(new Option('--tls-key <file>', 'rediss:// only: PEM private key of --tls-cert'))
    .addOption(new Option('--tls-insecure', 'rediss:// only: do not verify the server certificate (explicit opt-in; encrypts but trusts anyone)'));
}

function readPem(flag: string, file: string): Buffer {
  return readInputFile(file, `${flag}: ${JSON.stringify(file)}`);
}

/** The TLS settings for `url`, or undefined for a plain connection; usage errors for misplaced flags. */
export function tlsSettings(url: string, flags: TlsFlags): TlsSettings | undefined {
  const given = (['tlsCa', 'tlsCert', 'tlsKey', 'tlsInsecure'] as const).filter((name) => flags[name] !== undefined && flags[name] !== false);
  const secure = url.startsWith('rediss:');
  if (!secure) {
    const first = given[0];
    if (first) throw usageError(`--${first.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: only applies to a rediss:// --url`);
    return undefined;
  }
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) {
    throw usageError(flags.tlsCert === undefined ? '--tls-key: needs --tls-cert as well' : '--tls-cert: needs --tls-key as well');
  }
  const ca = flags.tlsCa !== undefined ? readPem('--tls-ca', flags.tlsCa) : undefined;
  if (flags.tlsCa !== undefined && ca && !ca.includes('-----BEGIN CERTIFICATE-----')) throw notPemCa(flags.tlsCa, ca);
  const settings: TlsSettings = {
    ...(ca ? { ca } : {}),
    ...(flags.tlsCert !== undefined ? { cert: readPem('--tls-cert', flags.tlsCert) } : {}),
    ...(flags.tlsKey !== undefined ? { key: readPem('--tls-key', flags.tlsKey) } : {}),
    rejectUnauthorized: flags.tlsInsecure !== true,
  };
  checkLocally(settings);
  return settings;
}

/**
 * Node skips what in a CA file is not a PEM certificate without a word, and the server's
 * certificate would then be refused as signed by no trusted CA: the file is named instead, with
 * the conversion a DER certificate (a binary file starting with an ASN.1 SEQUENCE) needs.
 */
function notPemCa(file: string, content: Buffer): Error {
  const der =
    content[0] === 0x30 ? `; it looks like a DER (binary) certificate: convert it with openssl x509 -inform der -in ${JSON.stringify(file)} -out ca.pem` : '';
  return usageError(`--tls-ca: ${JSON.stringify(file)} holds no PEM certificate (no "-----BEGIN CERTIFICATE-----" line)${der}`);
}

/**
 * Builds the TLS context once before any connection: a file that holds no PEM, or a key that does
 * not belong to the certificate, is the user's input to fix (exit 2), not a server problem.
 */
function checkLocally(settings: TlsSettings): void {
  const { ca, cert, key } = settings;
  if (ca) usable('--tls-ca', { ca });
  if (cert) usable('--tls-cert', { cert });
  if (key) usable('--tls-key', { key });
  if (cert && key) usable('--tls-key', { cert, key });
}

function usable(flag: string, options: Pick<TlsSettings, 'ca' | 'cert' | 'key'>): void {
  try {
    (require('node:tls') as typeof import('node:tls')).createSecureContext(options);
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    if (/key values mismatch/i.test(reason)) throw usageError(`${flag}: the key does not belong to the certificate of --tls-cert`);
    throw usageError(`${flag}: the file cannot be used for TLS (${reason.replace(/^error:[0-9A-F]+:/, '')})`);
  }
}
