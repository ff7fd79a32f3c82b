// Scorecard filter: show only the items in one state (plain JavaScript, no network, no library).
document.addEventListener("DOMContentLoaded", function () {
  var card = document.getElementById("lvm-scorecard");
  if (!card) return;
  var buttons = card.querySelectorAll(".lvm-filter-button");

  function show(state) {
    buttons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.state === state));
    });
    card.querySelectorAll(".lvm-paper").forEach(function (section) {
      var visible = 0;
      section.querySelectorAll("tr.lvm-item").forEach(function (row) {
        var keep = state === "all" || row.dataset.state === state;
        row.hidden = !keep;
        if (keep) visible += 1;
      });
      section.querySelector(".lvm-empty").hidden = visible > 0;
      section.querySelector(".lvm-scroll").hidden = visible === 0;
    });
  }

  buttons.forEach(function (b) {
    b.addEventListener("click", function () { show(b.dataset.state); });
  });
});
