"""The built book renders in headless Chromium, offline.

The HTML from the session's book build (``built_book``) is served by ``http.server`` on
127.0.0.1 (random port, in a thread). Chromium resolves every other host to nothing, so a page
that needs a CDN (MathJax, require.js, fonts) shows up as a console error. For every page in
``_toc.yml``: it loads, has its title, every ``<img>`` has decoded (naturalWidth > 0) and has alt
text or a figure caption, formulas are typeset by the bundled MathJax, and the browser console
has no SEVERE entries.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import tempfile
import threading
from pathlib import Path

import pytest

from gpuperf.notebook import toc_files as toc_files_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.book, pytest.mark.browser, pytest.mark.slow]

FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
    # Offline: every host but the local server resolves to nothing.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


#: How long any wait may last before the test calls it a hang. Every wait polls an explicit
#: signal the page gives (readyState, images complete, MathJax's promise, a figure's data-ready,
#: a Vega run's promise, the drawer's link on screen), never a guess of how long work takes, so
#: this cap only turns a hang into a failure; a loaded machine just makes the waits longer.
READY_LIMIT_S = 120
#: How often a wait asks again. Asking is one short script, so the check is cheap; Selenium's
#: default (0.5 s) left the browser idle for up to half a second after most signals.
POLL_S = 0.02


def _until(browser, condition):
    """Wait, asking every ``POLL_S``, until ``condition(browser)`` is true (a hang after
    ``READY_LIMIT_S``); return what it returned."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, READY_LIMIT_S, poll_frequency=POLL_S).until(condition)


