// The replay page's script: draws one embedded state at a time and verifies the deals.
// Plain DOM, no framework, no network. Every text from the data goes in as text nodes.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("replay-data").textContent);
  if (D.archive_json) { try { D.deal_proof = JSON.parse(D.archive_json).deal_proof; } catch (e) { D.deal_proof = {}; } }
  var S = D.states;
  var V = cribbageVerifier(D, S);
  // The checks against the player's own mail: only on a page that carries the deal proof.
  var C = typeof cribbageChecks === "function" ? cribbageChecks(D, V, cribbageVerifier) : null;
  var N = S.length;
  var cur = N - 1;
  var mode = D.seat === null || D.seat === undefined ? "all" : String(D.seat);
  var SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
  // Holes in a row of the board: fewer on a narrow screen, so the pegs stay large enough.
  var PER_ROW = window.innerWidth < 560 ? 20 : 30;
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // Text with its cards' red suits coloured: "5♥" becomes a red span.
  function words(parent, text) {
    var re = /(10|[2-9AJQK])([\u2665\u2666])/g, last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      parent.appendChild(el("span", "red", m[0]));
      last = re.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
    return parent;
  }

  function cardEl(ascii, who) {
    var suit = ascii.slice(-1), rank = ascii.slice(0, -1);
    var c = el("span", "card" + (suit === "H" || suit === "D" ? " red" : ""), rank + SUITS[suit]);
    c.setAttribute("data-card", ascii);
    if (who !== undefined) {
      var w = el("span", "who", D.names[who]);
      w.style.color = sideOf(who).colour;
      c.appendChild(w);
    }
    return c;
  }

  function backs(n) {
    var f = document.createDocumentFragment();
    for (var i = 0; i < n; i++) {
      var b = el("span", "card back", "?");
      b.setAttribute("aria-label", "hidden card");
      f.appendChild(b);
    }
    return f;
  }

  function sideOf(seat) { return D.sides[D.players === 4 ? seat % 2 : seat]; }

  // What the current view may see: everything, or one seat's own cards and the public.
  function sees(seat) { return mode === "all" || String(seat) === mode; }
  function eventText(ev) {
    if (ev.p === undefined || ev.p === null || sees(ev.p)) return ev.t;
    return ev.m || null;
  }

  // -- the peg board --------------------------------------------------------------------
  var rows = Math.ceil((D.target - 1) / PER_ROW);
  var lane = 11, band = D.sides.length * lane + 12, left = 34;
  function holeX(k) { return left + k * 10 + Math.floor(k / 5) * 6; }
  var width = holeX(PER_ROW - 1) + 30;
  function holeAt(side, n) {
    if (n >= D.target) n = D.target;
    if (n <= 0) return { x: n === 0 ? 16 : 8, y: 14 + side * lane };
    if (n === D.target) return { x: holeX(PER_ROW - 1) + 18, y: 14 + (rows - 1) * band + side * lane };
    var row = Math.floor((n - 1) / PER_ROW), k = (n - 1) % PER_ROW;
    return { x: holeX(k), y: 14 + row * band + side * lane };
  }
  function svg(tag, attrs) {
    var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function drawBoard() {
    var b = $("board");
    b.setAttribute("viewBox", "0 0 " + width + " " + (rows * band + 4));
    D.sides.forEach(function (side) {
      var s = side.side;
      [0, -1].forEach(function (n) {
        var p = holeAt(s, n);
        b.appendChild(svg("circle", { cx: p.x, cy: p.y, r: 2.2, class: "hole", id: "h" + s + "-s" + (n === 0 ? 0 : 1) }));
      });
      for (var n = 1; n <= D.target; n++) {
        var p = holeAt(s, n);
        b.appendChild(svg("circle", { cx: p.x, cy: p.y, r: n === D.target ? 3 : 1.7, class: "hole", id: "h" + s + "-" + n }));
      }
    });
    for (var r = 1; r < rows; r++) {  // row 0 begins with the start holes
      var t = svg("text", { x: 2, y: 14 + r * band + (D.sides.length - 1) * lane / 2 + 2.5, class: "label" });
      t.textContent = String(r * PER_ROW + 1);
      b.appendChild(t);
    }
    D.sides.forEach(function (side) {
      ["back", "front"].forEach(function (which) {
        b.appendChild(svg("circle", { r: 3.6, class: "peg " + which, fill: side.colour, id: "peg" + side.side + which[0], "data-side": side.side, "data-peg": which }));
      });
    });
  }
  function placePegs(st) {
    D.sides.forEach(function (side) {
      var s = side.side, front = st.f[s], back = st.b[s];
      var pf = holeAt(s, front), pb = holeAt(s, back === 0 && front === 0 ? -1 : (back === 0 ? -1 : back));
      var f = $("peg" + s + "f"), bk = $("peg" + s + "b");
      f.setAttribute("cx", pf.x); f.setAttribute("cy", pf.y); f.setAttribute("data-pos", Math.min(front, D.target));
      bk.setAttribute("cx", pb.x); bk.setAttribute("cy", pb.y); bk.setAttribute("data-pos", Math.min(back, D.target));
    });
  }

  // -- one state ------------------------------------------------------------------------
  var handStart = {};
  S.forEach(function (st, i) { if (!(st.h in handStart)) handStart[st.h] = i; });
  var hands = Object.keys(handStart).map(Number).sort(function (a, b) { return a - b; });

  function render() {
    var st = S[cur];
    $("slider").value = cur;
    $("hand").value = st.h;
    $("where").textContent = "step " + cur + " of " + (N - 1) + " · hand " + st.h;
    document.body.setAttribute("data-step", cur);
    placePegs(st);
    var sc = $("scores");
    sc.textContent = "";
    D.sides.forEach(function (side) {
      var d = el("div", "side");
      d.style.borderColor = side.colour;
      d.setAttribute("data-side", side.side);
      d.appendChild(el("span", "", side.name + " "));
      var f = el("b", "front", st.f[side.side]);
      d.appendChild(f);
      d.appendChild(el("span", "small", " (back peg " + st.b[side.side] + ")"));
      sc.appendChild(d);
    });
    var mv = $("move");
    mv.textContent = "";
    if (st.mv) {
      var t = st.mv.m && !sees(st.mv.s) ? st.mv.m : st.mv.t;
      words(mv, "Step " + cur + ": " + t);
    } else {
      mv.textContent = "Step 0: the deal";
    }
    var ul = $("step");
    ul.textContent = "";
    st.ev.forEach(function (ev) {
      var text = eventText(ev);
      if (text === null) return;
      var li = words(el("li", ev.pts ? "score" : ""), text);
      li.setAttribute("data-kind", ev.k);
      ul.appendChild(li);
    });
    if (cur === N - 1 && D.result) ul.appendChild(el("li", "score", "Result: " + D.result));
    drawTable(st);
    var items = $("moves").querySelectorAll("li[data-step]");
    for (var i = 0; i < items.length; i++) {
      var on = Number(items[i].getAttribute("data-step")) === cur;
      items[i].classList.toggle("now", on);
      if (on) {
        var list = $("moves"), top = items[i].offsetTop - list.offsetTop;
        if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 20) list.scrollTop = top - 40;
      }
    }
  }

  function spot(title, id) {
    var d = el("div", "spot");
    if (id) d.id = id;
    d.appendChild(el("h3", "", title));
    var c = el("div", "cards");
    d.appendChild(c);
    return [d, c];
  }

  // The cards a seat's hand (or crib) showed in this step, if it was shown in it.
  function shownIn(st, seat, what) {
    var found = null;
    st.ev.forEach(function (ev) {
      if ((ev.k === "show" || ev.k === "reveal" || ev.k === "claim") && ev.s === seat && ev.c && (ev.w || "hand") === what) found = ev.c;
    });
    return found;
  }

  // Muggins games: the cards of a hand (or crib) counted earlier in this show, which
  // stay face up. The search starts after the hand's deal step, whose events may still
  // tell the previous hand's show.
  function countedBefore(seat, what) {
    var found = null;
    for (var i = handStart[S[cur].h] + 1; i < cur; i++) {
      S[i].ev.forEach(function (ev) {
        if ((ev.k === "reveal" || ev.k === "claim") && ev.s === seat && ev.c && ev.w === what) found = ev.c;
      });
    }
    return found;
  }

  function drawTable(st) {
    var tb = $("table");
    tb.textContent = "";
    for (var seat = 0; seat < D.players; seat++) {
      var sp = spot(D.names[seat], "seat-" + seat);
      var h3 = sp[0].firstChild;
      h3.style.color = sideOf(seat).colour;
      if (st.d === seat) h3.appendChild(el("span", "dealer", "dealer"));
      if (st.turn.indexOf(seat) >= 0 && st.ph !== "game_over") sp[0].classList.add("turn");
      var hold = st.hold[seat], shown = shownIn(st, seat, "hand");
      if (shown && (typeof hold === "number" ? hold : hold.length) === 0) {
        shown.forEach(function (c) { sp[1].appendChild(cardEl(c)); });
        sp[1].appendChild(el("span", "small", "shown"));
      } else if (st.kept && (typeof hold === "number" ? hold : hold.length) === 0) {
        var kept = st.kept[seat], counted = countedBefore(seat, "hand");
        if (st.sh && st.sh[0] === seat && st.sh[1] === "hand") {
          st.sh[2].forEach(function (c) { sp[1].appendChild(cardEl(c)); });
          sp[1].appendChild(el("span", "small", "being counted"));
        } else if (counted) {
          counted.forEach(function (c) { sp[1].appendChild(cardEl(c)); });
          sp[1].appendChild(el("span", "small", "counted"));
        } else if (typeof kept === "number") sp[1].appendChild(backs(kept));
        else if (!sees(seat)) sp[1].appendChild(backs(kept.length));
        else kept.forEach(function (c) { sp[1].appendChild(cardEl(c)); });
      } else if (typeof hold === "number") sp[1].appendChild(backs(hold));
      else if (!sees(seat)) sp[1].appendChild(backs(hold.length));
      else hold.forEach(function (c) { sp[1].appendChild(cardEl(c)); });
      tb.appendChild(sp[0]);
    }
    var crib = spot("Crib (" + D.names[st.d] + ")", "crib"), shownCrib = shownIn(st, st.d, "crib");
    if (st.sh && st.sh[1] === "crib") shownCrib = st.sh[2];
    if (shownCrib && st.ph !== "discard") shownCrib.forEach(function (c) { crib[1].appendChild(cardEl(c)); });
    else if (typeof st.crib === "number") crib[1].appendChild(backs(st.crib));
    else if (mode !== "all") crib[1].appendChild(backs(st.crib.length));
    else st.crib.forEach(function (c) { crib[1].appendChild(cardEl(c)); });
    tb.appendChild(crib[0]);
    var starter = spot("Starter", "starter");
    if (st.st) starter[1].appendChild(cardEl(st.st));
    else starter[1].appendChild(el("span", "small", "not turned yet"));
    tb.appendChild(starter[0]);
    var count = spot("The count", "count");
    count[1].appendChild(el("span", "count", st.cnt));
    st.cc.forEach(function (sc) { count[1].appendChild(cardEl(sc[1], sc[0])); });
    tb.appendChild(count[0]);
  }

  function buildMoves() {
    var ol = $("moves"), hand = 0;
    S.forEach(function (st, i) {
      if (st.mv) {
        var t = st.mv.m && !sees(st.mv.s) ? st.mv.m : st.mv.t;
        var pts = 0, shows = [];
        st.ev.forEach(function (ev) {
          if (!ev.pts || eventText(ev) === null) return;
          if (ev.k === "show" || ev.k === "claim") shows.push((ev.w === "crib" ? "crib " : D.names[ev.s] + " ") + ev.pts);
          else pts += ev.pts;
        });
        var extra = [];
        if (pts) extra.push("+" + pts);
        if (shows.length) extra.push("the show: " + shows.join(", "));
        var li = words(el("li"), t + (extra.length ? " (" + extra.join("; ") + ")" : ""));
        li.setAttribute("data-step", i);
        li.value = i;
        li.addEventListener("click", function () { go(i); });
        ol.appendChild(li);
      }
      if (st.h !== hand) {
        hand = st.h;
        ol.appendChild(el("li", "hand", "Hand " + hand + " — " + D.names[st.d] + " deals"));
      }
    });
  }

  function go(i) {
    cur = Math.max(0, Math.min(N - 1, i));
    render();
  }
  function prevHand() {
    var st = S[cur], start = handStart[st.h];
    if (cur > start) go(start);
    else {
      var k = hands.indexOf(st.h);
      go(k > 0 ? handStart[hands[k - 1]] : 0);
    }
  }
  function nextHand() {
    var k = hands.indexOf(S[cur].h);
    go(k + 1 < hands.length ? handStart[hands[k + 1]] : N - 1);
  }

  function setup() {
    drawBoard();
    var hs = $("hand");
    hands.forEach(function (h) {
      var o = el("option", "", String(h));
      o.value = String(h);
      hs.appendChild(o);
    });
    hs.addEventListener("change", function () { go(handStart[Number(hs.value)]); });
    var vs = $("view");
    var options = D.hidden ? [String(D.seat)] : ["all"].concat(D.names.map(function (_, i) { return String(i); }));
    options.forEach(function (v) {
      var o = el("option", "", v === "all" ? "everything" : D.names[Number(v)] + "'s view");
      o.value = v;
      vs.appendChild(o);
    });
    vs.value = mode;
    vs.disabled = options.length < 2;
    vs.addEventListener("change", function () {
      mode = vs.value;
      $("moves").textContent = "";
      buildMoves();
      render();
    });
    $("first").addEventListener("click", function () { go(0); });
    $("prev").addEventListener("click", function () { go(cur - 1); });
    $("next").addEventListener("click", function () { go(cur + 1); });
    $("last").addEventListener("click", function () { go(N - 1); });
    $("prevhand").addEventListener("click", prevHand);
    $("nexthand").addEventListener("click", nextHand);
    $("slider").addEventListener("input", function () { go(Number($("slider").value)); });
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var keys = {
        ArrowLeft: function () { go(cur - 1); },
        ArrowRight: function () { go(cur + 1); },
        Home: function () { go(0); },
        End: function () { go(N - 1); },
        PageUp: prevHand,
        PageDown: nextHand
      };
      if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
    });
    buildMoves();
    render();
    if (C) C.setup();
    V.verifyDeals().then(report, function (err) { report({ state: "error", text: "the deals could not be checked here: " + err }); });
  }

  function report(r) {
    var v = $("verify");
    v.setAttribute("data-state", r.state);
    v.textContent = r.text;
  }

  // For the tests: the SHA-256 against Python's hashlib, the key and the shuffle against
  // the specification's vectors.
  window.cribbageReplay = { sha256js: V.sha256js, derive: V.derive, shuffled: V.shuffled };
  // And the reading of saved mail against Python's email package.
  if (C) window.cribbageMail = { parseMessage: C.parseMessage, splitMbox: C.splitMbox, checkMail: C.checkMail };
  setup();
})();
