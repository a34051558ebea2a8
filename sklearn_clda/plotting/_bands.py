"""Lines with bands, one per topic, along an axis: the picture of stm's
continuous ``plot.estimateEffect``, shared by the displays that draw one."""

from ._base import merge_kw

__all__ = []


def draw_bands(ax, x, values, lower, upper, labels, line_defaults, line_kw, fill_between_kw):
    """One line per column of ``values`` (n_points, n_topics) along ``x``,
    with its band between ``lower`` and ``upper`` (None: no bands), in the
    line's color; returns ``(lines, bands)`` (bands None without
    intervals)."""
    lines, bands = [], None if lower is None else []
    for k, label in enumerate(labels):
        (line,) = ax.plot(x, values[:, k], **merge_kw(
            {"color": f"C{k % 10}", "label": label, **line_defaults}, line_kw))
        lines.append(line)
        if lower is not None:
            bands.append(ax.fill_between(x, lower[:, k], upper[:, k], **merge_kw(
                {"color": line.get_color(), "alpha": 0.2, "linewidth": 0}, fill_between_kw)))
    return lines, bands


def legend_outside(ax):
    """The topics' legend to the right of the axes."""
    return ax.legend(title="Topic", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     frameon=False)