def toc_pages() -> list[str]:
    """Every document in _toc.yml (root first), without extension."""
    return toc_files_of(ROOT / "_toc.yml")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def server(built_book):
    if built_book.returncode != 0:
        pytest.fail("the book did not build; see test_book.py", pytrace=False)
    handler = functools.partial(_QuietHandler, directory=str(built_book.html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def driver(chrome_paths):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = chrome_paths
    with tempfile.TemporaryDirectory(prefix="gpuperf-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(chromium)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        browser = webdriver.Chrome(service=Service(str(chromedriver)), options=options)
        browser.set_page_load_timeout(READY_LIMIT_S)
        browser.set_script_timeout(READY_LIMIT_S)
        try:
            yield browser
        finally:
            browser.quit()


def _wait_until_settled(browser, *, load_lazy_images: bool = True) -> None:
    """Wait for the page, its images and MathJax. Images marked ``loading="lazy"`` are loaded
    at once unless ``load_lazy_images`` is False (a first view loads only those on screen)."""
    if load_lazy_images:
        _until(browser, lambda b: b.execute_script("return document.readyState !== 'loading'"))
        browser.execute_script(
            "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')"
        )
    _until(
        browser,
        lambda b: b.execute_script(
            "return document.readyState === 'complete' && Array.from(document.images)"
            ".every(i => i.complete || i.loading === 'lazy')"
        ),
    )
    # MathJax typesets asynchronously; wait for it where the page has math.
    _until(
        browser,
        lambda b: b.execute_script(
            "return !window.MathJax || !MathJax.startup || !MathJax.startup.promise"
            " ? true : (window.__mj_done === true ||"
            " (MathJax.startup.promise.then(() => { window.__mj_done = true; }), false))"
        ),
    )


#: The page each browser shows, settled and as a test left it: session → (URL, the mark put
#: into that very document). The ``page`` parameters have module scope, so pytest runs the
#: tests of one page one after another, and checks that only read a page share one load of it.
_SHOWN: dict[str, tuple[str, str]] = {}


def _show(browser, url: str) -> None:
    """Load ``url`` and wait until it has settled, unless the browser still shows that very
    document (its mark is there) and no test changed it since."""
    shown = _SHOWN.pop(browser.session_id, None)
    if (
        shown
        and shown[0] == url == browser.current_url
        and browser.execute_script("return window.gpuperfShownMark || null") == shown[1]
    ):
        _SHOWN[browser.session_id] = shown
        return
    browser.get(url)
    _keep_as_shown(browser, url)


def _keep_as_shown(browser, url: str) -> None:
    """Let the page just loaded from ``url`` settle and mark it, so that the next tests of
    that page check this very load (:func:`_show`)."""
    import secrets

    _wait_until_settled(browser)
    mark = secrets.token_hex(8)
    browser.execute_script("window.gpuperfShownMark = arguments[0];", mark)
    _SHOWN[browser.session_id] = (url, mark)


def _forget(browser) -> None:
    """The test changes the page and leaves it changed: the next test loads it again."""
    _SHOWN.pop(browser.session_id, None)


@contextlib.contextmanager
def _changing(browser):
    """Around steps that change the page and put it back as it was: if they stop half-way,
    the next test loads the page again."""
    shown = _SHOWN.pop(browser.session_id, None)
    yield
    if shown is not None:
        _SHOWN[browser.session_id] = shown


IMAGES_JS = """
return Array.from(document.querySelectorAll('article img, main img')).map(img => {
  const fig = img.closest('figure');
  const cap = fig ? fig.querySelector('figcaption') : null;
  return {src: img.getAttribute('src'), width: img.naturalWidth,
          alt: (img.getAttribute('alt') || '').trim(),
          caption: cap ? cap.textContent.trim() : ''};
});
"""


@pytest.mark.parametrize("page", toc_pages(), scope="module")
def test_page_renders_offline(page, server, driver, built_book, axe_source):
    driver.get_log("browser")  # drop entries from earlier pages
    _show(driver, f"{server}/{page}.html")
    _screenshot(driver, page, "1280")

    heading = driver.execute_script(
        "const h = document.querySelector('article h1, main h1'); "
        "return h ? h.textContent.replace('#', '').trim() : '';"
    )
    assert heading, f"{page}: no <h1>"
    assert heading.split()[0] in driver.title, (heading, driver.title)

    images = driver.execute_script(IMAGES_JS)
    broken = [i["src"] for i in images if i["width"] == 0]
    assert not broken, f"{page}: images that did not load: {broken}"
    unlabeled = [i["src"] for i in images if not i["alt"] and not i["caption"]]
    assert not unlabeled, f"{page}: images without alt text or caption: {unlabeled}"
    if page.startswith("chapters/"):
        captioned = [i for i in images if i["caption"]]
        assert captioned, f"{page}: a chapter must show at least one captioned figure"

    source = (ROOT / f"{page}.ipynb") if (ROOT / f"{page}.ipynb").exists() else None
    if source is not None and "$$" in source.read_text(encoding="utf-8"):
        typeset = driver.execute_script("return document.querySelectorAll('mjx-container').length")
        assert typeset > 0, f"{page}: formulas were not typeset by MathJax"

    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page}: console errors: {severe}"
    _assert_accessible(driver, page, "1280", axe_source)


SCRUB_JS = """
const results = [];
for (const root of document.querySelectorAll('.gpuperf-scrubber')) {
  const image = root.querySelector('.gpuperf-scrubber-frame');
  const note = root.querySelector('.gpuperf-scrubber-note');
  for (const input of root.querySelectorAll('[data-control]')) {
    const before = image.src + note.textContent;
    const count = input.tagName === 'SELECT' ? input.options.length : Number(input.max) + 1;
    if (count < 2) { continue; }
    const original = input.value;
    input.value = String((Number(original) + 1) % count);
    input.dispatchEvent(new Event(input.tagName === 'SELECT' ? 'change' : 'input'));
    results.push({id: root.id, control: input.getAttribute('aria-label'),
                  changed: image.src + note.textContent !== before, alt: image.alt});
    input.value = original;
    input.dispatchEvent(new Event('input'));
  }
}
return results;
"""


@pytest.mark.parametrize("page", toc_pages(), scope="module")
def test_scrubbers_move_when_scrubbed(page, server, driver):
    """Every kernel-free figure changes its picture (or its note) when any control moves."""
    driver.get_log("browser")
    _show(driver, f"{server}/{page}.html")
    with _changing(driver):  # every control moves one notch and back
        results = driver.execute_script(SCRUB_JS)
    count = driver.execute_script(
        "return document.querySelectorAll('.gpuperf-scrubber, .gpuperf-vega').length"
    )
    if page in PAGES_WITH_EXPLORERS:
        assert count > 0, (
            f"{page}: expected a kernel-free interactive figure (gpuperf.scrub or gpuperf.vega)"
        )
    frozen = [(r["id"], r["control"]) for r in results if not r["changed"]]
    assert not frozen, f"{page}: scrubbing these controls did not change the figure: {frozen}"
    assert all(r["alt"] for r in results), f"{page}: a scrubber image has no alt text"
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page}: console errors while scrubbing: {severe}"


#: Pages whose chapter has a live explorer, and so must also have its kernel-free twin.
PAGES_WITH_EXPLORERS = {
    "chapters/01_gpu_anatomy",
    "chapters/01_1_peak_and_parallelism",
    "chapters/02_roofline",
    "chapters/03_1_low_precision",
    "chapters/03_3_recomputation",
    "chapters/03_4_coalescing",
    "chapters/03_6_tiling",
    "chapters/03_7_wave_quantization",
    "chapters/03_8_asynchrony",
    "chapters/04_flashattention",
    "chapters/04_flashattention_algorithm",
    "chapters/04_inference_decode",
    "chapters/05_memory_hierarchy",
    "chapters/05_collectives",
}


# ------------------------------------------------------------------------------ phones
#: A phone's viewport (CSS pixels), as the issue measured it.
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
#: A chapter page's first view, gzipped (HTML + its JS, CSS, fonts and images), at most.
PAGE_BUDGET_BYTES = 600_000


def _screenshot(browser, page: str, width: str) -> None:
    """Save a screenshot when GPUPERF_SCREENSHOTS names a folder (for a human to look at)."""
    import os

    folder = os.environ.get("GPUPERF_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / f"{page.replace('/', '_')}-{width}.png"))


@pytest.fixture(scope="module")
def phone(chrome_paths):
    """Chromium emulating a 390 × 844 phone (touch, mobile viewport)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, chromedriver = chrome_paths
    with tempfile.TemporaryDirectory(prefix="gpuperf-phone-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(chromium)
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        browser = webdriver.Chrome(service=Service(str(chromedriver)), options=options)
        browser.set_page_load_timeout(READY_LIMIT_S)
        browser.set_script_timeout(READY_LIMIT_S)
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
        browser.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True})
        try:
            yield browser
        finally:
            browser.quit()


#: The sidebar toggle the reader can see (themes have shipped a second, hidden one).
VISIBLE_TOGGLE_JS = """
return Array.from(document.querySelectorAll('.primary-toggle')).filter(b => {
  const r = b.getBoundingClientRect(); const s = getComputedStyle(b);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
});
"""
#: Is the table of contents' link to chapter 1 on screen?
TOC_SHOWN_JS = """
const link = Array.from(document.querySelectorAll('.bd-sidebar-primary a, dialog a'))
  .find(a => (a.getAttribute('href') || '').endsWith('01_gpu_anatomy.html'));
if (!link) { return false; }
const r = link.getBoundingClientRect(); const s = getComputedStyle(link);
return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth + 1
  && s.visibility !== 'hidden' && link.checkVisibility();
"""


def _tap_toggle(browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    toggles = browser.execute_script(VISIBLE_TOGGLE_JS)
    assert len(toggles) == 1, f"expected one visible sidebar button, found {len(toggles)}"
    ActionChains(browser).move_to_element(toggles[0]).click().perform()


def test_table_of_contents_opens_on_a_phone(server, phone):
    page = "chapters/02_roofline"
    _show(phone, f"{server}/{page}.html")
    assert not phone.execute_script(TOC_SHOWN_JS), "the sidebar is open before the tap"
    _tap_toggle(phone)
    _until(phone, lambda b: b.execute_script(TOC_SHOWN_JS))
    _screenshot(phone, page, "390-drawer")


def test_sidebar_collapses_on_a_desktop(server, driver):
    driver.get(f"{server}/chapters/02_roofline.html")
    _wait_until_settled(driver)
    assert driver.execute_script(TOC_SHOWN_JS), "the desktop sidebar is not shown"
    _tap_toggle(driver)
    _until(driver, lambda b: not b.execute_script(TOC_SHOWN_JS))
    _tap_toggle(driver)  # and back, for the tests that follow
    _until(driver, lambda b: b.execute_script(TOC_SHOWN_JS))


WIDE_JS = """
const W = arguments[0]; const wide = [];
for (const el of document.querySelectorAll('main *')) {
  const r = el.getBoundingClientRect();
  if (r.right <= W + 1 || r.width === 0) { continue; }
  let p = el.parentElement, inside = false;
  while (p && p !== document.body) {
    const s = getComputedStyle(p);
    if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX)
        && p.getBoundingClientRect().right <= W + 1) { inside = true; break; }
    p = p.parentElement;
  }
  if (!inside) {
    wide.push(`${el.tagName}.${String(el.className).slice(0, 40)} to ${Math.round(r.right)} px: `
              + (el.textContent || '').trim().slice(0, 50));
  }
}
return wide.slice(0, 5);
"""


# ------------------------------------------------------------------------------ page weight
# A phone's first look at a chapter page is its first view: loaded with the cache off, measured,
# then settled (lazy images too) and kept, so that the phone's other checks of that page, which
# pytest runs right after it (the ``page`` parameters have module scope), share this one load.
FIRST_VIEW_JS = """
return [location.href].concat(performance.getEntriesByType('resource').map(e => e.name));
"""


def first_view_bytes(browser, server: str, html: Path, page: str) -> dict[str, int]:
    """Gzipped bytes (level 6, as a web server sends them) of every file a first view of
    ``page`` fetched from the book: the HTML and its JS, CSS, fonts and images."""
    import gzip
    from urllib.parse import unquote, urlsplit

    _forget(browser)  # a new load, whatever the browser showed
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    browser.get(f"{server}/{page}.html")
    _wait_until_settled(browser, load_lazy_images=False)
    sizes = {}
    for url in dict.fromkeys(browser.execute_script(FIRST_VIEW_JS)):
        if not url.startswith(server):
            continue
        path = html / unquote(urlsplit(url).path).lstrip("/")
        if path.is_file():
            sizes[path.relative_to(html).as_posix()] = len(gzip.compress(path.read_bytes(), 6))
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    _keep_as_shown(browser, f"{server}/{page}.html")
    return sizes


@pytest.mark.parametrize(
    "page", [p for p in toc_pages() if p.startswith("chapters/")], scope="module"
)
def test_chapter_page_weight_on_first_view(page, server, phone, built_book):
    sizes = first_view_bytes(phone, server, built_book.html, page)
    total = sum(sizes.values())
    print(f"\npage weight {page}: {total / 1000:.0f} kB gzipped, {len(sizes)} files")
    heaviest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert f"{page}.html" in sizes, sorted(sizes)
    assert total <= PAGE_BUDGET_BYTES, (
        f"{page}: {total / 1000:.0f} kB gzipped on first view > {PAGE_BUDGET_BYTES / 1000:.0f} "
        f"kB; heaviest: {[(name, round(size / 1000)) for name, size in heaviest]}"
    )


@pytest.mark.parametrize("page", toc_pages(), scope="module")
def test_no_page_scrolls_sideways_on_a_phone(page, server, phone, axe_source):
    _show(phone, f"{server}/{page}.html")
    _screenshot(phone, page, "390")
    width = phone.execute_script("return document.documentElement.scrollWidth")
    if width > PHONE["width"]:
        wide = phone.execute_script(WIDE_JS, PHONE["width"])
        pytest.fail(f"{page} is {width} px wide at {PHONE['width']} px: {wide}", pytrace=False)
    _assert_accessible(phone, page, "390", axe_source)


#: Mark the widest static figure of a page (scrubber and Vega figures excepted) and report it.
WIDEST_FIGURE_JS = """
const imgs = Array.from(document.querySelectorAll('.bd-article .cell_output img'))
  .filter(i => !i.closest('.gpuperf-scrubber'));
