"""The datasheet peak a GPU's achieved bandwidth is measured against, from the fact base (pure lookup)."""

from __future__ import annotations

from dataclasses import dataclass

# device-name fragment (as torch.cuda.get_device_name reports it) -> fact group in verify/_lib/facts.yaml;
# the first match wins, so the PCIe H100 (2.0 TB/s, not in the fact base) never borrows the SXM's 3.35 TB/s
GPU_FACTS: tuple[tuple[str, str | None], ...] = (
    ("H100 PCIe", None),
    ("H100 NVL", None),
    ("H200", "h200_sxm"),
    ("H100", "h100_sxm"),
    ("B200", "b200_hgx"),
)


@dataclass(frozen=True)
class Peak:
    """A device's datasheet HBM bandwidth and where the number comes from."""

    fact: str
    bytes_per_s: float
    source: str


def fact_group(device_name: str) -> str | None:
    """The fact group of a device name (``NVIDIA H200`` -> ``h200_sxm``), None when unknown."""
    for fragment, group in GPU_FACTS:
        if fragment.lower() in device_name.lower():
            return group
    return None


def hbm_peak(device_name: str) -> Peak | None:
    """The datasheet HBM bandwidth of ``device_name`` (bytes/s) with its source, None when the fact base
    has no entry for it (then no fraction of peak is claimed)."""
    from ...units import lookup
    from ..facts import lookup_fact

    group = fact_group(device_name)
    if group is None:
        return None
    key = f"{group}.hbm_bandwidth"
    try:
        value, unit, source = lookup_fact(key)
    except (KeyError, ValueError):
        return None
    scale = lookup(unit) if unit else None
    if scale is None or scale.dimension != "bytes/s":
        return None
    return Peak(key, float(value) * scale.scale, source)
