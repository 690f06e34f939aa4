"""The built book renders in headless Chromium, offline.

The HTML from the session's book build (``built_book``) is served by ``http.server`` on
127.0.0.1 (random port, in a thread). Chromium resolves every other host to nothing, so a page
that needs a CDN (MathJax, require.js, fonts) shows up as a console error. For every page in
``_toc.yml``: it loads, has its title, every ``<img>`` has decoded (naturalWidth > 0) and has alt
text or a figure caption, formulas are typeset by the bundled MathJax, and the browser console
has no SEVERE entries.
"""

from __future__ import annotations

import functools
import http.server
import tempfile
import threading
from pathlib import Path

import pytest

from gpuperf.notebook import toc_files as toc_files_of

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.book, pytest.mark.browser]

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
        browser.set_page_load_timeout(60)
        try:
            yield browser
        finally:
            browser.quit()


def _wait_until_settled(browser) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete)"
        )
    )
    # MathJax typesets asynchronously; wait for it where the page has math.
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return !window.MathJax || !MathJax.startup || !MathJax.startup.promise"
            " ? true : (window.__mj_done === true ||"
            " (MathJax.startup.promise.then(() => { window.__mj_done = true; }), false))"
        )
    )


IMAGES_JS = """
return Array.from(document.querySelectorAll('article img, main img')).map(img => {
  const fig = img.closest('figure');
  const cap = fig ? fig.querySelector('figcaption') : null;
  return {src: img.getAttribute('src'), width: img.naturalWidth,
          alt: (img.getAttribute('alt') || '').trim(),
          caption: cap ? cap.textContent.trim() : ''};
});
"""


@pytest.mark.parametrize("page", toc_pages())
def test_page_renders_offline(page, server, driver, built_book):
    driver.get_log("browser")  # drop entries from earlier pages
    driver.get(f"{server}/{page}.html")
    _wait_until_settled(driver)

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


@pytest.mark.parametrize("page", toc_pages())
def test_scrubbers_move_when_scrubbed(page, server, driver):
    """Every kernel-free figure changes its picture (or its note) when any control moves."""
    driver.get_log("browser")
    driver.get(f"{server}/{page}.html")
    _wait_until_settled(driver)
    results = driver.execute_script(SCRUB_JS)
    count = driver.execute_script("return document.querySelectorAll('.gpuperf-scrubber').length")
    if page in PAGES_WITH_EXPLORERS:
        assert count > 0, f"{page}: expected a kernel-free interactive figure (gpuperf.scrub)"
    frozen = [(r["id"], r["control"]) for r in results if not r["changed"]]
    assert not frozen, f"{page}: scrubbing these controls did not change the figure: {frozen}"
    assert all(r["alt"] for r in results), f"{page}: a scrubber image has no alt text"
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, f"{page}: console errors while scrubbing: {severe}"


#: Pages whose chapter has a live explorer, and so must also have its kernel-free twin.
PAGES_WITH_EXPLORERS = {
    "chapters/01_gpu_anatomy",
    "chapters/02_roofline",
    "chapters/03_1_low_precision",
    "chapters/03_4_coalescing",
    "chapters/03_6_tiling",
    "chapters/03_7_wave_quantization",
    "chapters/04_flashattention",
    "chapters/04_flashattention_algorithm",
    "chapters/05_memory_hierarchy",
}
