/**
 * The skeleton every page of the tool shares: one self-contained HTML file whose CSP forbids any
 * fetch, its style inline, its sections, and the JSON it was drawn from in a data block. A page
 * that draws in the browser (the grid's) adds its one script, which the CSP allows by its hash.
 */
import { commandPieces } from './command-line.js';
import { escapeMarkup as esc, jsonForScriptBlock } from './escape.js';

export interface PageParts {
  readonly title: string;
  readonly csp: string;
  readonly style: string;
  readonly sections: readonly string[];
  /** The id of the data block, and what it holds. */
  readonly dataId: string;
  readonly data: unknown;
  /** The page's one script, last so the data block and the hosts it draws into are parsed. */
  readonly script?: string;
}

export function htmlDocument(page: PageParts): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${page.csp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    `<title>${esc(page.title)}</title>`,
    `<style>\n${page.style}\n</style>`,
    '</head>',
    '<body>',
    '<main>',
    ...page.sections,
    '</main>',
    // Data, not code: the browser never runs a block of this type (and the CSP would not let it).
    `<script type="application/json" id="${page.dataId}">\n${jsonForScriptBlock(page.data)}\n</script>`,
    ...(page.script !== undefined ? [`<script>${page.script}</script>`] : []),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The facts every page opens with: which server, and where (its URL, already redacted). */
export function serverFacts(server: { readonly kind: string; readonly version: string; readonly url: string }): [string, string][] {
  return [
    ['server', `${server.kind} ${server.version}`],
    ['at', server.url],
  ];
}

/** A page's facts: name and value, one pair a row. */
export function factList(rows: readonly (readonly [string, string])[]): string {
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}

/**
 * What the "to run it again" note adds when the command's --url held a password: the page never
 * holds one, so the line shows it as ***, which the reader puts back (or gives as REDIS_URL instead).
 */
export function passwordClause(command: string): string {
  return /--url '?[a-z]+:\/\/[^ ]*\*\*\*/.test(command)
    ? ', with the password the page shows as <code>***</code> put back, or the URL given as <code>REDIS_URL</code> in place of <code>--url</code>'
    : '';
}

/** The command that runs it again; a line breaks only between a flag with its value and the next, never inside --stalled-before. */
export function commandBlock(command: string): string {
  return `<pre id="command"><code>${commandPieces(command)
    .map((piece) => `<span class="arg">${esc(piece)}</span>`)
    .join(' ')}</code></pre>`;
}
