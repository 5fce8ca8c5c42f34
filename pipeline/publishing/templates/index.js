(function () {
  "use strict";
  var form = document.getElementById("search");
  var q = document.getElementById("q"), lang = document.getElementById("lang");
  var rule = document.getElementById("rule"), stale = document.getElementById("stale");
  var shown = document.getElementById("shown");
  var items = Array.prototype.slice.call(document.getElementById("card-list").children);
  function fold(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .replace(/\u00e6/g, "ae").replace(/[\u2018\u2019]/g, "'");
  }
  var names = [], langs = [], flags = [], visible = [];
  items.forEach(function (li) {
    names.push(fold(li.firstElementChild.textContent));
    langs.push(" " + li.getAttribute("data-l") + " ");
    flags.push(li.getAttribute("data-f"));
    visible.push(true);
  });
  function apply() {
    var words = fold(q.value.trim()), wanted = lang.value ? " " + lang.value + " " : "";
    var count = 0;
    for (var i = 0; i < items.length; i++) {
      var ok = (!words || names[i].indexOf(words) >= 0) &&
               (!wanted || langs[i].indexOf(wanted) >= 0) &&
               (!rule.checked || flags[i].indexOf("r") >= 0) &&
               (!stale.checked || flags[i].indexOf("s") >= 0);
      if (ok !== visible[i]) { items[i].hidden = !ok; visible[i] = ok; }
      if (ok) { count++; }
    }
    shown.textContent = count + " of " + items.length + " cards";
    var state = new URLSearchParams();
    if (q.value) { state.set("q", q.value); }
    if (lang.value) { state.set("lang", lang.value); }
    if (rule.checked) { state.set("rule", "1"); }
    if (stale.checked) { state.set("stale", "1"); }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + state.toString());
    }
  }
  function fromAddress() {  // on load, and whenever the address's #q=... changes
    var start = new URLSearchParams(window.location.hash.slice(1));
    q.value = start.get("q") || "";
    lang.value = start.get("lang") || "";
    rule.checked = start.get("rule") === "1";
    stale.checked = start.get("stale") === "1";
    apply();
  }
  [q, lang, rule, stale].forEach(function (field) {
    field.addEventListener(field === q ? "input" : "change", apply);
  });
  window.addEventListener("hashchange", fromAddress);
  form.hidden = false;
  fromAddress();
})();
