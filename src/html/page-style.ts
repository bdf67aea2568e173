/** The page's style sheet: readable light and dark, and on paper (light, no clipped tables). */

const LIGHT = `--bg:#ffffff;--fg:#1c2127;--muted:#5b6570;--rule:#d0d7de;--band:#f3f5f7;--code:#f3f5f7;--ok:#166c2e;--ok-bg:#e6f4ea;--bad:#b42318;--bad-bg:#fde8e7;`;
const DARK = `--bg:#0f1216;--fg:#e6e9ec;--muted:#9aa5b1;--rule:#343c45;--band:#1a1f25;--code:#1a1f25;--ok:#57d17a;--ok-bg:#143321;--bad:#ff7b72;--bad-bg:#3d1614;`;

export const PAGE_STYLE = `
:root{${LIGHT}color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{${DARK}}}
@media print{:root{${LIGHT}color-scheme:light}body{font-size:10pt}section{break-inside:avoid}svg{break-inside:avoid}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI","DejaVu Sans",sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:1.6em;margin:0 0 .2em}
h2{font-size:1.2em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--rule)}
p.lede,p.note{color:var(--muted);margin:.2em 0 .8em;overflow-wrap:anywhere}
code,pre,td.num,td.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace}
pre{background:var(--code);border:1px solid var(--rule);border-radius:6px;padding:10px 12px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.4em 0}
#command{overflow-x:auto}
#command .arg{white-space:nowrap}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.85em;width:100%}
th,td{border:1px solid var(--rule);padding:3px 6px;text-align:left;vertical-align:bottom}
th{background:var(--band);font-weight:600}
td.num{text-align:right}
#trials-table,#race-table{width:auto;min-width:50%}
#trials-table td{white-space:nowrap}
#race-table td[data-field=queue]{overflow-wrap:anywhere}#race-table td[data-field=node]{white-space:nowrap}
th[scope=row]{white-space:nowrap}
.total{font-weight:700;border-left:2px solid var(--rule)}
td.anomaly.ok{color:var(--ok);background:var(--ok-bg)}
td.anomaly.bad{color:var(--bad);background:var(--bad-bg);font-weight:700}
td.anomaly.na{color:var(--muted)}
ul.readouts{padding-left:1.2em}
figure{margin:.6em 0;overflow-x:auto}
figure svg{display:block;max-width:100%;height:auto;border:1px solid var(--rule);border-radius:6px}
@media screen and (max-width:700px){figure svg{max-width:none}figure::before{content:'Wider than the screen: scroll it sideways';display:block;font-size:.8em;color:var(--muted)}}
figcaption{color:var(--muted);font-size:.9em;margin-top:.3em}
details{margin:.4em 0 .8em}details summary{cursor:pointer;color:var(--muted)}details li{margin:.15em 0;overflow-wrap:anywhere}details .reply,details .muted{color:var(--muted)}
@media print{td.anomaly,th,pre{-webkit-print-color-adjust:exact;print-color-adjust:exact}.scroll{overflow:visible}figure{overflow:visible}figure svg{max-width:100%}}
`.trim();
