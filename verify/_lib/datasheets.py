"""GPU datasheet figures the hardware-generation scripts share, each with the source it names and where it was read.

Each figure names the vendor document it comes from; where that document was not read directly, the source says
through what it was read (the A100 datasheet through two spec tables that cite it; AMD's MI300X and MI355X figures
through MLCommons submissions, a copy of AMD's table and press reports of AMD's presentations). Those are
secondary readings of primary figures, kept marked as such until someone reads the vendor's own page.

``sheet(gpu, field)`` declares one figure as a ``given`` named ``<gpu>_<field>`` (or ``name``), so a script
states only the figures it uses and every one carries its source. Vendor units: GB = 1e9 B, TB/s = 1e12 B/s,
TFLOP/s dense (NVIDIA's tables print FP8/FP16 with 2:4 sparsity; dense is half), W = maximum board power.
Figures already in ``facts.yaml`` (H100, H200, B200 HGX, GB200 capacity/bandwidth/FLOPs) stay there.
"""

from qbank.verify import given

_A100 = (
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), A100 80GB SXM "
    "column, read via glennklockwood.com/garden/processors/A100 and thundercompute.com A100 specs table"
)
_MI300X = (
    "AMD Instinct MI300X: MLCommons inference_results_v4.1 closed/AMD/systems/8xMI300X_2xEPYC-9374F.json "
    "('AMD Instinct MI300X-NPS1-SPX-192GB-750W', 'accelerator_memory_capacity': '192 GB'); peak rates from AMD's "
    "MI300X spec table as reproduced in github:alpharomercoma/MI300X-vs-H200 METHODOLOGY.md @6077fdc7"
)
_MI355X = (
    "AMD Instinct MI355X: MLCommons inference_results_v6.0 closed/AMD 87xMI355X summary ('AMD Instinct MI355X "
    "288GB HBM3e'); 8 TB/s and 1,400 W as AMD presented the MI350 series at ISC 2025 (tomshardware.com, "
    "'AMD's Instinct MI355X accelerator will reportedly consume 1,400 watts')"
)
_HOPPER_TDP = "NVIDIA H100/H200 SXM product tables: 'Max Thermal Design Power (TDP): Up to 700W (configurable)'"
_B200_TDP = (
    "NVIDIA Blackwell datasheet: HGX B200 configured at 1,000 W (glennklockwood.com/garden/processors/B200, "
    "citing NVIDIA's Blackwell architecture technical brief); GB200's B200 is configured at 1,200 W"
)

SHEETS: dict[tuple[str, str], tuple[float, str, str]] = {
    ("a100", "hbm"): (80, "GB", _A100 + ": '80GB HBM2e'"),
    ("a100", "bw"): (2.039, "TB/s", _A100 + ": 'GPU Memory Bandwidth 2,039GB/s'"),
    ("a100", "bf16"): (312, "TFLOP/s", _A100 + ": BF16 Tensor Core 312 TFLOPS (624 with sparsity)"),
    ("a100", "nvlink"): (600, "GB/s", _A100 + ": 'NVLink: 600GB/s' (third generation, bidirectional)"),
    ("a100", "tdp"): (400, "W", _A100 + ": 'Max TDP Power 400W' (SXM)"),
    ("mi300x", "hbm"): (192, "GB", _MI300X),
    ("mi300x", "bw"): (5.3, "TB/s", _MI300X + ": HBM bandwidth 5.3 TB/s"),
    ("mi300x", "bf16"): (1307.4, "TFLOP/s", _MI300X + ": BF16 dense 1307.4 TFLOP/s"),
    ("mi300x", "tdp"): (750, "W", _MI300X),
    ("mi355x", "hbm"): (288, "GB", _MI355X),
    ("mi355x", "bw"): (8, "TB/s", _MI355X),
    ("mi355x", "tdp"): (1400, "W", _MI355X),
    ("h100", "tdp"): (700, "W", _HOPPER_TDP),
    ("h200", "tdp"): (700, "W", _HOPPER_TDP),
    ("b200", "tdp"): (1000, "W", _B200_TDP),
    ("b200", "fp4"): (
        9000,
        "TFLOP/s",
        "NVIDIA HGX B200 table: FP4 Tensor Core 18 PFLOPS with sparsity, 9 PFLOPS dense (facts: b200_hgx.fp8_dense "
        "note 'FP4 dense 9 PF (18 sparse)'; glennklockwood.com/garden/processors/B200 HGX table FP4 9000 dense)",
    ),
}


def sheet(gpu: str, field: str, name: str | None = None) -> float:
    """Declare the datasheet figure ``field`` of ``gpu`` as a given, with its source and unit."""
    value, unit, source = SHEETS[(gpu, field)]
    return given(name or f"{gpu}_{field}", value, unit=unit, source=source)
