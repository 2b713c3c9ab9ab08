"""Stepping without a rerun: one component that holds a window of rendered steps and moves
through it in the browser.

Everything a step shows is known before the click (a trainer's records never change), so the
server renders the steps around the one shown with the page's own helpers (``explorer.ui.render``:
one display rule, no second renderer in the browser) and sends them ahead; the component moves
through them at once: Back, Step, +10, +100 (on the press, not the release), the slider (redrawn on every move of a drag), Play
and the keys (→ / ← a step, Shift+→ / Shift+← ten, Space play/pause, Home / End). It reports the
step shown as its state without waiting for an answer, at most one report in flight; the report
reruns the caller's fragment, whose callback moves the server's view there (so the address bar,
F5, other pages and the store stay true) and whose run sends the steps the component does not
hold yet, nearest first, before the user reaches the edge. Outrun the window and it says
"training…" until they arrive.

A step's panels travel as pieces (:func:`split_html`: a table row or a word row each), named by
their digest, and each piece is sent once: neighbouring steps share most of their rows, so a
window of hundreds of steps costs the wire little more than its distinct rows. The browser joins
an entry's pieces back into exactly the HTML the server rendered, and lays it over the panels
drawn node by node (the rows a step keeps are not made, styled and laid out again), from HTML
parsed ahead, after the frame that showed the step before.

What the server sends (``data``)::

    {"epoch": "…",       # what the entries were rendered for: a new one drops those held
     "gen": "…",         # changes when the server moves the view itself (Reset, Run to end, a link)
     "view": 12,         # the server's step, adopted when ``gen`` changed
     "last": 76,         # the last step the session reached (the slider's end)
     "done": false,      # training stopped: no step after ``final`` will come
     "final": null,      # then, the last step there is (the server may have trained past ``last``)
     "tail": "",         # said after "Step k of N trained · vocabulary V" once ``final`` is reached
     "ack": 9,           # the report this run answered
     "more": false,      # steps of the window are still to come: report again
     "playing": false, "speed": 1000,   # as last reported: taken up by a new page load
     "pieces": {"9f…": "<tr>…</tr>", …},
     "entries": [{"step": 12, "vocab": 268, "lead": "Step 12.", "text": "…", "tone": "info",
                  "final": true, "rows": [[["9f…", "03…"], …], …]}, …]}

and what the component reports (state ``at``)::

    {"step": 14, "seq": 10, "gen": "…", "epoch": "…", "held": [[0, 80]], "load": "…",
     "playing": false, "speed": 1000}

the step shown, a counter, the generation and epoch it holds, the ranges of steps it holds
(final entries only), its page load, and whether it plays at which speed (milliseconds a step:
a page left while playing plays on when it comes back, at the speed chosen). Where the script does not run (AppTest) the component
reports nothing and the caller's own widgets move the step.

The Train page is its first user (``train_view``); an entry is anything a caller renders for a
step, so the Class, Fairness and Home steppers can send theirs through the same component.

Following a room (the Class page's students, :class:`Follow`): the component polls the room's
step itself (``/room-rev``, ``what=step``, held until the step moves, as ``explorer.ui.follow``
does) and moves to it from the steps it holds, with no control of its own and no rerun; it
reports (and so reruns its fragment) only when the step, or one of the ``NEAR`` steps either
side, is not held: the server then sends the window around the room's step. Three more fields
of ``data`` say so: ``controls`` (false: no buttons, slider or keys), ``status`` (the caller's
status line, parts ``[text, bold]``) and ``follow`` (``{"url": …, "move": true}``; ``room``: the
room's step when the server ran).
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import streamlit as st

__all__ = [
    "Entry",
    "Follow",
    "browser",
    "rendered",
    "session_window",
    "Report",
    "Window",
    "split_html",
    "wanted",
    "held_steps",
    "parse_report",
    "stepper",
    "SPEEDS",
    "AHEAD",
]

AHEAD = 64  # steps sent (and trained) ahead of the one shown, and as many behind
NEAR = 8  # of those, the steps either side sent first
FAR = 600  # once those are held, steps further behind are sent too (a long scrub flows)
BATCH_S = 0.08  # a run renders entries for about this long, then asks for the rest next run
KEEP = 2_000  # the most entries the browser keeps (the farthest from the step shown go first)

# Play's speeds in the browser: label -> milliseconds a step
SPEEDS = {"slow (2 s)": 2000, "normal (1 s)": 1000, "fast (0.4 s)": 400, "fastest (0.04 s)": 40}

_JS = (
    r"""