imgs.forEach(i => { i.loading = 'eager'; });
const img = imgs.sort((a, b) => b.naturalWidth - a.naturalWidth)[0];
if (!img) { return null; }
img.setAttribute('data-zoom-test', '1');
img.scrollIntoView({block: 'center'});
const r = img.getBoundingClientRect();
return {zoomable: img.classList.contains('gpuperf-zoomable'), natural: img.naturalWidth,
        aspect: [r.height / r.width, img.naturalHeight / img.naturalWidth]};
"""
#: Tap the marked figure; report its width and the page's.
TAP_FIGURE_JS = """
const img = document.querySelector('img[data-zoom-test]');
img.click();
return [img.getBoundingClientRect().width, document.documentElement.scrollWidth];
"""


def test_a_shrunk_figure_enlarges_on_a_tap(server, phone):
    """Chapter 1's widest figure is shrunk to the phone's column; a tap shows it at its own size
    inside its output box (the page still does not scroll sideways); a second tap fits it again."""
    phone.get(f"{server}/chapters/01_gpu_anatomy.html")
    _wait_until_settled(phone)
    _until(phone, lambda b: (b.execute_script(WIDEST_FIGURE_JS) or {}).get("natural"))
    before = phone.execute_script(WIDEST_FIGURE_JS)
    assert before["zoomable"], f"the widest figure is not marked for a tap: {before}"
    shown, own = before["aspect"]
    assert abs(shown - own) < 0.02 * own, f"the shrunk figure is distorted: {before}"
    width, page_width = phone.execute_script(TAP_FIGURE_JS)
    assert phone.current_url.endswith("01_gpu_anatomy.html"), "the tap left the page"
    assert width > PHONE["width"], f"the tapped figure is {width} px wide, not enlarged"
    assert page_width <= PHONE["width"], "the enlarged figure scrolls the page, not its own box"
    _screenshot(phone, "chapters/01_gpu_anatomy", "390-figure-enlarged")
    width, _ = phone.execute_script(TAP_FIGURE_JS)
    assert width < PHONE["width"], "a second tap did not fit the figure to the column again"


# ------------------------------------------------------------------------------ vega figures
#: Pages whose kernel-free twin is a client-side gpuperf.vega figure (every live control).
PAGES_WITH_VEGA = {
    "chapters/01_gpu_anatomy",
    "chapters/01_1_peak_and_parallelism",
    "chapters/02_roofline",
    "chapters/03_1_low_precision",
    "chapters/03_3_recomputation",
    "chapters/03_4_coalescing",
    "chapters/03_6_tiling",
    "chapters/03_7_wave_quantization",
    "chapters/03_8_asynchrony",
    "chapters/04_inference_decode",
    "chapters/04_flashattention",
    "chapters/04_flashattention_algorithm",
    "chapters/05_collectives",
    "chapters/05_memory_hierarchy",
}

#: Every gpuperf.vega figure of the page, in reading order.
VEGA_IDS_JS = "return Array.from(document.querySelectorAll('.gpuperf-vega')).map(r => r.id);"
#: Keep one figure in the middle of the screen, as a reader does, and report whether it has drawn
#: (the page sets ``data-ready="1"`` once the SVG and its controls are in place). The jump is
#: instant: the theme sets ``scroll-behavior: smooth``, which would animate the scroll instead.
VEGA_SHOWN_AND_READY_JS = """
const root = document.getElementById(arguments[0]);
if (root.getAttribute('data-ready') === '1') { return true; }
root.scrollIntoView({block: 'center', behavior: 'instant'});
return false;
"""
#: For every bound control of every figure: move it one notch, return the SVG before and after.
VEGA_CONTROLS_JS = """
const root = document.getElementById(arguments[0]);
const inputs = root.querySelectorAll('.gpuperf-vega-controls [name]');
return Array.from(inputs)
  .map(i => ({name: i.getAttribute('name'), tag: i.tagName, value: i.value,
              count: i.tagName === 'SELECT' ? i.options.length : Number(i.max) + 1}));
