/** The board page's style sheet: system fonts, no external resources, readable when narrow. */
export const BOARD_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #fff;
  --panel: #f6f8fa; --add: #dafbe1; --add-fg: #116329; --del: #ffebe9; --del-fg: #a40e26;
  --warn: #9a6700; --bad: #cf222e; --ok: #1a7f37; --focus: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: end; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.top h1 { font-size: 1.25rem; margin: 0 auto 0 0; }
main { padding: 1rem; max-width: 110rem; margin: 0 auto; }
label { font-size: .85rem; color: var(--muted); display: flex; flex-direction: column; gap: .15rem; }
input, select, textarea, button { font: inherit; }
input, select, textarea { padding: .3rem .4rem; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: var(--fg); }
button { padding: .3rem .75rem; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: var(--fg); cursor: pointer; }
button:hover:not(:disabled) { background: var(--panel); }
button:disabled { opacity: .55; cursor: not-allowed; }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.inline { flex-direction: row; align-items: center; gap: .4rem; }
.live { font-size: .85rem; color: var(--muted); }
.live[data-state=live]::before { content: "\\25CF "; color: var(--ok); }
.muted { color: var(--muted); }
.mono, code, .hash { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .85em; }
.hash { word-break: break-all; }
.banner { border: 2px solid var(--line); border-radius: 6px; padding: .6rem .9rem; margin: 0 0 1rem; }
.banner.tampered { border-color: var(--bad); background: var(--del); }
.banner.tampered strong.stamp { color: var(--bad); font-size: 1.2rem; letter-spacing: .05em; }
.banner.verified strong.stamp { color: var(--ok); }
.error { border-left: 4px solid var(--bad); background: var(--del); padding: .5rem .75rem; margin: .5rem 0; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 3px; font-size: .8rem; font-weight: 600; border: 1px solid currentColor; }
.badge.bad { color: var(--bad); background: var(--del); }
.badge.ok { color: var(--ok); }
.alert-indicator { margin-left: .5rem; cursor: help; }
.git-setup-warning { flex-basis: 100%; border: 1px solid var(--bad); border-left-width: 4px; border-radius: 4px; background: var(--del); color: var(--bad); padding: .5rem .75rem; overflow-wrap: anywhere; }
.git-setup-warning ul { margin: .25rem 0; padding-left: 1.25rem; font-family: ui-monospace, monospace; font-size: .85rem; }
.git-setup-warning p { margin: 0; color: var(--fg); }
.toast { position: fixed; top: 1rem; right: 1rem; max-width: 28rem; z-index: 10; padding: .75rem 2rem .75rem 1rem; border: 1px solid var(--bad); border-left-width: 4px; border-radius: 4px; background: var(--del); color: var(--bad); box-shadow: 0 2px 8px rgba(0,0,0,.2); }
.toast button { position: absolute; top: .25rem; right: .4rem; border: 0; background: none; font-size: 1.1rem; cursor: pointer; color: inherit; }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(13rem, 1fr)); gap: .75rem; align-items: start; }
.column { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .5rem; min-width: 0; }
.column h2 { font-size: .95rem; margin: .1rem .2rem .5rem; display: flex; justify-content: space-between; }
.column ol { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: .4rem; }
.card { display: block; width: 100%; text-align: left; background: #fff; border: 1px solid var(--line); border-radius: 5px; padding: .45rem .55rem; overflow-wrap: anywhere; }
.card[aria-pressed=true] { border-color: var(--focus); box-shadow: 0 0 0 1px var(--focus); }
.card .id { font-weight: 600; word-break: break-all; }
.card .meta { font-size: .82rem; color: var(--muted); display: block; }
.card .gate { font-size: .82rem; color: var(--bad); display: block; }
.card .verdict { font-size: .82rem; display: block; }
.card .attempt { font-size: .8rem; color: var(--muted); }
.plus { color: var(--add-fg); } .minus { color: var(--del-fg); }
.outline { margin-top: .75rem; background: var(--panel); border: 1px dashed var(--line); border-radius: 6px; padding: .5rem; }
.outline h2 { font-size: .95rem; margin: .1rem .2rem .5rem; }
.outline ol { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .4rem; }
.attempts { list-style: none; margin: 0; padding: 0; display: grid; gap: .5rem; }
.run-status { font-weight: 600; }
.run-status[data-run-status=failed], .run-status[data-run-status=interrupted] { color: var(--bad); }
.detail { margin-top: 1.25rem; border-top: 1px solid var(--line); padding-top: .75rem; display: grid; gap: 1rem; }
.detail h2 { margin: 0; font-size: 1.1rem; }
.back-to-card { margin-top: .3rem; font-size: .82rem; }
.task-title { overflow-wrap: anywhere; }
.detail h3 { margin: 0 0 .4rem; font-size: 1rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; }
.actions textarea { min-width: min(26rem, 100%); min-height: 2.2rem; }
.receipt { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin-top: .5rem; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .75rem; margin: 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; min-width: 0; }
.files { list-style: none; padding: 0; margin: 0; border: 1px solid var(--line); border-radius: 6px; }
.files > li + li { border-top: 1px solid var(--line); }
.file-toggle { width: 100%; display: flex; flex-wrap: wrap; gap: .25rem .75rem; border: 0; border-radius: 0; background: var(--panel); text-align: left; }
.file-toggle .path { font-weight: 600; word-break: break-all; margin-right: auto; }
.file-toggle::before { content: "\\25B8"; } .file-toggle[aria-expanded=true]::before { content: "\\25BE"; }
.diff-body { overflow-x: auto; }
.lines { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .8rem; line-height: 1.4; }
.lines .l { white-space: pre-wrap; overflow-wrap: anywhere; padding-left: 14ch; text-indent: -14ch; }
.lines .l::before { content: attr(data-ln) "  "; white-space: pre; color: var(--muted); user-select: none; }
.lines .l.add { background: var(--add); color: var(--add-fg); }
.lines .l.del { background: var(--del); color: var(--del-fg); }
.lines .l.hunk { background: #ddf4ff; color: var(--muted); padding-left: .4rem; text-indent: 0; }
.lines .l.hunk::before { content: none; }
.lines .l.meta { color: var(--muted); font-style: italic; }
pre.evidence { background: var(--panel); border: 1px solid var(--line); padding: .5rem; overflow: auto; max-height: 20rem; font-size: .8rem; }
@media (max-width: 40rem) { header.top { align-items: stretch; flex-direction: column; } main { padding: .5rem; } }
`;
