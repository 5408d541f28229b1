// The replay page's checks against what the player holds (docs/pbem-deal-3.md sections 7
// and 11), as pbem verify --mail and --previous make them: the player's saved mails of
// the game (.eml files, or an mbox file) and the archive of the game this one follows,
// dropped onto the page or chosen with its file button, read here and sent nowhere.
// D is the page's data, V its verifier; makeVerifier makes one for the previous archive.
// Loaded after replay_verify.js and before replay.js.
var cribbageChecks = function (D, V, makeVerifier) {
  "use strict";
  var P3 = "pbem-deal/3";
  function isObject(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }
  function $(id) { return document.getElementById(id); }

  // -- reading saved mail (RFC 5322 and MIME), as Python's email package reads it ------
  // Files are read as "binary strings" (one character per byte) until a charset is known.
  function binary(u8) {
    var out = "";
    for (var i = 0; i < u8.length; i += 8192) out += String.fromCharCode.apply(null, u8.subarray(i, i + 8192));
    return out;
  }
  function bytesOf(bin) {
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i) & 255;
    return out;
  }
  function decode(bin, charset) {
    var label = (charset || "us-ascii").toLowerCase();
    try { return new TextDecoder(label).decode(bytesOf(bin)); } catch (e) { return new TextDecoder("utf-8").decode(bytesOf(bin)); }
  }
  // RFC 2047 encoded words (the white space between two of them is dropped).
  function words2047(text) {
    return text.replace(/=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=(?:[ \t\r\n]+(?==\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=))?/g, function (all, cs, how, data) {
      var bin;
      if (how === "b" || how === "B") {
        try { bin = atob(data.replace(/[^A-Za-z0-9+/=]/g, "")); } catch (e) { return all; }
      } else {
        bin = data.replace(/_/g, " ").replace(/=([0-9A-Fa-f]{2})/g, function (m, h) { return String.fromCharCode(parseInt(h, 16)); });
      }
      return decode(bin, cs.split("*")[0]);
    });
  }
  function headersOf(head) {
    var out = {};
    head.replace(/\r?\n(?=[ \t])/g, "").split(/\r?\n/).forEach(function (line) {
      var at = line.indexOf(":");
      if (at <= 0) return;
      var name = line.slice(0, at).trim().toLowerCase();
      if (!(name in out)) out[name] = line.slice(at + 1).replace(/^[ \t]+/, "");
    });
    return out;
  }
  // "text/plain; charset=utf-8" → {type: "text/plain", charset: "utf-8", ...}
  function params(value, fallback) {
    var parts = (value || fallback).split(";"), out = { type: parts[0].trim().toLowerCase() };
    for (var i = 1; i < parts.length; i++) {
      var m = /^\s*([^=\s]+)\s*=\s*"?([^"]*)"?\s*$/.exec(parts[i]);
      if (m) out[m[1].toLowerCase()] = m[2];
    }
    return out;
  }
  function parsePart(bin) {
    var cut = /\r?\n\r?\n/.exec(bin), head = cut ? bin.slice(0, cut.index) : bin;
    var body = cut ? bin.slice(cut.index + cut[0].length) : "";
    var h = headersOf(head);
    return { headers: h, type: params(h["content-type"], "text/plain"), body: body };
  }
  function subparts(part) {
    var boundary = part.type.boundary, out = [], lines = part.body.split(/\r?\n/), current = null;
    if (!boundary) return out;
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      if (line.indexOf("--" + boundary) === 0) {
        var rest = line.slice(boundary.length + 2);
        if (current !== null) out.push(parsePart(current.join("\n")));
        if (rest.indexOf("--") === 0) return out;
        if (/^\s*$/.test(rest)) { current = []; continue; }
      }
      if (current !== null) current.push(line);
    }
    if (current !== null) out.push(parsePart(current.join("\n")));
    return out;
  }
  // The first text/plain part that is no attachment (Python's get_body(("plain",))).
  function plainPart(part) {
    if (params(part.headers["content-disposition"], "inline").type === "attachment") return null;
    var type = part.type.type;
    if (type === "text/plain") return part;
    if (type.indexOf("multipart/") !== 0) return null;
    var parts = subparts(part);
    if (type === "multipart/related") parts = parts.slice(0, 1);
    for (var i = 0; i < parts.length; i++) {
      var found = plainPart(parts[i]);
      if (found) return found;
    }
    return null;
  }
  function textOf(part) {
    var how = (part.headers["content-transfer-encoding"] || "").trim().toLowerCase(), bin = part.body;
    if (how === "base64") {
      try { bin = atob(bin.replace(/[^A-Za-z0-9+/=]/g, "")); } catch (e) { bin = ""; }
    } else if (how === "quoted-printable") {
      bin = bin.replace(/=\r?\n/g, "").replace(/=([0-9A-Fa-f]{2})/g, function (m, h) { return String.fromCharCode(parseInt(h, 16)); });
    }
    return decode(bin, part.type.charset);
  }
  // One mail's subject, plain text, Message-ID and In-Reply-To.
  function parseMessage(bin) {
    var top = parsePart(bin), plain = plainPart(top);
    var subject = words2047(decode(top.headers.subject || "", "utf-8")).replace(/\r?\n/g, "");
    return {
      subject: subject, text: plain ? textOf(plain) : "",
      messageId: (top.headers["message-id"] || "").trim(), inReplyTo: (top.headers["in-reply-to"] || "").trim()
    };
  }
  // The mails of an mbox file: each begins at a line starting "From " (its From_ line).
  function splitMbox(bin) {
    var out = [], re = /(^|\n)From [^\n]*\n/g, m, starts = [];
    while ((m = re.exec(bin)) !== null) starts.push([m.index + m[1].length, re.lastIndex]);
    for (var i = 0; i < starts.length; i++) out.push(bin.slice(starts[i][1], i + 1 < starts.length ? starts[i + 1][0] : bin.length));
    return out;
  }

  // -- the archive against the player's mail (section 11; engine/mailcheck.py) ---------
  var WS = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;
  function flat(text) { return text.replace(WS, " ").replace(/^ /, "").replace(/ $/, ""); }
  var HEX = "([0-9a-f](?: ?[0-9a-f]){63})";
  var SUBJECT = /\[Cribbage (\d+)\]/;
  function pattern(text) { return new RegExp(text, "g"); }
  function unspaced(found) { return found.replace(/ /g, ""); }
  function str(x) { return x === null || x === undefined ? "None" : String(x); }
  function gameNumber(archive) {
    var proof = archive.deal_proof;
    return isObject(proof) && proof.protocol === P3 ? proof.game : archive.game_id;
  }
  // A Message-ID as a cut's entropy text starts with it (engine/mailcheck.message_id).
  function messageId(header) {
    var core = String(header || "").replace(/[^\x21-\x7e]/g, "").replace(/^[<>]+|[<>]+$/g, "");
    return core ? "<" + core + ">" : "";
  }
  var LINKED = "commitment in the mail you answered with your cut";
  // The link through the player's own sent answer: the mail without a game number that
  // an answer recorded as a cut replied to showed the archive's commitment.
  function checkAnswered(out, counts, proof, entries, mails) {
    var cutIds = {}, byId = {}, answered = {}, m;
    entries.forEach(function (e) { if (typeof e.text === "string") cutIds[e.text.split(" ")[0]] = true; });
    mails.forEach(function (mail) { var id = messageId(mail.messageId); if (id && !(id in byId)) byId[id] = mail; });
    mails.forEach(function (mail) {
      if (!Object.prototype.hasOwnProperty.call(cutIds, messageId(mail.messageId))) return;
      (String(mail.inReplyTo || "").match(/<[^<>]*>/g) || []).forEach(function (ref) {
        var id = messageId(ref);
        if (id && Object.prototype.hasOwnProperty.call(byId, id) && !SUBJECT.test(byId[id].subject || "")) answered[id] = byId[id];
      });
    });
    Object.keys(answered).forEach(function (id) {
      var commit = pattern("Deal commitment \\((pbem-deal/\\d)\\): " + HEX), body = flat(answered[id].text), shown = 0;
      while ((m = commit.exec(body)) !== null) {
        shown += 1;
        if (m[1] !== proof.protocol) out.problems.push("the invitation you answered with your cut named the protocol " + m[1] + ", the archive " + str(proof.protocol));
        if (unspaced(m[2]) !== proof.commitment) out.problems.push("the invitation you answered with your cut showed commitment " + unspaced(m[2]) + ", the archive's is " + str(proof.commitment) + ": the server seed was changed after it was shown");
      }
      if (shown) counts[LINKED] += 1;
    });
  }
  function checkMail(archive, mails) {
    var out = { checked: [], problems: [], mails: 0 };
    var proof = isObject(archive.deal_proof) ? archive.deal_proof : {};
    var game = gameNumber(archive), follows = isObject(proof.follows) ? proof.follows : null;
    var before = follows && follows.game !== undefined && follows.game !== null ? follows.game : null;
    var counts = { commitment: 0, receipt: 0, "cut hashes": 0, game: 0 }, m;
    var entries = (Array.isArray(proof.entropy) ? proof.entropy : []).filter(isObject);
    var byHash = {};
    entries.forEach(function (e) { byHash[str(e.sha256)] = e; });
    var names = (Array.isArray(archive.players) ? archive.players : []).map(function (p) { return isObject(p) ? str(p.name) : ""; });
    counts[LINKED] = 0;
    checkAnswered(out, counts, proof, entries, mails);
    mails.forEach(function (mail) {
      var number = SUBJECT.exec(mail.subject || "");
      if (!number) return;
      var shown = parseInt(number[1], 10), body = flat(mail.text);
      if (before !== null && shown === before) {
        var next = pattern("The next game's deal commitment: " + HEX);
        while ((m = next.exec(body)) !== null) {
          counts.commitment += 1;
          if (unspaced(m[1]) !== proof.commitment) out.problems.push("game " + before + "'s game-over mail showed the next game's commitment " + unspaced(m[1]) + ", the archive's is " + str(proof.commitment));
        }
        return;
      }
      if (shown !== game) return;
      out.mails += 1;
      counts.game += 1;
      var commit = pattern("Deal commitment \\((pbem-deal/\\d)\\): " + HEX);
      while ((m = commit.exec(body)) !== null) {
        counts.commitment += 1;
        if (m[1] !== proof.protocol) out.problems.push("the mail named the protocol " + m[1] + ", the archive " + str(proof.protocol));
        if (unspaced(m[2]) !== proof.commitment) out.problems.push("the mail showed the commitment " + unspaced(m[2]) + ", the archive's is " + str(proof.commitment) + ": the server seed was changed after it was shown");
      }
      var receipt = pattern("recorded as \u201c(.*?)\u201d \\(SHA-256 " + HEX + "\\)");
      while ((m = receipt.exec(body)) !== null) {
        counts.receipt += 1;
        var entry = Object.prototype.hasOwnProperty.call(byHash, unspaced(m[2])) ? byHash[unspaced(m[2])] : null;
        if (entry === null || ("text" in entry && entry.text !== m[1])) out.problems.push("the cut the mail's receipt quotes (\u201c" + m[1] + "\u201d) is not recorded");
      }
      var cuts = /Cuts as recorded \(SHA-256, first (\d+) hex digits\): (.*?)\.(?: |$)/g;
      while ((m = cuts.exec(body)) !== null) {
        counts["cut hashes"] += 1;
        var digits = parseInt(m[1], 10);
        m[2].split("; ").forEach(function (part) {
          var at = part.lastIndexOf(" "), who = at < 0 ? "" : part.slice(0, at), start = part.slice(at + 1);
          var seat = /^seat \d+$/.test(who) ? parseInt(who.slice(5), 10) : names.indexOf(who) >= 0 ? names.indexOf(who) : null;
          if (seat === null) { out.problems.push("the mail names '" + who + "', who is no player of the archive"); return; }
          var mine = entries.filter(function (e) { return e.seat === seat; })[0];
          if (!mine || str(mine.sha256 === undefined ? "" : mine.sha256).indexOf(start.slice(0, digits)) !== 0) out.problems.push("the mail showed " + who + "'s cut as " + start + "\u2026, the archive records another");
        });
      }
    });
    Object.keys(counts).forEach(function (what) {
      if (counts[what]) out.checked.push(what + " (" + counts[what] + " mail" + (counts[what] !== 1 ? "s" : "") + ")");
    });
    if (counts.game && (counts["cut hashes"] || counts.receipt)) out.checked.push("seats");
    if (!counts.game && !counts.commitment && !counts[LINKED]) out.problems.push("no saved mail is of game " + str(game));
    out.problems = out.problems.filter(function (p, i) { return out.problems.indexOf(p) === i; });
    return out;
  }

  // -- the game this one follows (section 7; pbem_deal_verify.check_previous) ----------
  function previousData(prev, text) {
    var settings = prev.settings, n = settings.players, names = [];
    for (var s = 0; s < n; s++) {
      var p = Array.isArray(prev.players) ? prev.players[s] : null;
      names.push(isObject(p) && typeof p.name === "string" && p.name ? p.name : "seat " + s);
    }
    return {
      players: n, names: names, computer: Array.isArray(prev.computer) ? prev.computer : null, seed: prev.seed,
      first_dealer: settings.first_dealer === undefined ? null : settings.first_dealer,
      deal_proof: prev.deal_proof, schema: D.schema, archive_json: text, over: true, revealed: true
    };
  }
  async function checkPrevious(archive, text) {
    function off(why) { return { state: "mismatch", text: "Check failed (previous): " + why }; }
    var prev, proof = archive.deal_proof;
    try { prev = JSON.parse(text); } catch (e) { return off("the previous game's archive is not JSON."); }
    if (!isObject(prev) || prev.format !== "pbem-cribbage/1" || !isObject(prev.settings) || !Array.isArray(prev.actions) || !("seed" in prev)) return off("the previous game's archive does not verify: it is not a pbem-cribbage/1 game archive.");
    var before = isObject(prev.deal_proof) ? prev.deal_proof : null;
    if (before && before.protocol !== proof.protocol) return { state: "none", text: "Not checked: the previous game's archive is dealt by " + before.protocol + ", this page knows only the format of " + proof.protocol + ": run pbem verify --previous on it." };
    var found = await makeVerifier(previousData(prev, text), []).verifyRecord();
    if (found.state !== "verified") return off("the previous game's archive does not verify: " + found.text.replace(/^Deal check failed: /, ""));
    var follows = proof.follows;
    if (!isObject(follows)) return off("the game follows no other game, yet an archive was given.");
    var number = before.protocol === P3 ? before.game : prev.game_id;
    if (follows.game !== number) return off("it follows game " + str(follows.game) + ", not " + str(number) + ".");
    if (follows.state_hash !== prev.state_hash) return off("the state hash it records is not the previous game's.");
    if (("commitment" in follows || proof.protocol === P3) && follows.commitment !== before.commitment) return off("the commitment it records is not the previous game's.");
    var deals = before.deals, last = Array.isArray(deals) && deals.length ? deals[deals.length - 1] : null;
    if (isObject(last) && follows.dealer !== last.dealer) return off("the last dealer it records is not the previous game's.");
    if (!isObject(before.result)) return off("the previous archive records no result.");
    if (JSON.stringify([follows.scores, follows.winner]) !== JSON.stringify([before.result.scores, before.result.winner])) return off("the scores and winner it records are not the previous game's.");
    return { state: "verified", text: "checked: the follows record against the previous game's archive" };
  }

  // -- the files the player gives the page -------------------------------------------
  function readFile(file) {
    return new Promise(function (resolve, reject) {
      var reader = new FileReader();
      reader.onload = function () { resolve(new Uint8Array(reader.result)); };
      reader.onerror = function () { reject(reader.error); };
      reader.readAsArrayBuffer(file);
    });
  }
  // The archive a replay page carries (its deal proof inside the archive's text; the
  // moves are not in it, and the checks of the previous game need none).
  function archiveOfPage(text) {
    try { return String(JSON.parse(text).archive_json || "null"); } catch (e) { return "null"; }
  }
  async function checkFiles(files) {
    var archive = V.parseStrict(D.archive_json), mails = [], previous = [], results = [];
    for (var i = 0; i < files.length; i++) {
      // An archive is JSON (or the replay page of that game, which holds it); an mbox
      // file starts with a From_ line; any other file is one mail.
      var bin = binary(await readFile(files[i])), page = /id="replay-data">([^<]*)<\/script>/.exec(bin);
      if (/^(\xef\xbb\xbf)?\s*\{/.test(bin)) previous.push(decode(bin, "utf-8"));
      else if (/^(\xef\xbb\xbf)?\s*</.test(bin) && page) previous.push(archiveOfPage(decode(page[1], "utf-8")));
      else if (bin.indexOf("From ") === 0) mails = mails.concat(splitMbox(bin).map(parseMessage));
      else mails.push(parseMessage(bin));
    }
    if (mails.length) {
      var seen = checkMail(archive, mails);
      results.push(seen.problems.length
        ? { state: "mismatch", text: "Check failed (mail): " + seen.problems.join("; ") }
        : { state: "verified", text: "checked: the player's mail: " + seen.checked.join(", ") });
    }
    if (previous.length > 1) results.push({ state: "mismatch", text: "Check failed (previous): give one archive of the previous game, not " + previous.length + "." });
    else if (previous.length) results.push(await checkPrevious(archive, previous[0]));
    return { mails: mails.length, results: results };
  }
  function show(found) {
    var box = $("checks"), list = $("checks-done");
    list.textContent = "";
    var states = found.results.map(function (r) { return r.state; });
    box.setAttribute("data-state", states.indexOf("mismatch") >= 0 ? "mismatch" : states.indexOf("none") >= 0 || !states.length ? "none" : "verified");
    if (found.mails || !found.results.length) {
      var read = document.createElement("li");
      read.textContent = found.mails + " mail" + (found.mails !== 1 ? "s" : "") + " read" + (found.results.length ? "" : ": nothing to check");
      list.appendChild(read);
    }
    found.results.forEach(function (r) {
      var li = document.createElement("li");
      li.setAttribute("data-state", r.state);
      li.textContent = r.text;
      list.appendChild(li);
    });
  }
  function take(files) {
    if (!files || !files.length) return;
    $("checks").setAttribute("data-state", "checking");
    checkFiles(Array.prototype.slice.call(files)).then(show, function (err) {
      show({ mails: 0, results: [{ state: "mismatch", text: "The files could not be read here: " + err }] });
    });
  }
  function setup() {
    var box = $("checks");
    if (!box || !D.archive_json) return;
    box.addEventListener("dragover", function (e) { e.preventDefault(); box.classList.add("over"); });
    box.addEventListener("dragleave", function () { box.classList.remove("over"); });
    box.addEventListener("drop", function (e) {
      e.preventDefault();
      box.classList.remove("over");
      take(e.dataTransfer && e.dataTransfer.files);
    });
    $("check-files").addEventListener("change", function () { take($("check-files").files); });
  }
  return { setup: setup, parseMessage: parseMessage, splitMbox: splitMbox, checkMail: checkMail, binary: binary };
};
