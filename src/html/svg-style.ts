/**
 * The drawings' own style sheet, placed inside every SVG so a standalone .svg file looks the same
 * as the drawing inside the page: light by default, dark under prefers-color-scheme, light on paper.
 */

const LIGHT = `--bg:#ffffff;--fg:#1c2127;--muted:#5b6570;--line:#8a949e;--band:#f3f5f7;--accent:#0b62c4;--reply:#6b3fa0;--ok:#1a7f37;--bad:#c62828;--slip:#fff1d6;--slip-fg:#8a4b00;--bar:#c62828;--bar-ok:#1a7f37;`;
const DARK = `--bg:#15191e;--fg:#e6e9ec;--muted:#9aa5b1;--line:#6b7682;--band:#1e242b;--accent:#6cb2ff;--reply:#c8a6ff;--ok:#57d17a;--bad:#ff7b72;--slip:#3a2d12;--slip-fg:#ffc36b;--bar:#ff7b72;--bar-ok:#57d17a;`;

export const SVG_STYLE = `
svg.emq{${LIGHT}font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:12px}
@media (prefers-color-scheme:dark){svg.emq{${DARK}}}
@media print{svg.emq{${LIGHT}}}
svg.emq text{fill:var(--fg)}
svg.emq .backdrop{fill:var(--bg)}
svg.emq .title{font-weight:bold;font-size:13px}
svg.emq .subtitle,svg.emq .lane-sub,svg.emq .readout-meaning{fill:var(--muted)}
svg.emq .lane-head rect{fill:var(--band);stroke:var(--line)}
svg.emq .lane-name{font-weight:bold}
svg.emq .lifeline{stroke:var(--line);stroke-dasharray:4 4}
svg.emq .lifeline.server{stroke-dasharray:none;stroke-width:2}
svg.emq .step-band{fill:transparent}
svg.emq .step.odd .step-band{fill:var(--band)}
svg.emq .step.slip .step-band{fill:var(--slip)}
svg.emq .slip-bar{fill:var(--slip-fg)}
svg.emq text.slip-text{fill:var(--slip-fg);font-weight:bold}
svg.emq .step-label{font-weight:bold}
svg.emq text.command{fill:var(--accent)}
svg.emq text.reply{fill:var(--reply)}
svg.emq text.note{fill:var(--muted);font-style:italic}
svg.emq .arrow{stroke:var(--accent);stroke-width:1.5}
svg.emq .arrow-head{fill:var(--accent)}
svg.emq .return{stroke:var(--reply);stroke-width:1.5;stroke-dasharray:5 3}
svg.emq .return-head{fill:var(--reply)}
svg.emq .activation{fill:var(--accent);opacity:.35}
svg.emq .readout-head{font-weight:bold}
svg.emq .readout-value{font-weight:bold}
svg.emq text.verdict{font-weight:bold}
svg.emq text.ok,svg.emq text.value.ok{fill:var(--ok)}
svg.emq text.bad,svg.emq text.value.bad{fill:var(--bad)}
svg.emq text.value.na{fill:var(--muted)}
svg.emq .bar{fill:var(--bar)}
svg.emq .spread{stroke:var(--bar);stroke-width:2}
svg.emq .median{fill:var(--bar)}
svg.emq .dot{fill:var(--bg);stroke:var(--bar);stroke-width:1.5}
svg.emq .axis{stroke:var(--line)}
svg.emq .group-title{font-weight:bold}
svg.emq text.label,svg.emq text.rate{fill:var(--muted)}
`.trim();
