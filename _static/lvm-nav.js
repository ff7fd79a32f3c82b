// Navigation buttons that work (plain JavaScript, no network, no library).
//
// pydata-sphinx-theme 0.17.1 (pinned exactly by sphinx-book-theme 1.3.0) wires the site menu and the
// page contents to the *first* `.primary-toggle` / `.secondary-toggle` of the page
// (document.querySelector), which is the button in the hidden header; sphinx-book-theme's own
// wide-screen handler (collapse the sidebar instead of opening a dialog) is attached to the same hidden
// button. The buttons a reader sees, in the article header, got no handler: nothing opened at any width.
// Here every other toggle of the same kind forwards its click to the first one, so the reader's button
// runs exactly the themes' behaviour (a dialog on a phone, a collapsing sidebar on a desktop).
(function () {
  function forwardToggles() {
    ["primary-toggle", "secondary-toggle"].forEach(function (kind) {
      var toggles = document.querySelectorAll("." + kind);
      if (toggles.length < 2) return;
      var wired = toggles[0];
      for (var i = 1; i < toggles.length; i++) {
        if (toggles[i].dataset.lvmForwarded) continue;
        toggles[i].dataset.lvmForwarded = "1";
        toggles[i].addEventListener("click", function (event) {
          event.preventDefault();
          event.stopPropagation();
          wired.click();
        });
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", forwardToggles);
  } else {
    forwardToggles();
  }
})();
