/**
 * What the grid page adds to the house style sheets (page-style.ts, svg-style.ts): the banner of
 * an interrupted grid, the chart rows, the cell table, and the charts' series colours. The colours
 * are CSS variables on svg.emq with the same light / dark / paper switch svg-style.ts uses, so a
 * series keeps its meaning and stays readable in either scheme.
 */

/** Six series colours (c0…c5), picked apart in hue and lightness; a seventh series reuses c0. */
const LIGHT = `--c0:#0b62c4;--c1:#c2410c;--c2:#1a7f37;--c3:#6b3fa0;--c4:#0f766e;--c5:#8a6d00;--on-bad:#ffffff;--grid:#e4e8ec;`;
const DARK = `--c0:#6cb2ff;--c1:#ff9b6b;--c2:#57d17a;--c3:#c8a6ff;--c4:#4fd1c5;--c5:#e6c04f;--on-bad:#15191e;--grid:#262d35;`;

export const GRID_PAGE_STYLE = `
.banner{border:1px solid var(--bad);background:var(--bad-bg);color:var(--bad);border-radius:6px;padding:8px 12px;margin:.8em 0;font-weight:600}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.charts figure{margin:0;min-width:0;max-width:100%}
#cells-table{width:auto;min-width:50%}
#cells-table td{white-space:nowrap}
#cells-table th.mode{text-align:center;border-left:2px solid var(--rule)}
#cells-table .first{border-left:2px solid var(--rule)}
`.trim();

export const GRID_SVG_STYLE = `
svg.emq{${LIGHT}}
@media (prefers-color-scheme:dark){svg.emq{${DARK}}}
@media print{svg.emq{${LIGHT}}}
svg.emq .gridline{stroke:var(--grid)}
svg.emq text.tick{fill:var(--muted);font-size:11px}
svg.emq text.axis-label{fill:var(--muted)}
svg.emq .series{fill:none;stroke-width:2}
svg.emq .swatch{stroke-width:2.5}
${[0, 1, 2, 3, 4, 5].map((i) => `svg.emq .c${i}{stroke:var(--c${i})}svg.emq .point.c${i},svg.emq text.c${i}{fill:var(--c${i})}`).join('\n')}
/* After the series colours: a point's ring is the backdrop, so crossing lines do not hide it. */
svg.emq .point{stroke:var(--bg);stroke-width:1.5}
svg.emq .heat{stroke:var(--line);stroke-width:.5}
svg.emq .heat.raced{fill:var(--bad)}
svg.emq .heat.clean{fill:var(--ok);fill-opacity:.15}
svg.emq .heat.missing{fill:none;stroke-dasharray:3 3}
svg.emq text.heat-label{font-weight:bold}
svg.emq text.heat-label.strong{fill:var(--on-bad)}
svg.emq text.empty{fill:var(--muted);font-style:italic}
`.trim();
