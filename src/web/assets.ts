import { createHash } from 'node:crypto';
import { Router, type Request, type Response } from 'express';

// The pages' only stylesheet and only script, served by us (no CDN, no inline code: the
// Content-Security-Policy allows 'self' only). Kept as strings so that the compiled build
// (dist/) needs no extra files copied next to it.

const STYLE = `
:root { --ink: #1d2430; --muted: #5b6472; --line: #d9dee5; --bg: #f6f7f9; --card: #fff;
  --accent: #0b5cad; --accent-ink: #fff; --danger: #b42318; --ok-bg: #e8f5ec; --ok-line: #9fd3ae;
  --warn-bg: #fff6e0; --warn-line: #f0c36d; --err-bg: #fdecea; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
header.site { background: var(--card); border-bottom: 1px solid var(--line); }
header.site .bar, main, footer.site { max-width: 58rem; margin: 0 auto; padding: 0 1rem; }
header.site .bar { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center; justify-content: space-between; min-height: 3.25rem; }
.brand { font-weight: 700; color: var(--ink); text-decoration: none; }
header.site nav { display: flex; gap: 1rem; }
main { padding-top: 1.5rem; padding-bottom: 2rem; }
footer.site { color: var(--muted); font-size: .875rem; padding-bottom: 2rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .5rem; }
h2 { font-size: 1.2rem; margin: 0 0 .75rem; }
.lead { color: var(--muted); margin-top: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.25rem; margin: 0 0 1.25rem; }
.grid-2 { display: grid; gap: 1.25rem; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); }
.grid-2 > .card { margin: 0; }
.field { margin: 0 0 1rem; }
.field label { display: block; font-weight: 600; margin-bottom: .25rem; }
.field .hint { margin: 0 0 .35rem; color: var(--muted); font-size: .875rem; }
input[type=email], input[type=password], input[type=text] { width: 100%; font: inherit; padding: .6rem .7rem; border: 1px solid #aab3bf; border-radius: 6px; background: #fff; }
input:focus, button:focus, a:focus { outline: 3px solid #8cbcf0; outline-offset: 1px; }
.field.has-error input { border-color: var(--danger); }
.field-error, .form-error { color: var(--danger); font-weight: 600; margin: .35rem 0 0; font-size: .925rem; }
.form-error { background: var(--err-bg); border-radius: 6px; padding: .6rem .75rem; margin: 0 0 1rem; }
button, .button { font: inherit; font-weight: 600; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-ink); padding: .55rem 1rem; border-radius: 6px; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; color: var(--accent); padding: 0; font-weight: 400; text-decoration: underline; }
.inline { display: inline; margin: 0; }
.actions { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; margin: 0 0 1.25rem; }
.actions p { margin: 0; }
.notice { background: var(--ok-bg); border: 1px solid var(--ok-line); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1.25rem; }
.new-key { background: var(--warn-bg); border: 1px solid var(--warn-line); border-radius: 10px; padding: 1.25rem; margin: 0 0 1.25rem; }
.new-key .warning { font-weight: 600; }
.key-box { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .5rem 0 .75rem; }
.key-box code { flex: 1 1 18rem; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .6rem .7rem; overflow-wrap: anywhere; user-select: all; font-size: .95rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; overflow-wrap: anywhere; }
table.keys code { white-space: nowrap; }
pre { background: #1d2430; color: #f3f5f8; padding: .75rem 1rem; border-radius: 8px; overflow-x: auto; font-size: .85rem; }
table.keys { width: 100%; border-collapse: collapse; font-size: .95rem; }
table.keys th, table.keys td { text-align: left; padding: .55rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.keys th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); }
.num { font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.tier { display: inline-block; font-size: .8rem; font-weight: 600; padding: .05rem .5rem; border-radius: 999px; background: #e7eef8; color: #17406b; }
@media (max-width: 40rem) {
  table.keys thead { display: none; }
  table.keys, table.keys tbody, table.keys tr, table.keys td { display: block; width: 100%; }
  table.keys tr { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; margin-bottom: .75rem; }
  table.keys td { border: none; padding: .2rem 0; display: flex; justify-content: space-between; gap: 1rem; }
  table.keys td::before { content: attr(data-label); color: var(--muted); font-size: .85rem; }
  /* The market table's sort links stay, as a row of links above the cards (an outside probe of
     stop 50: sorting went with the hidden header on phones). */
  table.market thead { display: block; }
  table.market thead tr { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: baseline; border: none; padding: 0; margin: 0 0 .5rem; }
  table.market thead tr::before { content: "Sort by"; color: var(--muted); font-size: .85rem; }
  table.market thead th { border: none; padding: 0; }
  table.market thead th.nosort { display: none; }
}
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: .75rem; margin: 1rem 0; padding: 0; }
.facts div { background: var(--bg); border-radius: 8px; padding: .6rem .75rem; }
.facts dt { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
.facts dd { margin: 0; font-weight: 600; }
.price { font-size: 1.5rem; font-weight: 700; margin: .25rem 0 0; }
.photos { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .75rem; margin: 1rem 0; }
.photos img { width: 100%; aspect-ratio: 4 / 3; object-fit: cover; border-radius: 8px; background: var(--line); }
details summary { cursor: pointer; font-weight: 600; }
.chart-card { margin: 0; }
.grid-2 + details { margin-top: 1.25rem; }
.chart-card figcaption { font-size: .9rem; color: var(--muted); margin-bottom: .5rem; }
.chart-card figcaption strong { color: var(--ink); }
svg.chart { display: block; width: 100%; height: auto; }
svg.chart .grid { stroke: var(--line); stroke-width: 1; }
svg.chart text { font: 13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: var(--muted); }
svg.chart text.period { fill: var(--ink); }
svg.chart text.n { font-size: 11px; }
svg.chart .band { fill: #cfe0f3; }
svg.chart .band-bar { stroke: #cfe0f3; stroke-width: 12; }
svg.chart text.year { font-size: 11px; font-weight: 600; }
svg.chart .line { fill: none; stroke: var(--accent); stroke-width: 2.5; stroke-linejoin: round; }
svg.chart .dot { fill: var(--accent); }
svg.chart .dot.low { fill: #fff; stroke: var(--accent); stroke-width: 2; }
.low { display: inline-block; font-size: .75rem; font-weight: 600; padding: 0 .4rem; border-radius: 999px; background: var(--warn-bg); border: 1px solid var(--warn-line); color: #6b4a00; }
table.market tr.current td { background: #eef4fb; }
table.market th a { color: inherit; text-decoration: none; }
table.market th a:hover { text-decoration: underline; }
`;

