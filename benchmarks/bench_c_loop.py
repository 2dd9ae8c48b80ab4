"""How far is the Numba event loop from the same loop in C? (issue 4's 15-minute target)

The issue estimates that a hand-written C loop of the model would run the paper-scale
Figure 3 sweep in about 15 minutes on 2 cores. This script measures that yardstick instead
of assuming it: ``benchmarks/c_loop/event_loop.c`` is a line-by-line C port of
the event loop (``mrfq.packet.kernel._make_event_loop``) (PF, BMF and memoryless DRFQ
under both virtual-time clocks; no round-trip times, one packet type per class, no class
weights; without the kernel's delay histogram, so its runs report no delays), compiled
here with the system C
compiler (default ``cc -O3 -march=native``). Both loops run on the same state arrays
from the same driver (``run_replication``), interleaved in one process; the script
checks that their completion times are identical bit for bit, then reports M
packet-resource services per CPU-second and the ratio C / Numba. The C port has no
lone-flow loop (``kernel._lone_flow``), so the like-for-like Numba runs turn it off; the
script also times the Numba kernel as shipped, with it.

``--policies`` takes ``drfq`` (the in-service clock, the default), ``drfq:started``
(BR's clock) and ``drfq:bookkeeping`` (BR's clock, its C loop also doing the in-service
clock's work: same results as ``drfq:started``): the same C code under two schedules,
and the in-service clock's work priced on one schedule (issue 22).

Usage: python benchmarks/bench_c_loop.py [--loads 0.3,0.8,0.9] [--policies bmf,pf]
       [--services 5e7] [--repeat 3] [--cflags "-O3 -march=native"]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mrfq.packet import engine, kernel
from mrfq.packet.model import PacketModel
from mrfq.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(__file__).resolve().parent / "c_loop" / "event_loop.c"
_ARGS = ([ctypes.c_int64] + [ctypes.c_void_p] * 5 + [ctypes.c_int64] + [ctypes.c_void_p] * 3
         + [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 10
         + [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p])
_NAMES = ("mrfq_loop_bmf", "mrfq_loop_pf", "mrfq_loop_drfq", "mrfq_loop_drfq_started",
          "mrfq_loop_drfq_bookkeeping")


def build(directory: Path, flags: list[str], source: Path = SOURCE) -> ctypes.CDLL:
    """Compile the C loop (``source``: a variant with the same entry points) into
    ``directory`` with optimisation ``flags`` and load it."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        sys.exit("bench_c_loop: needs a C compiler (cc or gcc on PATH, or CC)")
    library = directory / "event_loop.so"
    subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", str(library), str(source)],
                   check=True)
    lib = ctypes.CDLL(str(library))
    for name in _NAMES:
        getattr(lib, name).argtypes = _ARGS
        getattr(lib, name).restype = ctypes.c_int
    return lib


def c_run_kernel(lib: ctypes.CDLL, bookkeeping: bool = False):
    """A drop-in for :func:`mrfq.packet.kernel.run_kernel` that runs the C loop;
    ``bookkeeping``: DRFQ with the started clock runs the C loop that also does the
    in-service clock's work (same results, the cost of that work on BR's schedule)."""
    loops = {kernel.BMF: lib.mrfq_loop_bmf, kernel.PF: lib.mrfq_loop_pf,
             kernel.DRFQ: lib.mrfq_loop_drfq}

    def run(policy, debug, budget, model, arrivals, state, lone_flow=True, explicit=False,
            network=False):
        service, next_resource, first_resource = (model.service, model.next_resource,
                                                  model.first_resource)
        class_type0, class_ntypes, window = model.class_type0, model.class_ntypes, model.window
        if (policy not in loops or debug or explicit or network or model.class_rtt.any()
                or (class_ntypes != 1).any() or (model.class_weight != 1).any()):
            raise ValueError("the C loop covers PF, BMF and memoryless DRFQ in one router "
                             "without debug checks, round-trip times, class weights or "
                             "several packet types per class")
        loop = loops[policy]
        if policy == kernel.DRFQ and not model.in_service:
            loop = lib.mrfq_loop_drfq_bookkeeping if bookkeeping else lib.mrfq_loop_drfq_started
        arr_time, arr_class, arr_size, n_arrivals, flows, completion, *_ = arrivals
        (istate, fstate, free_slots, flow_i, flow_f, res_i, res_f, heap_key, heap_id,
         *_) = state
        J = res_i.shape[0] // 4
        layout = np.array(kernel.record_layout(J, window), dtype=np.int64)
        ptr = [a.ctypes.data for a in (service, next_resource, first_resource, class_type0,
                                       class_ntypes)]
        return loop(budget, *ptr, window, arr_time.ctypes.data, arr_class.ctypes.data,
                    arr_size.ctypes.data, n_arrivals, flows,
                    *[a.ctypes.data for a in (completion, istate, fstate, free_slots, flow_i,
                                              flow_f, res_i, res_f, heap_key, heap_id)],
                    J, layout.ctypes.data, model.type_charge.ctypes.data)
    return run


