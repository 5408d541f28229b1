// The replay page's deal checks (docs/pbem-deal-1.md section 8, docs/pbem-deal-3.md), in
// the order pbem verify and docs/pbem_deal_verify.py make them. One verifier per archive:
// D is its data (players, computer, seed, first_dealer, names, deal_proof, schema and the
// archive's own text), S the states the page shows of it ([] for an archive given to
// the page, such as the game this one follows: its board is not drawn, so not checked).
// Loaded before replay.js (pbem.render.replay joins them into the page's one script).
var cribbageVerifier = function (D, S) {
  "use strict";
  var enc = new TextEncoder();
  function concat(parts) {
    var n = 0;
    parts.forEach(function (p) { n += p.length; });
    var out = new Uint8Array(n), at = 0;
    parts.forEach(function (p) { out.set(p, at); at += p.length; });
    return out;
  }
  function sha256(bytes) {
    if (!SUBTLE) return Promise.resolve(sha256js(bytes));
    return crypto.subtle.digest("SHA-256", bytes).then(function (b) { return new Uint8Array(b); });
  }
  // SHA-256 (FIPS 180-4) for a browser or viewer without crypto.subtle.
  var SUBTLE = typeof crypto !== "undefined" && !!crypto.subtle;
  var K256 = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ];
  function rotr(x, n) { return (x >>> n) | (x << (32 - n)); }
  function sha256js(bytes) {
    var len = bytes.length, n = ((len + 9 + 63) >> 6) << 6;
    var m = new Uint8Array(n);
    m.set(bytes);
    m[len] = 0x80;
    var dv = new DataView(m.buffer);
    dv.setUint32(n - 8, Math.floor(len / 536870912), false);
    dv.setUint32(n - 4, (len * 8) >>> 0, false);
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var w = new Int32Array(64);
    for (var off = 0; off < n; off += 64) {
      var i;
      for (i = 0; i < 16; i++) w[i] = dv.getInt32(off + i * 4, false);
      for (i = 16; i < 64; i++) {
        var s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
        var s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
      var a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (i = 0; i < 64; i++) {
        var t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i]) | 0;
        var t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        k = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + k) | 0;
    }
    var out = new Uint8Array(32), odv = new DataView(out.buffer);
    for (var j = 0; j < 8; j++) odv.setUint32(j * 4, h[j] >>> 0, false);
    return out;
  }
  function hex(u8) {
    var s = "";
    for (var i = 0; i < u8.length; i++) s += (u8[i] < 16 ? "0" : "") + u8[i].toString(16);
    return s;
  }
  // engine/rng.py (docs/pbem-deal-1.md, section 4): word i = first 8 bytes of
  // SHA-256(seed 0x00 label 0x00 i as 8 bytes). Hashed here with the page's own SHA-256,
  // synchronously: thousands of 50-byte blocks are far quicker so than one promise each.
  var WORD = BigInt(1) << BigInt(64);
  function stream(seed, label) {
    var prefix = concat([enc.encode(seed), new Uint8Array([0]), enc.encode(label), new Uint8Array([0])]);
    var block = new Uint8Array(prefix.length + 8), dv = new DataView(block.buffer);
    block.set(prefix);
    var counter = BigInt(0);
    function word() {
      dv.setBigUint64(prefix.length, counter, false);
      counter += BigInt(1);
      var d = sha256js(block);
      return new DataView(d.buffer).getBigUint64(0, false);
    }
    return function below(n) {
      var nb = BigInt(n), limit = WORD - (WORD % nb);
      for (;;) {
        var w = word();
        if (w < limit) return Number(w % nb);
      }
    };
  }
  function fullDeck() {
    var out = [], labels = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
    labels.forEach(function (r) { "CDHS".split("").forEach(function (s) { out.push(r + s); }); });
    return out;
  }
  var packs = {};
  function shuffled(seed, label) {
    var id = seed + "\u0000" + label;
    if (!(id in packs)) {
      var out = fullDeck(), below = stream(seed, label);
      for (var i = out.length - 1; i > 0; i--) {
        var j = below(i + 1);
        var t = out[i]; out[i] = out[j]; out[j] = t;
      }
      packs[id] = out;
    }
    return packs[id].slice();
  }
  function sameSet(a, b) {
    return a.length === b.length && a.slice().sort().join() === b.slice().sort().join();
  }

  // The checks of docs/pbem-deal-1.md, section 8, in its order (as pbem verify and
  // docs/pbem_deal_verify.py make them), then the board shown against the key.
  var PROTOCOLS = ["pbem-deal/1", "pbem-deal/2", "pbem-deal/3"], P3 = "pbem-deal/3";
  function Mismatch(text) { this.text = text; }
  function fail(text) { throw new Mismatch("Deal check failed: " + text); }
  function isInt(x) { return typeof x === "number" && Math.floor(x) === x; }
  function rankOf(card) { return ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"].indexOf(card.slice(0, -1)) + 1; }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  async function textHash(t) { return hex(await sha256(enc.encode(t))); }
  // The SHA-256 an entropy entry or a cut stands for: its text's, or, without a text (a
  // forgotten player's cut), the one recorded; null when it has neither.
  async function digestOf(e) {
    if (!e || typeof e !== "object") return null;
    if ("text" in e) return typeof e.text === "string" ? await textHash(e.text) : null;
    return typeof e.sha256 === "string" && /^[0-9a-f]{64}$/.test(e.sha256) ? e.sha256 : null;
  }
  async function checkEntropy(entries, what) {
    if (!Array.isArray(entries)) fail(what + ": the entropy is not a list.");
    var last = -1;
    for (var i = 0; i < entries.length; i++) {
      var e = entries[i], digest = await digestOf(e);
      if (digest === null) fail(what + ": an entropy entry has no text.");
      if (!isInt(e.seat) || e.seat < 0 || e.seat >= D.players) fail(what + ": an entropy entry names no seat of the game.");
      if ("sha256" in e && e.sha256 !== digest) fail(what + ": the SHA-256 recorded for seat " + e.seat + "'s cut is not its text's.");
      if (e.seat <= last) fail(what + ": the cuts are not in seat order, one per seat.");
      last = e.seat;
    }
  }
  // The key, from the cuts in seat order (step 2 refused any other order).
  // pbem-deal/1: K = SHA-256 over (4-byte big-endian length || UTF-8) of S, then each cut.
  // pbem-deal/2: K = SHA-256 over (4-byte big-endian length || UTF-8) of S, then each
  // cut's 32-byte SHA-256 (so a forgotten player's cut, kept as its hash, still counts).
  function lengthPrefixed(text) {
    var u = enc.encode(text), len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, u.length, false);
    return [len, u];
  }
  function unhex(h) {
    var out = new Uint8Array(h.length / 2);
    for (var i = 0; i < out.length; i++) out[i] = parseInt(h.substr(2 * i, 2), 16);
    return out;
  }
  // pbem-deal/3: K = SHA-256 over u32be(len(P)) || P || u64be(game) || u32be(players) ||
  // u32be(len(S)) || S, then u32be(seat) || the 32-byte SHA-256 of each cut, in seat order.
  function u32(n) { var b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n, false); return b; }
  async function deriveV3(serverSeed, game, players, entries) {
    var chunks = lengthPrefixed(P3);
    chunks.push(u32(Math.floor(game / 4294967296)), u32(game >>> 0), u32(players));
    chunks = chunks.concat(lengthPrefixed(serverSeed));
    for (var i = 0; i < entries.length; i++) chunks.push(u32(entries[i].seat), unhex(await digestOf(entries[i])));
    return hex(await sha256(concat(chunks)));
  }
  async function deriveInOrder(serverSeed, entries, protocol) {
    var chunks = lengthPrefixed(serverSeed);
    for (var i = 0; i < entries.length; i++) {
      if (protocol === "pbem-deal/2") chunks.push(unhex(await digestOf(entries[i])));
      else chunks = chunks.concat(lengthPrefixed(entries[i].text));
    }
    return hex(await sha256(concat(chunks)));
  }
  async function drawOf(key) {
    var contenders = [], rounds = [], number = 0;
    for (var s = 0; s < D.players; s++) contenders.push(s);
    for (;;) {
      number += 1;
      var pack = await shuffled(key, "draw/" + number), cards = [];
      for (var t = 0; t < D.players; t++) cards.push(null);
      contenders.forEach(function (seat, i) { cards[seat] = pack[i]; });
      rounds.push({ round: number, cards: cards });
      var low = Math.min.apply(null, contenders.map(function (seat) { return rankOf(cards[seat]); }));
      contenders = contenders.filter(function (seat) { return rankOf(cards[seat]) === low; });
      if (contenders.length === 1) return { rounds: rounds, first: contenders[0] };
    }
  }
  async function dealOf(key, hand, dealer) {
    var n = D.players, size = n === 2 ? 6 : 5, pack = await shuffled(key, "hand/" + hand), pos = 0;
    var hands = [];
    for (var s = 0; s < n; s++) hands.push([]);
    for (var r = 0; r < size; r++) for (var o = 1; o <= n; o++) hands[(dealer + o) % n].push(pack[pos++]);
    var crib = n === 3 ? [pack[pos++]] : [];
    return { hands: hands, crib: crib, starter: pack[pos] };
  }
  function firstDealerAfter(scores, winner, last) {
    var n = D.players, order = [];
    for (var step = 1; step <= n; step++) order.push((last + step) % n);
    function side(seat) { return n === 4 ? seat % 2 : seat; }
    var losers = order.filter(function (seat) { return side(seat) !== winner; });
    losers.sort(function (a, b) { return scores[side(a)] - scores[side(b)] || order.indexOf(a) - order.indexOf(b); });
    return losers[0];
  }

  // The archive's format: its protocol's JSON Schema (engine/schemas/, the file pbem
  // verify uses), checked here with the keywords that file uses. The archive is parsed
  // from its own text so that a number written 2.0 is no integer (as in Python).
  function Float(src) { this.src = src; }
  function parseStrict(text) {
    return JSON.parse(text, function (k, v, ctx) {
      return typeof v === "number" && ctx && typeof ctx.source === "string" && /[.eE]/.test(ctx.source) ? new Float(ctx.source) : v;
    });
  }
  function typeOf(x) {
    if (x === null) return "null";
    if (x instanceof Float) return "number";
    if (Array.isArray(x)) return "array";
    if (typeof x === "number") return Number.isInteger(x) ? "integer" : "number";
    return typeof x;
  }
  function schemaError(s, x, root, where) {
    if (s.$ref) return schemaError(root.$defs[s.$ref.split("/").pop()], x, root, where);
    var t = typeOf(x), i, found;
    if (s.type !== undefined && s.type !== t && !(s.type === "number" && t === "integer")) return where + ": not of type " + s.type;
    if ("const" in s && !(typeOf(s.const) === t && same(s.const, x))) return where + ": not " + JSON.stringify(s.const);
    if (s.enum && !s.enum.some(function (e) { return typeOf(e) === t && same(e, x); })) return where + ": not one of the values allowed";
    if (t === "string") {
      var len = Array.from(x).length;
      if (len < (s.minLength || 0) || (s.maxLength !== undefined && len > s.maxLength)) return where + ": of the wrong length";
      if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(x)) return where + ": does not match " + s.pattern;
    }
    if (t === "integer" && ((s.minimum !== undefined && x < s.minimum) || (s.maximum !== undefined && x > s.maximum))) return where + ": out of range";
    if (t === "array") {
      if (x.length < (s.minItems || 0) || (s.maxItems !== undefined && x.length > s.maxItems)) return where + ": has the wrong number of items";
      for (i = 0; i < x.length; i++) if ((found = schemaError(s.items || {}, x[i], root, where + "." + i))) return found;
    }
    if (t === "object") {
      var req = s.required || [], props = s.properties || {};
      for (i = 0; i < req.length; i++) if (!Object.prototype.hasOwnProperty.call(x, req[i])) return where + ": " + JSON.stringify(req[i]) + " is required";
      var keys = Object.keys(x);
      for (i = 0; i < keys.length; i++) {
        if (Object.prototype.hasOwnProperty.call(props, keys[i])) { if ((found = schemaError(props[keys[i]], x[keys[i]], root, where + "." + keys[i]))) return found; }
        else if (s.additionalProperties === false) return where + ": " + JSON.stringify(keys[i]) + " is not allowed";
      }
    }
    if (s.anyOf && s.anyOf.every(function (n) { return schemaError(n, x, root, where) !== null; })) return where + ": not valid under any of the allowed forms";
    return null;
  }
  function checkSchema() {
    if (!D.schema) return;
    var archive;
    try { archive = parseStrict(D.archive_json); } catch (e) { fail("the archive is not JSON."); }
    var wrong = schemaError(D.schema, archive, D.schema, "archive");
    if (wrong !== null) fail("the archive is not in its protocol's format: " + wrong + ".");
  }

  async function checkProof(proof) {
    var n = D.players;
    if (PROTOCOLS.indexOf(proof.protocol) < 0 || typeof proof.commitment !== "string") fail("the deal proof is not pbem-deal/1 or pbem-deal/2.");
    var S0 = proof.server_seed;
    if (typeof S0 !== "string") fail("the server seed is not a string.");
    // 1. The commitment.
    if (await textHash(S0) !== proof.commitment) fail("SHA-256 of the server seed is not the commitment " + proof.commitment + ".");
    var v3 = proof.protocol === P3;
    if (v3) {
      if (!/^[0-9a-f]{64}$/.test(S0)) fail("a pbem-deal/3 server seed is exactly 64 lowercase hex digits.");
      if (!isInt(proof.game) || proof.game < 0) fail("the deal proof names no game number.");
      if (!Array.isArray(D.computer)) fail("a pbem-deal/3 archive lists its computer seats.");
      var cs = D.computer.map(function (c) { return c && typeof c === "object" ? c.seat : null; });
      if (!cs.every(function (x, i) { return isInt(x) && x >= 0 && x < n && cs.indexOf(x) === i; })) fail("the computer list names a seat twice, or no seat of the game.");
      if (!("draws" in proof && "deals" in proof)) fail("a dealt pbem-deal/3 game records its draws and deals.");
    }
    // 2. One cut per human seat, in seat order, each hash its text's.
    var entropy = proof.entropy === undefined ? [] : proof.entropy;
    await checkEntropy(entropy, "the players' cuts");
    // A forgotten player's cut keeps only its text's SHA-256: under pbem-deal/1 the key
    // cannot be derived again from the cuts, so the deals are checked against the
    // archive's seed (pbem-deal/2 derives it from the hashes).
    var forgotten = proof.protocol === "pbem-deal/1" ? entropy.filter(function (e) { return !("text" in e); }) : [];
    if (Array.isArray(D.computer)) {
      var robots = D.computer.map(function (c) { return c && c.seat; }), humans = [];
      for (var s = 0; s < n; s++) if (robots.indexOf(s) < 0) humans.push(s);
      if (!same(entropy.map(function (e) { return e.seat; }), humans)) fail("the cuts are not one per human seat.");
    }
    if (v3 && !(proof.missing === undefined || proof.missing === null || same(proof.missing, []))) fail("a dealt game names a missing cut.");
    // 3. The key.
    var key = v3 ? await deriveV3(S0, proof.game, n, entropy) : forgotten.length ? D.seed : await deriveInOrder(S0, entropy, proof.protocol);
    if (key !== D.seed) fail("the game's seed is not derived from the server seed and the players' cuts.");
    // 4. The cuts received: each seat's last accepted cut is its entropy text (compared
    // by their SHA-256: a forgotten player's cut keeps only that).
    if ("cuts" in proof) {
      var cuts = Array.isArray(proof.cuts) ? proof.cuts : [null], last = {};
      for (var c = 0; c < cuts.length; c++) {
        var cut = cuts[c], cd = await digestOf(cut);
        if (cd === null) fail("cut " + (c + 1) + " has no text.");
        if (!isInt(cut.seat) || cut.seat < 0 || cut.seat >= n) fail("cut " + (c + 1) + " names no seat of the game.");
        if ("sha256" in cut && cut.sha256 !== cd) fail("the SHA-256 recorded for cut " + (c + 1) + " is not its text's.");
        if (cut.accepted === true) last[cut.seat] = cd;
      }
      for (var q = 0; q < entropy.length; q++) {
        var en = entropy[q];
        if (!(en.seat in last)) fail(D.names[en.seat] + "'s cut is not among the cuts received.");
        if (last[en.seat] !== await digestOf(en)) fail(D.names[en.seat] + "'s last accepted cut is not the cut the seed was made from.");
      }
    }
    // 5. Every re-cut reveals its server seed.
    var recuts = proof.recuts || [];
    for (var r = 0; r < recuts.length; r++) {
      var rc = recuts[r];
      if (!rc || typeof rc.server_seed !== "string" || typeof rc.commitment !== "string") fail("re-cut " + (r + 1) + " does not reveal its server seed.");
      if (await textHash(rc.server_seed) !== rc.commitment) fail("re-cut " + (r + 1) + ": SHA-256 of its server seed is not its commitment.");
      await checkEntropy(rc.entropy || [], "re-cut " + (r + 1));
    }
    // 6. The first dealer: the draw, or the rule after the game this one follows.
    var first = D.first_dealer === undefined ? null : D.first_dealer;
    if ("follows" in proof) {
      var f = proof.follows;
      if (f === null) {
        if (first !== null) fail("the game follows no other, yet " + D.names[first] + " deals first without the draw.");
      } else {
        var sides = n === 4 ? 2 : n;
        if (!f || f.rule !== "loser-deals-first") fail("the game it follows has no known rule.");
        if (!Array.isArray(f.scores) || f.scores.length !== sides || !f.scores.every(isInt) || !isInt(f.winner) || f.winner < 0 || f.winner >= sides) fail("the game it follows has no scores or winner.");
        var lastDealer = f.dealer;
        if (!isInt(lastDealer) || lastDealer < 0 || lastDealer >= n) {
          if (n !== 2) fail("the game it follows names no last dealer.");
          lastDealer = f.winner;
        }
        var want = firstDealerAfter(f.scores, f.winner, lastDealer);
        if (first !== want) fail("the first dealer is not the loser of the game it follows.");
      }
    }
    // 7. The records against the key.
    if (!("deals" in proof)) return { key: key, records: null, forgotten: forgotten.length };
    var draws = proof.draws, deals = proof.deals;
    if (!Array.isArray(draws) || !Array.isArray(deals)) fail("the archive records no draws and deals.");
    if (first === null) {
      var drawn = await drawOf(key);
      if (!same(draws, drawn.rounds)) fail("the draw for the first deal is not the seed's.");
      first = drawn.first;
    } else if (draws.length) fail("a draw is recorded though the first dealer was not drawn.");
    if (!deals.length) fail("no deal is recorded.");
    var dealer = first;
    for (var h = 1; h <= deals.length; h++) {
      var rec = deals[h - 1];
      if (!rec || rec.hand !== h) fail("deal " + h + " is not numbered " + h + ".");
      if (rec.dealer !== dealer) fail("hand " + h + ": the wrong player deals.");
      var d = await dealOf(key, h, dealer);
      if (!Array.isArray(rec.hands) || rec.hands.length !== n) fail("hand " + h + ": not every seat's cards are recorded.");
      for (var seat = 0; seat < n; seat++) if (!same(rec.hands[seat], d.hands[seat])) fail("hand " + h + ": " + D.names[seat] + "'s dealt cards are not the seed's.");
      if (!same(rec.crib, d.crib)) fail("hand " + h + ": the crib's dealt card is not the seed's.");
      if (rec.starter === null || rec.starter === undefined) {
        if (h !== deals.length) fail("hand " + h + ": no starter is recorded for a hand that was played.");
      } else if (rec.starter !== d.starter) fail("hand " + h + ": the starter is not the seed's.");
      dealer = (dealer + 1) % n;
    }
    return { key: key, records: deals, forgotten: forgotten.length };
  }

  // The board this page shows: every draw, hand dealt, crib card and starter is the key's,
  // and (when the archive records them) the records are the board's.
  async function checkBoard(key, records) {
    var n = D.players, size = n === 2 ? 6 : 5, deals = 0, drawRound = 0, pending = null, starters = {};
    function complete() {
      if (pending && Object.keys(pending.seen).length !== n) fail("hand " + pending.hand + ": not every seat's dealt cards are shown.");
    }
    for (var i = 0; i < S.length; i++) {
      var evs = S[i].ev;
      for (var e = 0; e < evs.length; e++) {
        var ev = evs[e];
        if (ev.k === "draw") {
          drawRound += 1;
          var dp = await shuffled(key, "draw/" + drawRound);
          if (dp.slice(0, ev.c.length).join() !== ev.c.join()) fail("the draw for the first deal (round " + drawRound + ") is not the shuffle's.");
        } else if (ev.k === "deal") {
          complete();
          var hand = S[i].h;
          var d = await dealOf(key, hand, ev.s);
          pending = { hand: hand, dealt: d.hands, starter: d.starter, seen: {} };
          if (n === 3 && !(Array.isArray(S[i].crib) && S[i].crib.length === 1 && S[i].crib[0] === d.crib[0])) fail("hand " + hand + ": the crib's dealt card is not the shuffle's.");
          if (records && (!records[hand - 1] || records[hand - 1].dealer !== ev.s)) fail("hand " + hand + ": the board's dealer is not the recorded one.");
          deals += 1;
        } else if (ev.k === "hand") {
          if (!pending) fail("cards dealt outside a deal.");
          if (!sameSet(ev.c, pending.dealt[ev.s])) fail("hand " + pending.hand + ": " + D.names[ev.s] + "'s dealt cards are not the shuffle's.");
          pending.seen[ev.s] = true;
        } else if (ev.k === "starter") {
          if (!pending || ev.c[0] !== pending.starter) fail("hand " + (pending ? pending.hand : "?") + ": the starter is not the shuffle's.");
          starters[pending.hand] = ev.c[0];
        }
        if (ev.k !== "deal" && ev.k !== "hand") complete();
      }
    }
    complete();
    // Every step's board: its starter, and the cards it shows in each seat's hand.
    for (var k = 0; k < S.length; k++) {
      var st = S[k];
      if (!(st.h >= 1)) continue;
      var dd = await dealOf(key, st.h, st.d);
      if (st.st && st.st !== dd.starter) fail("hand " + st.h + ": the starter shown is not the shuffle's.");
      (st.hold || []).forEach(function (cards, seat) {
        if (!Array.isArray(cards)) return;
        cards.forEach(function (c) { if (dd.hands[seat].indexOf(c) < 0) fail("hand " + st.h + ": " + D.names[seat] + " is shown a card the shuffle did not deal them."); });
      });
      if (records && (!records[st.h - 1] || records[st.h - 1].dealer !== st.d)) fail("hand " + st.h + ": the board's dealer is not the recorded one.");
    }
    if (records) {
      if (records.length !== deals) fail("the archive records " + records.length + " deals, the board shows " + deals + ".");
      records.forEach(function (rec) {
        if ((rec.starter || null) !== (starters[rec.hand] || null)) fail("hand " + rec.hand + ": the recorded starter is not the board's.");
      });
    }
    return deals;
  }

  async function verifyDeals() {
    var proof = D.deal_proof;
    if (!D.over && !D.revealed) return { state: "hidden", text: "The deals can be verified when the game is over (the server seed is revealed then)." };
    if (!proof) return { state: "none", text: "This game's deals are not verifiable (no commitment)." };
    try { checkSchema(); } catch (err) { if (err instanceof Mismatch) return { state: "mismatch", text: err.text }; throw err; }
    if (proof.server_seed === null || proof.server_seed === undefined) return { state: "hidden", text: "The server seed is not revealed yet: the deals can be checked once it is." };
    try {
      var found = await checkProof(proof);
      var deals = await checkBoard(found.key, found.records);
    } catch (err) {
      if (err instanceof Mismatch) return { state: "mismatch", text: err.text };
      throw err;
    }
    if (found.forgotten) return { state: "none", text: "Not verifiable: the server seed matches its commitment " + String(proof.commitment).slice(0, 16) + "…, and every draw, deal and starter is the archive's seed's shuffle, but a forgotten player's cut is kept only as its SHA-256 and under pbem-deal/1 the seed cannot be derived again from the cuts." };
    return { state: "verified", text: "All " + deals + " deals verified: the server seed matches its commitment " + String(proof.commitment).slice(0, 16) + "…, the seed comes from it and the players' cuts, and every draw, deal and starter is the seed's shuffle." };
  }

  // The checks of an archive the page does not draw (the game this one follows), as the
  // standalone verifier makes them: its format, then steps 1-7.
  async function verifyRecord() {
    var proof = D.deal_proof;
    if (!proof) return { state: "none", text: "its deals are not verifiable (no commitment)." };
    try {
      checkSchema();
      if (proof.server_seed === null || proof.server_seed === undefined) return { state: "hidden", text: "its server seed is not revealed yet." };
      if (D.seed === null || D.seed === undefined) fail("it was never dealt.");
      var found = await checkProof(proof);
    } catch (err) {
      if (err instanceof Mismatch) return { state: "mismatch", text: err.text };
      throw err;
    }
    if (found.forgotten) return { state: "none", text: "not verifiable: a forgotten player's cut is kept only as its SHA-256, and under pbem-deal/1 the seed cannot be derived again from the cuts." };
    return { state: "verified", text: "all " + (found.records ? found.records.length : 0) + " deals verified." };
  }

  return {
    verifyDeals: verifyDeals,
    verifyRecord: verifyRecord,
    Mismatch: Mismatch,
    parseStrict: parseStrict,
    textHash: textHash,
    sha256js: sha256js,
    derive: deriveInOrder,
    shuffled: shuffled
  };
};