"""
#: Move a control as a reader does (its input and change events), then wait for the figure's
#: Vega view to finish the run those events started (``runAsync`` resolves after the redraw) and
#: hand back the callback's argument: nothing is compared before the picture is final.
VEGA_SET_JS = """
const [uid, name, value, done] = arguments;
const root = document.getElementById(uid);
const input = root.querySelector(`[name="${name}"]`);
input.value = String(value);
input.dispatchEvent(new Event('input', {bubbles: true}));
input.dispatchEvent(new Event('change', {bubbles: true}));
root.gpuperfView.runAsync().then(() => done(null), error => done(String(error)));
"""
VEGA_PICTURE_JS = """
const root = document.getElementById(arguments[0]);
const svg = root.querySelector('.gpuperf-vega-chart svg');
return svg ? svg.outerHTML + root.querySelector('.gpuperf-vega-note').textContent : '';
"""


def _wait_for_each_vega_figure(browser, ids: list[str]) -> None:
    """Keep each figure of ``ids`` on screen in turn until it has drawn."""
    for uid in ids:
        _until(browser, lambda b, uid=uid: b.execute_script(VEGA_SHOWN_AND_READY_JS, uid))


def _show_vega_figures(browser) -> list[str]:
    """Bring each figure to the middle of the screen in turn and wait until it has drawn.

    A figure starts drawing when an IntersectionObserver sees it within 400 px of the screen,
    and observers look at the page only when the browser renders a frame. The theme scrolls
    smoothly, so a far ``scrollIntoView`` is an animation whose steps grow with the distance
    and with every frame a busy machine drops (~1,900 px a frame on an idle 2-core machine at
    390 px): a figure the animation jumps over is never seen and, correctly for a reader who
    scrolled past it, never drawn. Scrolling to every figure at once and waiting for all of them
    therefore timed out now and then on pages with two figures far apart. So each figure is
    kept on screen (jumping there instantly) until its own ``data-ready`` signal."""
    ids = browser.execute_script(VEGA_IDS_JS)
    _wait_for_each_vega_figure(browser, ids)
    return ids


def _set_vega_control(browser, uid: str, name: str, value: int) -> None:
    error = browser.execute_async_script(VEGA_SET_JS, uid, name, value)
    assert error is None, f"{uid}: setting {name}={value} failed: {error}"


def test_a_figure_scrolled_past_is_drawn_once_it_is_shown(server, phone):
    """The cause of the old flaky wait, reproduced without timing: jumping past the first of two
    figures between two frames never starts it (the page loads figures lazily, as it should);
    showing each figure in turn draws both."""
    phone.get(f"{server}/chapters/03_1_low_precision.html")
    _wait_until_settled(phone)
    ids = phone.execute_script(VEGA_IDS_JS)
    assert len(ids) == 2, ids
    phone.execute_script(
        "arguments[0].forEach(uid => document.getElementById(uid)"
        "  .scrollIntoView({block: 'center', behavior: 'instant'}));",
        ids,
    )
    _wait_for_each_vega_figure(phone, ids[1:])
    started = 'return document.getElementById(arguments[0]).getAttribute("data-started")'
    assert phone.execute_script(started, ids[0]) is None, "a figure never shown was drawn"
    assert _show_vega_figures(phone) == ids


@pytest.mark.parametrize("page", sorted(PAGES_WITH_VEGA), scope="module")
def test_vega_figures_draw_and_every_control_moves_them(page, server, driver):
    """The figure draws an SVG offline; moving any bound control changes the picture or its
    note; nothing is logged to the console as an error."""
    driver.get_log("browser")
    _show(driver, f"{server}/{page}.html")
    ids = _show_vega_figures(driver)
    assert ids, f"{page}: expected a gpuperf.vega figure"
    frozen = []
    with _changing(driver):  # each control moves one notch and back
        for uid in ids:
            before_all = driver.execute_script(VEGA_PICTURE_JS, uid)
            assert "<svg" in before_all, f"{page}: {uid} drew no SVG"
            controls = driver.execute_script(VEGA_CONTROLS_JS, uid)
            assert controls, f"{page}: {uid} has no controls"
            for c in controls:
                before = driver.execute_script(VEGA_PICTURE_JS, uid)
                # a notch that lands on a combination with data: the next value, or the previous
                _set_vega_control(driver, uid, c["name"], (int(c["value"]) + 1) % c["count"])
                if driver.execute_script(VEGA_PICTURE_JS, uid) == before:
                    frozen.append((uid, c["name"]))
                _set_vega_control(driver, uid, c["name"], c["value"])
    _screenshot(driver, page, "1280-vega")
    assert not frozen, f"{page}: moving these controls did not change the figure: {frozen}"
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page}: console errors: {severe}"


@pytest.mark.parametrize("page", sorted(PAGES_WITH_VEGA), scope="module")
def test_vega_figures_fit_a_phone(page, server, phone):
    """Drawn at 390 px, a figure is as wide as its column: the page does not scroll sideways,
    and the chart's text is at least 12 px (9 pt), the size the issue asks for at 390 px."""
    _show(phone, f"{server}/{page}.html")
    ids = _show_vega_figures(phone)
    _screenshot(phone, page, "390-vega")
    width = phone.execute_script("return document.documentElement.scrollWidth")
    if width > PHONE["width"]:
        wide = phone.execute_script(WIDE_JS, PHONE["width"])
        pytest.fail(f"{page} is {width} px wide at {PHONE['width']} px: {wide}", pytrace=False)
    for uid in ids:
        right, smallest = phone.execute_script(
            "const svg = document.getElementById(arguments[0]).querySelector('svg');"
            "const sizes = Array.from(svg.querySelectorAll('text')).filter(t => t.textContent)"
            "  .map(t => parseFloat(getComputedStyle(t).fontSize));"
            "return [svg.getBoundingClientRect().right, Math.min(...sizes)];",
            uid,
        )
        assert right <= PHONE["width"] + 1, f"{page}: {uid} ends at {right} px"
        assert smallest >= 12, f"{page}: {uid} draws text at {smallest:.1f} px (< 9 pt)"


