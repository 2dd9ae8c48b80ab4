"""Packet model: tandem start-time fair queues (SPEC §3): the model arrays
(:mod:`mrfq.packet.model`), the Numba event loop (:mod:`mrfq.packet.kernel`), its driver
(:mod:`mrfq.packet.engine`) and the steady-state start's draw
(:mod:`mrfq.packet.initial`). Replications with statistics: :func:`mrfq.simulate`."""
