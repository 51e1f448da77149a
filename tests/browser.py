"""A local HTML file in real headless Chromium, for tests of pages the project writes (the health report).

`open_page` loads a file:// URL in Debian's /usr/bin/chromium through Playwright (the Chrome DevTools
Protocol; Playwright only drives the system browser, it never downloads one) and returns what the
page said and fetched, with a full-page PNG screenshot. `chromium_or_skip` skips a test where the
browser or Playwright is missing (`make test` installs the browser with apt-get when run as root).
`blank_ratio` tells a blank screenshot from a drawn one, with Pillow where it is installed and a
small PNG decoder (zlib + NumPy) where it is not.
"""

from __future__ import annotations

import importlib.util
import shutil
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
# What this machine needs: no sandbox (root), no GPU, and nothing that reaches for the network (the
# machine has none; Chromium's background fetches would only log errors). Playwright adds --headless,
# --remote-debugging-pipe (its DevTools connection) and --user-data-dir, a fresh folder under the
# temporary folder that open_page makes for each page and removes after it.
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


@dataclass(frozen=True)
class ConsoleMessage:
    # console.* type as Chromium names it ("log", "info", "warning", "error", ...); "pageerror" for an
    # uncaught exception
    level: str
    text: str
    location: str = ""  # url:line of the message, where Chromium gives one


@dataclass
class PageResult:
    url: str  # the file:// URL that was opened
    png: Path  # the full-page screenshot
    console: list[ConsoleMessage] = field(default_factory=list)  # every console message, uncaught exceptions too
    page_errors: list[str] = field(default_factory=list)  # uncaught exceptions alone (also in `console`)
    requests: list[str] = field(default_factory=list)  # every request URL, in order, the page itself first
    failed: list[tuple[str, str]] = field(default_factory=list)  # (url, Chromium's error text): a request
    # for anything but a file:// URL fails here on purpose (see open_page)
    title: str = ""
    fonts: dict[str, int] = field(default_factory=dict)  # with open_page(fonts_of=...): font family -> glyphs

    @property
    def problems(self) -> list[ConsoleMessage]:
        """Console errors, warnings and uncaught exceptions."""
        return [m for m in self.console if m.level in ("error", "warning", "assert", "pageerror")]

    @property
    def other_requests(self) -> list[str]:
        """Requests for anything but the page's own file."""
        return [u for u in self.requests if u != self.url]


def chromium_or_skip() -> str:
    """The Chromium executable for `open_page`, or skip the calling test saying what is missing."""
    import pytest

    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"Debian's chromium ({CHROMIUM})")
    if importlib.util.find_spec("playwright") is None:
        missing.append("the Python package playwright (the dev extra: pip install -e '.[dev]')")
    if missing:
        pytest.skip(f"browser test needs {' and '.join(missing)}; `make test` installs the browser "
                    "(apt-get install chromium fonts-noto-cjk) when run as root or with passwordless sudo")
    return CHROMIUM


def open_page(path: Path, png: Path, *, width: int = 1280, height: int = 2400,
              fonts_of: str | None = None, timeout_s: float = 30) -> PageResult:
    """Open the local HTML file `path` in headless Chromium, wait for its load event and its fonts,
    and write a full-page screenshot to `png`. Requests other than file:// ones are recorded and then
    aborted (the page must not make any; aborting keeps a wrong one from waiting on the network).
    `fonts_of`, a CSS selector: `PageResult.fonts` says which installed fonts drew the text of the
    first element it matches (DevTools' CSS.getPlatformFontsForNode: family -> glyphs drawn)."""
    from playwright.sync_api import sync_playwright

    path, png = Path(path).resolve(), Path(png)
    result = PageResult(url=path.as_uri(), png=png)

    def on_console(message) -> None:
        where = message.location or {}
        location = f"{where.get('url', '')}:{where.get('lineNumber', '')}" if where.get("url") else ""
        result.console.append(ConsoleMessage(message.type, message.text, location))

    def on_page_error(error) -> None:
        text = f"{error.name}: {error.message}" if getattr(error, "name", "") else str(error)
        result.page_errors.append(text)
        result.console.append(ConsoleMessage("pageerror", f"Uncaught {text}"))

    def route(route) -> None:
        route.abort("blockedbyclient")

    png.parent.mkdir(parents=True, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="memory-lake-chromium-")  # a fresh --user-data-dir for each page
    try:
        with sync_playwright() as driver:
            context = driver.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True,
                timeout=timeout_s * 1000, viewport={"width": width, "height": height}, service_workers="block")
            try:
                context.route(lambda url: not url.startswith("file:"), route)
                page = context.pages[0] if context.pages else context.new_page()
                # the requests as DevTools' Network domain reports them: data: URLs too (Playwright's
                # own request events leave those out), the page's file first
                cdp = context.new_cdp_session(page)
                urls: dict[str, str] = {}
                listening = True

                def on_request(event) -> None:
                    if not listening:
                        return
                    urls[event["requestId"]] = event["request"]["url"]
                    result.requests.append(event["request"]["url"])

                def on_failed(event) -> None:
                    if not listening:
                        return
                    reason = event.get("errorText", "")
                    if event.get("blockedReason"):
                        reason += f" (blocked: {event['blockedReason']})"
                    result.failed.append((urls.get(event["requestId"], "?"), reason))

                cdp.on("Network.requestWillBeSent", on_request)
                cdp.on("Network.loadingFailed", on_failed)
                cdp.send("Network.enable")
                page.on("console", on_console)
                page.on("pageerror", on_page_error)
                page.goto(result.url, wait_until="load", timeout=timeout_s * 1000)
                page.evaluate("document.fonts.ready.then(() => true)")
                result.title = page.title()
                page.screenshot(path=str(png), full_page=True, timeout=timeout_s * 1000)
                if fonts_of:
                    # last, and unheard: DevTools' CSS domain fetches the page's own file again, which
                    # Chromium logs as a console error ("Unsafe attempt to load URL file://...")
                    page.remove_listener("console", on_console)
                    listening = False
                    cdp.send("DOM.enable")
                    cdp.send("CSS.enable")
                    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
                    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": fonts_of})["nodeId"]
                    if not node:
                        raise ValueError(f"{fonts_of!r} matches nothing in {path}")
                    for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
                        result.fonts[font["familyName"]] = result.fonts.get(font["familyName"], 0) + font["glyphCount"]
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return result


