"""The HTML report in a real headless Chromium (issue 13): at 1280 and 420 CSS px wide, as delivered and
with every <details> section open, every <img> decodes (naturalWidth > 0), nothing makes the page wider
than the window (document.documentElement.scrollWidth <= window.innerWidth; wide tables scroll inside their
own wrapper), no image is drawn wider than the window, and the screenshots are real PNGs of that width
with something on them. scripts/deps.sh installs chromium for `make test`; the test skips only when it is
missing and cannot be installed. Screenshots are kept in $PMB_SCREENSHOT_DIR when that is set."""
import io
import os
import shutil

import pytest

import chromium
import test_report_plots as rp
from pmb import plots, report

pytestmark = pytest.mark.skipif(not plots.available(), reason="matplotlib not installed (scripts/deps.sh installs it)")

WIDTHS = (1280, 420)

# Elements inside a scroll wrapper (.tw, pre) may be wider than the window: they scroll on their own.
CHECK = r"""
(async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const iw = window.innerWidth, over = [];
  for (const el of document.body.querySelectorAll('*')) {
    const wrap = el.parentElement && el.parentElement.closest('.tw, pre');
    if (wrap) continue;
    const r = el.getBoundingClientRect();
    if ((r.width > 0 || r.height > 0) && (r.right > iw + 0.5 || r.left < -0.5))
      over.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' ' +
                Math.round(r.left) + '..' + Math.round(r.right));
  }
  const shown = imgs.filter(i => i.checkVisibility ? i.checkVisibility() : i.getClientRects().length > 0);
  return {imgs_total: imgs.length,
          imgs_broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt),
          imgs_shown: shown.length,
          imgs_too_wide: shown.filter(i => i.getBoundingClientRect().width > iw + 0.5).map(i => i.alt),
          scrollWidth: document.documentElement.scrollWidth, bodyScrollWidth: document.body.scrollWidth,
          innerWidth: iw, overflowing: over.slice(0, 20),
          details: document.querySelectorAll('details').length,
          details_open: document.querySelectorAll('details[open]').length};
})()
"""

OPEN_ALL = "document.querySelectorAll('details').forEach(d => { d.open = true; }); true"


@pytest.fixture(scope="module")
def browser_bin():
    path, why = chromium.find_or_install()
    if path is None:
        pytest.skip(why)
    return path


@pytest.fixture(scope="module")
def report_page(tmp_path_factory):
    """The report of a run with every figure, written as `report --html` writes it."""
    d = tmp_path_factory.mktemp("browser")
    doc = report.build(rp.rich(), want_plots=True)
    assert sorted(n for n, _ in doc.images()) == sorted(rp.ALL_FIGURES)
    p = d / "report.html"
    p.write_text(report.to_html(doc), encoding="utf-8")
    return p, len(doc.images())


def _png_checked(data, width):
    import matplotlib.image as mpimg
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    a = mpimg.imread(io.BytesIO(data), format="png")
    assert a.shape[1] == width and a.shape[0] >= 300
    assert float(a[..., :3].std()) > 0.02          # not a blank page
    return a


