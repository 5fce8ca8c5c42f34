(function () {
  var groups = Array.prototype.slice.call(document.querySelectorAll("article.group"));
  var fields = {card: "f-card", lang: "f-lang", change: "f-change"};
  function value(name) { return document.getElementById(fields[name]).value; }
  function apply() {
    var card = value("card"), lang = value("lang"), change = value("change"), shown = 0;
    groups.forEach(function (g) {
      var cards = JSON.parse(g.getAttribute("data-cards"));
      var ok = (!card || cards.indexOf(card) >= 0) &&
               (!lang || g.getAttribute("data-lang") === lang) &&
               (!change || g.getAttribute("data-change") === change);
      if (ok) { g.removeAttribute("hidden"); shown++; } else { g.setAttribute("hidden", ""); }
    });
    document.getElementById("shown").textContent =
      shown + " of " + groups.length + " groups shown";
    var state = new URLSearchParams({card: card, lang: lang, change: change}).toString();
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + state);
    }
  }
  var start = new URLSearchParams(window.location.hash.slice(1));
  Object.keys(fields).forEach(function (name) {
    var select = document.getElementById(fields[name]);
    if (start.get(name)) { select.value = start.get(name); }
    select.addEventListener("change", apply);
  });
  apply();
})();
