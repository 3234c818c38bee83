"""GGUF files as judges: read by ``models check``, refused before any model loads when transformers cannot
dequantize them, converted once and reused (the bundled judge's own GGUF, marked ``model``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.errors import LocalevalError
from localeval.model_folders import model_fingerprint, resolve_model
from localeval.model_folders.gguf_facts import supported_architectures
from localeval.model_folders.gguf_judge import CONVERTED, file_sha256, gguf_file

ROOT = Path(__file__).resolve().parents[2]


def _gguf(path: Path, architecture: str, template: str | None = None) -> Path:
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name("tiny")
    writer.add_context_length(128)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    if template:
        writer.add_chat_template(template)
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_the_supported_list_comes_from_transformers_and_holds_the_common_judges():
    supported = supported_architectures()
    assert {"llama", "qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3"} <= set(supported)
    assert "tokenizer" not in supported and "general" not in supported


def test_check_reads_a_gguf_files_metadata(tmp_path, capsys):
    path = _gguf(tmp_path / "tiny.gguf", "llama", template="{{ messages }}")
    assert main(["models", "check", str(path)]) == 0
    printed = capsys.readouterr().out
    for fact in ("architecture llama", "quantization: MOSTLY_Q4_K_M", "context length: 128 tokens",
                 "chat template: present", "transformers can dequantize llama", "can be converted into a judge"):
        assert fact in printed
    assert "not a model folder" not in printed


def test_check_names_an_architecture_transformers_cannot_convert_and_a_missing_template(tmp_path, capsys):
    path = _gguf(tmp_path / "encoder.gguf", "bert")
    assert main(["models", "check", str(path)]) == 1
    printed = capsys.readouterr().out
    assert "holds a 'bert' model, which the installed transformers cannot dequantize" in printed
    assert "qwen2" in printed.split("it can for")[1]
    assert "no chat template in the file" in printed


def test_an_unsupported_gguf_judge_stops_before_any_model_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    path = _gguf(tmp_path / "encoder.gguf", "bert")
    with pytest.raises(LocalevalError, match=r"'bert' model.*it can for .*llama.*phi3"):
        resolve_model(str(path), "judge")
    assert not (tmp_path / "models" / CONVERTED).exists()  # not hashed, nothing converted


def test_a_folder_holding_one_gguf_and_no_safetensors_is_that_file(tmp_path):
    folder = tmp_path / "judge"
    folder.mkdir()
    assert gguf_file(folder) is None
    one = _gguf(folder / "a.gguf", "llama")
    assert gguf_file(folder) == one
    assert gguf_file(one) == one
    _gguf(folder / "b.gguf", "llama")
    assert gguf_file(folder) is None  # two: which one is not guessed
    (folder / "b.gguf").unlink()
    (folder / "model.safetensors").write_bytes(b"")
    assert gguf_file(folder) is None  # a model folder that happens to hold a GGUF too


def test_a_files_hash_is_kept_by_path_size_and_mtime(tmp_path):
    path = _gguf(tmp_path / "a.gguf", "llama")
    first = file_sha256(path, tmp_path)
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert file_sha256(path, tmp_path) == first  # same size and mtime: the kept hash, the file not read again
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert file_sha256(path, tmp_path) != first


def test_the_fingerprint_of_a_folder_built_from_a_gguf_names_its_hash(tmp_path):
    folder = tmp_path / "judge"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    plain = model_fingerprint(folder)
    (folder / "localeval-source.json").write_text(json.dumps({"sha256": "ab" * 32}))
    assert "gguf" not in plain
    assert model_fingerprint(folder).endswith("+gguf-sha256=" + "ab" * 8)


@pytest.mark.model
def test_the_bundled_judges_own_gguf_scores_the_demo_and_is_converted_once(models_folder, tmp_path, monkeypatch,
                                                                            capsys):
    from localeval.model_folders import weight_packages

    package = weight_packages.JUDGE_PACKAGE
    source = weight_packages.package_folder(package.module) / package.shipped
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    argv = ["evaluate", str(ROOT / "examples" / "rag_demo.jsonl"), "--judge", str(source),
            "--metrics", "faithfulness,context_precision", "--no-progress", "--threads", "1"]
    assert main([*argv, "--out", str(tmp_path / "first")]) == 0
    converted = list((tmp_path / "models" / CONVERTED).glob("*-SmolLM2-135M-Instruct.Q4_1"))
    assert len(converted) == 1
    summary = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert file_sha256(source, tmp_path / "models")[:16] in json.dumps(summary)  # the fingerprint names the GGUF
    scores = [json.loads(line) for line in (tmp_path / "first" / "scores.jsonl").read_text().splitlines()]
    assert len(scores) == 6

    def no_conversion(*args, **kwargs):
        raise AssertionError("the GGUF was converted again")

    monkeypatch.setattr("localeval.model_folders.gguf_judge.dequantize", no_conversion)
    stamp = converted[0].stat().st_mtime_ns
    assert main([*argv, "--out", str(tmp_path / "second")]) == 0
    assert converted[0].stat().st_mtime_ns == stamp
    capsys.readouterr()
