"""Triton kernels as verification snippets: ``triton_check`` and what it records.

A script hands ``triton_check`` a launch function (which launches a ``@triton.jit`` kernel and returns its
output) and a PyTorch reference. On the CPU the kernel runs through Triton's interpreter
(``TRITON_INTERPRET=1``, set by the runner before the script starts); on CUDA it is compiled and, beside
the comparison, timed with ``triton.testing.do_bench`` against the reference on the same GPU, with the
achieved bandwidth as a fraction of the device's datasheet peak from the fact base.

Modules: ``compare`` (outputs against the reference, dtype-aware), ``peak`` (datasheet peak of a named
GPU), ``bench`` (timing figures from a timer), ``check`` (the script API), ``summary`` (the text of
``qbank gpu-check``), ``figures`` (GPU figures of frozen signed results for a CPU build).
"""

from __future__ import annotations

INTERPRETER = "triton-interpreter"
COMPILED = "triton-compiled"
INTERPRET_ENV = "TRITON_INTERPRET"