const KEEP = __KEEP__, SPEEDS = __SPEEDS__, NEAR = __NEAR__;
function h(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
const fmt = (n) => Number(n).toLocaleString("en-US");
// Leaving for another page of the app. A stepper's report asks Streamlit to rerun its page's
// fragment with the page Streamlit's frontend still calls current; between a click on a link to
// another page and that page's first run, a report (or a late answer to one that draws the
// stepper and so sends the next) gets that rerun run *after* the new page's: Streamlit then
// switches its idea of the page back, forgets the new page's widget values, finds no fragment
// ("Couldn't find fragment") and the new page can stay blank. So a stepper reports only while
// the address is its own page's and no link away from that page was clicked in the last
// LEAVE_MS (a click that led nowhere: the stepper speaks again after that). One listener for
// all steppers: a stepper's element is made anew each time its page is opened.
const LEAVE_MS = 10000;  // longer than a page switch takes on a loaded server
const away = {from: null, at: 0};
const samePath = (p, q) => p.replace(/\/+$/, "") === q.replace(/\/+$/, "");
const steppers = new Set();
const live = () => { for (const s of steppers) if (!s.ui.root.isConnected) steppers.delete(s); return steppers; };
document.addEventListener("click", (ev) => {
  const a = ev.target instanceof Element ? ev.target.closest("a[href]") : null;
  if (!a || a.origin !== location.origin || a.target === "_blank" || ev.button !== 0) return;
  if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;  // a new tab or window: this one stays
  if (samePath(a.pathname, location.pathname)) return;  // this page again (other settings): a rerun of it
  away.from = location.pathname; away.at = performance.now();
}, true);
// leaving the tab: the last step shown reaches the server before it goes
window.addEventListener("pagehide", () => {
  for (const s of live()) {
    if (!(s.follow && s.follow.move) && s.reported !== s.shown) { s.inflight = 0; s.queued = false; s.report(true); }
  }
});
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") for (const s of live()) if (s.wake) s.wake();
});
// a press released off its button sends no click: the next click there is one of its own. Done
// at once, not on a timer: on a busy machine the browser runs input before timers, and a timer
// left by one quick click's release ran after the next click's press, which then stepped twice.
window.addEventListener("pointerup", (ev) => {
  for (const s of live()) {
    for (const [b] of s.presses) if (!b.contains(ev.target)) b.__pressed = false;
  }
}, true);
function build(box) {
  const root = h("div", {class: "sp-root", role: "group", "aria-label": "Step through the merges"}, box);
  const bar = h("div", {class: "sp-bar"}, root);
  const ui = {root, bar};
  const btn = (name, hint, keys, cls) => h("button", {type: "button", class: "sp-btn" + (cls || ""), title: hint,
                                                      "aria-keyshortcuts": keys}, bar, name);
  ui.back = btn("Back", "Back one step (←; Shift+← ten)", "ArrowLeft");
  ui.step = btn("Step", "One merge forward (→)", "ArrowRight", " sp-primary");
  ui.step10 = btn("+10", "Ten merges forward (Shift+→)", "Shift+ArrowRight");
  ui.step100 = btn("+100", "A hundred merges forward");
  ui.play = btn("Play", "Play or pause (Space)", "Space");
  ui.speed = h("select", {class: "sp-speed", "aria-label": "Play speed"}, bar);
  for (const [label, ms] of Object.entries(SPEEDS)) {
    const o = h("option", {value: ms}, ui.speed, label);
    if (ms === 1000) o.selected = true;
  }
  ui.slider = h("input", {type: "range", class: "sp-slider", min: 0, max: 0, step: 1, value: 0,
                          "aria-label": "Step shown", "aria-keyshortcuts": "Home End"}, bar);
  ui.status = h("div", {class: "sp-status"}, root);
  ui.sentence = h("div", {class: "sp-sentence", role: "status", "aria-live": "polite", "aria-atomic": "true"}, root);
  ui.panels = h("div", {class: "lv-panels sp-panels"}, root);
  return ui;
}
// Parsed ahead, after the frame that shows a step: the panels of the steps a press reaches next
// (a step either side, ten ahead), ready to lay over the drawn ones; each is used once (laying it
// over moves its nodes) and the oldest go first.
const parsed = new Map();  // html -> DocumentFragment
const PARSED = 12;
function fragment(html) {
  const ready = parsed.get(html);
  if (ready) { parsed.delete(html); return ready; }
  const t = document.createElement("template");
  t.innerHTML = html;
  return t.content;
}
function parseAhead(htmls) {
  for (const html of htmls) if (!parsed.has(html)) parsed.set(html, fragment(html));
  while (parsed.size > PARSED) parsed.delete(parsed.keys().next().value);
}
// A panel's new HTML laid over the one drawn, node by node: what stays keeps its boxes, and the
// browser styles and lays out only what changed. (Set whole, a step's three panels were ~300 new
// elements to style and lay out in the press: after a press the browser looks again at what is
// under the pointer, which lays the page out there and then, ~8 ms before the frame could show
// the step.) The result is the DOM the HTML parses to: a node is kept only where it has the same
// name and the same attributes in the same order, so it serialises as the server's HTML does.
function fits(a, b) {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  if (a.nodeType !== 1) return true;
  const x = a.attributes, y = b.attributes;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i].name !== y[i].name) return false;
  return true;
}
function morph(cur, next) {
  if (cur.nodeType !== 1) { if (cur.data !== next.data) cur.data = next.data; return; }
  const x = cur.attributes, y = next.attributes;
  for (let i = 0; i < y.length; i++) if (x[i].value !== y[i].value) x[i].value = y[i].value;
  morphChildren(cur, next);
}
function morphChildren(cur, next) {
  let c = cur.firstChild, n = next.firstChild;
  while (n) {
    const after = n.nextSibling;  // n may move into cur below
    if (c && fits(c, n)) { if (!c.isEqualNode(n)) morph(c, n); c = c.nextSibling; }
    else if (c) { const gone = c; c = c.nextSibling; cur.replaceChild(n, gone); }
    else cur.appendChild(n);
    n = after;
  }
  while (c) { const gone = c; c = c.nextSibling; gone.remove(); }
}
function panels(root, rows, end) {
  // one div a row, one cell a panel; a cell is drawn again only when its HTML (or the last step
  // reached) changed. The history's greyed rows past the step shown are only those reached: the
  // server trains a few steps ahead of the person, and those are not to be seen before stepped to.
  while (root.children.length > rows.length) root.lastChild.remove();
  rows.forEach((cells, r) => {
    const row = root.children[r] || h("div", {class: "lv-row"}, root);
    row.style.gridTemplateColumns = `repeat(${cells.length}, minmax(0, 1fr))`;
    while (row.children.length > cells.length) row.lastChild.remove();
    cells.forEach((html, c) => {
      const cell = row.children[c] || h("div", {class: "lv-cell"}, row);
      if (cell.__html === html && cell.__end === end) return;
      cell.__html = html; cell.__end = end;
      const next = fragment(html);
      for (const tr of next.querySelectorAll("table.bpe-hist tr.bpe-ahead")) {
        if (Number(tr.cells[0].textContent.replace(/,/g, "")) > end) tr.remove();
      }
      morphChildren(cell, next);
    });
  });
}
function make(component) {
  const s = {ui: build(component.parentElement), entries: new Map(), pieces: new Map(), epoch: null, gen: null,
             shown: 0, top: 0, last: 0, done: false, tail: "", playing: false, timer: null, seq: 0, inflight: 0,
             reported: null, dirty: false, draws: 0, load: String(Math.random()).slice(2), page: location.pathname,
             follow: null, room: null, status: null, polling: false, stopped: false, sent: null};
  const ui = s.ui;
  steppers.add(s);
  // this page is being left (see LEAVE_MS), or is not the one shown any more (the browser's Back)
  s.leaving = () => !samePath(location.pathname, s.page)
    || (away.from !== null && samePath(away.from, s.page) && performance.now() - away.at < LEAVE_MS);
  s.held = () => {  // the ranges of final entries held, [[lo, hi], ...]
    const steps = [...s.entries.values()].filter((e) => e.final).map((e) => e.step).sort((a, b) => a - b);
    const out = [];
    for (const k of steps) {
      if (out.length && out[out.length - 1][1] === k - 1) out[out.length - 1][1] = k; else out.push([k, k]);
    }
    return out;
  };
  s.report = (force) => {  // the step shown to the server; one report in flight (a late answer frees it after 1.5 s)
    if (!force && s.leaving()) { s.dirty = true; return; }
    if (s.inflight && performance.now() - s.inflight < 1500) { s.dirty = true; return; }
    s.dirty = false; s.inflight = performance.now(); s.reported = s.shown;
    const held = s.held();
    s.send("at", {step: s.shown, seq: ++s.seq, gen: s.gen, epoch: s.epoch, held, load: s.load,
                  playing: s.playing, speed: Number(ui.speed.value)});
  };
  // a move's report goes after the frame that shows the step (a frame, then a task): sending it
  // sets Streamlit's own rendering going (the rerun's state), which would otherwise hold that
  // frame back. A hidden tab draws no frames: the timer sends it there.
  s.soon = () => {
    if (s.queued) return;
    s.queued = true;
    const send = () => { if (s.queued) { s.queued = false; s.report(); } };
    requestAnimationFrame(() => setTimeout(send, 0));
    setTimeout(send, 250);
  };
  s.html = (e) => e.html || (e.html = e.rows.map((r) => r.map((cell) => cell.map((id) => s.pieces.get(id)).join(""))));
  s.draw = () => {
    const k = s.shown, e = s.entries.get(k), last = s.end();
    ui.slider.max = last; ui.slider.value = k;
    ui.slider.setAttribute("aria-valuetext", `step ${fmt(k)} of ${fmt(last)}`);
    const atEnd = s.done && k >= s.final;
    ui.step.disabled = ui.step10.disabled = ui.step100.disabled = atEnd;
    ui.back.disabled = k <= 0;
    ui.play.textContent = s.playing ? "Pause" : "Play";
    ui.play.disabled = atEnd && !s.playing;
    ui.root.dataset.step = k;
    ui.root.dataset.room = s.room === null ? "" : s.room;
    if (!e) {
      ui.root.dataset.drawn = "";
      ui.status.textContent = `Step ${fmt(k)} · training…`;
      ui.root.classList.add("sp-waiting");
      return;
    }
    ui.root.classList.remove("sp-waiting");
    ui.status.textContent = "";
    const tail = s.done && last >= s.final ? s.tail : "";  // "training stopped", once the person got there
    if (s.status) s.say(k);
    else ui.status.append("Step ", h("strong", {}, null, fmt(k)), ` of ${fmt(last)} trained · vocabulary ${fmt(e.vocab)}${tail}`);
    if (ui.sentence.__step !== k || ui.sentence.__text !== e.text) {
      ui.sentence.__step = k; ui.sentence.__text = e.text;
      ui.sentence.textContent = "";
      if (e.lead) ui.sentence.append(h("strong", {}, null, e.lead), " ");
      ui.sentence.append(e.text);
    }
    ui.sentence.className = "sp-sentence sp-" + e.tone;
    panels(ui.panels, s.html(e), last);
    s.ahead();
    ui.root.dataset.drawn = k;
    ui.root.dataset.draws = ++s.draws;
  };
  s.ahead = () => {
    if (s.parsing) return;
    s.parsing = true;
    requestAnimationFrame(() => setTimeout(() => {
      s.parsing = false;
      const drawn = new Set([...ui.panels.querySelectorAll(".lv-cell")].map((cell) => cell.__html));
      const near = [1, -1, 10].map((d) => s.entries.get(s.shown + d)).filter(Boolean);
      parseAhead(near.flatMap((e) => s.html(e).flat()).filter((html) => !drawn.has(html)));
    }, 0));
  };
  s.end = () => Math.max(s.last, s.top);  // the last step reached (the server's, or further here)
  // the caller's own status line: parts [text, bold], "{step}" the step shown, "{room}" the room's
  s.say = (k) => {
    ui.status.textContent = "";
    for (const [text, bold] of s.status) {
      const t = text === "{step}" ? fmt(k) : text === "{room}" ? fmt(s.room === null ? k : s.room) : text;
      if (bold) ui.status.append(h("strong", {}, null, t)); else ui.status.append(t);
    }
  };
  // Following a room (``follow``): the room's step, long-polled from the server (as follow.py's
  // poller does: held until the step moves; a hidden tab asks every 2 s, unheld), is drawn from
  // the steps held at once; the server is asked (a report) only for steps it does not hold yet.
  // With ``move`` false (a student stepping on its own) the room's step only goes in the status.
  s.needs = (k) => {
    for (let d = -NEAR; d <= NEAR; d++) {
      const j = k + d;
      if (j >= 0 && (j <= s.last || d === 0) && !s.entries.has(j)) return true;
    }
    return false;
  };
  s.toRoom = (k) => {
    s.room = k;
    if (!s.follow.move) { if (s.status) s.draw(); return; }
    s.shown = k; s.top = Math.max(s.top, k); s.reported = k; s.draw();
    if (s.needs(k)) s.soon();
  };
  s.poll = async () => {
    if (s.polling) return;
    s.polling = true;
    while (s.follow && !s.stopped && ui.root.isConnected) {
      const hidden = document.visibilityState === "hidden";
      const ctl = (s.abort = new AbortController());
      let pause = hidden ? 2000 : 0;
      try {
        const sep = s.follow.url.includes("?") ? "&" : "?";
        const wait = hidden || s.room === null ? "" : `${sep}what=step&seen=${s.room}`;
        const r = await fetch(s.follow.url + wait, {cache: "no-store", credentials: "same-origin", signal: ctl.signal});
        const j = await r.json();
        if (r.ok && Number.isInteger(j.step)) { if (j.step !== s.room && s.follow) s.toRoom(j.step); }
        else pause = 2000;  // gone or refused: the page's own watch (rev) says why
      } catch (e) { if (!ctl.signal.aborted) pause = 1000; /* the server restarting: ask again in a moment */ }
      if (pause) await new Promise((done) => { s.wake = done; setTimeout(done, pause); });
    }
    s.polling = false;
  };
  s.go = (k) => {
    const top = s.done ? s.final : s.end() + 100;
    k = Math.max(0, Math.min(top, Math.round(k)));
    if (k === s.shown) return;
    s.shown = k; s.top = Math.max(s.top, k); s.draw(); s.soon();
  };
  s.move = (k) => { s.pause(); s.go(k); };
  s.pause = () => { if (s.playing) { s.playing = false; clearTimeout(s.timer); s.draw(); s.soon(); } };
  s.tick = () => {
    s.timer = null;
    if (!s.playing || !ui.root.isConnected) { s.playing = false; return; }
    // still playing as far as the server knows (a return to the page resumes it); a click that
    // led nowhere lets it go on
    if (s.leaving()) { s.timer = setTimeout(s.tick, 250); return; }
    if (s.done && s.shown >= s.final) { s.pause(); return; }
    const next = s.entries.get(s.shown + 1), now = performance.now();
    // the next step not here yet: wait for it (no step is skipped), asking for it
    if (next) s.go(s.shown + 1); else if (!s.inflight) s.report();
    // on a steady beat: the time a step takes to draw is not added to the pause between steps
    s.due = next ? Math.max(now, (s.due || now) + Number(ui.speed.value)) : now + 30;
    s.timer = setTimeout(s.tick, Math.max(0, s.due - performance.now()));
  };
  s.toggle = () => {
    if (s.playing) { s.pause(); return; }
    if (s.done && s.shown >= s.final) return;
    s.playing = true; s.draw(); s.soon();
    s.due = performance.now() + Number(ui.speed.value); s.timer = setTimeout(s.tick, Number(ui.speed.value));
  };
  ui.speed.addEventListener("change", () => s.soon());
  // the step buttons act on the press (as the keys do on keydown): the step is drawn before the
  // release, not after it. The click that ends a press moves nothing more; a click with no press
  // before it (Enter or Space on a focused button, a screen reader) moves as any click does.
  const press = (button, by) => {
    button.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0 || button.disabled) return;
      button.__pressed = true; s.move(s.shown + by);
    });
    button.addEventListener("click", (ev) => {
      const pressed = button.__pressed;
      button.__pressed = false;
      if (!pressed || ev.detail === 0) s.move(s.shown + by);  // detail 0: Enter or Space, not a pointer
    });
  };
  s.presses = [[ui.back, -1], [ui.step, 1], [ui.step10, 10], [ui.step100, 100]];
  for (const [button, by] of s.presses) press(button, by);
  ui.play.addEventListener("click", () => s.toggle());
  ui.slider.addEventListener("input", () => s.move(Number(ui.slider.value)));
  ui.root.addEventListener("keydown", (ev) => {
    if (ui.bar.hidden || ev.target === ui.speed || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const by = ev.shiftKey ? 10 : 1;
    if (ev.key === "ArrowRight" || ev.key === "ArrowUp") s.move(s.shown + by);
    else if (ev.key === "ArrowLeft" || ev.key === "ArrowDown") s.move(s.shown - by);
    else if (ev.key === "Home") s.move(0);
    else if (ev.key === "End") s.move(s.done ? s.final : s.end());
    else if (ev.key === " " || ev.key === "Spacebar") s.toggle();
    else return;
    ev.preventDefault();  // the slider's own move, a button's click on Space, the page's scroll
  });
  return s;
}
function take(s, data) {
  if (data.epoch !== s.epoch) { s.epoch = data.epoch; s.entries.clear(); s.pieces.clear(); }
  for (const [id, html] of Object.entries(data.pieces || {})) s.pieces.set(id, html);
  for (const e of data.entries || []) {
    if (e.rows.every((r) => r.every((cell) => cell.every((id) => s.pieces.has(id))))) s.entries.set(e.step, e);
  }
  if (s.entries.size > KEEP) {
    const far = [...s.entries.keys()].sort((a, b) => Math.abs(b - s.shown) - Math.abs(a - s.shown));
    far.slice(0, s.entries.size - KEEP).forEach((k) => s.entries.delete(k));
  }
  s.last = data.last; s.done = data.done; s.final = data.final; s.tail = data.tail || "";
  s.status = data.status || null;
  s.ui.bar.hidden = data.controls === false;
  const was = s.follow;
  s.follow = data.follow || null;
  if (s.follow && s.follow.move) {
    // following: the server's step is news only when it changed since the server last said it
    // (a newer one may have come by the poll); the poll then asks from there (aborted and asked
    // again: the answer to "not 12 any more" is no use once the page shows 13)
    s.gen = data.gen;
    if (!was || data.view !== s.sent) {
      s.sent = data.view; s.room = data.view; s.shown = data.view; s.top = Math.max(s.top, data.view);
      s.reported = data.view;
      if (s.abort) s.abort.abort();
    }
    if (data.ack === s.seq) s.inflight = 0;
    return;
  }
  if (s.follow && data.room !== undefined && data.room !== s.sent) { s.sent = data.room; s.room = data.room; }
  if (s.gen === null && data.speed) s.ui.speed.value = String(data.speed);  // as the session last chose
  if (data.gen !== s.gen) {  // the server moved the view itself (or this is the first data)
    const resume = s.gen === null && data.playing;  // playing when the page was left: it goes on
    s.gen = data.gen; s.shown = data.view; s.top = data.view; s.reported = data.view;
    if (s.playing) { s.playing = false; clearTimeout(s.timer); }
    if (resume) { s.playing = true; s.due = 0; s.timer = setTimeout(s.tick, Number(s.ui.speed.value)); }
  }
  if (s.done && s.shown > s.final) s.shown = s.final;  // training stopped short of where the person went
  if (data.ack === s.seq) s.inflight = 0;
}
export default function (component) {
  const { data, parentElement, setStateValue } = component;
  const s = (parentElement.__stepper ??= make(component));
  s.send = setStateValue;
  const first = s.seq === 0;
  take(s, data || {});
  s.ui.root.dataset.held = JSON.stringify(s.held());  // the steps held, for tests and the benchmark
  s.draw();
  const following = s.follow && s.follow.move;
  const behind = following ? s.needs(s.shown) : s.reported !== s.shown;
  if (first || (!s.inflight && (s.dirty || behind || (data && data.more)))) s.soon();
  s.stopped = false;
  if (s.follow) s.poll();
  return () => { s.stopped = true; if (s.abort) s.abort.abort(); };
}
""".replace("__KEEP__", str(KEEP))
    .replace("__SPEEDS__", repr(SPEEDS).replace("'", '"'))
    .replace("__NEAR__", str(NEAR))
)

# its styles live in render.APP_CSS (sent once per page run, not with every step's element)
_component = st.components.v2.component("bpe_explorer_stepper", js=_JS, isolate_styles=False)

_PIECE = re.compile(r'(?=<tr[ >])|(?=<div class="bpe-row)')


def split_html(html: str) -> list[str]:
    """A panel's HTML in pieces that join back to it, cut before each table row and each word
    row: the pieces neighbouring steps share are sent once.

    >>> split_html('<div><table><tr><th>a</th></tr><tr class="x"><td>1</td></tr></table></div>')
    ['<div><table>', '<tr><th>a</th></tr>', '<tr class="x"><td>1</td></tr></table></div>']
    >>> "".join(split_html('<div class="bpe-row">a</div><div class="bpe-row">b</div>'))
    '<div class="bpe-row">a</div><div class="bpe-row">b</div>'
    """
    return [p for p in _PIECE.split(html) if p]


def _digest(piece: str) -> str:
    return hashlib.blake2b(piece.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


@functools.lru_cache(maxsize=8192)
def _named_pieces(cell: str) -> tuple[tuple[str, str], ...]:
    """A panel's pieces and their names, worked out once per panel: a room's steps are sent to
    every student's stepper, and a session's window sends the same steps again after a new look."""
    return tuple((_digest(piece), piece) for piece in split_html(cell))


@dataclass(frozen=True)
class Entry:
    """One step as the component draws it: the status line's vocabulary, the step's sentence (plain
    text: ``lead`` in bold, then ``text``; ``tone`` "info", "warning", or "hidden": announced to a
    screen reader, not shown, where the panels say it) and rows of panels (HTML
    from ``render``). ``final``: it will not change (a step whose look depends on training still
    to come is sent again)."""

    step: int
    vocab: int
    lead: str
    text: str
    tone: str
    rows: tuple[tuple[str, ...], ...]
    final: bool = True


@dataclass(frozen=True)
class Report:
    """What the component said last: the step it shows, for which generation and epoch, the
    steps it holds, and which report this is (``seq``) in which page load (``load``)."""

    step: int
    seq: int
    gen: str | None
    epoch: str | None
    held: tuple[tuple[int, int], ...]
    load: str
    playing: bool = False
    speed: int | None = None


def parse_report(value: object) -> Report | None:
    """The component's report, or None when there is none or it is malformed (the browser's
    message is not trusted further than its shape).

    >>> parse_report({"step": 3, "seq": 1, "gen": "g", "epoch": "e", "held": [[0, 9]], "load": "x"})
    Report(step=3, seq=1, gen='g', epoch='e', held=((0, 9),), load='x', playing=False, speed=None)
    >>> parse_report({"step": -1}), parse_report(None), parse_report({"step": 2, "held": "x"})
    (None, None, None)
    """
    if not isinstance(value, dict):
        return None
    step, seq, held = value.get("step"), value.get("seq"), value.get("held") or []
    if not (isinstance(step, int) and step >= 0 and isinstance(seq, int) and isinstance(held, list)):
        return None
    ranges = []
    for pair in held[:10_000]:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int) for v in pair)):
            return None
        ranges.append((pair[0], pair[1]))
    gen, epoch, speed = value.get("gen"), value.get("epoch"), value.get("speed")
    return Report(
        step,
        seq,
        gen if isinstance(gen, str) else None,
        epoch if isinstance(epoch, str) else None,
        tuple(ranges),
        str(value.get("load", "")),
        value.get("playing") is True,
        speed if isinstance(speed, int) and speed in SPEEDS.values() else None,
    )


def held_steps(ranges: Iterable[tuple[int, int]]) -> set[int]:
    """The steps the component holds, from its ranges.

    >>> sorted(held_steps([(0, 2), (5, 5)]))
    [0, 1, 2, 5]
    """
    return {k for lo, hi in ranges for k in range(lo, min(hi, lo + 100_000) + 1)}


def wanted(view: int, *, last: int, held: set[int], ahead: int = AHEAD, far: int = FAR, near: int = NEAR) -> list[int]:
    """The steps to send: the step shown, ``near`` steps forward then as many back (what the
    next clicks need first), the rest of the ``ahead`` steps forward, then back, then the steps
    further back up to ``far``; in runs, so that each step's neighbour was just rendered (the
    tokenizers of both are reused); never past ``last``, never one held.

    >>> wanted(5, last=8, held={5, 6}, ahead=3, far=4, near=1)
    [4, 7, 8, 3, 2, 1]
    >>> wanted(0, last=0, held=set())
    [0]
    """
    order = [view]
    order += [view + d for d in range(1, near + 1)] + [view - d for d in range(1, near + 1)]
    order += [view + d for d in range(near + 1, ahead + 1)] + [view - d for d in range(near + 1, ahead + 1)]
    order += [view - d for d in range(ahead + 1, far + 1)]
    return [k for k in order if 0 <= k <= last and k not in held]


@dataclass(frozen=True)
class Follow:
    """A room the component follows: ``url`` (``/room-rev`` with the page's credential) answers
    the room's ``step``, long-polled (``what=step``). ``move``: the component shows that step (a
    student following the teacher; ``view`` is the room's step as the server read it), or only
    says it in the status (``{room}``: a student stepping on its own)."""

    url: str
    step: int
    move: bool = True


@dataclass
class Window:
    """What the server knows of one component: the pieces the browser holds (those of the entries
    it reported holding, as far as this side remembers them) and each rendered step's pieces."""

    epoch: str = ""
    gen: str = ""
    moves: int = 0
    pieces_of: dict[int, tuple[str, ...]] = field(default_factory=dict)
    seen: tuple = ()  # what the generation was derived from last (see ``train_view``)

    def renew(self, *depends_on: object) -> bool:
        """Bring the epoch up to date with what the entries are drawn from (a trainer, a look, a
        lab: their reprs); another epoch drops the pieces known to be held (the browser's entries
        are another run's). Whether it changed.

        >>> w = Window()
        >>> w.pieces_of[0] = ("p",)
        >>> w.renew("trainer 1", "look"), w.pieces_of, w.renew("trainer 1", "look")
        (True, {}, False)
        """
        epoch = hashlib.blake2b(repr(depends_on).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        if epoch == self.epoch:
            return False
        self.epoch = epoch
        self.pieces_of.clear()
        return True

    def held_by(self, report: Report | None) -> set[int]:
        """The steps the component holds by its report, if the report is of this window's
        generation and epoch (else none: what it holds is to be sent again).

        >>> w = Window(epoch="e", gen="g")
        >>> r = Report(3, 1, "g", "e", ((0, 2),), "x")
        >>> sorted(w.held_by(r)), w.held_by(Report(3, 1, "old", "e", ((0, 2),), "x")), w.held_by(None)
        ([0, 1, 2], set(), set())
        """
        if report is None or report.gen != self.gen or report.epoch != self.epoch:
            return set()
        return held_steps(report.held)

    def pack(self, entries: Sequence[Entry], held: set[int]) -> tuple[dict[str, str], list[dict]]:
        """The entries as the component takes them, and the pieces they need that the browser
        does not hold yet (those of the steps it holds are known to be there)."""
        there: set[str] = set()
        for k in held:
            there.update(self.pieces_of.get(k, ()))
        pieces: dict[str, str] = {}
        out = []
        for e in entries:
            ids_of_rows = []
            names: list[str] = []
            for row in e.rows:
                cells = []
                for cell in row:
                    ids = []
                    for name, piece in _named_pieces(cell):
                        ids.append(name)
                        if name not in there:
                            pieces[name] = piece
                    names += ids
                    cells.append(ids)
                ids_of_rows.append(cells)
            if e.final:
                self.pieces_of[e.step] = tuple(names)
            out.append(
                {
                    "step": e.step,
                    "vocab": e.vocab,
                    "lead": e.lead,
                    "text": e.text,
                    "tone": e.tone,
                    "final": e.final,
                    "rows": ids_of_rows,
                }
            )
        return pieces, out


def stepper(
    *,
    key: str,
    window: Window,
    view: int,
    last: int,
    done: bool,
    final: int,
    tail: str,
    report: Report | None,
    entries: Sequence[Entry],
    held: set[int],
    more: bool,
    playing: bool = False,
    speed: int | None = None,
    on_report: Callable[[], None],
    controls: bool = True,
    status: Sequence[tuple[str, bool]] | None = None,
    follow: Follow | None = None,
) -> None:
    """Draw the stepper with these entries (and the pieces they need), the server's view and
    generation; ``on_report`` runs before the script when the component reports (read the report
    with ``parse_report(st.session_state[key]["at"])``). ``controls``: the buttons, slider and
    keys (none: the status and the panels only); ``status``: the caller's status line instead of
    "Step k of N trained" (plain-text parts, bold or not; "{step}" is the step shown, "{room}"
    the followed room's); ``follow``: the room whose step the component polls (:class:`Follow`)."""
    pieces, packed = window.pack(entries, held)
    data = {
        "epoch": window.epoch,
        "gen": window.gen,
        "view": view,
        "last": last,
        "done": done,
        "final": final if done else None,
        "tail": tail,
        "ack": report.seq if report else None,
        "more": more,
        "playing": playing,
        "speed": speed,
        "pieces": pieces,
        "entries": packed,
        "controls": controls,
        "status": [[text, bold] for text, bold in status] if status is not None else None,
        "follow": {"url": follow.url, "move": follow.move} if follow is not None else None,
        "room": follow.step if follow is not None else None,
    }
    _component(key=key, data=data, default={"at": None}, on_at_change=on_report, height="content")


W = TypeVar("W", bound=Window)


def rendered(steps: Sequence[int], make: Callable[[int], Entry], *, report: Report | None) -> list[Entry]:
    """The entries of ``steps``, in their order, for about ``BATCH_S`` of rendering (the rest
    next run). A page's first run (no report yet) renders the first alone, the step shown: the
    first screen comes first, the rest with the browser's first report.

    >>> make = lambda k: Entry(k, 0, "", "", "info", ())
    >>> [e.step for e in rendered([5, 6, 4, 7, 3], make, report=None)]
    [5]
    >>> report = parse_report({"step": 5, "seq": 1, "gen": "g", "epoch": "e", "held": [], "load": "x"})
    >>> [e.step for e in rendered([5, 6, 4, 7, 3], make, report=report)]  # well within BATCH_S
    [5, 6, 4, 7, 3]
    """
    if report is None:
        return [make(k) for k in steps[:1]]
    entries: list[Entry] = []
    start = time.perf_counter()
    for k in steps:
        entries.append(make(k))
        if time.perf_counter() - start > BATCH_S:
            break
    return entries


def session_window(key: str, kind: type[W]) -> W:
    """The session's window of one stepper, under ``key`` (made on first use)."""
    window = st.session_state.get(key)
    if not isinstance(window, kind):
        window = st.session_state[key] = kind()
    return window


def browser() -> bool:
    """Whether a browser is behind the session, so the component's script runs and reports;
    AppTest has none (no request headers), and a page's own buttons stand in."""
    return bool(st.context.headers)


def report_of(key: str) -> Report | None:
    """The component's last report (None before its script ran: AppTest, a first run)."""
    value = st.session_state.get(key)
    if value is None:
        return None
    try:
        return parse_report(value["at"])
    except (KeyError, TypeError):
        return None
