// gpuperf book: tap a figure that the column has shrunk (a phone) to see it larger, scrolling
// sideways inside its output box; tap again to fit the column. A bitmap enlarges to its own size;
// a vector figure (SVG, drawn for the column and legible there already) to twice the column, for
// detail. Figures shown at their own size are left alone. Scrubber frames have their own control
// (gpuperf.scrub).
(function () {
  "use strict";
  var FIGURES = ".bd-article .cell_output img, .bd-article figure img";

  function ownWidth(img) {
    var css = parseFloat(img.style.width);
    if (css > 0) return css;
    var attr = parseFloat(img.getAttribute("width"));
    return attr > 0 ? attr : img.naturalWidth;
  }

  function isVector(img) {
    return /\.svg([?#]|$)/i.test(img.currentSrc || img.src);
  }

  function zoom(img) {
    var width = Math.max(ownWidth(img), 2 * img.getBoundingClientRect().width);
    img.classList.add("gpuperf-zoomed");
    img.title = "tap to fit the page";
    if (isVector(img)) {
      img.setAttribute("data-fit-width", img.style.width);
      img.style.width = Math.round(width) + "px";
    }
  }

  function unzoom(img) {
    img.classList.remove("gpuperf-zoomed");
    if (img.hasAttribute("data-fit-width")) {
      img.style.width = img.getAttribute("data-fit-width");
      img.removeAttribute("data-fit-width");
    }
    update(img);
  }

  function update(img) {
    if (img.classList.contains("gpuperf-zoomed")) return;
    var shrunk = img.getBoundingClientRect().width + 1 < ownWidth(img);
    img.classList.toggle("gpuperf-zoomable", shrunk);
    if (shrunk) img.title = "tap to enlarge";
    else img.removeAttribute("title");
  }

  function setUp() {
    var images = Array.prototype.filter.call(document.querySelectorAll(FIGURES), function (img) {
      return !img.closest(".gpuperf-scrubber");
    });
    images.forEach(function (img) {
      if (img.complete) update(img);
      img.addEventListener("load", function () { update(img); });
      // Sphinx links a sized figure to its image file; on a shrunk figure a tap enlarges it in
      // place instead of leaving the page (at its own size, the link works as before).
      img.addEventListener("click", function (event) {
        if (img.classList.contains("gpuperf-zoomed")) {
          event.preventDefault();
          unzoom(img);
        } else if (img.classList.contains("gpuperf-zoomable")) {
          event.preventDefault();
          zoom(img);
        }
      });
    });
    window.addEventListener("resize", function () { images.forEach(update); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();