def timed(policy: str, load: float, services: float, seed: int, lone_flow: bool = False):
    """One run of the Figure 3 scenario (m = 2000, W = 30); (M services/CPU-s, result).
    ``policy`` may name DRFQ's clock: ``drfq:started`` (default in-service)."""
    policy, _, clock = policy.partition(":")
    clock = "started" if clock == "bookkeeping" else clock  # (the C loop differs, not the model)
    scenario = load_scenario(ROOT / "scenarios" / "fig3_packet.toml")
    model = PacketModel.from_scenario(scenario)
    flows = int(services / 4000) + 1
    started = time.process_time()
    run = engine.run_replication(model, policy, scenario.class_loads(load),
                                 np.random.SeedSequence(seed), flows=flows, mean_size=2000.0,
                                 window=30, debug=False, lone_flow=lone_flow,
                                 virtual_time=clock or "in-service")
    return run.services / (time.process_time() - started) / 1e6, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", default="0.3,0.8,0.9")
    parser.add_argument("--policies", default="bmf,pf")
    parser.add_argument("--services", type=float, default=5e7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cflags", default="-O3 -march=native",
                        help="C compiler optimisation flags")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="a variant of the C loop with the same entry points")
    args = parser.parse_args()
    numba_run_kernel = kernel.run_kernel
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}")
    policies = args.policies.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(Path(tmp), args.cflags.split(), args.source)
        print(f"C loop {args.source} compiled with {args.cflags}")
        c_kernels = {policy: c_run_kernel(lib, bookkeeping=policy.endswith(":bookkeeping"))
                     for policy in policies}
        for policy in policies:
            timed(policy, 0.5, 1e5, 0)  # compile (or load) the Numba loop outside the timing
        for load in (float(x) for x in args.loads.split(",")):
            rates = {policy: {"numba": [], "c": [], "shipped": []} for policy in policies}
            services = {}
            # interleaved: every policy in every repeat, the order reversed every other
            # repeat, so drifts in machine speed cancel in the per-repeat ratios
            for repeat in range(args.repeat):
                for policy in (policies if repeat % 2 == 0 else policies[::-1]):
                    results = {}
                    for name, runner, lone in (("numba", numba_run_kernel, False),
                                               ("c", c_kernels[policy], False),
                                               ("shipped", numba_run_kernel, True)):
                        kernel.run_kernel = runner
                        try:
                            rate, results[name] = timed(policy, load, args.services, 1, lone)
                        finally:
                            kernel.run_kernel = numba_run_kernel
                        rates[policy][name].append(rate)
                    for name in ("c", "shipped"):
                        if not (np.array_equal(results["numba"].completion,
                                               results[name].completion)
                                and results["numba"].services == results[name].services):
                            sys.exit(f"bench_c_loop: {policy} load {load}: the {name} loop's "
                                     "completion times differ from the Numba kernel's")
                    services[policy] = results["c"].services
            for policy in policies:
                r = rates[policy]
                numba, c = np.median(r["numba"]), np.median(r["c"])
                shipped = np.median(r["shipped"])
                print(f"{policy} load {load}: {services[policy]:.3e} services, identical "
                      f"completion times; M services/CPU-s median of {args.repeat}: Numba "
                      f"{numba:.1f} [{min(r['numba']):.1f}-{max(r['numba']):.1f}], "
                      f"C {c:.1f} [{min(r['c']):.1f}-{max(r['c']):.1f}], "
                      f"C/Numba {c / numba:.2f}; Numba with the lone-flow loop "
                      f"{shipped:.1f} [{min(r['shipped']):.1f}-{max(r['shipped']):.1f}]")
            # each policy against the first, repeat by repeat (same round, adjacent runs)
            base = policies[0]
            for policy in policies[1:]:
                for name in ("c", "numba", "shipped"):
                    ratios = sorted(a / b for a, b in zip(rates[policy][name],
                                                          rates[base][name], strict=True))
                    print(f"  {policy} / {base} load {load}, {name}: median "
                          f"{np.median(ratios):.3f} [{ratios[0]:.3f}-{ratios[-1]:.3f}] over "
                          f"{len(ratios)} repeats")


if __name__ == "__main__":
    main()
