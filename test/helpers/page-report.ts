/** The report an HTML page carries: the object `--json` prints, in its `emq-report` script block. */
import assert from 'node:assert/strict';

export function pageReport(html: string): unknown {
  const match = /<script type="application\/json" id="emq-report">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(match, 'the page embeds its JSON');
  return JSON.parse(match[1] ?? '');
}
