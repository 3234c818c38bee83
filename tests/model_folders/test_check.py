"""``localeval models check``: a hand-copied model folder read without loading it, each problem with its fix."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from localeval.cli import main
from localeval.model_folders.check import check_folder


def _safetensors(path: Path, shape: tuple[int, ...] = (2, 3), dtype: str = "BF16", cut: int = 0) -> None:
    count = 1
    for dim in shape:
        count *= dim
    data = bytes(count * 2)
    header = json.dumps({"w": {"dtype": dtype, "shape": list(shape), "data_offsets": [0, len(data)]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + data[: len(data) - cut])


def _judge(folder: Path, shards: int = 1) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "bfloat16"}))
    (folder / "tokenizer.json").write_text("{}")
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ messages }}"}))
    if shards == 1:
        _safetensors(folder / "model.safetensors")
    else:
        names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
        for name in names:
            _safetensors(folder / name)
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"weight_map": {f"layer{i}": name for i, name in enumerate(names)}}))
    return folder


def test_a_complete_judge_passes_with_its_dtype_and_size(tmp_path, capsys):
    folder = _judge(tmp_path / "judge", shards=3)
    assert main(["models", "check", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "all 3 weight files present" in out and "stored as BF16" in out and "config says bfloat16" in out
    assert "the folder looks complete" in out


def test_a_missing_shard_a_cut_file_and_no_chat_template_are_named_with_fixes(tmp_path, capsys):
    folder = _judge(tmp_path / "judge", shards=3)
    (folder / "model-00002-of-00003.safetensors").unlink()
    _safetensors(folder / "model-00003-of-00003.safetensors", cut=4)
    (folder / "tokenizer_config.json").write_text("{}")
    assert main(["models", "check", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "1 missing: model-00002-of-00003.safetensors" in out
    assert "model-00003-of-00003.safetensors is not a whole safetensors file" in out and "copy it again" in out
    assert "no chat template" in out
    assert "3 problem(s)" in out


def test_a_folder_of_model_folders_and_a_gguf_file_say_what_to_do(tmp_path):
    (tmp_path / "models").mkdir()
    _judge(tmp_path / "models" / "a")
    found = check_folder(tmp_path / "models")
    assert found.problems == ["no config.json: this folder holds model folders (a); check one of them"]
    gguf = tmp_path / "gguf"
    gguf.mkdir()
    (gguf / "config.json").write_text("{}")
    (gguf / "model.gguf").write_bytes(b"GGUF")
    found = check_folder(gguf)
    assert str(found.folder) == str(gguf / "model.gguf")  # read as the GGUF file --judge would convert
    assert any("cannot be read as a GGUF file" in p for p in found.problems)
    (gguf / "other.gguf").write_bytes(b"GGUF")
    assert any("it holds 2 GGUF files: pass one of them as --judge" in p for p in check_folder(gguf).problems)


def test_an_embedder_needs_no_chat_template(tmp_path):
    folder = tmp_path / "embedder"
    folder.mkdir()
    (folder / "modules.json").write_text("[]")
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (folder / "vocab.txt").write_text("a\n")
    _safetensors(folder / "model.safetensors", dtype="F32")
    found = check_folder(folder)
    assert found.kind == "embedder" and found.problems == []
