"""Realistic small `vllm bench serve --save-result` files, shaped like
../shared/fixtures/vllm/benchmark_qwen3_32b_h200sxm_run_1_TP8_DP1_CTX1024_C100_P100_O128.json,
with the `--metadata hardware=... gpus=... model=...` keys that let them import without flags.

    .venv/bin/python bench/vllm_files.py OUT_DIR [N]

Files are spread over configurations (hardware x model x GPU count x date) and concurrencies, so
10,000 files import as about a thousand runs of ten points each, as a sweep archive would."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HARDWARE = ("h200", "h100", "b200", "b300", "gb200-nvl72", "gb300-nvl72", "mi355x")
MODELS = (("openai/gpt-oss-120b", "gpt-oss-120b"), ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
          ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b"),
          ("/models/deepseek-v3.2-fp8", "deepseek-v3.2"))
GPUS = (1, 2, 4, 8)
CONCURRENCIES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


def result(i: int, rng: random.Random) -> dict:
    """One result object, with every key vLLM 0.1x writes, in vLLM's order."""
    # A sweep (10 concurrencies) per configuration; another day is another run of the same one.
    conc = CONCURRENCIES[i % 10]
    hw = HARDWARE[(i // 10) % len(HARDWARE)]
    model_id, model = MODELS[(i // 70) % len(MODELS)]
    gpus = GPUS[(i // 280) % len(GPUS)]
    day = 1 + (i // 1120) % 28
    isl, osl, n = 1024, 1024, max(conc * 4, 16)     # the 1k1k workload
    tpot = 8.0 + 0.05 * conc * (1 + rng.random() * 0.1)           # ms
    ttft = 40.0 + 4.0 * conc * (1 + rng.random() * 0.2)
    e2e = ttft + tpot * (osl - 1)
    duration = e2e / 1000 * n / conc
    out_tput = n * osl / duration
    sd = lambda v: v * (0.05 + rng.random() * 0.1)  # noqa: E731
    return {
        "date": f"202601{day:02d}-{rng.randrange(24):02d}{rng.randrange(60):02d}{rng.randrange(60):02d}",
        "endpoint_type": "vllm", "backend": "vllm", "label": None, "model_id": model_id,
        "tokenizer_id": model_id, "num_prompts": n, "request_rate": "inf", "burstiness": 1.0,
        "max_concurrency": conc, "duration": duration, "completed": n, "failed": 0,
        "total_input_tokens": n * isl, "total_output_tokens": n * osl,
        "request_throughput": n / duration, "request_goodput": None,
        "output_throughput": out_tput, "total_token_throughput": out_tput * (isl + osl) / osl,
        "max_output_tokens_per_s": out_tput * 1.3, "max_concurrent_requests": conc,
        "mean_ttft_ms": ttft, "median_ttft_ms": ttft * 0.99, "std_ttft_ms": sd(ttft),
        "p90_ttft_ms": ttft * 1.4, "p99_ttft_ms": ttft * 1.8,
        "mean_tpot_ms": tpot, "median_tpot_ms": tpot * 0.995, "std_tpot_ms": sd(tpot),
        "p90_tpot_ms": tpot * 1.1, "p99_tpot_ms": tpot * 1.25,
        "mean_itl_ms": tpot, "median_itl_ms": tpot * 0.6, "std_itl_ms": sd(tpot) * 3,
        "p90_itl_ms": tpot * 1.5, "p99_itl_ms": tpot * 6,
        "mean_e2el_ms": e2e, "median_e2el_ms": e2e * 0.998, "std_e2el_ms": sd(e2e),
        "p90_e2el_ms": e2e * 1.01, "p99_e2el_ms": e2e * 1.03,
        # --metadata hardware=... gpus=... model=... (strings, as vLLM stores them)
        "hardware": hw, "gpus": str(gpus), "model": model, "tp": str(gpus),
    }


def write_files(out: Path, n: int = 10_000, seed: int = 0) -> list[Path]:
    """Write `n` result files under `out` (one sub-folder per 100 files)."""
    rng = random.Random(seed)
    paths = []
    for i in range(n):
        folder = out / f"sweep-{i // 100:03d}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"vllm-{i:05d}.json"
        path.write_text(json.dumps(result(i, rng)))
        paths.append(path)
    return paths


if __name__ == "__main__":
    target = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    print(f"{len(write_files(target, count))} files under {target}")
