#!/usr/bin/env python3
"""Renders a terminal capture (`tmux capture-pane -e -p`: text with SGR
colour sequences) into a PNG, cell by cell, with DejaVu Sans Mono.

    python3 scripts/ansi2png.py capture.ans out.png --cols 120 --rows 40

Needs Pillow (`pip install pillow`) and the DejaVu fonts
(`apt-get install fonts-dejavu-core`); emoji and other symbols DejaVu lacks
are drawn with Symbola and CJK with Noto Sans CJK when installed
(`apt-get install fonts-symbola fonts-noto-cjk`). A wide character (CJK,
most emoji) takes two cells, as in the terminal, so the rest of its row
stays in place. Only SGR sequences are read (colours, bold, dim, italic,
underline, reverse); anything else is dropped.
"""

import argparse
import re
import sys
import unicodedata

from PIL import Image, ImageDraw, ImageFont

FONT_DIRS = [
    "/usr/share/fonts/truetype/dejavu/",
    "/usr/share/fonts/truetype/ancient-scripts/",
    "/usr/share/fonts/opentype/noto/",
]
# The cell after a wide character: drawn over by it, never on its own.
WIDE_TAIL = ""
BG = (30, 31, 41)
FG = (216, 222, 233)
BASE16 = [
    (40, 42, 54), (255, 85, 85), (80, 250, 123), (241, 250, 140),
    (98, 114, 164), (255, 121, 198), (139, 233, 253), (191, 191, 191),
    (98, 104, 128), (255, 110, 110), (105, 255, 148), (255, 255, 165),
    (125, 150, 230), (255, 146, 223), (164, 255, 255), (255, 255, 255),
]


def color256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


def font(name, size, required=True):
    for d in FONT_DIRS:
        try:
            return ImageFont.truetype(d + name, size)
        except OSError:
            continue
    if required:
        sys.exit(f"font {name} not found (apt-get install fonts-dejavu-core)")
    return None


def wide(ch):
    """Whether a terminal gives `ch` two cells."""
    return unicodedata.east_asian_width(ch) in ("W", "F")


SGR = re.compile(r"\x1b\[([0-9;:]*)m")
OTHER = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|\][^\x07]*\x07|.)")


