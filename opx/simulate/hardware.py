"""Hardware numbers for the simulator, taken from the catalog (models.Hardware), and the hardware
families the efficiency factors are fitted per."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from models import Hardware

# Family of each catalog slug. The calibration (opx/simulate/calibration.py) can fit a factor per
# family from the systems that have measured rows (none is, at present: every per-family factor
# tried made the held-out errors worse); a family without rows would borrow another's (BORROW).
# A result's parameters say which systems its factors were fitted on.
FAMILY = {
    "h100": "hopper", "h200": "hopper",
    "b200": "blackwell", "gb200-nvl72": "blackwell",
    "b300": "blackwell-ultra", "gb300-nvl72": "blackwell-ultra",
    "vr-nvl72": "rubin",
    "mi355x": "cdna4",
}
FAMILIES = ("hopper", "blackwell", "blackwell-ultra")   # the ones with measured rows
BORROW = {"rubin": "blackwell-ultra"}                    # nearest generation with data; others: global

# silicon_sample.csv system names -> catalog slugs
SILICON_SYSTEMS = {"h100_sxm": "h100", "h200_sxm": "h200", "b200_sxm": "b200", "b300_sxm": "b300",
                   "gb200": "gb200-nvl72", "gb300": "gb300-nvl72"}

# Scale-out network per GPU per direction beyond the scale-up domain (one 400 Gb/s NIC per GPU:
# 50 GB/s; GB200's AIConfigurator YAML says ~100 GB/s per GPU of InfiniBand between racks, so 50 is
# the conservative figure). Assumed; used for instances larger than the scale-up domain.
SCALE_OUT_GB_S = 50.0
# Usable fraction of HBM for weights + KV (runtime, activations and NCCL buffers take the rest),
# plus a fixed reserve per GPU for activations. Assumed; set so that the measured layouts fit
# (SGLang ran DeepSeek-R1 FP8 as TP4 and DEP4 on 4 GB200s: 168-180 GB of weights in 186 GB).
HBM_USABLE = 0.96
HBM_RESERVE_GB = 2.0
# Memory the runtime sees per GPU, in bytes (0.4.0). GPU memory "GB" figures are binary units: an
# HBM stack holds 2^30-byte multiples, and AIConfigurator's system YAMLs (reference §3), which give
# what the driver reports, store H100 80 GiB = 85,899,345,920 B, H200 141 GiB = 151,397,597,184 B,
# B200 180 GiB, GB200 189,471 MiB, GB300 284,208 MiB, B300 275,040 MiB. 0.1.0-0.3.0 read the catalog's
# `hbm_gb` as 10^9 bytes, 7.4 % short on H100/H200/B200 (B200: 180e9 instead of 193.3e9 B, 13.3 GB
# per GPU) and 6.8 % on GB200 (186e9 instead of 198.7e9 B). A GPU without a reported figure keeps the
# catalog value x 10^9 (conservative; `hbm_source` says which was used). `hw_spec(...,
# runtime_memory=False)` reads every GPU that way (0.3.0's accounting; an ablation).
RUNTIME_MEMORY_BYTES = {
    "h100": 80 * 2**30,
    "h200": 141 * 2**30,
    "b200": 180 * 2**30,
    "gb200-nvl72": 189_471 * 2**20,
    "gb300-nvl72": 284_208 * 2**20,
    "b300": 275_040 * 2**20,
}


@dataclass(frozen=True)
class HwSpec:
    slug: str
    family: str
    system_gpus: int
    fp4_pflops: float | None
    fp8_pflops: float
    bf16_pflops: float
    hbm_gb: float
    hbm_bytes: float          # memory the runtime sees (RUNTIME_MEMORY_BYTES), else hbm_gb x 1e9
    hbm_source: str
    hbm_tb_s: float
    scale_up_tb_s: float      # bidirectional per GPU (catalog convention)
    domain: int
    scale_out_gb_s: float
    power_w: float
    assumed: tuple[str, ...]  # which numbers the catalog marks assumed or the knobs overrode

    def as_dict(self) -> dict:
        return asdict(self)


def hw_spec(hw: Hardware, fp4_dense_pflops: float | None = None,
            hbm_tb_s: float | None = None, runtime_memory: bool = True) -> HwSpec:
    """The simulator's figures for one catalog GPU; `fp4_dense_pflops` and `hbm_tb_s` override the
    catalog (and are marked assumed). `runtime_memory=False` reads the memory as catalog GB x 1e9
    even where the runtime's figure is known (0.3.0's accounting, for the ablation runner)."""
    assumed = [name for name in ("fp4_dense_pflops", "fp8_dense_pflops", "bf16_dense_pflops",
                                 "hbm_gb", "hbm_tb_s", "scale_up_tb_s", "power_w_all_in")
               if getattr(hw, name) is not None and getattr(hw, name).assumed]
    fp4 = hw.fp4_dense_pflops.value if hw.fp4_dense_pflops else None
    if fp4_dense_pflops is not None:
        fp4 = float(fp4_dense_pflops)
        assumed.append("fp4_dense_pflops (knob override)")
    bw = hw.hbm_tb_s.value
    if hbm_tb_s is not None:
        bw = float(hbm_tb_s)
        assumed.append("hbm_tb_s (knob override)")
    runtime = runtime_memory and hw.slug in RUNTIME_MEMORY_BYTES
    return HwSpec(slug=hw.slug, family=FAMILY.get(hw.slug, "other"), system_gpus=hw.system_gpus,
                  fp4_pflops=fp4, fp8_pflops=hw.fp8_dense_pflops.value,
                  bf16_pflops=hw.bf16_dense_pflops.value, hbm_gb=hw.hbm_gb.value,
                  hbm_bytes=float(RUNTIME_MEMORY_BYTES[hw.slug] if runtime else hw.hbm_gb.value * 1e9),
                  hbm_source=("runtime-reported bytes (AIConfigurator system YAML)" if runtime else
                              "catalog hbm_gb x 1e9 (no runtime figure; conservative)"),
                  hbm_tb_s=bw,
                  scale_up_tb_s=hw.scale_up_tb_s.value, domain=int(hw.nvlink_domain.value),
                  scale_out_gb_s=SCALE_OUT_GB_S, power_w=hw.power_w_all_in.value,
                  assumed=tuple(assumed))
