/** The documented least-privilege ACL line (docs/shared-servers.md), as the tests apply it to users of their own. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const PAGE = readFileSync(new URL('../../../docs/shared-servers.md', import.meta.url), 'utf8');

/** The page's ACL SETUSER line as arguments, with `password` filled in. */
export function readmeAclRules(password: string): string[] {
  const line = PAGE.split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('ACL SETUSER emq-race '));
  assert.ok(line, 'docs/shared-servers.md has an ACL SETUSER emq-race line');
  return line
    .split(/\s+/)
    .slice(3)
    .map((rule) => (rule === '>PASSWORD' ? `>${password}` : rule));
}

/** Commands the rules grant one by one (`+name` or `+name|sub`), lower-case. */
export const granted = (rules: readonly string[]): string[] => rules.filter((r) => /^\+[a-z|]+$/.test(r)).map((r) => r.slice(1));

/** `url` with a user name and password put in. */
export const userUrl = (url: string, user: string, password: string): string => url.replace('redis://', `redis://${user}:${password}@`);
