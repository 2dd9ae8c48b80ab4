"""Packet model: tandem start-time fair queues (SPEC §3): the model arrays
(:mod:`mrfq.packet.model`), the Numba event loop (:mod:`mrfq.packet.kernel`) and its driver
(:mod:`mrfq.packet.engine`). Replications with statistics: :func:`mrfq.simulate`."""
