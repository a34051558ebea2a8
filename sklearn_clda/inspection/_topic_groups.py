"""Topics summed into named groups (themes), draw by draw."""

from collections.abc import Mapping

import numpy as np

from ._utils import check_topics

__all__ = []

def _groups(topic_groups, n_topics, caller):
    """``(names, members)``: the groups' names and their topics' indices."""
    if isinstance(topic_groups, Mapping):
        if not topic_groups:
            raise ValueError(f"topic_groups passed to {caller} is empty; give at least "
                             "one group.")
        return list(topic_groups), [
            check_topics(topics, n_topics, name=f"topic_groups[{name!r}] passed to {caller}")
            for name, topics in topic_groups.items()]
    labels = np.asarray(topic_groups, dtype=object)
    if labels.shape != (n_topics,):
        raise ValueError(
            f"topic_groups passed to {caller} must be a dict {{name: topics}} or one group "
            f"label per topic ({n_topics}), got shape {labels.shape}."
        )
    names = list(dict.fromkeys(labels.tolist()))
    try:
        names = sorted(names)
    except TypeError:  # labels of mixed types keep their first appearance's order
        pass
    members = [np.flatnonzero([label == name for label in labels.tolist()]) for name in names]
    if any(topics.size == 0 for topics in members):  # NaN equals nothing
        raise ValueError(f"topic_groups passed to {caller} has a label that equals no "
                         f"topic's, such as NaN: {names}.")
    return names, members


def group_indicator(topic_groups, n_topics, caller):
    """``(names, indicator)``: the groups' names and the (n_topics, n_groups)
    matrix whose column ``g`` is 1 at the topics of group ``g``."""
    names, members = _groups(topic_groups, n_topics, caller)
    indicator = np.zeros((n_topics, len(names)))
    for g, topics in enumerate(members):
        indicator[topics, g] = 1.0
    return names, indicator


def group_draws(draws, unstable, topic_groups, caller):
    """``(draws, names, unstable)`` with the topics (last axis of ``draws``)
    summed into ``topic_groups``; the groups with an unstable topic (topics
    some chain lacks, indices into the last axis) are unstable. With
    ``topic_groups=None`` the topics themselves, named by their indices."""
    n_topics = draws.shape[-1]
    if topic_groups is None:
        return draws, list(range(n_topics)), unstable
    names, indicator = group_indicator(topic_groups, n_topics, caller)
    shaky = np.flatnonzero(indicator[unstable].any(axis=0))
    return draws @ indicator, names, shaky