def parse(text, cols, rows):
    """Returns rows of cells: (char, fg, bg, bold, dim, italic, underline)."""
    grid = []
    state = dict(fg=None, bg=None, bold=False, dim=False, italic=False, ul=False, rev=False)
    for line in text.split("\n")[:rows]:
        row = []
        pos = 0
        while pos < len(line):
            m = SGR.match(line, pos)
            if m:
                apply_sgr(state, m.group(1))
                pos = m.end()
                continue
            m = OTHER.match(line, pos)
            if m:
                pos = m.end()
                continue
            ch = line[pos]
            pos += 1
            fg, bg = state["fg"] or FG, state["bg"] or BG
            if state["rev"]:
                fg, bg = bg, fg
            if state["dim"]:
                fg = tuple((c + b) // 2 for c, b in zip(fg, bg))
            row.append((ch, fg, bg, state["bold"], state["italic"], state["ul"]))
            if wide(ch):
                row.append((WIDE_TAIL, fg, bg, False, False, False))
        row = row[:cols]
        row += [(" ", FG, BG, False, False, False)] * (cols - len(row))
        grid.append(row)
    while len(grid) < rows:
        grid.append([(" ", FG, BG, False, False, False)] * cols)
    return grid


def apply_sgr(s, params):
    codes = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", params)] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            s.update(fg=None, bg=None, bold=False, dim=False, italic=False, ul=False, rev=False)
        elif c == 1:
            s["bold"] = True
        elif c == 2:
            s["dim"] = True
        elif c == 3:
            s["italic"] = True
        elif c == 4:
            s["ul"] = True
        elif c == 7:
            s["rev"] = True
        elif c == 22:
            s["bold"] = s["dim"] = False
        elif c == 23:
            s["italic"] = False
        elif c == 24:
            s["ul"] = False
        elif c == 27:
            s["rev"] = False
        elif 30 <= c <= 37:
            s["fg"] = BASE16[c - 30]
        elif 90 <= c <= 97:
            s["fg"] = BASE16[c - 90 + 8]
        elif 40 <= c <= 47:
            s["bg"] = BASE16[c - 40]
        elif 100 <= c <= 107:
            s["bg"] = BASE16[c - 100 + 8]
        elif c == 39:
            s["fg"] = None
        elif c == 49:
            s["bg"] = None
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                s[key] = color256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                s[key] = tuple(codes[i + 2:i + 5])
                i += 4
        i += 1


def render(grid, out, size=15):
    regular = font("DejaVuSansMono.ttf", size)
    bold = font("DejaVuSansMono-Bold.ttf", size)
    oblique = font("DejaVuSansMono-Oblique.ttf", size)
    # Tried in order for a glyph the monospace font lacks.
    fallbacks = [
        f
        for f in (
            font("DejaVuSans.ttf", size),
            font("Symbola_hint.ttf", size, required=False),
            font("NotoSansCJK-Regular.ttc", size, required=False),
        )
        if f is not None
    ]
    cw = round(regular.getlength("M"))
    ascent, descent = regular.getmetrics()
    ch_h = ascent + descent + 2
    pad = 12
    cols, rows = len(grid[0]), len(grid)
    img = Image.new("RGB", (cols * cw + 2 * pad, rows * ch_h + 2 * pad), BG)
    d = ImageDraw.Draw(img)
    for y, row in enumerate(grid):
        for x, (ch, fg, bg, b, it, ul) in enumerate(row):
            px, py = pad + x * cw, pad + y * ch_h
            if bg != BG:
                d.rectangle([px, py, px + cw - 1, py + ch_h - 1], fill=bg)
            if ch in (" ", WIDE_TAIL):
                continue
            if "\u2500" <= ch <= "\u257f":
                box(d, ch, px, py, cw, ch_h, fg)
                continue
            f = bold if b else oblique if it else regular
            if not has_glyph(f, ch):
                f = next((g for g in fallbacks if has_glyph(g, ch)), fallbacks[0])
            d.text((px, py + 1), ch, font=f, fill=fg)
            if ul:
                d.line([px, py + ch_h - 2, px + cw - 1, py + ch_h - 2], fill=fg)
    img.save(out)


_glyphs = {}
_notdef = {}


def has_glyph(f, ch):
    """Whether `f` draws `ch` (rather than its empty-box .notdef glyph)."""
    key = (id(f), ch)
    if key not in _glyphs:
        if id(f) not in _notdef:
            _notdef[id(f)] = bytes(f.getmask("\ue000"))
        _glyphs[key] = bytes(f.getmask(ch)) != _notdef[id(f)]
    return _glyphs[key]


def box(d, ch, x, y, w, h, fg):
    """Box-drawing characters drawn as lines so they join across cells."""
    cx, cy = x + w // 2, y + h // 2
    heavy = ch in "━┃┏┓┗┛"
    width = 2 if heavy else 1
    up = ch in "│┃└┘├┤┼╰╯┗┛"
    down = ch in "│┃┌┐├┤┼╭╮┏┓"
    left = ch in "─━┐┘┤┼╮╯┓┛"
    right = ch in "─━┌└├┼╭╰┏┗"
    if up:
        d.line([cx, y, cx, cy], fill=fg, width=width)
    if down:
        d.line([cx, cy, cx, y + h], fill=fg, width=width)
    if left:
        d.line([x, cy, cx, cy], fill=fg, width=width)
    if right:
        d.line([cx, cy, x + w, cy], fill=fg, width=width)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("capture")
    p.add_argument("out")
    p.add_argument("--cols", type=int, default=120)
    p.add_argument("--rows", type=int, default=40)
    a = p.parse_args()
    with open(a.capture, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    render(parse(text, a.cols, a.rows), a.out)


if __name__ == "__main__":
    main()