# ------------------------------------------------------------------ screenshots

def blank_ratio(png: Path) -> float:
    """The share of pixels that are the image's most common colour: 1.0 for a blank page."""
    import numpy as np

    keys = _pixel_keys(Path(png))
    return float(np.unique(keys, return_counts=True)[1].max() / keys.size)


def non_white_ratio(png: Path) -> float:
    """The share of pixels whose colour is not pure white (alpha aside)."""
    keys = _pixel_keys(Path(png))
    return float(((keys >> 8) != 0xFFFFFF).mean())


_DECODED: dict[tuple, object] = {}  # the last screenshot decoded (blank_ratio then non_white_ratio of one file)


def _pixel_keys(png: Path):
    """One uint32 a pixel, 0xRRGGBBAA (grey and RGB widened to RGBA)."""
    stat = png.stat()
    key = (str(png.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _DECODED:
        _DECODED.clear()
        _DECODED[key] = _decode_keys(png)
    return _DECODED[key]


def _decode_keys(png: Path):
    import numpy as np

    try:
        from PIL import Image
    except ImportError:
        pixels = decode_png(png)  # (height, width, channels) uint8
    else:
        with Image.open(png) as image:
            pixels = np.asarray(image.convert("RGBA"))
    channels = pixels.shape[2]
    flat = pixels.reshape(-1, channels)
    rgba = np.full((flat.shape[0], 4), 255, dtype=np.uint8)
    if channels in (1, 2):  # grey, grey + alpha
        rgba[:, :3] = flat[:, :1]
        if channels == 2:
            rgba[:, 3] = flat[:, 1]
    else:
        rgba[:, :channels] = flat
    return rgba.view(">u4").ravel().astype(np.uint32)


_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> channels (8-bit, no palette)


def decode_png(png: Path):
    """An 8-bit, non-interlaced, non-palette PNG (what Chromium writes) as a (height, width, channels)
    uint8 NumPy array: the chunks, zlib, and the five scanline filters."""
    import numpy as np

    data = Path(png).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{png} is not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _compression, _filter, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(f"{png}: only 8-bit non-interlaced grey/RGB/RGBA PNGs are decoded here "
                         f"(depth {depth}, colour type {colour}, interlace {interlace}); install Pillow")
    bpp = _CHANNELS[colour]
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prior = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum along each channel
            row = np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint64).astype(np.uint8).ravel()
        elif kind == 2:  # Up
            row = line + prior
        else:  # Average, Paeth: each byte needs the one decoded to its left
            row = _unfilter_slow(int(kind), line.tolist(), prior.tolist(), bpp)
            row = np.array(row, dtype=np.uint8)
        out[y] = row
        prior = row
    return out.reshape(height, width, bpp)


def _unfilter_slow(kind: int, line: list[int], prior: list[int], bpp: int) -> list[int]:
    row = [0] * len(line)
    for i, x in enumerate(line):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i]
        if kind == 3:
            row[i] = (x + ((a + b) >> 1)) & 0xFF
        elif kind == 4:
            c = prior[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[i] = (x + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter type {kind}")
    return row
