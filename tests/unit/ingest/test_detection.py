"""Detection: no sample file is claimed by two formats, so the order in which the sniffers are
asked (vLLM first, the common case: opx.ingest.core.FORMAT_MODULES) decides nothing for them."""
from __future__ import annotations

from pathlib import Path

import pytest

from opx.ingest import base, core
from opx.ingest.core import detect, formats
from tests.unit.ingest.test_genai_perf import fixture_files, read


def _claims(path: Path, text: str) -> list[str]:
    claims = []
    for module in formats():
        try:
            if module.sniff(path, text):
                claims.append(module.NAME)
        except Exception:           # detect() treats a failing sniffer as "not mine"
            pass
    base.forget_decoded()
    return claims


@pytest.mark.parametrize("path, _owner", fixture_files())
def test_no_sample_file_is_claimed_by_two_formats(path, _owner):
    claims = _claims(path, read(path))
    assert len(claims) <= 1, f"{path.name} is claimed by {claims}"


def test_vllm_is_asked_first():
    assert formats()[0].NAME == "vllm"


@pytest.mark.parametrize("path, _owner", fixture_files())
def test_detection_is_the_same_in_any_order(path, _owner, monkeypatch):
    text = read(path)
    claims = _claims(path, text)
    if not claims:
        return
    forward = detect(path, text).NAME
    base.forget_decoded()
    monkeypatch.setattr(core, "_FORMATS", list(reversed(formats())))
    assert detect(path, text).NAME == forward == claims[0]
    base.forget_decoded()
