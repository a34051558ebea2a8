"""Warnings raised by sklearn_clda."""

__all__ = ["UnseenCollectionWarning"]


class UnseenCollectionWarning(UserWarning):
    """A document's collection was not seen in fit, or groups were not given.

    The document then gets the documented fallback prior (the mixture of the
    fitted collections weighted by their number of training documents).
    """
