"""Small SVG charts drawn on the server: a line chart over a few categories and a signed bar
chart. Each is an ``<svg role="img">`` with a title; the page puts the same numbers in a
table beside it for screen readers and for reading exact values. Series differ by dash and
marker as well as colour, so they read in grey too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 64
INK = "#1a1a1a"
GRID = "#c7cbd1"
# Colour, dash, marker of each series in turn: dark enough for 3:1 against white.
STYLES = [("#0a56a5", "", "circle"), ("#a3401a", "6 4", "square"), ("#4a4a4a", "2 3", "diamond")]


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]  # one per category; None leaves a gap


def _marker(kind: str, x: float, y: float, colour: str) -> str:
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'
    if kind == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="{colour}"/>'
    points = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
    return f'<polygon points="{points}" fill="{colour}"/>'


def _frame(title: str, body: list[str], height: int = HEIGHT) -> SafeString:
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        WIDTH,
        height,
        title,
        title,
        mark_safe("".join(body)),  # noqa: S308 - built here from escaped parts
    )


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{INK}" '
        f'font-size="12"{extra}>{escape(text)}</text>'
    )


def line_chart(
    *,
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    y_label: str,
    x_label: str,
    y_max: float = 100.0,
) -> SafeString:
    """Lines over ``categories`` (evenly spaced), y from 0 to ``y_max``, with a legend."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(len(categories), 1)

    def x_at(i: int) -> float:
        return LEFT + step * (i + 0.5)

    def y_at(value: float) -> float:
        return TOP + plot_h * (1 - min(max(value / y_max, 0.0), 1.0))

    body = []
    for tick in range(5):
        value = y_max * tick / 4
        y = y_at(value)
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
        )
        body.append(_text(LEFT - 6, y + 4, f"{value:g}", "end"))
    for i, category in enumerate(categories):
        body.append(_text(x_at(i), TOP + plot_h + 16, category))
    body.append(_text(LEFT + plot_w / 2, TOP + plot_h + 34, x_label))
    body.append(
        _text(
            14, TOP + plot_h / 2, y_label, extra=f' transform="rotate(-90 14 {TOP + plot_h / 2})"'
        )
    )
    legend_x = LEFT
    for (colour, dash, marker), line in zip(STYLES, series, strict=False):
        runs: list[list[tuple[float, float]]] = [[]]
        for i, value in enumerate(line.values):
            if value is None:
                runs.append([])
            else:
                runs[-1].append((x_at(i), y_at(value)))
        for run in runs:
            if len(run) > 1:
                points = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
                dashed = f' stroke-dasharray="{dash}"' if dash else ""
                body.append(
                    f'<polyline points="{points}" fill="none" stroke="{colour}" '
                    f'stroke-width="2.5"{dashed}/>'
                )
            body += [_marker(marker, x, y, colour) for x, y in run]
        legend_y = HEIGHT - 10
        body.append(_marker(marker, legend_x + 6, legend_y - 4, colour))
        body.append(_text(legend_x + 16, legend_y, line.name, "start"))
        legend_x += 24 + 8 * len(line.name)
    return _frame(title, body)


def bar_chart(
    *, title: str, labels: Sequence[str], values: Sequence[float | None], x_label: str
) -> SafeString:
    """Horizontal bars from zero, to the right for positive values and to the left for
    negative ones; a missing value draws no bar."""
    row_h = 24
    height = TOP + row_h * max(len(labels), 1) + 40
    label_w = 180
    plot_w = WIDTH - label_w - RIGHT
    known = [abs(value) for value in values if value is not None]
    extent = max(known, default=1.0) or 1.0
    has_negative = any(value is not None and value < 0 for value in values)
    zero = label_w + (plot_w / 2 if has_negative else 0)
    scale = (plot_w / 2 if has_negative else plot_w) / extent
    body = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = TOP + row_h * i
        body.append(_text(label_w - 8, y + 16, label[:28], "end"))
        if value is None:
            body.append(_text(zero + 6, y + 16, "no value", "start"))
            continue
        width = abs(value) * scale
        x = zero if value >= 0 else zero - width
        body.append(
            f'<rect x="{x:.1f}" y="{y + 4:.1f}" width="{width:.1f}" height="{row_h - 8}" '
            f'fill="{STYLES[0][0]}"/>'
        )
    bottom = TOP + row_h * max(len(labels), 1)
    body.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="{TOP}" y2="{bottom}" stroke="{INK}"/>')
    body.append(_text(zero, bottom + 16, "0"))
    body.append(_text(label_w + plot_w, bottom + 16, f"{extent:.3g}", "end"))
    if has_negative:
        body.append(_text(label_w, bottom + 16, f"{-extent:.3g}", "start"))
    body.append(_text(label_w + plot_w / 2, bottom + 34, x_label))
    return _frame(title, body, height)
