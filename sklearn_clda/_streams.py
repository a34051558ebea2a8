"""The random streams of a sweeper's shards, saved and restored with a chain."""

__all__ = ["ShardStreams"]


class ShardStreams:
    """Mixin of the sweepers: each of ``self.shards`` (a list of dicts) draws
    from its own ``"bitgen"``; a continued chain (``warm_start``) restores
    their states."""

    def bit_states(self):
        """The states of the shards' random streams (to continue a chain)."""
        return [shard["bitgen"].state for shard in self.shards]

    def set_bit_states(self, states):
        """Restore the states given by :meth:`bit_states`, shard by shard."""
        for shard, state in zip(self.shards, states, strict=True):
            shard["bitgen"].state = state
