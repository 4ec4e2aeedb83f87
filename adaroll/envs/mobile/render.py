"""Deterministic screenshots of a view with Pillow (only when asked: they cost milliseconds).

Drawing depends only on the element list and the output size, and uses Pillow's bundled
font, so the same state gives the same pixels on every machine with the same Pillow.
"""

from __future__ import annotations

import re
from functools import cache

from PIL import Image, ImageDraw, ImageFont

from adaroll.envs.base import UIElement
from adaroll.envs.mobile.screen import View

BG = (248, 249, 250)
INK = (32, 33, 36)
MUTED = (95, 99, 104)
ACCENT = (26, 115, 232)
LINE = (218, 220, 224)
WHITE = (255, 255, 255)
ICON_COLORS = (
    (66, 133, 244),
    (52, 168, 83),
    (251, 188, 5),
    (234, 67, 53),
    (156, 39, 176),
    (0, 150, 136),
    (255, 112, 67),
    (63, 81, 181),
    (121, 85, 72),
)
KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_PERCENT = re.compile(r"(\d+)%$")


@cache
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=max(6, size))  # type: ignore[return-value]


def _fit(text: str, fnt: ImageFont.FreeTypeFont, width: float) -> str:
    if fnt.getlength(text) <= width:
        return text
    while text and fnt.getlength(text + "…") > width:
        text = text[:-1]
    return text + "…"


class _Canvas:
    def __init__(self, size: tuple[int, int]) -> None:
        self.w, self.h = size
        self.img = Image.new("RGB", size, BG)
        self.draw = ImageDraw.Draw(self.img)
        self.base = max(8, round(self.w * 40 / 1080))  # 40 logical px body text

    def box(self, e: UIElement) -> tuple[int, int, int, int]:
        left, top, right, bottom = e.bounds
        return (
            round(left * self.w),
            round(top * self.h),
            round(right * self.w) - 1,
            round(bottom * self.h) - 1,
        )

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        size: int,
        fill: tuple[int, int, int],
        width: float,
        anchor: str = "lm",
    ) -> None:
        fnt = font(size)
        self.draw.text(xy, _fit(text, fnt, width), fill=fill, font=fnt, anchor=anchor)


def _size_for(c: _Canvas, box: tuple[int, int, int, int]) -> int:
    return max(6, min(c.base, int((box[3] - box[1]) * 0.42)))