def _keep(name, data):
    keep = os.environ.get("PMB_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        with open(os.path.join(keep, name), "wb") as f:
            f.write(data)


@pytest.mark.parametrize("width", WIDTHS)
def test_report_in_chromium(browser_bin, report_page, width):
    path, n_images = report_page
    with chromium.Browser(browser_bin) as b:
        page = b.page(path.as_uri(), width)
        closed = page.eval(CHECK)
        shot = page.screenshot(full_page=False)
        page.eval(OPEN_ALL)
        opened = page.eval(CHECK)
        full = page.screenshot(full_page=True)
    for state, c in (("as delivered", closed), ("all sections open", opened)):
        assert c["innerWidth"] == width, (state, c)
        assert c["imgs_total"] == n_images, (state, c)
        assert c["imgs_broken"] == [], (state, c)
        assert c["scrollWidth"] <= c["innerWidth"], (state, c)
        assert c["bodyScrollWidth"] <= c["innerWidth"], (state, c)
        assert c["overflowing"] == [], (state, c)
        assert c["imgs_too_wide"] == [], (state, c)
    assert closed["details"] >= 10 and closed["details_open"] == len(report.OPEN_SECTIONS)   # Disagreements, Table 2
    assert opened["details_open"] == opened["details"]
    assert closed["imgs_shown"] == 1                      # the summary's Table 2 chart; the rest fold away
    assert opened["imgs_shown"] == n_images
    _png_checked(shot, width)
    a = _png_checked(full, width)
    assert a.shape[0] > 2000                               # the whole page, every section open
    _keep("report-%d.png" % width, shot)
    _keep("report-%d-open.png" % width, full)


def test_the_overflow_check_catches_a_wide_page(browser_bin, report_page, tmp_path):
    """The check is real: the same page with a table outside its scroll wrapper overflows at 420 px."""
    path, _n = report_page
    bad = tmp_path / "bad.html"
    bad.write_text(path.read_text(encoding="utf-8").replace('<div class="tw">', '<div>', 3), encoding="utf-8")
    broken = tmp_path / "broken.html"
    broken.write_text(path.read_text(encoding="utf-8").replace("data:image/png;base64,iVBOR",
                                                               "data:image/png;base64,AAAA", 1), encoding="utf-8")
    with chromium.Browser(browser_bin) as b:
        page = b.page(bad.as_uri(), 420)
        page.eval(OPEN_ALL)
        c = page.eval(CHECK)
        page2 = b.page(broken.as_uri(), 420)
        c2 = page2.eval(CHECK)
    assert c["scrollWidth"] > c["innerWidth"] or c["overflowing"]
    assert c2["imgs_broken"] == ["table2.png"]


def test_skip_reason_names_the_install_command(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _n: None)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    path, why = chromium.find_or_install()
    assert path is None and "apt-get install -y chromium" in why


# ---- issue 23: an emulated run's page: the banner first, the disagreements open ---------------------------------

TCG_CHECK = r"""
(() => {
  const ps = Array.from(document.querySelectorAll('p'));
  const banner = ps.find(p => p.textContent.startsWith('This run was emulated'));
  const kvm = ps.find(p => p.textContent.startsWith('KVM could not be used'));
  const dis = Array.from(document.querySelectorAll('details')).find(
      d => d.querySelector('summary').textContent === 'Disagreements');
  const rows = dis ? dis.querySelectorAll('tr').length : 0;
  const r = banner ? banner.getBoundingClientRect() : null;
  return {banner_top: r ? r.top : null, banner_bold: banner ? !!banner.querySelector('b') : false,
          kvm: !!kvm, dis_open: dis ? dis.open : null, dis_rows: rows,
          body_text_has_none: /\bNone\b/.test(document.body.innerText),
          scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
          innerHeight: window.innerHeight};
})()
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_emulated_run_page_opens_with_banner_and_disagreements(browser_bin, tmp_path, width):
    import test_report as tr
    doc = report.build(tr.tcg_run(), want_plots=True, boot=tr.KVM_FALLBACK)
    p = tmp_path / "tcg.html"
    p.write_text(report.to_html(doc), encoding="utf-8")
    with chromium.Browser(browser_bin) as b:
        page = b.page(p.as_uri(), width)
        c = page.eval(TCG_CHECK)
        shot = page.screenshot(full_page=False)
    assert c["kvm"] and c["banner_bold"] and c["dis_open"] is True
    assert c["dis_rows"] == 1 + 7                                  # header + the 7 disagreeing cross-checks
    assert c["body_text_has_none"] is False
    assert c["scrollWidth"] <= c["innerWidth"], c
    assert c["banner_top"] is not None and c["banner_top"] < c["innerHeight"] * 3, c    # near the top of the page
    _png_checked(shot, width)
    _keep("report-tcg-%d.png" % width, shot)
