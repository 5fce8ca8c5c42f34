(function () {
  "use strict";
  var form = document.querySelector("form.find"), q = document.getElementById("find-q");
  var status = document.getElementById("status");
  var lists = {names: document.getElementById("names"), texts: document.getElementById("texts")};
  var SHOWN = 100, KINDS = {c: "card", r: "rule", s: "section", g: "glossary"};
  var ORDER = {r: 0, s: 1, g: 2, c: 3};
  var FOLDERS = {c: "cards/", r: "rules/", s: "rules/", g: "glossary/"};
  var docs = null, shards = {}, asked = {};
  window.siteSearch = {
    docs: function (found) { docs = found; run(); },
    words: function (key, found) { shards[key] = found; run(); }
  };
  function load(name) {
    if (asked[name]) { return; }
    asked[name] = true;
    var script = document.createElement("script");
    script.src = "search/" + name + ".js";
    script.onerror = function () { status.textContent = "The search index could not be loaded."; };
    document.head.appendChild(script);
  }
  // As site_search.fold: no accents nor marks, lowercase, æ as ae, straight apostrophes.
  function fold(text) {
    return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
      .replace(/\u00df/g, "ss").replace(/\u00e6/g, "ae").replace(/[\u2018\u2019]/g, "'");
  }
  function shard(word) {
    return /^[a-z0-9]{2}/.test(word) ? word.slice(0, 2) : "u" + (word.codePointAt(0) >> 8).toString(16);
  }
  function ids(postings) {
    var out = [], last = 0;
    postings.split(",").forEach(function (gap) { last += parseInt(gap, 36); out.push(last); });
    return out;
  }
  function matching(index, token) {
    var found = new Set();
    Object.keys(index).forEach(function (word) {
      if (word.lastIndexOf(token, 0) === 0) { ids(index[word]).forEach(function (n) { found.add(n); }); }
    });
    return found;
  }
  function both(a, b) {
    if (a === null) { return b; }
    return new Set(Array.from(a).filter(function (n) { return b.has(n); }));
  }
  function show(list, found) {
    var box = lists[list];
    box.textContent = "";
    box.parentNode.hidden = found.length === 0;
    found.slice(0, SHOWN).forEach(function (n) {
      var doc = docs[n], li = document.createElement("li"), a = document.createElement("a");
      var kind = document.createElement("span");
      kind.className = "badge";
      kind.textContent = KINDS[doc[0]];
      a.href = FOLDERS[doc[0]] + (doc[2] || number(doc)) + ".html";
      a.textContent = doc[1];
      li.appendChild(a);
      li.appendChild(document.createTextNode(" "));
      li.appendChild(kind);
      box.appendChild(li);
    });
    if (found.length > SHOWN) {
      var more = document.createElement("li");
      more.className = "meta";
      more.textContent = "and " + (found.length - SHOWN) + " more: add a word";
      box.appendChild(more);
    }
  }
  function number(doc) {  // a rule's or section's number: its label's first word
    return doc[1].split(" ")[0].replace(/\.$/, "");
  }
  function byKind(a, b) {
    return ORDER[docs[a][0]] - ORDER[docs[b][0]] || a - b;
  }
  function run() {
    var text = fold(q.value.trim());
    if (!text) { show("names", []); show("texts", []); status.textContent = ""; return; }
    if (docs === null) { load("docs"); status.textContent = "Loading the index\u2026"; return; }
    var names = [], texts = [];
    if (/^\d{1,3}(\.\d{0,3}[a-z]?)?$/.test(text)) {
      docs.forEach(function (doc, n) {
        var numbered = number(doc);
        if ((doc[0] === "r" || doc[0] === "s") && numbered.lastIndexOf(text, 0) === 0) {
          (numbered === text ? names : texts).push(n);
        }
      });
      names = names.concat(texts);
      texts = [];
    } else {
      var tokens = (text.match(/[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu) || []).filter(function (t) { return t.length >= 2; });
      if (!tokens.length) { status.textContent = "Give at least two letters."; return; }
      var missing = tokens.map(shard).filter(function (key) { return !shards[key]; });
      if (missing.length) {
        missing.forEach(function (key) { load("w-" + key); });
        status.textContent = "Loading the index\u2026";
        return;
      }
      var byName = null, any = null;
      tokens.forEach(function (token) {
        var index = shards[shard(token)];
        var named = matching(index.n, token), said = matching(index.t, token);
        byName = both(byName, named);
        named.forEach(function (n) { said.add(n); });
        any = both(any, said);
      });
      names = Array.from(byName).sort(byKind);
      texts = Array.from(any).filter(function (n) { return !byName.has(n); }).sort(byKind);
    }
    status.textContent = (names.length + texts.length) + " found";
    show("names", names);
    show("texts", texts);
  }
  function fromAddress() {
    var hash = new URLSearchParams(window.location.hash.slice(1)).get("q");
    var query = new URLSearchParams(window.location.search).get("q");
    q.value = hash !== null ? hash : (query || "");
    run();
  }
  q.addEventListener("input", function () {
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", q.value ? "#q=" + encodeURIComponent(q.value) : "#");
    }
    run();
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); run(); });
  window.addEventListener("hashchange", fromAddress);
  q.focus();
  fromAddress();
})();