def _draw(c: _Canvas, e: UIElement) -> None:
    x0, y0, x1, y1 = c.box(e)
    if x1 <= x0 or y1 <= y0:
        return
    d, role, flags = c.draw, e.role, e.flags
    cy, pad, size = (y0 + y1) / 2, c.w * 0.04, _size_for(c, (x0, y0, x1, y1))
    if role == "status_bar":
        d.rectangle((x0, y0, x1, y1), fill=INK)
        c.text((pad, cy), e.text, int(size * 0.9), WHITE, x1 - pad)
    elif role == "list":
        d.rectangle((x0, y0, x1, y1), fill=WHITE)
        if "scrollable" in flags:
            d.rectangle((x1 - c.w * 0.008, y0 + 4, x1, y0 + (y1 - y0) * 0.25), fill=LINE)
    elif role in ("list_item", "toggle", "checkbox"):
        d.line((x0 + pad, y1, x1 - pad, y1), fill=LINE)
        sel = "selected" in flags
        c.text(
            (x0 + pad + (size * 1.6 if role == "checkbox" else 0), cy),
            e.text,
            size,
            ACCENT if sel else INK,
            x1 - x0 - 2 * pad - size * 3,
        )
        on = "checked" in flags
        if role == "toggle":
            tw, th = size * 2.4, size * 1.2
            tx = x1 - pad - tw
            d.rounded_rectangle(
                (tx, cy - th / 2, tx + tw, cy + th / 2), radius=th / 2, fill=ACCENT if on else LINE
            )
            kx = tx + tw - th if on else tx
            d.ellipse((kx + 2, cy - th / 2 + 2, kx + th - 2, cy + th / 2 - 2), fill=WHITE)
        elif role == "checkbox":
            s = size * 1.1
            d.rectangle(
                (x0 + pad, cy - s / 2, x0 + pad + s, cy + s / 2),
                outline=ACCENT,
                width=2,
                fill=ACCENT if on else WHITE,
            )
    elif role == "button":
        sel = "selected" in flags
        enabled = "enabled" in flags
        fill = ACCENT if enabled else LINE
        m = max(2, (y1 - y0) * 0.08)
        d.rounded_rectangle(
            (x0 + m, y0 + m, x1 - m, y1 - m),
            radius=(y1 - y0) * 0.3,
            fill=fill,
            outline=INK if sel else None,
            width=3 if sel else 1,
        )
        label, dot = (e.text[:-2], True) if e.text.endswith(" •") else (e.text, False)
        c.text(((x0 + x1) / 2, cy), label, size, WHITE, x1 - x0 - 2 * m, anchor="mm")
        if dot:  # calendar day with events (the bundled font has no bullet glyph)
            r, dy = max(2, size // 6), (y1 - y0) * 0.3
            d.ellipse(((x0 + x1) / 2 - r, cy + dy - r, (x0 + x1) / 2 + r, cy + dy + r), fill=WHITE)
    elif role == "icon":
        if (y1 - y0) > c.h * 0.08 and (x1 - x0) > c.w * 0.15:  # launcher icon: tile + label
            color = ICON_COLORS[sum(map(ord, e.text)) % len(ICON_COLORS)]
            side = min(x1 - x0, (y1 - y0) * 0.7)
            tx = (x0 + x1 - side) / 2
            d.rounded_rectangle((tx, y0, tx + side, y0 + side), radius=side * 0.25, fill=color)
            c.text(((x0 + x1) / 2, y0 + side / 2), e.text[:1], int(side * 0.5), WHITE, side, "mm")
            c.text(
                ((x0 + x1) / 2, y0 + side + (y1 - y0 - side) / 2), e.text, size, INK, x1 - x0, "mm"
            )
        else:
            glyph = {"Back": "<", "Clear": "x", "Previous month": "<", "Next month": ">"}.get(
                e.text, e.text
            )
            c.text(((x0 + x1) / 2, cy), glyph, size, MUTED, x1 - x0, "mm")
    elif role == "text_field":
        focused = "focused" in flags
        d.rounded_rectangle(
            (x0 + 4, y0 + 6, x1 - 4, y1 - 6),
            radius=8,
            fill=WHITE,
            outline=ACCENT if focused else MUTED,
            width=3 if focused else 1,
        )
        c.text((x0 + pad / 2, cy), e.text + ("|" if focused else ""), size, INK, x1 - x0 - pad)
    elif role == "slider":
        match = _PERCENT.search(e.text)
        frac = int(match.group(1)) / 100 if match else 0.0
        c.text((x0 + pad, y0 + (y1 - y0) * 0.3), e.text, size, INK, x1 - x0 - 2 * pad)
        tx0, tx1 = x0 + (x1 - x0) * 88 / 1080, x0 + (x1 - x0) * 992 / 1080
        ty = y0 + (y1 - y0) * 0.72
        d.line((tx0, ty, tx1, ty), fill=LINE, width=max(2, size // 4))
        d.line((tx0, ty, tx0 + (tx1 - tx0) * frac, ty), fill=ACCENT, width=max(2, size // 4))
        kx = tx0 + (tx1 - tx0) * frac
        d.ellipse((kx - size / 2, ty - size / 2, kx + size / 2, ty + size / 2), fill=ACCENT)
    elif role == "picker":
        d.rounded_rectangle(
            (x0 + 4, y0 + 4, x1 - 4, y1 - 4), radius=10, fill=WHITE, outline=ACCENT, width=2
        )
        c.text(((x0 + x1) / 2, cy), e.text, int(size * 1.2), INK, x1 - x0, "mm")
    elif role == "tab":
        sel = "selected" in flags
        c.text(((x0 + x1) / 2, cy), e.text, size, ACCENT if sel else MUTED, x1 - x0, "mm")
        if sel:
            d.rectangle((x0 + pad, y1 - 6, x1 - pad, y1), fill=ACCENT)
    elif role == "dialog":
        scrim = Image.new("RGB", c.img.size, (0, 0, 0))
        c.img.paste(Image.blend(c.img, scrim, 0.45))
        d.rounded_rectangle((x0, y0, x1, y1), radius=24, fill=WHITE)
        c.text((x0 + pad, y0 + c.h * 0.03), e.text, int(size * 1.1), INK, x1 - x0 - 2 * pad)
    elif role == "keyboard":
        d.rectangle((x0, y0, x1, y1), fill=(232, 234, 237))
        kh = (y1 - y0) / 5
        for r, keys in enumerate(KEY_ROWS):
            kw = (x1 - x0) / 10
            off = x0 + (10 - len(keys)) * kw / 2
            for i, ch in enumerate(keys):
                kx = off + i * kw
                ky = y0 + kh * (r + 0.3)
                d.rounded_rectangle((kx + 3, ky, kx + kw - 3, ky + kh * 0.85), radius=6, fill=WHITE)
                c.text((kx + kw / 2, ky + kh * 0.42), ch, int(kh * 0.4), INK, kw, "mm")
        sy = y0 + kh * 3.4
        d.rounded_rectangle(
            (x0 + (x1 - x0) * 0.25, sy, x0 + (x1 - x0) * 0.75, sy + kh * 0.85), radius=6, fill=WHITE
        )
    else:  # text and anything else
        c.text((x0 + pad * 0.5, cy), e.text, size, INK, x1 - x0 - pad * 0.5)


def render_view(view: View, size: tuple[int, int] = (540, 1200)) -> Image.Image:
    """Draw every element of ``view`` in list order (later elements on top)."""
    canvas = _Canvas(size)
    for element in view.obs.elements:
        _draw(canvas, element)
    return canvas.img