# ------------------------------------------------------------------------------ accessibility
# axe-core (the ``axe_source`` fixture of tests/conftest.py) is the accessibility engine of
# Lighthouse and of browsers' devtools, from npm, pinned in tests/a11y/package-lock.json.
#: Impacts that fail a page (axe's scale: minor, moderate, serious, critical).
FAILING_IMPACTS = ("serious", "critical")
AXE_RUN_JS = """
const done = arguments[0];
axe.run(document, {resultTypes: ['violations']}).then(result => done(result.violations.map(
  v => ({id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
         where: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))), e => done(String(e)));
"""


def _assert_accessible(browser, page: str, width: str, axe_source: str) -> None:
    """Draw the page's Vega figures (their SVG is audited too), run axe-core over the whole
    document and fail on any serious or critical violation. With ``GPUPERF_A11Y_REPORT`` set
    to a file, every violation of every impact is appended to it as one JSON line per page."""
    import json
    import os

    if page in PAGES_WITH_VEGA:
        _show_vega_figures(browser)
    browser.execute_script(axe_source)
    violations = browser.execute_async_script(AXE_RUN_JS)
    assert isinstance(violations, list), f"{page}: axe-core failed: {violations}"
    report = os.environ.get("GPUPERF_A11Y_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as out:
            out.write(json.dumps({"page": page, "width": width, "violations": violations}) + "\n")
    failing = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    assert not failing, f"{page} at {width} px: accessibility violations: {failing}"


#: The keyboard's way into the drawer: focus the visible sidebar button by tabbing from the top
#: of the page; report whether it has focus.
TOGGLE_FOCUSED_JS = """
const focused = document.activeElement;
return !!focused && focused.classList.contains('primary-toggle');
"""


def test_the_drawer_opens_and_closes_from_the_keyboard(server, phone):
    """Tab reaches the sidebar button, Enter opens the drawer, Escape closes it."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    phone.get(f"{server}/chapters/02_roofline.html")
    _wait_until_settled(phone)
    phone.execute_script("document.activeElement && document.activeElement.blur()")
    for _ in range(15):  # a few links (skip link, logo, …) come before the button
        ActionChains(phone).send_keys(Keys.TAB).perform()
        if phone.execute_script(TOGGLE_FOCUSED_JS):
            break
    assert phone.execute_script(TOGGLE_FOCUSED_JS), "Tab never reached the sidebar button"
    ActionChains(phone).send_keys(Keys.ENTER).perform()
    _until(phone, lambda b: b.execute_script(TOC_SHOWN_JS))
    ActionChains(phone).send_keys(Keys.ESCAPE).perform()
    _until(phone, lambda b: not b.execute_script(TOC_SHOWN_JS))


@pytest.mark.parametrize(
    "page", ["chapters/02_roofline", "chapters/05_collectives"], scope="module"
)
def test_every_vega_control_works_from_the_keyboard(page, server, driver):
    """Each slider and drop-down of a figure takes focus and moves with an arrow key, and the
    picture (or its note) changes: no control needs a mouse."""
    from selenium.webdriver.common.keys import Keys

    _show(driver, f"{server}/{page}.html")
    frozen = []
    _forget(driver)  # the arrow keys leave the controls moved
    for uid in _show_vega_figures(driver):
        inputs = driver.execute_script(
            "return Array.from(document.getElementById(arguments[0])"
            "  .querySelectorAll('.gpuperf-vega-controls [name]'));",
            uid,
        )
        for element in inputs:
            name = element.get_attribute("name")
            assert driver.execute_script("return arguments[0].tabIndex >= 0", element), name
            before = driver.execute_script(VEGA_PICTURE_JS, uid)
            at_end = driver.execute_script(
                "const i = arguments[0]; return i.tagName === 'SELECT'"
                "  ? i.selectedIndex === i.options.length - 1 : Number(i.value) >= Number(i.max);",
                element,
            )
            element.send_keys(Keys.ARROW_LEFT if at_end else Keys.ARROW_RIGHT)
            assert driver.execute_script("return document.activeElement === arguments[0]", element)
            driver.execute_async_script(
                "const [uid, done] = arguments;"
                "document.getElementById(uid).gpuperfView.runAsync().then(() => done(null));",
                uid,
            )
            if driver.execute_script(VEGA_PICTURE_JS, uid) == before:
                frozen.append((uid, name))
    assert not frozen, f"{page}: these controls did not move from the keyboard: {frozen}"


# ------------------------------------------------------------------------------ figures on a phone
# Every figure reads on a phone without a tap (issue 26): text at 12 CSS px (9 pt) or more as
# displayed, tick labels that do not touch, markers that the axes do not cut. Static figures are
# SVG with real text (gpuperf.figures): the test fetches each one, draws it hidden in the page at
# the width the reader sees, and measures it with the browser's own fonts.
#: Smallest text a reader sees without a tap, in CSS px (9 pt).
MIN_TEXT_PX = 12
#: Smallest gap between neighbouring tick labels across an axis, in CSS px: one em at 12 px, less
#: a pixel of rounding (gpuperf.vega asks Vega for 12; stacked labels need only not overlap).
MIN_LABEL_GAP_PX = 11

#: Helpers shared by the figure checks: the smallest text of an SVG (font size × the scale it
#: is shown at), tick labels closer than ``gap`` px along an axis (``axes``: a list of [the
#: elements holding one tick label each, whether the axis runs across]; labels stacked up an
#: axis must only not overlap), and markers the plot area cuts (a marker crossing the edge of
#: its clip rectangle: neither wholly inside nor wholly outside).
SVG_CHECKS_JS = """
window.gpuperfSvgChecks = function (svg, scale, gap, axes) {
  const words = Array.from(svg.querySelectorAll('text, tspan')).filter(t =>
    Array.from(t.childNodes).some(n => n.nodeType === 3 && n.textContent.trim()));
  let smallest = Infinity, smallestText = '';
  for (const t of words) {
    const size = parseFloat(getComputedStyle(t).fontSize) * scale;
    if (size < smallest) { smallest = size; smallestText = t.textContent.trim(); }
  }
  const touching = [];
  for (const [ticks, across] of axes) {
    // one box per tick label (a label may be several lines, each its own <text>)
    const boxes = ticks.map(tick => {
      // Vega hides a label it drops for overlap by making it transparent
      const lines = (tick.tagName === 'text' ? [tick] : Array.from(tick.querySelectorAll('text')))
        .filter(t => t.textContent.trim() && t.checkVisibility({opacityProperty: true}));
      if (!lines.length) { return null; }
      const r = lines.map(t => t.getBoundingClientRect());
      return {text: lines.map(t => t.textContent.trim()).join(' '),
              left: Math.min(...r.map(b => b.left)), right: Math.max(...r.map(b => b.right)),
              top: Math.min(...r.map(b => b.top)), bottom: Math.max(...r.map(b => b.bottom))};
    }).filter(b => b);
    boxes.sort((a, b) => across ? a.left - b.left : a.top - b.top);
    for (let i = 1; i < boxes.length; i++) {
      const [prev, next] = [boxes[i - 1], boxes[i]];
      const space = across ? next.left - prev.right : next.top - prev.bottom;
      if (space < (across ? gap : 0)) {
        touching.push(`${prev.text} | ${next.text}: ${space.toFixed(1)} px`);
      }
    }
  }
  const cut = [];
  for (const group of svg.querySelectorAll('[clip-path]')) {
    const id = (group.getAttribute('clip-path').match(/#([^)]+)/) || [])[1];
    const rect = id && svg.querySelector(`clipPath[id="${id}"] rect`);
    if (!rect) { continue; }
    const m = group.getScreenCTM();
    const corner = (x, y) => new DOMPoint(x, y).matrixTransform(m);
    const [x, y] = [rect.x.baseVal.value, rect.y.baseVal.value];
    const [w, h] = [rect.width.baseVal.value, rect.height.baseVal.value];
    const a = corner(x, y), b = corner(x + w, y + h);
    const [left, right] = [Math.min(a.x, b.x), Math.max(a.x, b.x)];
    const [top, bottom] = [Math.min(a.y, b.y), Math.max(a.y, b.y)];
    const markers = group.matches('.mark-symbol') ? group.querySelectorAll('path')
      : group.querySelectorAll('use');
    for (const marker of markers) {
      const r = marker.getBoundingClientRect();
      if (r.width === 0) { continue; }
      const inside = r.left >= left - 0.5 && r.right <= right + 0.5 && r.top >= top - 0.5
        && r.bottom <= bottom + 0.5;
      const outside = r.right <= left || r.left >= right || r.bottom <= top || r.top >= bottom;
      if (!inside && !outside) {
        cut.push(`marker at (${Math.round(r.left - left)}, ${Math.round(r.top - top)}) px in a `
                 + `${Math.round(right - left)} × ${Math.round(bottom - top)} px plot`);
      }
    }
  }
  return {smallest, smallestText, touching, cut};
};
"""
#: Every static figure of the page (scrubber and Vega figures have their own checks), answers
#: opened: wait for it to load (its load event), then, for an SVG, fetch it, draw it hidden at
#: the width it is shown and measure it. A matplotlib axis holds one ``xtick_*`` or ``ytick_*``
#: group per tick.
STATIC_FIGURES_JS = (
    SVG_CHECKS_JS
    + """
const [gap, done] = arguments;
// a figure in an answer shows once its <details> is opened, as a reader does
document.querySelectorAll('.bd-article details').forEach(d => { d.open = true; });
const images = Array.from(document.querySelectorAll('.bd-article img'))
  .filter(i => !i.closest('.gpuperf-scrubber, .gpuperf-vega'));
const loaded = img => img.complete ? Promise.resolve() : new Promise(resolve => {
  img.addEventListener('load', resolve, {once: true});
  img.addEventListener('error', resolve, {once: true});
});
(async () => {
  const results = [];
  for (const img of images) {
    img.loading = 'eager';
    await loaded(img);
    const src = img.currentSrc || img.src;
    const shown = img.getBoundingClientRect().width;
    const inline = src.startsWith('data:');
    const result = {src: inline ? src.slice(0, 30) + '…' : src.split('/').pop(), shown,
                    vector: /\\.svg$/i.test(src) || src.startsWith('data:image/svg+xml')};
    results.push(result);
    if (!result.vector) { continue; }
    const text = await (await fetch(src)).text();
    const svg = document.importNode(
      new DOMParser().parseFromString(text, 'image/svg+xml').documentElement, true);
    const box = svg.viewBox.baseVal;
    const scale = shown / box.width;
    svg.setAttribute('width', shown);
    svg.setAttribute('height', box.height * scale);
    const holder = document.createElement('div');
    holder.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden;';
    holder.appendChild(svg);
    document.body.appendChild(holder);
    const axes = Array.from(svg.querySelectorAll('g[id^="matplotlib.axis"]')).map(axis => {
      const ticks = Array.from(axis.querySelectorAll(':scope > g[id^="xtick"], '
                                                     + ':scope > g[id^="ytick"]'));
      return [ticks, ticks.length > 0 && ticks[0].id.startsWith('xtick')];
    });
    Object.assign(result, gpuperfSvgChecks(svg, scale, gap, axes));
    holder.remove();
  }
  return results;
})().then(done, error => done(String(error)));
"""
)


def static_figure_pages() -> list[str]:
    """Pages that show a figure as an image: a notebook's output (matplotlib's SVG, or a
    bitmap) or a Markdown page's image (the front page's roofline)."""

    def shows_an_image(page: str) -> bool:
        notebook, markdown = ROOT / f"{page}.ipynb", ROOT / f"{page}.md"
        if notebook.exists():
            return '"image/' in notebook.read_text(encoding="utf-8")
        return markdown.exists() and "{image}" in markdown.read_text(encoding="utf-8")

    pages = [page for page in toc_pages() if shows_an_image(page)]
    return pages


@pytest.mark.parametrize("page", static_figure_pages(), scope="module")
def test_static_figures_read_on_a_phone(page, server, phone):
    """At 390 px every static figure is SVG with real text, its smallest word is at least 12 px
    as displayed (font size × displayed width ÷ drawn width), its tick labels keep apart and the
    axes cut no marker."""
    _show(phone, f"{server}/{page}.html")
    results = phone.execute_async_script(STATIC_FIGURES_JS, MIN_LABEL_GAP_PX)
    assert isinstance(results, list), f"{page}: measuring failed: {results}"
    assert results, f"{page}: no static figure found"
    problems = []
    for r in results:
        print(
            f"\n{page} {r['src']}: shown {r['shown']:.0f} px, smallest text "
            f"{r.get('smallest', 0):.1f} px ({r.get('smallestText', '')!r})"
        )
        if not r["vector"]:
            problems.append(f"{r['src']} is a bitmap: its text cannot be measured (use SVG)")
            continue
        if r["smallest"] < MIN_TEXT_PX:
            problems.append(f"{r['src']}: {r['smallestText']!r} at {r['smallest']:.1f} px")
        problems += [f"{r['src']}: tick labels touch: {t}" for t in r["touching"]]
        problems += [f"{r['src']}: {c}" for c in r["cut"]]
    assert not problems, f"{page} at {PHONE['width']} px: " + "; ".join(problems)


#: The same checks on every Vega figure of the page, as drawn (inline SVG: scale 1).
VEGA_CHECKS_JS = (
    SVG_CHECKS_JS
    + """
const [uid, gap] = arguments;
const svg = document.getElementById(uid).querySelector('.gpuperf-vega-chart svg');
const axes = Array.from(svg.querySelectorAll('.role-axis')).map(axis => {
  const ticks = Array.from(axis.querySelectorAll('.role-axis-label text'));
  // an axis runs across when its labels spread more sideways than up and down
  const spread = f => Math.max(...ticks.map(f)) - Math.min(...ticks.map(f));
  const box = t => t.getBoundingClientRect();
  return [ticks, spread(t => box(t).left) > spread(t => box(t).top)];
});
return gpuperfSvgChecks(svg, 1, gap, axes);
"""
)
#: Controls a reader cannot read in full: a drop-down whose longest option is wider than the
#: drop-down (the browser cuts it with "…"), or any control reaching past the figure's edge.
CONTROLS_CUT_JS = """
const root = document.getElementById(arguments[0]);
const edge = root.getBoundingClientRect().right;
const cut = [];
for (const select of root.querySelectorAll('.gpuperf-vega-controls select')) {
  const probe = select.cloneNode(true);
  probe.style.cssText = 'position:absolute;visibility:hidden;width:auto;max-width:none';
  select.parentNode.appendChild(probe);
  const needed = probe.getBoundingClientRect().width;
  probe.remove();
  const has = select.getBoundingClientRect().width;
  if (needed > has + 1) {
    cut.push(`${select.name}: "${select.options[select.selectedIndex].text}" needs `
             + `${Math.round(needed)} px, has ${Math.round(has)}`);
  }
}
for (const control of root.querySelectorAll('.gpuperf-vega-controls *')) {
  const r = control.getBoundingClientRect();
  if (r.width > 0 && r.right > edge + 1) {
    cut.push(`${control.tagName.toLowerCase()} ends at ${Math.round(r.right)} px, past the `
             + `figure's edge at ${Math.round(edge)} px`);
  }
}
return cut;
"""


def _vega_defects(browser, uid: str) -> list[str]:
    """Touching tick labels and cut markers of one drawn Vega figure."""
    checks = browser.execute_script(VEGA_CHECKS_JS, uid, MIN_LABEL_GAP_PX)
    return [f"{uid}: tick labels touch: {t}" for t in checks["touching"]] + [
        f"{uid}: {c}" for c in checks["cut"]
    ]


@pytest.mark.parametrize("page", sorted(PAGES_WITH_VEGA), scope="module")
def test_vega_figures_keep_labels_markers_and_controls_whole_on_a_phone(page, server, phone):
    """At 390 px: no tick labels touching, no marker cut by the axes, no control cut off."""
    _show(phone, f"{server}/{page}.html")
    problems = []
    for uid in _show_vega_figures(phone):
        problems += _vega_defects(phone, uid)
        cut = phone.execute_script(CONTROLS_CUT_JS, uid)
        problems += [f"{uid}: control cut: {c}" for c in cut]
    assert not problems, f"{page} at {PHONE['width']} px: " + "; ".join(problems)


@pytest.mark.parametrize("page", sorted(PAGES_WITH_VEGA), scope="module")
def test_vega_figures_keep_labels_and_markers_whole_on_a_desktop(page, server, driver):
    """At 1280 px: no tick labels touching, no marker cut by the axes."""
    _show(driver, f"{server}/{page}.html")
    problems = [p for uid in _show_vega_figures(driver) for p in _vega_defects(driver, uid)]
    assert not problems, f"{page} at 1280 px: " + "; ".join(problems)


# ------------------------------------------------------------------------------ navigation
#: The words of the table of contents, in order: the drawer when it is open (a phone), else the
#: sidebar. Each entry: its text and, for a link, its level in the tree (1 chapter, 2 section).
NAV_TEXTS_JS = """
const open = document.querySelector('dialog[open]');
const nav = open || document.querySelector('.bd-sidebar-primary');
return Array.from(nav.querySelectorAll('a, .caption-text'))
  .map(e => ({text: e.textContent.replace(/\\s+/g, ' ').trim(),
              level: (e.closest('li[class*="toctree-l"]') || {className: ''}).className
                .replace(/.*toctree-l(\\d).*/, '$1')}))
  .filter(e => e.text);
"""


def _navigation_defects(entries: list[dict]) -> list[str]:
    """Texts that read twice, and chapter or section numbers that skip or repeat."""
    import collections
    import re

    counts = collections.Counter(e["text"] for e in entries)
    defects = [f"{text!r} appears {n} times" for text, n in counts.items() if n > 1]
    chapter, section = 0, 0
    for e in entries:
        if m := re.match(r"(\d+) · ", e["text"]):
            if int(m.group(1)) != chapter + 1:
                defects.append(f"{e['text']!r} follows chapter {chapter}")
            chapter, section = int(m.group(1)), 0
        elif m := re.match(r"(\d+)\.(\d+) · ", e["text"]):
            if (int(m.group(1)), int(m.group(2))) != (chapter, section + 1):
                defects.append(f"{e['text']!r} follows {chapter}.{section}")
            section = int(m.group(2))
    if chapter == 0:
        defects.append("no numbered chapter found")
    return defects


def test_the_sidebar_reads_each_title_once_and_numbers_without_gaps(server, driver):
    driver.get(f"{server}/chapters/02_roofline.html")
    _wait_until_settled(driver)
    entries = driver.execute_script(NAV_TEXTS_JS)
    defects = _navigation_defects(entries)
    assert not defects, f"sidebar: {defects}; entries: {[e['text'] for e in entries]}"


def test_the_drawer_reads_each_title_once_and_numbers_without_gaps(server, phone):
    phone.get(f"{server}/chapters/02_roofline.html")
    _wait_until_settled(phone)
    _tap_toggle(phone)
    _until(phone, lambda b: b.execute_script(TOC_SHOWN_JS))
    entries = phone.execute_script(NAV_TEXTS_JS)
    _screenshot(phone, "chapters/02_roofline", "390-drawer-open")
    defects = _navigation_defects(entries)
    assert not defects, f"drawer: {defects}; entries: {[e['text'] for e in entries]}"


def test_mathjax_loads_only_on_pages_with_maths(server, phone, built_book):
    """The front page has no formula: no MathJax; chapter 2 has formulas: MathJax typesets."""
    intro = first_view_bytes(phone, server, built_book.html, "intro")
    assert not [name for name in intro if "mathjax" in name], sorted(intro)
    roofline = first_view_bytes(phone, server, built_book.html, "chapters/02_roofline")
    assert [name for name in roofline if "mathjax" in name], sorted(roofline)
