"""Packet model: tandem start-time fair queues (SPEC §3) and its simulation driver."""

from mrfq.packet.simulate import SimulationResult, simulate

__all__ = ["SimulationResult", "simulate"]
