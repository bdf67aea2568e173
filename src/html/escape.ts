/**
 * Escaping for everything the report writes into markup. Queue names, replies and command
 * arguments come from the run, so each one goes through here before it reaches HTML or SVG.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text or attribute value, safe in HTML and in SVG (XML) alike. */
export function escapeMarkup(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

/**
 * JSON for a `<script type="application/json">` block. `<` is written as `\u003c`, so no string in
 * the data can close the block (`</script>`) or open a comment; JSON.parse reads it back unchanged.
 */
export function jsonForScriptBlock(value: unknown): string {
  return JSON.stringify(value, null, 2)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