const COPY_KEY_JS = `// Copy buttons: a button with data-copy="<id>" copies that element's text. Without
// JavaScript the button stays hidden and the key can still be selected and copied by hand.
(function () {
  var buttons = document.querySelectorAll('button[data-copy]');
  Array.prototype.forEach.call(buttons, function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    var status = document.getElementById(button.getAttribute('data-status'));
    if (!target) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var text = target.textContent.trim();
      var done = function (message) { if (status) status.textContent = message; };
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(target);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done('Copied to the clipboard.'); }, function () { select(); done('Selected: press Ctrl+C (or Cmd+C) to copy.'); });
      } else {
        select();
        done('Selected: press Ctrl+C (or Cmd+C) to copy.');
      }
    });
  });
})();
`;

function fingerprint(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 10);
}

// Content-addressed names: a page always asks for the version it was written for, so the
// files can be cached for a year.
export const ASSETS_MOUNT = '/web';
const STYLE_FILE = `/style.${fingerprint(STYLE)}.css`;
const COPY_SCRIPT_FILE = `/copy-key.${fingerprint(COPY_KEY_JS)}.js`;
export const STYLE_PATH = ASSETS_MOUNT + STYLE_FILE;
export const COPY_SCRIPT_PATH = ASSETS_MOUNT + COPY_SCRIPT_FILE;

// Mounted at ASSETS_MOUNT.
export function assetsRouter(): Router {
  const r = Router();
  const serve = (body: string, type: string) => (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.type(type).send(body);
  };
  r.get(STYLE_FILE, serve(STYLE, 'text/css'));
  r.get(COPY_SCRIPT_FILE, serve(COPY_KEY_JS, 'application/javascript'));
  return r;
}
