// Scorecard filter (plain JavaScript, no network, no library): show only the items in one state, and, by the
// same sense (lvmrepro.scorecard.STATE_GROUP: holds / passes with reproduced, fails with not reproduced, ...),
// only the matching claims beyond the papers and the matching sanity checks.
document.addEventListener("DOMContentLoaded", function () {
  var card = document.getElementById("lvm-scorecard");
  if (!card) return;
  var buttons = card.querySelectorAll(".lvm-filter-button");
  var lists = document.querySelectorAll("[data-filterable]");

  function toggleEmpty(container, visible) {
    var empty = container.querySelector(":scope > .lvm-empty");
    if (empty) empty.hidden = visible > 0;
  }

  function show(state, group) {
    buttons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.state === state));
    });
    card.querySelectorAll(".lvm-paper").forEach(function (section) {
      var visible = 0;
      section.querySelectorAll(".lvm-item").forEach(function (item) {
        var keep = state === "all" || item.dataset.state === state;
        item.hidden = !keep;
        if (keep) visible += 1;
      });
      toggleEmpty(section, visible);
    });
    lists.forEach(function (list) {
      var visible = 0;
      list.querySelectorAll(":scope > .lvm-item").forEach(function (item) {
        var checks = item.querySelectorAll("li.lvm-check");
        var keep;
        if (checks.length) {
          // a target's checks: keep the checks in the group; the target while any of them is kept
          var kept = 0;
          checks.forEach(function (li) {
            var k = group === "all" || li.dataset.group === group;
            li.hidden = !k;
            if (k) kept += 1;
          });
          keep = kept > 0;
        } else {
          keep = group === "all" || item.dataset.group === group;
        }
        item.hidden = !keep;
        if (keep) visible += 1;
      });
      toggleEmpty(list, visible);
    });
  }

  buttons.forEach(function (b) {
    b.addEventListener("click", function () { show(b.dataset.state, b.dataset.group || "all"); });
  });
});
